"""The facts of ``kdump files`` and the protocols of their sinks: the run's options (Kafka's DumpLogSegments
options), a file as Java names it, the end-of-run findings, and :class:`FilesSink` / :class:`LogSink`, one method
per kind of fact. :mod:`kdump.commands.files` produces them; :mod:`kdump.render.files_text` (Kafka's text) and
:mod:`kdump.render.files_json` (JSON lines) write them."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import tzinfo
from typing import TYPE_CHECKING, Protocol

from kdump.analysis.offset_gaps import OffsetGaps
from kdump.analysis.record_filter import RecordFilter
from kdump.errors import KdumpError, UsageError
from kdump.facts.output import Output
from kdump.storage import kafka_release, naming
from kdump.storage.file_records import (
    INT_MAX,
    FileRecords,
    RecordBatch,
)
from kdump.storage.kafka_release import KafkaRelease
from kdump.storage.object_store import is_url
from kdump.storage.record import Record

if TYPE_CHECKING:
    from kdump.payload.sources import PayloadDecoding
    from kdump.storage.byte_source import ByteSource
    from kdump.storage.producer_snapshot import ProducerSnapshotEntry
    from kdump.storage.transaction_index import AbortedTxn


DEFAULT_MAX_MESSAGE_SIZE = 5 * 1024 * 1024

#: Renders the batches of ``[start, end)`` as Kafka's text into ``out``, tracking offsets in ``gaps``; returns
#: where the last whole batch ends.  It raises, located, what the sequential run would raise.
RenderChunk = Callable[[int, int | None, Output, "OffsetGaps"], int]


class MessageParser(Protocol):
    """What the tool's record printer needs from a parser (Kafka's ``MessageParser``)."""

    #: Both parts are plain UTF-8 text (the default), which lets the renderer take its fast path.
    is_string_parser: bool

    def parse(self, record: Record) -> tuple[str | None, str | None]:
        """Key and payload texts of a record; None parts are not printed.  Raises a KdumpError where Kafka's
        tool would die."""
        ...


#: A batch's record lines are gathered and written together (after checking that the file did not shrink
#: underneath) up to this many; a batch of more records has its text written every this many lines, so the
#: text of a batch of millions of records never sits in memory.
STREAM_LINES = 4096


@dataclass
class DumpOptions:
    """The options of ``kafka-dump-log.sh``, with its implications between them."""

    files: list[str] = field(default_factory=list)
    print_data_log: bool = False
    deep_iteration: bool = False
    verify_index_only: bool = False
    index_sanity_check: bool = False
    skip_record_metadata: bool = False
    max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE
    max_bytes: int = INT_MAX
    key_decoder_class: str | None = None  # None: flag absent
    value_decoder_class: str | None = None
    key_decoder_given: bool = False
    value_decoder_given: bool = False
    internal_decoders: tuple[str, ...] = ()
    # kdump additions (opt-in; none of them changes the default output)
    json: bool = False  # picks the sink (kdump.cli.files.make_sink); the command never reads it
    print_header_values: bool = False
    record_filter: RecordFilter | None = None
    #: ``--decode-keys``/``--decode-values schema-registry`` (implies printing the data, as Kafka's decoders do)
    payload_decoding: PayloadDecoding | None = None
    #: ``--human-time``: ISO-8601 after every timestamp of the text, in ``tz`` (None: UTC).
    human_time: bool = False
    tz: tzinfo | None = None
    #: ``--remote-root``: the start offset of each remote segment object among ``files`` (by path), from
    #: ``__remote_log_metadata``: its name (``<offset>-<segment id>.log``) is not Kafka's ``<offset>.log``.
    start_offsets: dict[str, int] = field(default_factory=dict)
    #: ``--remote-root --layout aiven``: what each remote segment's ``.log`` among ``files`` is read from (by
    #: path: the ``.log`` object, read back through its manifest's chunks).
    sources: dict[str, ByteSource] = field(default_factory=dict)
    #: The Kafka release whose tool's text to reproduce (``--kafka-version``; kdump's own outputs ignore it).
    release: KafkaRelease = field(default_factory=kafka_release.release)
    #: Integer options whose argument does not convert: Kafka converts them lazily, where it first uses them
    #: (``--max-bytes`` for each .log/.checkpoint, ``--max-message-size`` for each .index), and dies there.
    option_errors: dict[str, str] = field(default_factory=dict)

    def check_option(self, name: str) -> None:
        """Fail as Kafka does on the first use of option ``name`` when its argument did not convert."""
        message = self.option_errors.get(name)
        if message is not None:
            raise UsageError(message)

    @property
    def should_print_data_log(self) -> bool:
        return (
            self.print_data_log
            or bool(self.internal_decoders)
            or self.key_decoder_given
            or self.value_decoder_given
            or self.payload_decoding is not None
        )

    @property
    def is_deep_iteration(self) -> bool:
        return self.deep_iteration or self.should_print_data_log


class JavaFile:
    """The parts of ``java.io.File`` the tool's output depends on (normalised path, name, absolute path)."""

    __slots__ = ("path", "name")

    def __init__(self, arg: str) -> None:
        path = arg
        if is_url(path):  # an object in a store: named exactly as given (``a//b`` is another key)
            self.path = path
            self.name = path[path.rfind("/") + 1 :]
            return
        while "//" in path:
            path = path.replace("//", "/")
        if len(path) > 1 and path.endswith("/"):
            path = path[:-1]
        self.path = path
        self.name = path[path.rfind("/") + 1 :]

    @property
    def absolute_path(self) -> str:
        return naming.java_absolute_path(self.path) if self.path else os.getcwd()


