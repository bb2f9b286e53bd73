"""kdump's JSON lines: the one serializer (:func:`line`) and the one schema version (:data:`JSON_SCHEMA_VERSION`)
of every command's ``--json`` output, and the objects of ``kdump files --json``, one per fact the Kafka text
shows (man kdump-files, JSON OUTPUT).

Every object has a ``type``; field names are the camelCase labels of the Kafka text (``baseOffset``,
``lastOffset``, ``position``, ``keySize``, ...).  Keys, values and header values are strings when they are valid
UTF-8 and base64 otherwise, with ``keyEncoding``/``payloadEncoding``/``valueEncoding`` set to ``"base64"`` then.
The schema (:mod:`kdump.render.json_schema`) is versioned by :data:`JSON_SCHEMA_VERSION`, carried by every
``file`` object.
"""

from __future__ import annotations

import base64
import codecs
import json
import os
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from kdump.jdk.text import decode_utf8_jdk
from kdump.problem import Problem
from kdump.render.problem_text import what
from kdump.storage.naming import parse_partition_dir
from kdump.storage.record import check_object_headers

if TYPE_CHECKING:
    # types only: every command's JSON imports this module (for line and head), most of them no record
    # decoding, so it loads no more than they need (control records' decoding loads when one is written)
    from kdump.errors import KdumpError
    from kdump.render.decoders import MessageParser
    from kdump.storage.file_records import RecordBatch
    from kdump.storage.producer_snapshot import ProducerSnapshotEntry
    from kdump.storage.record import Record
    from kdump.storage.transaction_index import AbortedTxn

#: The version of every command's JSON objects (the one constant; bumped when a field changes meaning or
#: disappears).
#: What changed between versions is told in man kdump-files ("JSON schema version 3"); every type and member
#: object is in :mod:`kdump.render.json_schema`.
JSON_SCHEMA_VERSION = 3

#: The types that open a unit of output and carry ``version``, the schema version (and no other type does,
#: but for :data:`kdump.render.json_schema.FILE_VERSION_TYPES`); :func:`head` is the only way it gets into an
#: object.  Here, not in :mod:`kdump.render.json_schema` (the tables the tests check the output against), so
#: that a command's JSON does not load those tables.
HEAD_TYPES = frozenset(
    {
        "file",
        "location",
        "coordinator",
        "partition",
        "txnPartition",
        "diffPartition",
        "tieredPartition",
        "retentionPartition",
        "reportPartition",
        "reportGroups",
        "reportCoordinator",
        "reportOverview",
        "summary",
        "salvageSummary",
        "rebuildSummary",
    }
)

_dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


def line(obj: dict[str, Any]) -> str:
    """``obj`` as one line of JSON: the one serializer of every command's ``--json`` output (UTF-8 text, not
    ``\\u`` escapes; no blanks after ``,`` and ``:``)."""
    return _dumps(obj) + "\n"


def head(type_: str, /, **fields: Any) -> dict[str, Any]:
    """An object that opens a unit of output (a file, a partition, a location, a summary): its ``type``, the
    schema ``version``, then ``fields``.  The only way the schema version gets into an object: the types that carry it
    are :data:`HEAD_TYPES`."""
    assert type_ in HEAD_TYPES, type_
    return {"type": type_, "version": JSON_SCHEMA_VERSION, **fields}


def unreadable_lines(walk_errors: list[Problem]) -> str:
    """One ``unreadable`` object per directory a walk could not read (``ls``, ``txn``, ``retention``,
    ``diff``)."""
    return "".join(line({"type": "unreadable", "path": p.file, "message": what(p)}) for p in walk_errors)


