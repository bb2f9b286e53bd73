"""Kafka's ``Uuid`` as text: ``Uuid.toString`` (unpadded base64url of the 16 bytes) and ``Uuid.fromString``
with ``java.util.Base64``'s URL decoder rules and error texts (topic ids, directory ids)."""

from __future__ import annotations

import base64

_URL_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
_URL_VALUES = {ord(ch): i for i, ch in enumerate(_URL_ALPHABET)}


def _java_base64url_decode(text: str) -> bytes:
    """``Base64.getUrlDecoder().decode(String)`` including its error messages (raised as ValueError)."""
    src = text.encode("latin-1", errors="replace")  # String.getBytes(ISO_8859_1): unmappable -> '?'
    length = len(src)
    if length == 0:
        return b""
    if length < 2:
        raise ValueError("Input byte[] should at least have 2 bytes for base64 bytes")
    out = bytearray()
    bits = 0
    shift = 18
    sp = 0
    while sp < length:
        byte = src[sp]
        sp += 1
        value = _URL_VALUES.get(byte)
        if value is None:
            if byte == 0x3D:  # '='
                if (shift == 6 and (sp == length or src[sp] != 0x3D)) or shift == 18:
                    raise ValueError("Input byte array has wrong 4-byte ending unit")
                if shift == 6:
                    sp += 1
                break
            signed = byte - 256 if byte >= 128 else byte
            raise ValueError(
                f"Illegal base64 character {format(signed, 'x') if signed >= 0 else '-' + format(-signed, 'x')}"
            )
        bits |= value << shift
        shift -= 6
        if shift < 0:
            out += bytes(((bits >> 16) & 0xFF, (bits >> 8) & 0xFF, bits & 0xFF))
            shift = 18
            bits = 0
    if shift == 6:
        out.append((bits >> 16) & 0xFF)
    elif shift == 0:
        out += bytes(((bits >> 16) & 0xFF, (bits >> 8) & 0xFF))
    elif shift == 12:
        raise ValueError("Last unit does not have enough valid bits")
    if sp < length:
        raise ValueError(f"Input byte array has incorrect ending byte at {sp}")
    return bytes(out)


def decode_uuid(text: str) -> bytes:
    """Kafka's ``Uuid.fromString``: 16 bytes from unpadded (or padded) base64url; ValueError with Kafka's text."""
    java_length = len(text) + sum(1 for ch in text if ord(ch) > 0xFFFF)
    if java_length > 24:
        raise ValueError(f"Input string with prefix `{text[:24]}` is too long to be decoded as a base64 UUID")
    raw = _java_base64url_decode(text)
    if len(raw) != 16:
        raise ValueError(
            f"Input string `{text}` decoded as {len(raw)} bytes, which is not equal to the expected 16 bytes "
            "of a base64-encoded UUID"
        )
    return raw


def encode_uuid(raw: bytes) -> str:
    """Kafka's ``Uuid.toString``: the 16 bytes as unpadded base64url (22 characters)."""
    if len(raw) != 16:
        raise ValueError("a Kafka Uuid has 16 bytes")
    return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


ZERO_UUID = "AAAAAAAAAAAAAAAAAAAAAA"
