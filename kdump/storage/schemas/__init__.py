"""Message schemas of Kafka's internal topics, held as data (:mod:`kdump.storage.message_schema`) for the generic
reader (:mod:`kdump.storage.message_reader`): one module per topic, each a block of compact schema text
transcribed from Kafka 4.0's JSON schema files, parsed once at import.  Adding a record type or version means
editing that text.

Records that Kafka releases after 4.0 changed or added are held beside them (``NEWEST_SCHEMA_TEXT``), whole, as
of :data:`NEWEST_KAFKA_SOURCE`: the default text keeps decoding with 4.0's schemas (byte-identical to Kafka
4.0's tool, which fails on them), kdump's own modes decode with the newest and say so.
"""

#: The newest Kafka source the ``NEWEST_SCHEMA_TEXT`` blocks were read from: confluentinc/kafka at commit
#: 06d492d8 (August 2026, version 8.5.0-ccs, the Apache Kafka trunk of its day).
NEWEST_KAFKA_SOURCE = "confluentinc/kafka 06d492d8 (8.5.0-ccs, 2026-08-22)"
