"""Byte-exact emulation of the JDK 17 UTF-8 decoder used by ``kafka-dump-log.sh``.

Kafka turns record keys, values and header keys into text with
``new String(bytes, StandardCharsets.UTF_8)``: malformed input is *replaced*
with U+FFFD, never rejected.  Well-formed UTF-8 decodes identically in Python
and in the JDK (both reject encoded surrogates, overlongs and code points above
U+10FFFF), but they may disagree on *how many bytes* one malformed sequence
swallows, i.e. on how many U+FFFD characters appear.

JDK 17 rules (``String.decodeUTF8_UTF16``), for a malformed sequence whose
first byte is ``b1``; "acceptable second byte" means ``80..BF`` narrowed to
``A0..BF`` after ``E0``, ``90..BF`` after ``F0`` and ``80..8F`` after ``F4``
(but *not* narrowed to ``80..9F`` after ``ED``):

* ``80..BF`` (stray continuation), ``C0``/``C1`` (always overlong),
  ``F5..FF`` and a ``C2..DF`` lead without continuation: one U+FFFD for
  that single byte.
* ``E0..EF`` followed by two or more bytes: a structurally complete sequence
  that decodes to a surrogate (``ED A0..BF 80..BF``) is one U+FFFD for all
  three bytes.  Otherwise one U+FFFD for the lead plus the second byte if that
  is acceptable, else for the lead alone.
* ``E0..EF`` with at most one byte left: an unacceptable last byte leaves a
  U+FFFD for the lead alone, otherwise one U+FFFD covers the rest of the input.
* ``F0..F4`` followed by three or more bytes: one U+FFFD for the lead alone if
  the second byte is unacceptable, else for lead + second byte if the third is
  no continuation, else for three bytes (then the bad fourth byte is decoded
  afresh).
* ``F0..F4`` with at most two bytes left: unacceptable second byte -> U+FFFD
  for the lead alone; else a third byte that is no continuation -> U+FFFD for
  two bytes; else one U+FFFD covers the rest of the input.
* Decoding always resumes at the first byte not swallowed; the JDK never
  swallows a byte that is not a continuation byte (``80..BF``).

Python's ``decode("utf-8", "replace")`` (Unicode's "maximal subpart" practice)
gives the same result for every shape above except one: Python does not
accept ``A0..BF`` after ``ED``, so where the JDK emits *one* U+FFFD for
``ED A0..BF`` followed by an optional continuation byte (complete surrogate,
surrogate cut short by a non-continuation byte, or by the end of the input),
Python emits two or three.  As ``ED`` is not a continuation byte, it always
starts a fresh sequence in both decoders, so the input can be split around
those runs and the pieces decoded with Python's "replace" independently.
This equivalence was verified against a JDK 17 oracle on ~24M inputs (all 1-,
2- and 3-byte strings, structured 4/5-byte strings, random strings);
``tests/fixtures/jdk_utf8_vectors.txt`` keeps a covering subset.

Everything the JDK decodes is either a well-formed scalar value or U+FFFD, so
the result never contains unpaired surrogates and plain UTF-8 encoding
(:func:`encode_utf8_jdk`) reproduces what the JDK's ``PrintStream`` writes (the
JDK would print an unpaired surrogate as ``?``, which cannot arise here).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

__all__ = ["decode_utf8_jdk", "decode_utf8_jdk_pieces", "encode_utf8_jdk"]

_REPLACEMENT = "\ufffd"

# The only shape on which the JDK's U+FFFD count differs from Python's "replace":
# ED A0..BF (a UTF-16 surrogate encoded in UTF-8) plus at most one continuation byte.
_ENCODED_SURROGATE = re.compile(rb"\xed[\xa0-\xbf][\x80-\xbf]?")


def decode_utf8_jdk(data: bytes | bytearray | memoryview) -> str:
    """Decode ``data`` exactly like JDK 17's ``new String(data, StandardCharsets.UTF_8)``.

    Valid UTF-8 costs one strict C-level decode.  Malformed input is decoded with
    Python's "replace" handler, except that each encoded-surrogate run matched by
    ``_ENCODED_SURROGATE`` becomes a single U+FFFD (see the module docstring).
    """
    try:
        if type(data) is bytes:
            return data.decode("utf-8")
        return str(data, "utf-8")
    except UnicodeDecodeError:
        pass
    raw = bytes(data)
    if b"\xed" not in raw:
        return raw.decode("utf-8", "replace")
    return _REPLACEMENT.join(part.decode("utf-8", "replace") for part in _ENCODED_SURROGATE.split(raw))


def decode_utf8_jdk_pieces(data: bytes | bytearray | memoryview, piece: int = 1 << 20) -> Iterator[str]:
    """:func:`decode_utf8_jdk` of ``data`` a piece of about ``piece`` bytes at a time (joined, the same text).

    Each cut falls before a byte that is not a continuation byte (``80..BF``), where the JDK always starts a
    fresh sequence (it never swallows such a byte), or inside a run of continuation bytes at least three
    bytes after the last byte that is not one (no sequence reaches that far: each byte there is a U+FFFD of
    its own)."""
    n = len(data)
    piece = max(piece, 4)
    start = 0
    while start < n:
        cut = start + piece
        if cut >= n:
            cut = n
        else:
            c = cut
            while c > cut - 3 and 0x80 <= data[c] <= 0xBF:
                c -= 1
            if not 0x80 <= data[c] <= 0xBF:
                cut = c
        yield decode_utf8_jdk(data[start:cut])
        start = cut


def encode_utf8_jdk(s: str) -> bytes:
    """Encode ``s`` the way the JDK's UTF-8 ``PrintStream`` does.

    Plain UTF-8 for any text :func:`decode_utf8_jdk` returns.  Strings holding
    surrogate code points (which the decoder never produces) are handled like the
    JDK's encoder does: a high+low pair is one supplementary character, and each
    unpaired surrogate becomes ``?``.
    """
    try:
        return s.encode("utf-8")
    except UnicodeEncodeError:
        paired = s.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")
        return paired.encode("utf-8", "replace")


def string_split(pattern: re.Pattern[str], text: str) -> list[str]:
    """Java's ``String.split(regex)``: a leading empty piece is kept after a non-empty match at 0, trailing empty
    pieces are dropped, and no match at all returns the whole input."""
    if not pattern.search(text):
        return [text]
    parts = pattern.split(text)
    while parts and parts[-1] == "":
        parts.pop()
    return parts