def put_bytes(obj: dict[str, Any], name: str, data: bytes | memoryview | None) -> None:
    """``obj[name]`` = text when ``data`` is valid UTF-8, else base64 with ``obj[name + "Encoding"]``; a view
    (a key or value too big for one string, ``records(views=True)``) becomes a :class:`BigBytes`, which
    :func:`record_renderer`'s line writes a piece at a time."""
    if data is None:
        obj[name] = None
        return
    if type(data) is memoryview:
        big = BigBytes(data)
        obj[name] = big
        if not big.text:
            obj[name + "Encoding"] = "base64"
        return
    try:
        obj[name] = data.decode("utf-8")
    except UnicodeDecodeError:
        obj[name] = base64.b64encode(data).decode("ascii")
        obj[name + "Encoding"] = "base64"


#: How much of a :class:`BigBytes` is turned into text at a time (a multiple of 3: base64 pieces join exactly).
_BIG_PIECE = 3 << 18


class BigBytes:
    """A key or value too big for one string (a view of a map, ``records(views=True)``): its JSON string, as
    :func:`put_bytes` makes it of bytes (the text when it is valid UTF-8, else base64), made a piece at a time.
    ``text``: whether it is valid UTF-8 (checked once, a piece at a time, when made)."""

    __slots__ = ("data", "text")

    def __init__(self, data: memoryview) -> None:
        self.data = data
        decoder = codecs.getincrementaldecoder("utf-8")()
        try:
            for start in range(0, len(data), _BIG_PIECE):
                decoder.decode(data[start : start + _BIG_PIECE])
                _release(data)
            decoder.decode(b"", True)
        except UnicodeDecodeError:
            self.text = False
        else:
            self.text = True

    def pieces(self) -> Iterator[str]:
        """The JSON string, quotes included, in pieces: each piece of text escaped alone (JSON escapes code
        point by code point, and a piece holds whole code points), base64 of 3 bytes in 3 at a time."""
        data = self.data
        yield '"'
        decoder = codecs.getincrementaldecoder("utf-8")()
        for start in range(0, len(data), _BIG_PIECE):
            piece = data[start : start + _BIG_PIECE]
            if self.text:
                text = decoder.decode(piece)
                if text:
                    yield _dumps(text)[1:-1]
            else:
                yield base64.b64encode(piece).decode("ascii")
            _release(data)
        yield '"'


def _release(data: memoryview) -> None:
    from kdump.storage.file_records import release_view_pages  # only a big key or value needs it

    release_view_pages(data)


class JsonLine:
    """A record object holding a :class:`BigBytes`: its line, as :func:`line` writes it, made a piece at a
    time when written (:meth:`kdump.facts.output.Output.write_lines`)."""

    __slots__ = ("obj",)

    def __init__(self, obj: dict[str, Any]) -> None:
        self.obj = obj

    def pieces(self) -> Iterator[str]:
        sep = "{"
        for name, value in self.obj.items():  # the encoder's own layout: separators "," and ":"
            if type(value) is BigBytes:
                yield f"{sep}{_dumps(name)}:"
                yield from value.pieces()
            else:
                yield f"{sep}{_dumps(name)}:{_dumps(value)}"
            sep = ","
        yield "}\n"


def headers_json(record: Record) -> list[dict[str, Any]]:
    """A record's headers as ``[{"key": ..., "value": ...}]`` (with ``put_bytes``' encoding markers)."""
    check_object_headers(record)
    headers = []
    for h in record.headers:
        header: dict[str, Any] = {}
        put_bytes(header, "key", h.key)
        put_bytes(header, "value", h.value)
        headers.append(header)
    return headers


def file_object(path: str, kind: str, **facts: Any) -> str:
    return line(head("file", file=path, kind=kind, **facts))


