"""The bounds of :mod:`kdump.payload.bounds` for Protobuf, kept around the runtime's parser.

Every value ``MessageToDict`` builds takes at least one byte of the message (a field's tag, an element of a
packed field), so a message of at most ``MAX_VALUES`` bytes is within the value bound, and the runtime itself
stops at 100 nested messages (its default recursion limit, upb's ``upb_DecodeOptions_MaxDepth``), kdump's
``MAX_DEPTH``.  A longer message is scanned first (:func:`scan`): the wire format walked with the message's
descriptor (Protobuf encoding: tag varints, wire types 0 varint, 1 fixed64, 2 length-delimited, 3/4 group, 5
fixed32), nothing built, the values counted -- a packed field by its elements -- and the nesting of messages.
"""

from __future__ import annotations

from typing import Any

from kdump.payload.bounds import MAX_DEPTH, MAX_VALUES, too_deep, too_many

#: FieldDescriptor types whose packed elements are varints, 4-byte and 8-byte words.
_VARINT_TYPES = {3, 4, 5, 8, 13, 14, 17, 18}  # int64 uint64 int32 bool uint32 enum sint32 sint64
_FIXED32_TYPES = {2, 7, 15}  # float fixed32 sfixed32
_FIXED64_TYPES = {1, 6, 16}  # double fixed64 sfixed64
_MESSAGE, _GROUP = 11, 10
_HIGH_BYTES = bytes(range(128, 256))


def scan(descriptor: Any, data: bytes, start: int) -> None:
    """Walk the message of ``descriptor`` at ``data[start:]``; raise
    :class:`~kdump.payload.bounds.PayloadBound` past a bound, ValueError on bytes that are not a message."""
    budget = MAX_VALUES

    def varint(pos: int, end: int) -> tuple[int, int]:
        result = shift = 0
        while True:
            if pos >= end:
                raise ValueError(f"truncated: a varint runs past the end at payload byte {pos}")
            b = data[pos]
            pos += 1
            result |= (b & 0x7F) << shift
            if b < 0x80:
                return result, pos
            shift += 7
            if shift > 63:
                raise ValueError(f"a varint longer than 10 bytes at payload byte {pos}")

    def message(desc: Any, pos: int, end: int, depth: int, group: int | None) -> int:
        nonlocal budget
        if depth > MAX_DEPTH:
            raise too_deep()
        fields = desc.fields_by_number if desc is not None else {}
        while pos < end:
            tag, pos = varint(pos, end)
            number, wire_type = tag >> 3, tag & 7
            field = fields.get(number)
            if field is not None:
                budget -= 1
                if budget < 0:
                    raise too_many()
            if wire_type == 0:
                pos = varint(pos, end)[1]
            elif wire_type == 1 or wire_type == 5:
                pos += 8 if wire_type == 1 else 4
            elif wire_type == 2:
                length, pos = varint(pos, end)
                stop = pos + length
                if stop > end:
                    raise ValueError(
                        f"truncated: a field of {length} bytes runs past the end at payload byte {pos}"
                    )
                if field is not None:
                    if field.type == _MESSAGE:
                        message(field.message_type, pos, stop, depth + 1, None)
                    elif field.type in _VARINT_TYPES:
                        budget -= len(data[pos:stop].translate(None, _HIGH_BYTES)) - 1
                    elif field.type in _FIXED32_TYPES:
                        budget -= length // 4 - 1
                    elif field.type in _FIXED64_TYPES:
                        budget -= length // 8 - 1
                    if budget < 0:
                        raise too_many()
                pos = stop
            elif wire_type == 3:
                pos = message(
                    field.message_type if field is not None and field.type == _GROUP else None,
                    pos,
                    end,
                    depth + 1,
                    number,
                )
            elif wire_type == 4:
                if group != number:
                    raise ValueError(f"an end of group {number} that was not started")
                return pos
            else:
                raise ValueError(f"wire type {wire_type} at payload byte {pos}")
            if pos > end:
                raise ValueError(f"truncated: a field runs past the end at payload byte {end}")
        if group is not None:
            raise ValueError(f"group {group} is not ended")
        return pos

    message(descriptor, start, len(data), 0, None)
