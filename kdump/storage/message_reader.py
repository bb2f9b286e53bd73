"""The reader of Kafka's generated protocol messages: any :class:`~kdump.storage.message_schema.MessageSchema` at
any version, as a :class:`~kdump.storage.message_schema.Struct`.

The reader follows the generated Java code closely, down to its error messages (which Kafka's dump tool prints
inside its output) and to how it behaves at versions outside a schema's range: each field is read under the
generator's version condition, which equals plain range membership for supported versions.
"""

from __future__ import annotations

import struct
import uuid as _uuid
from collections.abc import Sequence
from typing import Any

from kdump.storage.message_schema import (
    FIXED,
    PRIMITIVES,
    Field,
    MessageSchema,
    Struct,
    Versions,
    version_condition,
)

_INT16 = FIXED["int16"]
_INT32 = FIXED["int32"]

_SAME = object()


class MessageFormatError(ValueError):
    """The bytes do not match the message schema.

    ``java_message`` is what the generated Java reader's exception would return from ``getMessage()``
    (``None`` where Java throws an exception without message, such as ``BufferUnderflowException``); Kafka's
    dump tool prints it inside some of its output lines.
    """

    def __init__(self, message: str, java_message: str | None | object = _SAME) -> None:
        super().__init__(message)
        self.java_message: str | None = message if java_message is _SAME else java_message  # type: ignore[assignment]

    @property
    def java_text(self) -> str:
        """``String.valueOf(e.getMessage())``: the message, or ``null``."""
        return "null" if self.java_message is None else self.java_message


class UnsupportedVersionError(MessageFormatError):
    """A nested structure does not exist at the requested version (Kafka: UnsupportedVersionException)."""


def _underflow() -> MessageFormatError:
    return MessageFormatError(
        "Tried to read past the end of the buffer (java.nio.BufferUnderflowException)", None
    )


class _Reader:
    """A ``ByteBuffer`` over ``buf[pos:end]`` with the failure behaviour of Kafka's ``ByteBufferAccessor``."""

    __slots__ = ("buf", "pos", "end")

    def __init__(self, buf: bytes, pos: int, end: int) -> None:
        self.buf = buf
        self.pos = pos
        self.end = end

    @property
    def remaining(self) -> int:
        return self.end - self.pos

    def take(self, n: int) -> bytes:
        """``readArray(n)``."""
        remaining = self.end - self.pos
        if n > remaining:
            raise MessageFormatError(
                f"Error reading byte array of {n} byte(s): only {remaining} byte(s) available"
            )
        if n < 0:
            raise MessageFormatError(
                f"negative array size {n} (java.lang.NegativeArraySizeException)", str(n)
            )
        out = bytes(self.buf[self.pos : self.pos + n])
        self.pos += n
        return out

    def fixed(self, fmt: struct.Struct) -> Any:
        if self.pos + fmt.size > self.end:
            raise _underflow()
        value = fmt.unpack_from(self.buf, self.pos)[0]
        self.pos += fmt.size
        return value

    def byte(self) -> int:
        if self.pos >= self.end:
            raise _underflow()
        b = self.buf[self.pos]
        self.pos += 1
        return b - 256 if b >= 128 else b

    def uvarint(self) -> int:
        """``ByteUtils.readUnsignedVarint``: at most 5 bytes, the result as a Java ``int``."""
        result = 0
        for shift in (0, 7, 14, 21):
            b = self.byte()
            if b >= 0:
                return _int32(result | (b << shift))
            result |= (b & 0x7F) << shift
        b = self.byte()
        result = _int32(result | ((b << 28) & 0xFFFFFFFF))
        if b < 0:
            raise MessageFormatError(
                "Varint is too long, the most significant bit in the 5th byte is set, "
                f"converted value: {result & 0xFFFFFFFF:x}"
            )
        return result


def read_unsigned_varint_java(buf: bytes, pos: int = 0) -> tuple[int, int]:
    """Kafka's ``ByteUtils.readUnsignedVarint`` at ``pos``: at most 5 bytes, the value as a Java ``int`` (it can
    be negative); returns ``(value, next_pos)``, raises :class:`MessageFormatError` as Java throws."""
    reader = _Reader(buf, pos, len(buf))
    return reader.uvarint(), reader.pos


def _int32(v: int) -> int:
    v &= 0xFFFFFFFF
    return v - 0x100000000 if v >= 0x80000000 else v


def read_message(
    schema: MessageSchema, buf: bytes, version: int, pos: int = 0, end: int | None = None
) -> Struct:
    """Decode ``buf[pos:end]`` as ``schema`` at ``version``; bytes left over are an error."""
    reader = _Reader(buf, pos, len(buf) if end is None else end)
    result = _read_top(reader, schema, version)
    if reader.pos != reader.end:
        raise MessageFormatError(f"Found {reader.end - reader.pos} byte(s) of garbage after {schema.name}")
    return result


def read_message_prefix(
    schema: MessageSchema, buf: bytes, version: int, pos: int = 0, end: int | None = None
) -> tuple[Struct, int]:
    """Decode a message at ``pos`` and return it with the position after it (trailing bytes allowed), as
    Kafka's generated ``read`` does."""
    reader = _Reader(buf, pos, len(buf) if end is None else end)
    result = _read_top(reader, schema, version)
    return result, reader.pos


