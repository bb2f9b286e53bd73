"""Buffered UTF-8 output for large dumps: strings are gathered and written in big chunks."""

from __future__ import annotations

from typing import Any, BinaryIO

from kdump.errors import KdumpError


class OutputError(KdumpError):
    """The output stream cannot be written (a full disk, ``> /dev/full``, an I/O error); a closed pipe stays a
    :class:`BrokenPipeError` (a quiet end, as ``| head`` expects)."""

    def located(self, path: str | None = None, position: int | None = None) -> KdumpError:
        return self  # the failure is the output's, not the input file's


class Output:
    """Collects text and writes it to a binary stream in chunks of about ``chunk`` characters."""

    __slots__ = ("stream", "parts", "pending", "chunk", "name")

    def __init__(self, stream: BinaryIO, chunk: int = 1 << 16, name: str = "standard output") -> None:
        self.stream = stream
        self.name = name
        self.parts: list[str] = []
        self.pending = 0
        self.chunk = chunk

    def write(self, text: str) -> None:
        self.parts.append(text)
        self.pending += len(text)
        if self.pending >= self.chunk:
            self.flush()

    def write_lines(self, lines: list[Any]) -> None:
        """Write record lines: strings, and lines too big for one string (``kafka_text.LargeLine``), whose
        text is made and written a piece at a time."""
        try:
            text = "".join(lines)
        except TypeError:
            for line in lines:
                if type(line) is str:
                    self.write(line)
                else:
                    for piece in line.pieces():
                        self.write(piece)
            return
        self.write(text)

    def discard(self) -> None:
        """Drop what is pending unwritten (the stream cannot take it, or it is what exhausted memory)."""
        self.parts.clear()
        self.pending = 0

    def flush(self) -> None:
        if self.parts:
            data = "".join(self.parts).encode("utf-8", "replace")
            self.parts.clear()
            self.pending = 0
            try:
                self.stream.write(data)
            except BrokenPipeError:
                raise
            except OSError as e:
                raise OutputError(f"cannot write: {e.strerror or e}", path=self.name) from None
        try:
            self.stream.flush()
        except BrokenPipeError:
            raise
        except OSError as e:
            raise OutputError(f"cannot write: {e.strerror or e}", path=self.name) from None