@dataclass(frozen=True, slots=True)
class FileHeader:
    """What a file is (``kind``: ``log``, ``snapshot``, ``bootstrap-snapshot``, ``offset-index``,
    ``time-index``, ``producer-snapshot``, ``transaction-index``, ``state-file``, ``directory``, ``unknown``)
    and the values its header gives: a log's starting offset (from its name), a snapshot's end offset and
    epoch, a state file's name."""

    kind: str
    log_starting_offset: int | None = None
    snapshot_end_offset: int | None = None
    epoch: int | None = None
    name: str | None = None


@dataclass
class Findings:
    """The end-of-run findings, each a list of ``(absolute path, pairs)`` groups in Kafka's order (groups in
    its hash-map order; offset-index mismatches and offset gaps newest first, as Kafka prepends them)."""

    index_mismatches: list[tuple[str, list[tuple[int, int]]]]
    time_mismatches: list[tuple[str, list[tuple[int, int]]]]
    time_out_of_order: list[tuple[str, list[tuple[int, int]]]]
    time_not_found: list[tuple[str, list[tuple[int, int]]]]
    #: Read once, lazily: the pairs may be millions, streamed back from a temporary file.
    non_consecutive: list[tuple[str, Iterable[tuple[int, int]]]]


class LogSink(Protocol):
    """Where the facts of one ``.log`` (or KRaft ``.checkpoint``) go: its batches and their records, and the
    bytes after its last whole batch.  Made by :meth:`FilesSink.log` for the file and its message parser."""

    #: Whether :meth:`batch` may be handed keys and values too big for one string as views
    #: (``records(views=True)``), which it writes a piece at a time.
    takes_views: bool

    def segment_renderer(self, records: FileRecords, deep: bool) -> RenderChunk | None:
        """The sink's whole-segment fast path: a function that writes every batch (and, ``deep``, every
        record) of a byte range of ``records`` into an :class:`Output`, passing the records through an
        :class:`OffsetGaps`, and returns where the last whole batch ends (what :mod:`kdump.commands.parallel`
        runs on chunks); None when this sink takes the batches one by one (:meth:`batch`)."""
        ...

    def batch(self, batch: RecordBatch, records: Iterable[Record] | None = None) -> None:
        """A batch and, with deep iteration, the records of it to show (consumed lazily; a failure while they
        are read or shown propagates, located at nothing)."""
        ...

    def invalid_bytes(self, count: int, position: int) -> None:
        """``count`` bytes after the last whole batch, which ends at ``position``."""
        ...


class FilesSink(Protocol):
    """Where the facts of a ``kdump files`` run go: :mod:`kdump.render.files_text` (Kafka's text) or
    :mod:`kdump.render.files_json` (JSON lines).  One method per kind of fact; the command never formats."""

    #: Where whole-segment renderers write (:mod:`kdump.commands.parallel` writes its chunks to its descriptor).
    out: Output

    def dumping(self, file: JavaFile, *, held: bool = False) -> None:
        """A file is about to be read (Kafka's ``Dumping <path>``).  ``held``: the file's header may be held
        back until the file shows something (a batch, invalid bytes, or :meth:`failed`); a file that shows
        nothing then stays silent."""
        ...

    def header(self, file: JavaFile, header: FileHeader) -> None:
        """What the file is and its header values."""
        ...

    def failed(self) -> None:
        """Reading the current file failed: what was held back of its header belongs before the error."""
        ...

    def ignored(self, file: JavaFile) -> None:
        """A file of an unknown suffix, not read (as Kafka ignores it)."""
        ...

    def message_parser(self, file: JavaFile) -> MessageParser:
        """A new parser of keys and values for the log ``file`` (:func:`kdump.render.decoders.message_parser`:
        Kafka loads the decoder classes for each log it dumps, before reading it; Kafka 3.9 says so on standard
        output when it takes a pre-3.8 ``kafka.serializer`` name).  Raises a KdumpError where Kafka's tool would
        die."""
        ...

    def log(self, file: JavaFile, parser: MessageParser) -> LogSink:
        """The sink of a ``.log``/``.checkpoint``'s batches, whose keys and values ``parser`` decodes."""
        ...

    def empty_index(self, file: JavaFile) -> None: ...

    def sanity_check_passed(self, file: JavaFile) -> None: ...

    def offset_index_entry(self, file: JavaFile, slot: int, offset: int, position: int) -> None: ...

    def time_index_entry(self, file: JavaFile, slot: int, timestamp: int, offset: int) -> None: ...

    def producer_snapshot(self, file: JavaFile, entries: Iterable[ProducerSnapshotEntry]) -> None: ...

    def corrupt_snapshot(self, file: JavaFile, message: str) -> None: ...

    def aborted_txns(self, file: JavaFile, txns: Iterable[AbortedTxn]) -> None: ...

    def state_file(self, file: JavaFile, parsed: object) -> None:
        """A checkpoint or state file's content (:func:`kdump.storage.checkpoint.read_checkpoint`)."""
        ...

    def summaries(self, findings: Findings) -> None:
        """The end-of-run findings (Kafka's reports of index mismatches and non-consecutive offsets)."""
        ...

    def error(self, error: KdumpError) -> None:
        """What stopped the run (it propagates after this, to become the error line on standard error)."""
        ...
