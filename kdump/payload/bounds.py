"""What one decoded payload may build: the bounds every decoder (Avro, Protobuf, JSON) keeps.

A schema-registry payload is a few bytes of a record; what a decoder builds from it is Python objects, and the
encodings let a few bytes stand for very many of them (an Avro array block of 2^62 ``null`` items is ten bytes)
or for very deep nesting (a recursive Avro record, nested JSON).  Counts from the payload are never trusted: a
payload is decoded only when what it would build is known to stay inside these bounds, and one past a bound is
a note (``kdumpNote:`` / ``decodeNotes``) like any other payload that is not decoded.

* :data:`MAX_PAYLOAD_BYTES` -- larger payloads are not decoded (their text alone would be several times that).
* :data:`MAX_VALUES` -- the values (record fields, array items, map entries, scalars) one payload may build.
  Measured: a payload at the bound, shown as text or JSON lines, keeps ``kdump files`` under about 150 MiB
  (``tests/test_payload_bounds.py`` runs it under an address-space limit).
* :data:`MAX_DEPTH` -- records, arrays, maps (objects, lists) nested inside the top value, one inside the
  other: Protobuf's own parser stops past 100 messages nested in the top one (``google.protobuf``'s default
  recursion limit, the same in its C++ and upb runtimes: 101 levels parse, 102 do not); kdump keeps the same
  limit for all three formats.  It keeps every writer of the value (orjson
  stops at 255 levels, the standard library's encoder and Spark's column conversion recurse in Python) and
  fastavro's compiled reader (which overflows the C stack a few thousand levels down) far from their limits.

The time a payload takes is bounded with them: the checks read each byte of the payload a bounded number of
times and the decoder builds at most :data:`MAX_VALUES` values.
"""

from __future__ import annotations

MAX_PAYLOAD_BYTES = 16 << 20
MAX_VALUES = 500_000
MAX_DEPTH = 100


class PayloadBound(Exception):
    """The payload would build more than a bound allows; ``message`` says which bound."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def too_deep() -> PayloadBound:
    return PayloadBound(f"nested more than {MAX_DEPTH} levels deep (kdump's bound on a decoded payload)")


def too_many() -> PayloadBound:
    return PayloadBound(f"more than {MAX_VALUES:,} values (kdump's bound on a decoded payload)")


def check_size(size: int) -> None:
    """Raise :class:`PayloadBound` when a payload of ``size`` bytes is too large to decode."""
    if size > MAX_PAYLOAD_BYTES:
        raise PayloadBound(
            f"{size:,} bytes, more than {MAX_PAYLOAD_BYTES:,} (kdump's bound on a decoded payload)"
        )
