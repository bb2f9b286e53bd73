"""Schema-registry payloads: Confluent's wire format (magic byte 0, a 4-byte schema id, then Avro binary,
Protobuf with message indexes, or JSON), decoded offline with schemas found on disk.

Not an on-disk format of Kafka's, so it lives beside the storage core rather than in it; it reads the
``_schemas`` topic through the storage core (:mod:`kdump.storage.file_records`).

* :mod:`kdump.payload.wire` -- the framing (schema id, Protobuf message indexes).
* :mod:`kdump.payload.registry` -- schemas as the Schema Registry keeps them (:class:`Schema`,
  :class:`SchemaStore`), and the places they are read from (the ``_schemas`` topic, a directory of schema files
  named by id, a registry export, an id map).
* :mod:`kdump.payload.avro`, :mod:`kdump.payload.protobuf`, :mod:`kdump.payload.json_schema` -- one decoder per
  schema type, each built once per schema id (fastavro; the ``protobuf`` runtime with descriptors compiled by
  grpcio-tools' bundled protoc; the standard ``json`` module).
* :mod:`kdump.payload.decoder` -- :class:`PayloadDecoder`: bytes in, a :class:`Decoded` fact out (the value as
  plain data, or one note saying why not).  It never raises on bad data.

The libraries are the optional extra ``kdump[schema-registry]``; they load only when decoding is asked for.
"""