def batch_object(batch: RecordBatch, position: int, file: str) -> dict[str, Any]:
    obj: dict[str, Any] = {"type": "batch", "file": file}
    if batch.magic >= 2:
        obj.update(
            baseOffset=batch.base_offset,
            lastOffset=batch.last_offset,
            count=batch.count_or_none,
            baseSequence=batch.base_sequence,
            lastSequence=batch.last_sequence,
            producerId=batch.producer_id,
            producerEpoch=batch.producer_epoch,
            partitionLeaderEpoch=batch.partition_leader_epoch,
            isTransactional=batch.is_transactional,
            isControl=batch.is_control_batch,
            deleteHorizonMs=batch.delete_horizon_ms,
        )
    else:
        obj["offset"] = batch.last_offset
    obj.update(
        position=position,
        timestampType=batch.timestamp_type,
        timestamp=batch.max_timestamp,
        size=batch.size_in_bytes,
        magic=batch.magic,
        compresscodec=batch.compression_name,
        crc=batch.checksum,
        isvalid=batch.is_valid(),
    )
    return obj


def batch_line(batch: RecordBatch, position: int, file: str) -> str:
    return line(batch_object(batch, position, file))


def record_renderer(
    batch: RecordBatch,
    print_contents: bool,
    skip_metadata: bool,
    parser: MessageParser,
    *,
    decoder: str | None = None,
    payload_json: Callable[[Record, dict[str, Any]], None] | None = None,
    context: dict[str, Any] | None = None,
) -> Callable[[Record], str]:
    """The JSON counterpart of :func:`kdump.render.kafka_text.record_renderer`: each record as one line, the
    object of :func:`record_object_renderer` (same arguments)."""
    to_object = record_object_renderer(
        batch,
        print_contents,
        skip_metadata,
        parser,
        decoder=decoder,
        payload_json=payload_json,
        context=context,
    )

    def render(r: Record) -> str:
        obj = to_object(r)
        try:
            return _dumps(obj) + "\n"
        except TypeError:  # a BigBytes (a view of a big key or value): written a piece at a time
            if not any(type(v) is BigBytes for v in obj.values()):
                raise
            return JsonLine(obj)  # type: ignore[return-value]

    return render


def record_object_renderer(
    batch: RecordBatch,
    print_contents: bool,
    skip_metadata: bool,
    parser: MessageParser,
    *,
    decoder: str | None = None,
    payload_json: Callable[[Record, dict[str, Any]], None] | None = None,
    context: dict[str, Any] | None = None,
) -> Callable[[Record], dict[str, Any]]:
    """The ``record`` object of each record of ``batch``.  ``skip_metadata`` keeps only
    ``offset`` among the metadata (a JSON record without its offset would be useless).  ``decoder``: an
    internal-topic decoder name; the record then carries ``decoded``, the decoded key and value as data
    (:func:`kdump.render.internal_topics.decode_jsonable`), besides the raw key and payload.  ``context``
    (:func:`record_context`): fields every record object starts with (its file, topic and partition).
    ``payload_json`` (``--decode-values``/``--decode-keys``) adds the decoded schema-registry payloads to a data
    record's object (:func:`kdump.render.decoded_payload.json_hook`)."""
    is_control = batch.is_control_batch
    magic = batch.magic
    timestamp_type = batch.timestamp_type
    prefix = context or {}

    def render(r: Record) -> dict[str, Any]:
        obj: dict[str, Any] = {"type": "record", **prefix, "offset": r.offset}
        if not skip_metadata:
            obj["timestampType"] = timestamp_type
            obj["timestamp"] = r.timestamp
            obj["keySize"] = r.key_size
            obj["valueSize"] = r.value_size
            if magic >= 2:
                obj["sequence"] = r.sequence
                if r.headers:
                    check_object_headers(r)
                obj["headerKeys"] = [decode_utf8_jdk(h.key) for h in r.headers]
            if r.magic < 2:
                obj["isValid"] = bool(r.valid)
                obj["crc"] = r.crc
            if is_control:
                obj.update(control_facts(r))
        if print_contents and not is_control:
            if decoder is not None:
                put_bytes(obj, "key", r.key)
                put_bytes(obj, "payload", r.value)
                obj["decoded"] = _decode_jsonable(decoder, r.key, r.value)
            elif parser.is_string_parser:
                put_bytes(obj, "key", r.key)
                put_bytes(obj, "payload", r.value)
                if magic >= 2:
                    obj["headers"] = headers_json(r)
            else:
                key, payload = parser.parse(r)
                obj["key"] = key
                obj["payload"] = payload
            if payload_json is not None:
                payload_json(r, obj)
        return obj

    return render