def _read_top(r: _Reader, schema: MessageSchema, version: int) -> Struct:
    return _read_struct(r, schema.fields, version, schema.version_range, schema.flexible_range)


def _read_struct(
    r: _Reader, fields: Sequence[Field], version: int, possible: Versions, flexible_versions: Versions
) -> Struct:
    out = Struct(tuple(fields), version)
    values = out.values
    for f in fields:
        mandatory = f.mandatory_range
        if version_condition(mandatory, possible, version):
            present = possible.intersect(mandatory)
            flexible = version_condition(flexible_versions, present, version)
            values[f.name] = _read_value(r, f, version, possible, present, flexible_versions, flexible, False)
    if version_condition(flexible_versions, possible, version):
        cur_flexible = possible.intersect(flexible_versions)
        count = r.uvarint()
        for _ in range(count):
            tag = r.uvarint()
            size = r.uvarint()
            tagged = _tagged_field(fields, tag)
            if tagged is None:
                out.unknown_tagged.append((tag, r.take(size)))
                continue
            valid_tagged = tagged.version_range.intersect(tagged.tagged_range)
            if not version_condition(valid_tagged, cur_flexible, version):
                raise MessageFormatError(f"Tag {tag} is not valid for version {version}")
            present = cur_flexible.intersect(valid_tagged)
            # Like the generated code, a known tagged field is read from the stream itself; its size is not used.
            values[tagged.name] = _read_value(
                r, tagged, version, possible, present, flexible_versions, True, True
            )
    # keep schema order for tagged fields read out of order
    if any(f.tag is not None for f in fields):
        out.values = {f.name: values[f.name] for f in fields if f.name in values}
    return out


def _tagged_field(fields: Sequence[Field], tag: int) -> Field | None:
    for f in fields:
        if f.tag == tag and not f.version_range.intersect(f.tagged_range).empty:
            return f
    return None


def _read_value(
    r: _Reader,
    f: Field,
    version: int,
    possible: Versions,
    present: Versions,
    flexible_versions: Versions,
    flexible: bool,
    tagged: bool,
) -> Any:
    """One field; ``possible`` are the enclosing struct's possible versions, ``present`` those in which the
    field is present (in the way it is being read: untagged or tagged)."""
    if f.is_array:
        n = _int32(r.uvarint() - 1) if flexible else r.fixed(_INT32)
        if n < 0:
            if not version_condition(f.nullable_range, present, version):
                raise MessageFormatError(f"non-nullable field {f.json_name} was serialized as null")
            return None
        if n > r.remaining:
            raise MessageFormatError(
                f"Tried to allocate a collection of size {n}, but there are only {r.remaining} bytes remaining."
            )
        t = f.element_type
        if t in ("string", "bytes"):
            return [_read_variable(r, t, f"{f.json_name} element", flexible, False) for _ in range(n)]
        if t in PRIMITIVES:
            return [_read_primitive(r, t) for _ in range(n)]
        return [_read_nested(r, f, version, possible, flexible_versions) for _ in range(n)]
    t = f.type
    if t in ("string", "bytes"):
        return _read_variable(
            r, t, f.json_name, flexible, version_condition(f.nullable_range, present, version)
        )
    if t in PRIMITIVES:
        return _read_primitive(r, t)
    if version_condition(f.nullable_range, present, version):
        if (r.uvarint() <= 0) if tagged else (r.byte() < 0):
            return None
    return _read_nested(r, f, version, possible, flexible_versions)


def _read_primitive(r: _Reader, t: str) -> Any:
    fmt = FIXED.get(t)
    if fmt is not None:
        return r.fixed(fmt)
    if t == "bool":
        return r.byte() != 0
    if t == "uuid":
        if r.remaining < 16:
            raise _underflow()
        return _uuid.UUID(bytes=r.take(16))
    raise MessageFormatError(f"unsupported type {t}")


def _read_variable(r: _Reader, t: str, name: str, flexible: bool, nullable: bool) -> Any:
    if flexible:
        n = _int32(r.uvarint() - 1)
    elif t == "string":
        n = r.fixed(_INT16)
    else:
        n = r.fixed(_INT32)
    if n < 0:
        if not nullable:
            raise MessageFormatError(f"non-nullable field {name} was serialized as null")
        return None
    if t == "string":
        if n > 0x7FFF:
            raise MessageFormatError(f"string field {name} had invalid length {n}")
        return _decode_string(r.take(n))
    return r.take(n)


def _read_nested(
    r: _Reader, f: Field, version: int, enclosing: Versions, flexible_versions: Versions
) -> Struct:
    if f.struct_versions is not None:  # a common struct: generated with its own versions, no version check
        possible = Versions.parse(f.struct_versions)
    else:
        struct_versions = f.version_range
        if not version_condition(enclosing, struct_versions, version):
            raise UnsupportedVersionError(f"Can't read version {version} of {f.element_type}")
        possible = enclosing.intersect(struct_versions)
    return _read_struct(r, f.fields, version, possible, flexible_versions)


def _decode_string(data: bytes) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        from kdump.jdk.text import decode_utf8_jdk

        return decode_utf8_jdk(data)
