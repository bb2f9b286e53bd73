"""Buffered UTF-8 output for large dumps: strings are gathered and written in big chunks."""

from __future__ import annotations

from typing import BinaryIO


class Output:
    """Collects text and writes it to a binary stream in chunks of about ``chunk`` characters."""

    __slots__ = ("stream", "parts", "pending", "chunk")

    def __init__(self, stream: BinaryIO, chunk: int = 1 << 16) -> None:
        self.stream = stream
        self.parts: list[str] = []
        self.pending = 0
        self.chunk = chunk

    def write(self, text: str) -> None:
        self.parts.append(text)
        self.pending += len(text)
        if self.pending >= self.chunk:
            self.flush()

    def flush(self) -> None:
        if self.parts:
            data = "".join(self.parts).encode("utf-8", "replace")
            self.parts.clear()
            self.pending = 0
            self.stream.write(data)
        self.stream.flush()
