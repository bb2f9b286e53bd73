"""Hand-encoded v2 batches for hostile-input tests and ``bench/memory_bench.py``: written here from the format
(zigzag varints, the 61-byte header, CRC-32C over bytes 21..end), independently of kdump's builder, so that what
kdump reads is not what kdump wrote."""

from __future__ import annotations

import os
import struct
import subprocess
import sys

from kdump.storage.checksum import crc32c
from kdump.storage.compression import NONE, compress

_V2_HEADER = struct.Struct(">qiiBIhiqqqhii")


def zigzag_varint(n: int) -> bytes:
    """Kafka's signed varint (zigzag, 7 bits a byte)."""
    z = (n << 1) ^ (n >> 63)
    out = bytearray()
    while z >= 0x80:
        out.append((z & 0x7F) | 0x80)
        z >>= 7
    out.append(z)
    return bytes(out)


def v2_batch(
    records: bytes, count: int, codec: int = NONE, *, base_offset: int = 0, timestamp: int = 7
) -> bytes:
    """A v2 batch around already-encoded ``records`` (compressed with ``codec``), CRC-32C set; no producer."""
    payload = compress(codec, records, magic=2) if codec != NONE else records
    header = bytearray(
        _V2_HEADER.pack(
            base_offset, 49 + len(payload), 0, 2, 0, codec, count - 1, timestamp, timestamp, -1, -1, -1, count
        )
    )
    body = bytes(header[21:]) + payload
    struct.pack_into(">I", header, 17, crc32c(body))
    return bytes(header[:21]) + body


def record(offset_delta: int, tail: bytes) -> bytes:
    """One record: attributes 0, timestamp delta 0, ``offset_delta``, then ``tail`` (key, value, headers)."""
    body = b"\x00\x00" + zigzag_varint(offset_delta) + tail
    return zigzag_varint(len(body)) + body


def run_kdump(*args: str, pure: bool = False) -> subprocess.CompletedProcess[bytes]:
    """``python -m kdump <args>`` as a child process, output captured; ``pure``: without the C accelerator."""
    env = dict(os.environ)
    if pure:
        env["KDUMP_PURE_PYTHON"] = "1"
    return subprocess.run([sys.executable, "-m", "kdump", *args], capture_output=True, env=env, check=False)
