"""Bytes in, a :class:`Decoded` fact out: the schema id and the value as plain data, or one note saying why
the payload was not decoded.  Bad data never raises: an unknown schema id, a wrong magic byte, a truncated
payload, a schema that does not fit, a payload that would build more than :mod:`kdump.payload.bounds` allows --
each is a note, and the record is shown as it would be without decoding.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kdump.payload.bounds import PayloadBound
from kdump.payload.registry import AVRO, JSON, PROTOBUF, Schema, SchemaStore
from kdump.payload.wire import HEADER_SIZE, FramingError, schema_id_of


@dataclass(slots=True)
class Decoded:
    """One decoded key or value: ``value`` when ``has_value``; ``schema_id`` when the header was read; ``note``
    why it was not decoded (or, with a value, a warning: Protobuf fields the schema does not define)."""

    schema_id: int | None
    schema_type: str | None
    value: Any = None
    note: str | None = None
    has_value: bool = False


class _Unusable:
    """A schema id whose schema cannot be used; ``reason`` goes into every note for it."""

    __slots__ = ("reason",)

    def __init__(self, reason: str) -> None:
        self.reason = reason


def _compiler(schema_type: str) -> Callable[[Schema, SchemaStore], Callable[[bytes, int], Any]]:
    if schema_type == AVRO:
        from kdump.payload.avro import compile_avro

        return compile_avro
    if schema_type == PROTOBUF:
        from kdump.payload.protobuf import compile_protobuf

        return compile_protobuf
    from kdump.payload.json_schema import compile_json

    return compile_json


class PayloadDecoder:
    """Decodes framed payloads with the schemas of one :class:`SchemaStore`; each schema is compiled once, on
    first use."""

    def __init__(self, store: SchemaStore) -> None:
        self.store = store
        self._compiled: dict[int, tuple[str, Callable[[bytes, int], Any]] | _Unusable] = {}

    def _compile(self, schema_id: int) -> tuple[str, Callable[[bytes, int], Any]] | _Unusable:
        schema = self.store.by_id.get(schema_id)
        if schema is None:
            found: tuple[str, Callable[[bytes, int], Any]] | _Unusable = _Unusable(
                f"schema id {schema_id} is not known (looked in: {self.store.describe_sources()})"
            )
        else:
            try:
                found = (schema.schema_type, _compiler(schema.schema_type)(schema, self.store))
            except ImportError as e:
                found = _Unusable(
                    f"schema id {schema_id} is {schema.schema_type}, which needs {e.name or e}: "
                    "pip install 'kdump[schema-registry]'"
                )
            except ValueError as e:
                found = _Unusable(f"schema id {schema_id} ({schema.schema_type}, {schema.origin}): {e}")
            except RecursionError:
                found = _Unusable(
                    f"schema id {schema_id} ({schema.schema_type}, {schema.origin}): the schema is nested too deep"
                )
        self._compiled[schema_id] = found
        return found

    def function_for(self, schema_id: int) -> Callable[[bytes, int], Any] | None:
        """The compiled decoder of a schema id (``(data, 5) -> value``; raises on data that does not fit), or
        None when the id is unknown or its schema unusable.  For renderers' fast paths; :meth:`decode` is the
        careful way."""
        compiled = self._compiled.get(schema_id)
        if compiled is None:
            compiled = self._compile(schema_id)
        return None if isinstance(compiled, _Unusable) else compiled[1]

    def decode(self, data: bytes) -> Decoded:
        try:
            schema_id = schema_id_of(data)
        except FramingError as e:
            return Decoded(None, None, note=e.message)
        compiled = self._compiled.get(schema_id)
        if compiled is None:
            compiled = self._compile(schema_id)
        if isinstance(compiled, _Unusable):
            return Decoded(schema_id, None, note=compiled.reason)
        schema_type, decode = compiled
        try:
            return Decoded(schema_id, schema_type, decode(data, HEADER_SIZE), None, True)
        except FramingError as e:
            return Decoded(schema_id, schema_type, note=e.message)
        except PayloadBound as e:
            return Decoded(schema_id, schema_type, note=f"schema id {schema_id} ({schema_type}): {e.message}")
        except RecursionError:
            return Decoded(
                schema_id, schema_type, note=f"does not fit schema id {schema_id}: nested too deep"
            )
        except Exception as e:  # noqa: BLE001 -- third-party decoders of arbitrary bytes raise anything
            has_value = hasattr(e, "value")
            value = getattr(e, "value", None)
            note = f"{e}" if has_value else _mismatch(schema_id, schema_type, e)
            return Decoded(schema_id, schema_type, value, note, has_value)


def _mismatch(schema_id: int, schema_type: str, e: Exception) -> str:
    detail = str(e) or type(e).__name__
    if (
        isinstance(e, EOFError | StopIteration | IndexError)
        or "EOF" in detail
        or "truncated" in detail.lower()
    ):
        return f"truncated or not {schema_type} of schema id {schema_id} ({detail})"
    if schema_type == JSON:
        return f"not JSON ({detail})"
    return f"does not fit schema id {schema_id} ({schema_type}): {detail}"
