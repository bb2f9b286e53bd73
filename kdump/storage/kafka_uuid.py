"""Kafka's ``Uuid`` as text: ``Uuid.toString`` (unpadded base64url of the 16 bytes) and ``Uuid.fromString``
with ``java.util.Base64``'s URL decoder rules and error texts (topic ids, directory ids)."""

from __future__ import annotations

import base64

from kdump.jdk.base64 import url_decode


def decode_uuid(text: str) -> bytes:
    """Kafka's ``Uuid.fromString``: 16 bytes from unpadded (or padded) base64url; ValueError with Kafka's text."""
    java_length = len(text) + sum(1 for ch in text if ord(ch) > 0xFFFF)
    if java_length > 24:
        raise ValueError(f"Input string with prefix `{text[:24]}` is too long to be decoded as a base64 UUID")
    raw = url_decode(text)
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
