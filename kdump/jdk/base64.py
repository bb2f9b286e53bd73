"""``java.util.Base64``'s URL decoder: what it accepts and its error texts, byte for byte (Kafka's
``Uuid.fromString`` decodes topic and directory ids with it)."""

from __future__ import annotations

_URL_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
_URL_VALUES = {ord(ch): i for i, ch in enumerate(_URL_ALPHABET)}


def url_decode(text: str) -> bytes:
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
