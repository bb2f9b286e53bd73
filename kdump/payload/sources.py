"""Which schemas a run decodes with: ``--schemas`` sources and ``--schema-id-map``, or by default the
``_schemas`` topic of the data directory that holds the dumped segment (the parent of its partition
directory).  One :class:`~kdump.payload.decoder.PayloadDecoder` per set of sources, built on first use."""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from kdump.payload.decoder import PayloadDecoder
from kdump.payload.registry import (
    SCHEMAS_TOPIC,
    SchemaStore,
    load_schema_file,
    load_schemas_topic,
    load_source,
    parse_id_map,
    schemas_topic_dirs,
)

#: The one decoder kind there is; the option takes a name so that others can come.
SCHEMA_REGISTRY = "schema-registry"


@dataclass
class PayloadDecoding:
    """What ``--decode-keys``/``--decode-values`` ask for, and where the schemas come from."""

    keys: bool = False
    values: bool = False
    #: ``--schemas`` paths; empty: the ``_schemas`` topic beside the dumped segment's partition.
    sources: tuple[str, ...] = ()
    #: ``--schema-id-map`` pairs (schema id, schema file).
    id_map: tuple[tuple[int, str], ...] = ()
    _decoders: dict[str, PayloadDecoder] = field(default_factory=dict, repr=False)

    def __getstate__(self) -> dict[str, object]:
        """Pickled (to Spark executors) without the decoders: compiled schemas are rebuilt where used."""
        state = self.__dict__.copy()
        state["_decoders"] = {}
        return state

    def decoder_for(self, segment_path: str) -> PayloadDecoder:
        """The decoder for a segment: its data directory's ``_schemas`` unless sources were given."""
        if self.sources:
            key = ""
        else:
            key = os.path.dirname(os.path.dirname(os.path.abspath(segment_path)))
        decoder = self._decoders.get(key)
        if decoder is None:
            decoder = self._decoders[key] = PayloadDecoder(self.load(key))
        return decoder

    def load(self, data_dir: str) -> SchemaStore:
        store = SchemaStore()
        if self.sources:
            for source in self.sources:
                load_source(source, store)
        else:
            topic_dirs = schemas_topic_dirs(data_dir)
            for d in topic_dirs:
                load_schemas_topic(d, store)
            if not topic_dirs:
                store.searched.append(os.path.join(data_dir, f"{SCHEMAS_TOPIC}-0 (not there)"))
        for schema_id, path in self.id_map:
            load_schema_file(schema_id, path, store)
            store.searched.append(path)
        return store


def payload_decoding(
    decode_keys: str | None, decode_values: str | None, schemas: list[str], id_map: str | None
) -> PayloadDecoding | None:
    """The decoding the options ask for (None when neither ``--decode-keys`` nor ``--decode-values`` is
    given); ValueError with a message naming the option on a bad value."""
    for name, kind in (("decode-keys", decode_keys), ("decode-values", decode_values)):
        if kind is not None and kind != SCHEMA_REGISTRY:
            raise ValueError(f"--{name}: unknown payload decoder {kind!r} (kdump knows {SCHEMA_REGISTRY})")
    if decode_keys is None and decode_values is None:
        for name, given in (("schemas", bool(schemas)), ("schema-id-map", id_map is not None)):
            if given:
                raise ValueError(f"--{name} needs --decode-values or --decode-keys")
        return None
    try:
        pairs = tuple(parse_id_map(id_map)) if id_map is not None else ()
    except ValueError as e:
        raise ValueError(f"--schema-id-map: {e}") from None
    return PayloadDecoding(
        keys=decode_keys is not None, values=decode_values is not None, sources=tuple(schemas), id_map=pairs
    )