def record_context(path: str, absolute_path: str) -> dict[str, Any]:
    """``file``, ``topic`` and ``partition`` of the records of segment ``path`` (topic and partition from the
    name of its directory, ``<topic>-<partition>``; null when it is not named so), so that a stream over many
    files says where each record comes from."""
    parsed = parse_partition_dir(os.path.basename(os.path.dirname(absolute_path)))
    return {
        "file": path,
        "topic": None if parsed is None else parsed.topic,
        "partition": None if parsed is None else parsed.partition,
    }


def error_object(e: KdumpError) -> str:
    """The last object of a stream that an error stopped (the same error is the line on standard error)."""
    return line({"type": "error", "file": e.path, "position": e.position, "message": e.message})


def control_facts(record: Record) -> dict[str, Any]:
    """What the text shows after a control record's metadata, as fields (with the decoded message of every
    KRaft control type, ``LeaderChange`` included)."""
    from kdump.render.kafka_json import struct_to_json
    from kdump.storage.control_record import decode_control_record

    control = decode_control_record(record.key, record.value)
    if control.marker is not None:
        return {
            "endTxnMarker": control.marker.control_type.name,
            "coordinatorEpoch": control.marker.coordinator_epoch,
        }
    facts: dict[str, Any] = {"controlType": control.control_type.name, "controlTypeId": control.type_id}
    if control.message is not None:
        facts["controlMessage"] = json.loads(struct_to_json(control.message))
    return facts


def offset_index_entry(file: str, slot: int, offset: int, position: int) -> str:
    return line(
        {"type": "offsetIndexEntry", "file": file, "entry": slot, "offset": offset, "position": position}
    )


def time_index_entry(file: str, slot: int, timestamp: int, offset: int) -> str:
    return line(
        {"type": "timeIndexEntry", "file": file, "entry": slot, "timestamp": timestamp, "offset": offset}
    )


def producer_snapshot_entry(file: str, entry: ProducerSnapshotEntry) -> str:
    obj: dict[str, Any] = {
        "type": "producerSnapshotEntry",
        "file": file,
        "producerId": entry.producer_id,
        "producerEpoch": entry.producer_epoch,
        "coordinatorEpoch": entry.coordinator_epoch,
        "currentTxnFirstOffset": entry.current_txn_first_offset
        if entry.current_txn_first_offset >= 0
        else None,
        "lastTimestamp": entry.last_timestamp,
    }
    if entry.has_batch_metadata:
        obj.update(
            firstSequence=entry.first_sequence,
            lastSequence=entry.last_sequence,
            lastOffset=entry.last_offset,
            offsetDelta=entry.offset_delta,
            timestamp=entry.timestamp,
        )
    return line(obj)


def aborted_txn(file: str, txn: AbortedTxn) -> str:
    return line(
        {
            "type": "abortedTxn",
            "file": file,
            "version": txn.version,
            "producerId": txn.producer_id,
            "firstOffset": txn.first_offset,
            "lastOffset": txn.last_offset,
            "lastStableOffset": txn.last_stable_offset,
        }
    )


def fact(kind: str, file: str, **fields: Any) -> str:
    """Any other fact of the text output (``invalidBytes``, ``emptyIndex``, ``sanityCheck``, the end-of-run
    findings, state-file entries ...)."""
    return line({"type": kind, "file": file, **fields})


def _decode_jsonable(decoder: str, key: bytes | None, value: bytes | None) -> dict[str, Any]:
    from kdump.render.internal_topics import decode_jsonable  # its schemas load only when asked for

    return decode_jsonable(decoder, key, value)
