"""Schemas as the Schema Registry keeps them, and the places kdump finds them offline.

* The ``_schemas`` topic (the registry's store, ``kafkastore.topic``) in the data directory itself, read
  through the storage core: each record's key is JSON ``{"keytype": "SCHEMA", "subject": S, "version": V, ...}``
  and its value JSON ``{"subject", "version", "id", "schemaType" (absent: AVRO), "schema", "references",
  "deleted"}``; a null value (tombstone) is a hard delete of that subject-version.  Other key types (``CONFIG``,
  ``MODE``, ``NOOP``, ``DELETE_SUBJECT``, ``CLEAR_SUBJECT``, ``CONTEXT``) carry no schema and are skipped.
  Records are applied in offset order, so the last word on a subject-version wins, as in the registry.
* A directory of schema files named by id: ``<id>.avsc`` (Avro), ``<id>.proto`` (Protobuf), ``<id>.json`` (JSON
  Schema).  The directory also serves references by name: a ``.proto`` ``import "common.proto"`` finds
  ``common.proto`` there, and Avro named types defined by the directory's other ``.avsc`` files are known.
* A registry export: the registry's own answer to ``GET /schemas`` (a JSON array of
  ``{"subject", "version", "id", "schemaType", "schema", "references"}``), also accepted as
  ``{"schemas": [...]}`` or as JSON lines.
* An id map (``--schema-id-map``): ``ID=FILE`` pairs, or a JSON object ``{"ID": "FILE"}`` in a file (paths
  relative to it); the type comes from the file's suffix.

Soft-deleted schemas (``"deleted": true``) and hard-deleted ones (a tombstone) stay decodable by id: records
written with them are still on disk, and the registry itself keeps serving soft-deleted ids.  Loading never
raises on bad input: what cannot be used is a line in :attr:`SchemaStore.problems`.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from kdump.errors import KdumpError

AVRO = "AVRO"
PROTOBUF = "PROTOBUF"
JSON = "JSON"
SCHEMA_TYPES = (AVRO, PROTOBUF, JSON)
SUFFIX_TYPES = {".avsc": AVRO, ".proto": PROTOBUF, ".json": JSON}
#: The registry's default ``kafkastore.topic``.
SCHEMAS_TOPIC = "_schemas"
#: A schema file larger than this is not a schema (guards memory against a wrong path).
MAX_SCHEMA_FILE_BYTES = 64 << 20

_ID_FILE = re.compile(r"^(-?[0-9]+)(\.avsc|\.proto|\.json)$")


@dataclass(frozen=True)
class SchemaReference:
    """A reference from one schema to another: ``name`` is how the referring schema names it (a ``.proto``
    import path, an Avro full name, a JSON Schema ``$ref`` URL), ``subject``/``version`` where it is."""

    name: str
    subject: str
    version: int


@dataclass
class Schema:
    id: int
    schema_type: str
    text: str
    references: tuple[SchemaReference, ...] = ()
    subject: str | None = None
    version: int | None = None
    deleted: bool = False
    #: Where it came from (a path, ``_schemas`` offset), for notes.
    origin: str = ""
    #: A directory whose other schema files this one may refer to by name (schema directories, id maps).
    search_dir: str | None = None


@dataclass
class SchemaStore:
    """Schemas by id and by subject-version; what could not be loaded is in ``problems``."""

    by_id: dict[int, Schema] = field(default_factory=dict)
    by_subject: dict[tuple[str, int], Schema] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    #: Where the schemas were looked for (for the note on an unknown id).
    searched: list[str] = field(default_factory=list)

    def add(self, schema: Schema) -> None:
        self.by_id[schema.id] = schema
        if schema.subject is not None and schema.version is not None:
            self.by_subject[(schema.subject, schema.version)] = schema

    def resolve(self, ref: SchemaReference) -> Schema | None:
        """The schema a reference names (version -1: the subject's latest)."""
        if ref.version == -1:
            versions = [v for (s, v) in self.by_subject if s == ref.subject]
            return self.by_subject.get((ref.subject, max(versions))) if versions else None
        return self.by_subject.get((ref.subject, ref.version))

    def describe_sources(self) -> str:
        return ", ".join(self.searched) if self.searched else "no schema source"


def _schema_from_json(obj: object, origin: str) -> Schema:
    """A schema from the registry's JSON form (a ``_schemas`` value, an export entry); raises ValueError."""
    if not isinstance(obj, dict):
        raise ValueError("not a JSON object")
    schema_id = obj.get("id")
    text = obj.get("schema")
    if not isinstance(schema_id, int) or isinstance(schema_id, bool):
        raise ValueError('no integer "id"')
    if not isinstance(text, str):
        raise ValueError('no string "schema"')
    schema_type = obj.get("schemaType") or AVRO
    if schema_type not in SCHEMA_TYPES:
        raise ValueError(f"unknown schemaType {schema_type!r}")
    refs = []
    for ref in obj.get("references") or ():
        if not isinstance(ref, dict) or not isinstance(ref.get("name"), str):
            raise ValueError("a reference without a name")
        version = ref.get("version", -1)
        refs.append(
            SchemaReference(
                ref["name"], str(ref.get("subject", "")), version if isinstance(version, int) else -1
            )
        )
    subject = obj.get("subject")
    version = obj.get("version")
    return Schema(
        id=schema_id,
        schema_type=schema_type,
        text=text,
        references=tuple(refs),
        subject=subject if isinstance(subject, str) else None,
        version=version if isinstance(version, int) and not isinstance(version, bool) else None,
        deleted=obj.get("deleted") is True,
        origin=origin,
    )


# -- the _schemas topic -------------------------------------------------------------------------------------


def schemas_topic_dirs(data_dir: str, topic: str = SCHEMAS_TOPIC) -> list[str]:
    """The partition directories of the ``_schemas`` topic in a log directory (normally ``_schemas-0``)."""
    from kdump.storage import naming

    try:
        with os.scandir(data_dir) as entries:
            names = sorted(e.name for e in entries if e.is_dir())
    except OSError:
        return []
    found = []
    for name in names:
        parsed = naming.parse_partition_dir(name)
        if parsed is not None and parsed.topic == topic and name == f"{topic}-{parsed.partition}":
            found.append(os.path.join(data_dir, name))
    return found


def load_schemas_topic(partition_dir: str, store: SchemaStore) -> None:
    """Apply every record of a ``_schemas`` partition directory to ``store``, in offset order."""
    from kdump.storage.file_records import FileRecords
    from kdump.storage.local_log import LocalLog

    store.searched.append(partition_dir)
    try:
        log = LocalLog.scan(partition_dir)
    except OSError as e:
        store.problems.append(f"{partition_dir}: {e.strerror or e}")
        return
    for segment in log.log_segments:
        path = segment.log_path
        try:
            with FileRecords(path) as records:
                for batch in records.batches():
                    if batch.is_control_batch:
                        continue
                    for record in batch.records():
                        _apply_schemas_record(
                            store, record.key, record.value, f"{path} offset {record.offset}"
                        )
        except KdumpError as e:
            store.problems.append(f"{_schemas_where(e, path)}: {e.message} (schemas after it not read)")
        except OSError as e:
            store.problems.append(f"{path}: {e.strerror or e}")


def _schemas_where(e: KdumpError, path: str) -> str:
    where = e.path or path
    return where if e.position is None else f"{where}: byte {e.position}"


def _apply_schemas_record(store: SchemaStore, key: bytes | None, value: bytes | None, origin: str) -> None:
    if key is None:
        return
    try:
        key_obj = json.loads(key)
    except (ValueError, UnicodeDecodeError):
        store.problems.append(f"{origin}: the key is not JSON")
        return
    if not isinstance(key_obj, dict) or key_obj.get("keytype") != "SCHEMA":
        return
    subject = key_obj.get("subject")
    version = key_obj.get("version")
    if value is None:  # tombstone: the subject-version is gone; its id stays decodable
        schema = (
            store.by_subject.pop((subject, version), None)
            if isinstance(subject, str) and isinstance(version, int)
            else None
        )
        if schema is not None:
            schema.deleted = True
        return
    try:
        schema = _schema_from_json(json.loads(value), origin)
    except (ValueError, UnicodeDecodeError) as e:
        store.problems.append(f"{origin}: not a schema value: {e}")
        return
    store.add(schema)


# -- files --------------------------------------------------------------------------------------------------


def _read_text(path: str) -> str:
    with open(path, "rb") as f:
        data = f.read(MAX_SCHEMA_FILE_BYTES + 1)
    if len(data) > MAX_SCHEMA_FILE_BYTES:
        raise ValueError(f"larger than {MAX_SCHEMA_FILE_BYTES} bytes")
    return data.decode("utf-8")


def load_schema_file(schema_id: int, path: str, store: SchemaStore) -> None:
    """One schema file; its type from its suffix."""
    suffix = os.path.splitext(path)[1]
    schema_type = SUFFIX_TYPES.get(suffix)
    if schema_type is None:
        store.problems.append(f"{path}: not a schema file (.avsc, .proto or .json)")
        return
    try:
        text = _read_text(path)
    except (OSError, ValueError) as e:
        store.problems.append(f"{path}: {getattr(e, 'strerror', None) or e}")
        return
    store.add(
        Schema(
            id=schema_id,
            schema_type=schema_type,
            text=text,
            origin=path,
            search_dir=os.path.dirname(os.path.abspath(path)),
        )
    )


def load_schema_dir(directory: str, store: SchemaStore) -> None:
    """Every ``<id>.avsc``, ``<id>.proto``, ``<id>.json`` of a directory."""
    store.searched.append(directory)
    try:
        names = sorted(os.listdir(directory))
    except OSError as e:
        store.problems.append(f"{directory}: {e.strerror or e}")
        return
    for name in names:
        m = _ID_FILE.match(name)
        if m:
            load_schema_file(int(m.group(1)), os.path.join(directory, name), store)


def load_export(path: str, store: SchemaStore) -> None:
    """A registry export: ``GET /schemas``'s JSON array, ``{"schemas": [...]}``, or JSON lines."""
    store.searched.append(path)
    try:
        text = _read_text(path)
    except (OSError, ValueError) as e:
        store.problems.append(f"{path}: {getattr(e, 'strerror', None) or e}")
        return
    try:
        doc = json.loads(text)
        entries: Iterable[object] = doc.get("schemas", ()) if isinstance(doc, dict) else doc
        if not isinstance(entries, list):
            raise ValueError
    except ValueError:
        try:
            entries = [json.loads(line) for line in text.splitlines() if line.strip()]
        except ValueError:
            store.problems.append(f"{path}: neither a JSON array of schemas nor JSON lines")
            return
    for i, entry in enumerate(entries):
        try:
            store.add(_schema_from_json(entry, f"{path} entry {i}"))
        except ValueError as e:
            store.problems.append(f"{path}: entry {i}: {e}")


def load_source(path: str, store: SchemaStore) -> None:
    """One ``--schemas`` source, told apart by what it is: a ``_schemas`` partition directory, a log directory
    holding one, a directory of schema files, or an export file."""
    from kdump.storage import naming

    if os.path.isdir(path):
        parsed = naming.parse_partition_dir(os.path.basename(os.path.normpath(path)))
        if parsed is not None and parsed.topic == SCHEMAS_TOPIC:
            load_schemas_topic(path, store)
            return
        topic_dirs = schemas_topic_dirs(path)
        if topic_dirs:
            for d in topic_dirs:
                load_schemas_topic(d, store)
            return
        load_schema_dir(path, store)
    elif os.path.exists(path):
        load_export(path, store)
    else:
        store.searched.append(path)
        store.problems.append(f"{path}: no such file or directory")


def parse_id_map(spec: str) -> list[tuple[int, str]]:
    """``--schema-id-map``: ``ID=FILE[,ID=FILE...]``, or a JSON file ``{"ID": "FILE"}`` (paths relative to
    it).  Raises ValueError with a message for the user."""
    if "=" not in spec and os.path.isfile(spec):
        try:
            doc = json.loads(_read_text(spec))
        except (OSError, ValueError) as e:
            raise ValueError(f"{spec}: not a JSON object of schema ids to files ({e})") from None
        if not isinstance(doc, dict) or not all(isinstance(v, str) for v in doc.values()):
            raise ValueError(f'{spec}: not a JSON object of schema ids to files ({{"7": "orders.avsc"}})')
        base = os.path.dirname(spec)
        pairs = list(doc.items())
    else:
        base = ""
        pairs = []
        for piece in spec.split(","):
            sid, sep, path = piece.partition("=")
            if not sep or not path:
                raise ValueError(f"{piece!r} is not ID=FILE")
            pairs.append((sid, path))
    out = []
    for sid, path in pairs:
        try:
            schema_id = int(sid)
        except ValueError:
            raise ValueError(f"{sid!r} is not a schema id") from None
        out.append((schema_id, os.path.join(base, path)))
    return out
