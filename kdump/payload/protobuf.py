"""Protobuf payloads with the ``protobuf`` runtime.

The runtime reads descriptors, not ``.proto`` text, so the schema text (and every schema it imports) is compiled
to a ``FileDescriptorSet`` by the real protoc that grpcio-tools bundles (``python -m grpc_tools.protoc``, run
in a child process so its messages are captured): the same parser the Schema Registry's own tooling agrees
with, including ``google/protobuf/*.proto`` well-known types, which grpcio-tools ships.  The descriptors go into
a private ``DescriptorPool``; the message type is the one the payload's message indexes name, and the message
is shown as the protobuf JSON mapping (``MessageToDict``, field names as in the ``.proto``), within the bounds
of :mod:`kdump.payload.bounds` (:mod:`kdump.payload.protobuf_bounds`).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from collections.abc import Callable
from typing import Any

from kdump.payload.bounds import MAX_VALUES, check_size, too_deep
from kdump.payload.protobuf_bounds import scan
from kdump.payload.registry import Schema, SchemaStore
from kdump.payload.wire import message_indexes

#: protoc gets this long for one schema and its imports.
PROTOC_TIMEOUT = 60


class UnknownFields(Exception):
    """The message parsed but carries fields the schema does not define (likely another schema's data)."""

    def __init__(self, value: Any, numbers: list[int]) -> None:
        super().__init__(f"fields not in the schema: {', '.join(map(str, numbers))}")
        self.value = value


def compile_protobuf(schema: Schema, store: SchemaStore) -> Callable[[bytes, int], Any]:
    """A function ``(data, start) -> value`` (``start``: where the message indexes begin); ValueError when the
    schema cannot be compiled."""
    from google.protobuf import descriptor_pb2, descriptor_pool, json_format, message_factory

    file_set = descriptor_pb2.FileDescriptorSet.FromString(_protoc(schema, store))
    pool = descriptor_pool.DescriptorPool()
    main = None
    for file_proto in file_set.file:
        pool.Add(file_proto)
        main = file_proto
    if main is None or not main.message_type:
        raise ValueError("the schema defines no message type")
    top_level = main.message_type
    package = f"{main.package}." if main.package else ""
    classes: dict[tuple[int, ...], Any] = {}

    def message_class(indexes: list[int]) -> Any:
        key = tuple(indexes)
        cls = classes.get(key)
        if cls is None:
            types = top_level
            names = []
            for i in indexes:
                if i >= len(types):
                    raise LookupError(f"message indexes {indexes} name no message type of the schema")
                names.append(types[i].name)
                types = types[i].nested_type
            cls = classes[key] = message_factory.GetMessageClass(
                pool.FindMessageTypeByName(package + ".".join(names))
            )
        return cls

    to_dict = json_format.MessageToDict

    def decode(data: bytes, start: int) -> Any:
        indexes, pos = message_indexes(data, start)
        cls = message_class(indexes)
        if len(data) - pos > MAX_VALUES:
            check_size(len(data) - pos)
            scan(cls.DESCRIPTOR, data, pos)
        try:
            message = cls.FromString(data[pos:])
        except Exception as e:
            if "MaxDepth" in str(e) or "levels of nesting" in str(
                e
            ):  # upb's recursion limit, the pure-Python one's
                raise too_deep() from None
            raise
        value = to_dict(message, preserving_proto_field_name=True)
        unknown = _unknown_field_numbers(message)
        if unknown:
            raise UnknownFields(value, unknown)
        return value

    return decode


def _unknown_field_numbers(message: Any) -> list[int]:
    try:
        from google.protobuf import unknown_fields
    except ImportError:  # an older runtime: no check
        return []
    return sorted({f.field_number for f in unknown_fields.UnknownFieldSet(message)})


def _protoc(schema: Schema, store: SchemaStore) -> bytes:
    """The serialized ``FileDescriptorSet`` of ``schema`` and everything it imports (dependencies first)."""
    try:
        import grpc_tools
    except ImportError:
        raise ValueError(
            "Protobuf schemas need grpcio-tools (its protoc compiles the .proto text): "
            "pip install 'kdump[schema-registry]'"
        ) from None
    well_known = os.path.join(os.path.dirname(grpc_tools.__file__), "_proto")
    with tempfile.TemporaryDirectory(prefix="kdump-proto-") as tmp:
        main_name = f"kdump_schema_{schema.id}.proto".replace("-", "m")
        _write(tmp, main_name, schema.text)
        _write_references(tmp, schema, store, {schema.id})
        out = os.path.join(tmp, "set.pb")
        includes = [f"-I{tmp}"]
        if schema.search_dir is not None:
            includes.append(f"-I{schema.search_dir}")
        includes.append(f"-I{well_known}")
        try:
            result = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "grpc_tools.protoc",
                    *includes,
                    "--include_imports",
                    f"--descriptor_set_out={out}",
                    main_name,
                ],
                capture_output=True,
                timeout=PROTOC_TIMEOUT,
                cwd=tmp,
            )
        except (OSError, subprocess.TimeoutExpired) as e:
            raise ValueError(f"protoc could not run: {e}") from None
        if result.returncode != 0:
            message = result.stderr.decode("utf-8", "replace").strip().replace(tmp + os.sep, "")
            raise ValueError(f"protoc: {' / '.join(message.splitlines()[:3]) or 'failed'}")
        with open(out, "rb") as f:
            return f.read()


def _write_references(tmp: str, schema: Schema, store: SchemaStore, seen: set[int]) -> None:
    for ref in schema.references:
        target = store.resolve(ref)
        if target is None:
            raise ValueError(f"reference {ref.name!r} ({ref.subject} version {ref.version}) is not known")
        if target.id in seen:
            continue
        seen.add(target.id)
        _write(tmp, ref.name, target.text)
        _write_references(tmp, target, store, seen)


def _write(tmp: str, name: str, text: str) -> None:
    path = os.path.normpath(os.path.join(tmp, name))
    if not path.startswith(tmp + os.sep):
        raise ValueError(f"reference name {name!r} leaves the include directory")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
