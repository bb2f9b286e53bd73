"""The log directory's ``.kafka_cleanshutdown`` marker (Kafka's ``CleanShutdownFileHandler``): empty before
3.7, ``{"version":0,"brokerEpoch":<n>}`` since."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass

from kdump.storage.byte_source import ByteSource, location_of
from kdump.storage.checkpoint_file import jackson_text, parse_json_value, read_whole, state_file_error


@dataclass(frozen=True)
class CleanShutdown:
    """The clean-shutdown marker.  Empty before 3.7 (``version``/``broker_epoch`` None); since 3.7
    ``{"version":0,"brokerEpoch":<n>}``."""

    version: int | None
    broker_epoch: int | None
    path: str | None = None

    @property
    def is_empty(self) -> bool:
        return self.version is None and self.broker_epoch is None


def parse_clean_shutdown(data: bytes, path: str | os.PathLike[str] | None = None) -> CleanShutdown:
    """Decode ``.kafka_cleanshutdown``.

    Kafka's ``CleanShutdownFileHandler.read`` never fails: anything it cannot read just means "broker epoch
    unknown".  kdump is stricter and reports non-JSON content, so a damaged marker is visible; an empty (or
    blank) file is the old-style marker.
    """
    where = None if path is None else os.fspath(path)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise state_file_error(f"invalid UTF-8 at byte {exc.start}", where, line, exc.start) from None
    if not text.strip():
        return CleanShutdown(None, None, where)
    try:
        node, _ = parse_json_value(text)
    except ValueError as exc:
        pos = getattr(exc, "pos", 0)
        raise state_file_error(
            f"invalid JSON: {exc}", where, getattr(exc, "lineno", 1), len(text[:pos].encode("utf-8"))
        ) from None
    except RecursionError:
        raise state_file_error("invalid JSON: nested too deeply", where, 1, 0) from None
    if not isinstance(node, dict):
        raise state_file_error(f"expected a JSON object, found {jackson_text(node)}", where, 1, 0)
    values: dict[str, int | None] = {}
    for key in ("version", "brokerEpoch"):
        value = node.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
            raise state_file_error(f"field '{key}' is not an integer: {jackson_text(value)}", where, 1, 0)
        values[key] = value
    return CleanShutdown(values["version"], values["brokerEpoch"], where)


def read_clean_shutdown(path: str | os.PathLike[str] | ByteSource) -> CleanShutdown:
    """Read and decode a ``.kafka_cleanshutdown`` file."""
    return parse_clean_shutdown(read_whole(path), location_of(path))


def encode_clean_shutdown(broker_epoch: int, *, version: int = 0) -> bytes:
    """What Kafka 3.7+ writes: ``{"version":<v>,"brokerEpoch":<n>}``."""
    return json.dumps({"version": version, "brokerEpoch": broker_epoch}, separators=(",", ":")).encode(
        "utf-8"
    )
