"""Options of the ``kafka-log`` data source, parsed and checked (pure Python: no PySpark, no pyarrow).

Spark hands a Python data source its options as a case-insensitive mapping of strings.  The names and forms
follow spark-sql-kafka where it has one (``startingOffsets``, ``endingOffsets``, ``startingTimestamp``,
``endingTimestamp``, ``includeHeaders``, ``subscribe``/``subscribePattern``/``assign``, and
``isolation.level``, also accepted with its ``kafka.`` prefix).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from kdump.analysis.consumer_view import READ_COMMITTED, READ_UNCOMMITTED

if TYPE_CHECKING:
    from kdump.commands.remote_tier import RemoteOptions
    from kdump.payload.sources import PayloadDecoding

EARLIEST = -2
LATEST = -1
CORRUPT_POLICIES = ("skip", "keep", "fail")
DEFAULT_MAX_SPLIT_BYTES = 128 * 1024 * 1024
#: What opening one more segment in a task costs, in bytes of reading (Spark's spark.sql.files.openCostInBytes,
#: whose default is 4 MiB for files on HDFS; a segment here costs a few milliseconds, about 100-400 KiB of
#: reading at the reader's speed).
DEFAULT_OPEN_COST_BYTES = 1024 * 1024
DEFAULT_ROWS_PER_BATCH = 10_000

#: Every option, with a one-line description (the man page and README list the same).
OPTIONS: dict[str, str] = {
    "path / paths": "log directories, partition directories or globs (what load() is given)",
    "topics": "comma-separated topic names to read (alias: subscribe)",
    "topicPattern": "regular expression a topic name must match in full (alias: subscribePattern)",
    "assign": 'JSON {"topic": [partition, ...]}: read exactly these partitions',
    "partitions": "comma-separated partition numbers or ranges, e.g. 0,2,5-7",
    "startingOffsets": 'earliest (default), latest, or JSON {"topic": {"0": 23, "1": -2}} (-2 earliest, -1 latest)',
    "endingOffsets": 'latest (default) or JSON {"topic": {"0": 50, "1": -1}}; exclusive',
    "startingTimestamp": "milliseconds: start each partition at the first record at or after it (time index)",
    "endingTimestamp": "milliseconds: stop each partition before the first record at or after it",
    "startingOffsetsByTimestamp": 'JSON {"topic": {"0": ms}}: startingTimestamp per partition',
    "endingOffsetsByTimestamp": 'JSON {"topic": {"0": ms}}: endingTimestamp per partition',
    "isolation.level": "read_uncommitted (default: every data record on disk, as a read_uncommitted consumer "
    "gets them) or read_committed (what a read_committed consumer returns)",
    "includeControlRecords": "true: also return the records of control batches (transaction markers, KRaft "
    "control records), which no consumer returns (default false)",
    "includeHeaders": "true: add the headers column",
    "decoder": "an internal-topic decoder (offsets, transaction-log, cluster-metadata, share-group-state, "
    "remote-log-metadata): add the decoded column",
    "decodeValues": "schema-registry: add decodedValue, the value decoded from the schema registry's wire "
    "format (Avro, Protobuf, JSON) as JSON, and decodeNotes",
    "decodeKeys": "schema-registry: add decodedKey, likewise for keys",
    "schemas": "comma-separated schema sources (_schemas partition or log directories, schema directories, "
    "registry exports); default: the _schemas topic of each log directory",
    "schemaIdMap": "schema files by id: ID=FILE,... or a JSON file of them",
    "valueSchemaId": "an Avro schema id: decodedValue becomes a struct of that schema (null for other ids)",
    "corruptBatches": "skip (default: leave the batch out and report it), keep (keep the records of a batch whose "
    "CRC fails but that still decodes, crcValid=false), or fail (fail the job)",
    "corruptReportDir": "directory where each task appends one JSON line per skipped or damaged batch",
    "corruptReportStderr": "false: do not also print each report on the task's standard error (default true)",
    "maxBytesPerSplit": "the most bytes of log a task reads: larger segments are cut at offset-index entries "
    "(default 128 MiB)",
    "minPartitions": "the tasks a read is spread over at least, when it is large enough: segments are cut and "
    "small ones packed to about total bytes / minPartitions a task (default: the driver's CPU count; kdump "
    "spark export passes Spark's default parallelism)",
    "openCostInBytes": "what opening a segment costs, in bytes of reading, when small segments are packed "
    "into tasks (as Spark's spark.sql.files.openCostInBytes; default 1 MiB)",
    "rowsPerBatch": "rows per Arrow batch handed to Spark (default 10000)",
    "columns": "comma-separated columns: the source hands Spark only these, in this order (Spark's Python data "
    "sources get no column pruning from a select; this is it: Spark converts fewer columns)",
    "remoteRoot": "a tiered partition's remote storage (as kdump ls/txn/files --remote-root): a local path or a "
    "URL; each tiered partition is read as one log, the segments __remote_log_metadata says were copied "
    "(Kafka's RemoteLogSegmentFileset objects, read by the tasks straight from the store) below its first "
    "local one, then the local ones",
    "metadata": "with remoteRoot: comma-separated log directories holding __remote_log_metadata partitions, or "
    "such partitions (default: each partition's own log directory)",
    "metadataPartitions": "with remoteRoot: remote.log.metadata.topic.num.partitions (default 50)",
    "layout": "with remoteRoot: the RemoteStorageManager's object layout, kafka (Kafka's LocalTieredStorage, "
    "the default) or aiven (Aiven's tiered-storage plugin: .log chunks read back through the .rsm-manifest, "
    "undone by the tasks)",
    "layoutTemplate": "with remoteRoot: another plugin's layout, each object's key under remoteRoot (as kdump "
    "tiered --layout-template)",
    "aivenKeyPrefix": "with layout aiven: the plugin's key.prefix (remoteRoot is then the storage root)",
    "aivenPrivateKey": "with layout aiven: comma-separated [ID=]PEM paths of the plugin's RSA private keys, read "
    "on the driver only: it unwraps each encrypted segment's data key and hands a task the keys of the segments "
    "it reads, never the private key (as kdump tiered --aiven-private-key)",
    "pushFilters": "true: Spark's filters on topic, partition, offset and timestamp (from below) narrow what is "
    "read, with spark.sql.python.filterPushdown.enabled (kdump.spark.session sets it); load a DataFrame for each "
    "query: PySpark 4.3 reuses a DataFrame's last pushed-down plan for its later queries without such filters "
    "(default false there; true on a Spark that keeps the plan per scan, see kdump.spark.pushdown_plan_per_scan)",
}


class OptionError(ValueError):
    """An option has a value the source cannot use."""


@dataclass(frozen=True)
class PartitionOffsets:
    """Per-partition values from a JSON option: ``{topic: {partition: value}}``."""

    values: Mapping[str, Mapping[int, int]]

    def get(self, topic: str, partition: int) -> int | None:
        return self.values.get(topic, {}).get(partition)


@dataclass(frozen=True)
class ReadOptions:
    """What every read task needs to know."""

    include_headers: bool = False
    decoder: str | None = None
    read_committed: bool = False
    #: Also return control batches' records (no consumer does; spark-sql-kafka never returns them).
    include_control: bool = False
    corrupt: str = "skip"
    report_dir: str | None = None
    report_stderr: bool = True
    rows_per_batch: int = DEFAULT_ROWS_PER_BATCH
    #: decodeKeys/decodeValues (schema-registry payloads) and their schema sources
    payload: PayloadDecoding | None = None
    #: valueSchemaId: decodedValue is a struct of this Avro schema, whose kind is ``value_kind``
    value_schema_id: int | None = None
    value_kind: Any = None
    #: The ``columns`` option: the columns the source hands Spark, in this order (None: every column).
    columns: tuple[str, ...] | None = None

    @property
    def payload_columns(self) -> tuple[tuple[str, str, str], ...]:
        from kdump.spark.schema import payload_columns

        if self.payload is None:
            return ()
        return payload_columns(self.payload.keys, self.payload.values, self.value_kind is not None)


@dataclass(frozen=True)
class Pushed:
    """What Spark's filters on ``topic``, ``partition``, ``offset`` and ``timestamp`` allow the planner to leave
    unread (PySpark's ``DataSourceReader.pushFilters``, see :func:`push_filters`).  Only ever narrows a read to
    a superset of the rows the filters keep: Spark applies every filter again."""

    topics: frozenset[str] | None = None
    partitions: frozenset[int] | None = None
    #: ``[lo, hi)`` bounds (None: unbounded) on the partition number and on the offset.
    partition_lo: int | None = None
    partition_hi: int | None = None
    offset_lo: int | None = None
    offset_hi: int | None = None
    #: Milliseconds: no row with an earlier timestamp is wanted (a partition starts at the first offset whose
    #: record is at or after it, as startingTimestamp).
    min_timestamp: int | None = None
    #: The filters used, as text (for the plan's description and the tests).
    used: tuple[str, ...] = ()

    def wants(self, topic: str, partition: int) -> bool:
        if self.topics is not None and topic not in self.topics:
            return False
        if self.partitions is not None and partition not in self.partitions:
            return False
        if self.partition_lo is not None and partition < self.partition_lo:
            return False
        return self.partition_hi is None or partition < self.partition_hi


def _is_int(value: object) -> bool:
    return type(value) is int  # not bool, not a float Spark compares after a cast


def _micros(value: object) -> int | None:
    """A filter's timestamp value (a ``datetime``; PySpark gives an aware one in UTC or a naive one in the
    session's time zone) as microseconds since the epoch; None when it cannot be known exactly."""
    import datetime as dt

    if not isinstance(value, dt.datetime):
        return None
    if value.tzinfo is None:
        return None  # a naive time: its zone is the session's, unknown here -- not pushed
    delta = value - dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


def push_filters(filters: list[Any], pushed: Pushed | None = None) -> Pushed:
    """The narrowing the filters allow, on top of ``pushed`` (the AND of them all).  A filter is used when it
    compares ``topic`` (=, IN), ``partition`` or ``offset`` (=, IN, <, <=, >, >=) with integers or strings, or
    bounds ``timestamp`` from below (=, IN, >, >= with a time zone: the rows at or after the earliest value);
    anything else (NOT, IS NULL, LIKE, a bound on the timestamp from above, which the time index cannot use) is
    left to Spark alone.  PySpark's filter classes are matched by name (:mod:`pyspark.sql.datasource`), so this
    module does not import PySpark."""
    p = pushed or Pushed()
    fields: dict[str, Any] = {}

    def get(name: str) -> Any:
        return fields.get(name, getattr(p, name))

    used = list(p.used)
    for f in filters:
        kind = type(f).__name__
        attribute = getattr(f, "attribute", None)
        if kind not in _COMPARISONS or not isinstance(attribute, tuple) or len(attribute) != 1:
            continue
        column = str(attribute[0]).lower()
        value = f.value
        values = tuple(value) if kind == "In" else (value,)
        if kind == "In" and not values:
            continue
        if column == "topic" and kind in ("EqualTo", "EqualNullSafe", "In"):
            if not all(isinstance(v, str) for v in values):
                continue
            topics = frozenset(values)
            fields["topics"] = topics if get("topics") is None else get("topics") & topics
        elif column in ("partition", "offset"):
            if not all(_is_int(v) for v in values):
                continue
            if column == "partition" and kind in ("EqualTo", "EqualNullSafe", "In"):
                found = frozenset(values)
                fields["partitions"] = found if get("partitions") is None else get("partitions") & found
            prefix = "partition" if column == "partition" else "offset"
            lo, hi = _bounds(kind, values)
            if lo is not None:
                old = get(f"{prefix}_lo")
                fields[f"{prefix}_lo"] = lo if old is None else max(old, lo)
            if hi is not None:
                old = get(f"{prefix}_hi")
                fields[f"{prefix}_hi"] = hi if old is None else min(old, hi)
        elif column == "timestamp" and kind in (
            "EqualTo",
            "EqualNullSafe",
            "In",
            "GreaterThan",
            "GreaterThanOrEqual",
        ):
            micros = [_micros(v) for v in values]
            if any(m is None for m in micros):
                continue
            least = min(m for m in micros if m is not None) // 1000  # a record's ms * 1000 >= it
            old = get("min_timestamp")
            fields["min_timestamp"] = least if old is None else max(old, least)
        else:
            continue
        used.append(f"{column} {_COMPARISONS[kind]} {values[0] if kind != 'In' else list(values)}")
    return replace(p, **fields, used=tuple(used))


_COMPARISONS = {
    "EqualTo": "=",
    "EqualNullSafe": "<=>",
    "In": "IN",
    "GreaterThan": ">",
    "GreaterThanOrEqual": ">=",
    "LessThan": "<",
    "LessThanOrEqual": "<=",
}


def _bounds(kind: str, values: tuple[int, ...]) -> tuple[int | None, int | None]:
    """``[lo, hi)`` holding every integer the comparison keeps."""
    if kind in ("EqualTo", "EqualNullSafe", "In"):
        return min(values), max(values) + 1
    v = values[0]
    return {
        "GreaterThan": (v + 1, None),
        "GreaterThanOrEqual": (v, None),
        "LessThan": (None, v),
        "LessThanOrEqual": (None, v + 1),
    }[kind]


@dataclass(frozen=True)
class Selection:
    """What the planner reads: which files, partitions and offset or time ranges."""

    paths: tuple[str, ...]
    topics: frozenset[str] | None = None
    topic_pattern: str | None = None
    assign: Mapping[str, frozenset[int]] | None = None
    partitions: frozenset[int] | None = None
    starting_offsets: PartitionOffsets | int = EARLIEST
    ending_offsets: PartitionOffsets | int = LATEST
    starting_timestamps: PartitionOffsets | int | None = None
    ending_timestamps: PartitionOffsets | int | None = None
    max_split_bytes: int = DEFAULT_MAX_SPLIT_BYTES
    #: The tasks a read is spread over at least (when there are bytes enough), and a segment's opening cost.
    min_partitions: int = field(default_factory=lambda: os.cpu_count() or 1)
    open_cost_bytes: int = DEFAULT_OPEN_COST_BYTES
    read: ReadOptions = field(default_factory=ReadOptions)
    #: What Spark's filters narrowed (filter pushdown).
    pushed: Pushed = field(default_factory=Pushed)
    #: remoteRoot (with metadata, metadataPartitions, layout...): tiered partitions are read as one log.
    remote: RemoteOptions | None = None
    #: aivenPrivateKey: the ``[ID=]PEM`` paths of Aiven's private keys, loaded by the planner (on the driver)
    #: only; the selection itself (which goes to the executors with the reader) carries the paths, not the keys.
    remote_keys: tuple[str, ...] = ()

    def wants(self, topic: str, partition: int) -> bool:
        """Whether the partition is selected by topics, topicPattern, assign, partitions and pushed filters."""
        if not self.pushed.wants(topic, partition):
            return False
        if self.topics is not None and topic not in self.topics:
            return False
        if self.topic_pattern is not None and re.fullmatch(self.topic_pattern, topic) is None:
            return False
        if self.assign is not None and partition not in self.assign.get(topic, frozenset()):
            return False
        return self.partitions is None or partition in self.partitions

    def bound(self, which: str, topic: str, partition: int) -> int | None:
        """The starting/ending offset setting for a partition: EARLIEST, LATEST or an offset."""
        value = self.starting_offsets if which == "start" else self.ending_offsets
        if isinstance(value, PartitionOffsets):
            found = value.get(topic, partition)
            return found if found is not None else (EARLIEST if which == "start" else LATEST)
        return value

    def timestamp(self, which: str, topic: str, partition: int) -> int | None:
        value = self.starting_timestamps if which == "start" else self.ending_timestamps
        if isinstance(value, PartitionOffsets):
            return value.get(topic, partition)
        return value


def _get(options: Mapping[str, str], *names: str) -> str | None:
    lowered = {k.lower(): v for k, v in options.items()}
    for name in names:
        value = lowered.get(name.lower())
        if value is not None:
            return value
    return None


def _bool(text: str | None, name: str) -> bool:
    if text is None:
        return False
    lowered = text.strip().lower()
    if lowered in ("true", "1", "yes"):
        return True
    if lowered in ("false", "0", "no", ""):
        return False
    raise OptionError(f"{name}: expected true or false, not {text!r}")


def _int(text: str, name: str) -> int:
    try:
        return int(text.strip())
    except ValueError:
        raise OptionError(f"{name}: expected an integer, not {text!r}") from None


def _positive(text: str | None, name: str, default: int, least: int = 1) -> int:
    if text is None or not text.strip():
        return default
    value = _int(text, name)
    if value < least:
        raise OptionError(f"{name}: expected an integer of at least {least}, not {text!r}")
    return value


def parse_partitions(text: str) -> frozenset[int]:
    """``"0,2,5-7"`` -> {0, 2, 5, 6, 7}."""
    out: set[int] = set()
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        m = re.fullmatch(r"(\d+)\s*-\s*(\d+)", part)
        if m:
            lo, hi = int(m.group(1)), int(m.group(2))
            if hi < lo:
                raise OptionError(f"partitions: empty range {part!r}")
            out.update(range(lo, hi + 1))
        else:
            out.add(_int(part, "partitions"))
    return frozenset(out)


def _partition_json(text: str, name: str) -> PartitionOffsets:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise OptionError(f"{name}: not JSON ({e.msg})") from None
    if not isinstance(data, dict):
        raise OptionError(f'{name}: expected a JSON object like {{"topic": {{"0": 23}}}}')
    values: dict[str, dict[int, int]] = {}
    for topic, parts in data.items():
        if not isinstance(parts, dict):
            raise OptionError(f"{name}: the value for topic {topic!r} must be an object of partition: number")
        try:
            values[topic] = {int(p): int(v) for p, v in parts.items()}
        except (TypeError, ValueError):
            raise OptionError(f"{name}: partitions and values of topic {topic!r} must be integers") from None
    return PartitionOffsets(values)


def _offsets(text: str | None, name: str, default: int) -> PartitionOffsets | int:
    if text is None:
        return default
    stripped = text.strip()
    if stripped.lower() == "earliest":
        return EARLIEST
    if stripped.lower() == "latest":
        return LATEST
    return _partition_json(stripped, name)


def _paths(options: Mapping[str, str]) -> tuple[str, ...]:
    paths: list[str] = []
    many = _get(options, "paths")
    if many:
        try:
            loaded = json.loads(many)
        except json.JSONDecodeError:
            loaded = [many]
        paths.extend(loaded if isinstance(loaded, list) else [str(loaded)])
    one = _get(options, "path")
    if one:
        paths.append(one)
    if not paths:
        raise OptionError("no path: use spark.read.format('kafka-log').load(path_or_paths)")
    return tuple(dict.fromkeys(paths))


def parse_options(options: Mapping[str, str]) -> Selection:
    """The data source's options as a :class:`Selection`; raises :class:`OptionError` for bad values."""
    topics_text = _get(options, "topics", "subscribe")
    pattern = _get(options, "topicPattern", "subscribePattern")
    if pattern is not None:
        try:
            re.compile(pattern)
        except re.error as e:
            raise OptionError(f"topicPattern: not a regular expression ({e})") from None
    assign_text = _get(options, "assign")
    assign = None
    if assign_text is not None:
        try:
            data = json.loads(assign_text)
            assign = {t: frozenset(int(p) for p in ps) for t, ps in data.items()}
        except (json.JSONDecodeError, AttributeError, TypeError, ValueError):
            raise OptionError('assign: expected JSON like {"topic": [0, 1]}') from None
    partitions_text = _get(options, "partitions")
    isolation = (
        (_get(options, "isolation.level", "kafka.isolation.level") or READ_UNCOMMITTED).strip().lower()
    )
    if isolation not in (READ_UNCOMMITTED, READ_COMMITTED):
        raise OptionError(
            f"isolation.level: expected {READ_UNCOMMITTED} or {READ_COMMITTED}, not {isolation!r}"
        )
    corrupt = (_get(options, "corruptBatches") or "skip").strip().lower()
    if corrupt not in CORRUPT_POLICIES:
        raise OptionError(f"corruptBatches: expected one of {', '.join(CORRUPT_POLICIES)}, not {corrupt!r}")
    push_filters_wanted(options)  # checked here: an unreadable value is an error before any planning
    rows = _get(options, "rowsPerBatch")
    max_bytes = _get(options, "maxBytesPerSplit")
    read = ReadOptions(
        include_headers=_bool(_get(options, "includeHeaders"), "includeHeaders"),
        decoder=decoder(options),
        read_committed=isolation == READ_COMMITTED,
        include_control=_bool(_get(options, "includeControlRecords"), "includeControlRecords"),
        corrupt=corrupt,
        report_dir=_get(options, "corruptReportDir"),
        report_stderr=_get(options, "corruptReportStderr") is None
        or _bool(_get(options, "corruptReportStderr"), "corruptReportStderr"),
        rows_per_batch=max(1, _int(rows, "rowsPerBatch")) if rows else DEFAULT_ROWS_PER_BATCH,
        columns=selected_columns(options),
        **payload_options(options),
    )
    starting_ts = _get(options, "startingTimestamp")
    ending_ts = _get(options, "endingTimestamp")
    starting_by_ts = _get(options, "startingOffsetsByTimestamp")
    ending_by_ts = _get(options, "endingOffsetsByTimestamp")
    return Selection(
        paths=_paths(options),
        topics=None
        if topics_text is None
        else frozenset(t.strip() for t in topics_text.split(",") if t.strip()),
        topic_pattern=pattern,
        assign=assign,
        partitions=None if partitions_text is None else parse_partitions(partitions_text),
        starting_offsets=_offsets(_get(options, "startingOffsets"), "startingOffsets", EARLIEST),
        ending_offsets=_offsets(_get(options, "endingOffsets"), "endingOffsets", LATEST),
        starting_timestamps=_int(starting_ts, "startingTimestamp")
        if starting_ts is not None
        else (_partition_json(starting_by_ts, "startingOffsetsByTimestamp") if starting_by_ts else None),
        ending_timestamps=_int(ending_ts, "endingTimestamp")
        if ending_ts is not None
        else (_partition_json(ending_by_ts, "endingOffsetsByTimestamp") if ending_by_ts else None),
        max_split_bytes=_int(max_bytes, "maxBytesPerSplit") if max_bytes else DEFAULT_MAX_SPLIT_BYTES,
        min_partitions=_positive(_get(options, "minPartitions"), "minPartitions", os.cpu_count() or 1),
        open_cost_bytes=_positive(
            _get(options, "openCostInBytes"), "openCostInBytes", DEFAULT_OPEN_COST_BYTES, 0
        ),
        read=read,
        remote=remote_options(options),
        remote_keys=remote_keys(options),
    )


#: The options that go with remoteRoot.
REMOTE_ONLY = (
    "metadata",
    "metadataPartitions",
    "layout",
    "layoutTemplate",
    "aivenKeyPrefix",
    "aivenPrivateKey",
)


def remote_options(options: Mapping[str, str]) -> RemoteOptions | None:
    """``remoteRoot``, ``metadata``, ``metadataPartitions`` and the layout (``layout``, ``layoutTemplate``,
    ``aivenKeyPrefix``) as the commands' ``--remote-root``, ``--metadata``, ``--metadata-partitions``,
    ``--layout``, ``--layout-template`` and ``--aiven-key-prefix`` give them
    (:class:`kdump.commands.remote_tier.RemoteOptions`, without a keyring: :func:`remote_keys`); None without
    ``remoteRoot`` (the others alone are an error, as on the command line)."""
    root = _get(options, "remoteRoot")
    if root is None or not root.strip():
        given = [name for name in REMOTE_ONLY if _get(options, name) is not None]
        if given:
            raise OptionError(f"{', '.join(given)} go{'es' if len(given) == 1 else ''} with remoteRoot")
        return None
    from kdump.analysis.remote_log_metadata import DEFAULT_METADATA_PARTITIONS
    from kdump.commands.remote_tier import RemoteOptions
    from kdump.storage.remote_layout import Layout, parse_template

    metadata = _get(options, "metadata")
    dirs = tuple(p.strip() for p in (metadata or "").split(",") if p.strip())
    count = _positive(_get(options, "metadataPartitions"), "metadataPartitions", DEFAULT_METADATA_PARTITIONS)
    kind = (_get(options, "layout") or "kafka").strip().lower()
    if kind not in ("kafka", "aiven"):
        raise OptionError(f"layout: kafka or aiven, not {kind!r}")
    prefix = _get(options, "aivenKeyPrefix")
    template = _get(options, "layoutTemplate")
    if prefix is not None and kind != "aiven":
        raise OptionError("aivenKeyPrefix is for layout aiven")
    if _get(options, "aivenPrivateKey") is not None and kind != "aiven":
        raise OptionError("aivenPrivateKey is for layout aiven")
    layout = Layout(kind, aiven_prefix=prefix or "")
    if template is not None:
        if kind != "kafka":
            raise OptionError("layoutTemplate is a layout of its own: not with layout aiven")
        try:
            layout = Layout("template", parse_template(template))
        except ValueError as e:
            raise OptionError(f"layoutTemplate: {e}") from None
    return RemoteOptions(root.strip(), layout, dirs, count)


def remote_keys(options: Mapping[str, str]) -> tuple[str, ...]:
    """``aivenPrivateKey``: the ``[ID=]PEM`` specs, each checked here to be an RSA private key (an
    :class:`OptionError` naming the file otherwise) and then dropped: the planner loads them again
    (:func:`kdump.spark.planning.plan`), on the driver, and nothing but the paths is kept in the selection."""
    text = _get(options, "aivenPrivateKey")
    if text is None:
        return ()
    specs = tuple(p.strip() for p in text.split(",") if p.strip())
    if not specs:
        return ()
    from kdump.storage.aiven_segment import KEY_OPTION, Keyring

    try:
        Keyring.load(specs)
    except ValueError as e:
        raise OptionError(str(e).replace(KEY_OPTION, "aivenPrivateKey")) from None
    return specs


def decoder(options: Mapping[str, str]) -> str | None:
    """The ``decoder`` option: an internal-topic decoder name (``-decoder`` suffix allowed), or None."""
    text = _get(options, "decoder")
    if text is None or not text.strip():
        return None
    from kdump.storage.internal_topics import DECODERS

    name = text.strip().removeprefix("--").removesuffix("-decoder")
    if name not in DECODERS:
        raise OptionError(f"decoder: expected one of {', '.join(DECODERS)}, not {text!r}")
    return name


def selected_columns(options: Mapping[str, str]) -> tuple[str, ...] | None:
    """The ``columns`` option: comma-separated column names (each once, in the order given), or None."""
    text = _get(options, "columns")
    if text is None or not text.strip():
        return None
    return tuple(dict.fromkeys(c.strip() for c in text.split(",") if c.strip()))


def push_filters_wanted(options: Mapping[str, str], default: bool = False) -> bool:
    """Just the ``pushFilters`` option (whether the data source narrows a read by Spark's filters);
    ``default`` when it is not given (see :func:`kdump.spark.pushdown_plan_per_scan`)."""
    text = _get(options, "pushFilters")
    return default if text is None else _bool(text, "pushFilters")


def include_headers(options: Mapping[str, str]) -> bool:
    """Just the ``includeHeaders`` option (what the schema depends on)."""
    return _bool(_get(options, "includeHeaders"), "includeHeaders")


def payload_options(options: Mapping[str, str]) -> dict[str, Any]:
    """``decodeKeys``/``decodeValues``/``schemas``/``schemaIdMap``/``valueSchemaId`` as ReadOptions fields.
    With ``valueSchemaId`` the schema is loaded here (on the driver) to give the column its struct type."""
    keys, values = _get(options, "decodeKeys"), _get(options, "decodeValues")
    sources = _get(options, "schemas")
    id_map = _get(options, "schemaIdMap")
    value_id_text = _get(options, "valueSchemaId")
    if keys is None and values is None and sources is None and id_map is None and value_id_text is None:
        return {}
    from kdump.payload.sources import payload_decoding

    try:
        decoding = payload_decoding(
            keys, values, [p.strip() for p in sources.split(",") if p.strip()] if sources else [], id_map
        )
    except ValueError as e:
        raise OptionError(str(e).replace("--decode-values", "decodeValues").replace("--", "")) from None
    if value_id_text is None:
        return {"payload": decoding}
    if decoding is None or not decoding.values:
        raise OptionError("valueSchemaId needs decodeValues=schema-registry")
    value_id = _int(value_id_text, "valueSchemaId")
    return {
        "payload": decoding,
        "value_schema_id": value_id,
        "value_kind": _value_kind(decoding, value_id, options),
    }


def _value_kind(decoding: PayloadDecoding, schema_id: int, options: Mapping[str, str]) -> Any:
    import glob
    import os

    from kdump.payload.registry import AVRO

    stores = []
    if decoding.sources:
        stores.append(decoding.load(""))
    else:
        for path in _paths(options):
            for found in glob.glob(path) or [path]:
                # a log directory holds _schemas-N; a partition directory's parent does
                for directory in (found, os.path.dirname(os.path.abspath(found))):
                    stores.append(decoding.load(directory))
    for store in stores:
        schema = store.by_id.get(schema_id)
        if schema is None:
            continue
        if schema.schema_type != AVRO:
            raise OptionError(f"valueSchemaId: schema id {schema_id} is {schema.schema_type}, not Avro")
        from kdump.payload.spark_types import avro_kind

        try:
            return avro_kind(schema.text)
        except Exception as e:  # noqa: BLE001 -- fastavro's errors on a bad schema are of many kinds
            raise OptionError(
                f"valueSchemaId: schema id {schema_id} is not a usable Avro schema: {e}"
            ) from None
    raise OptionError(f"valueSchemaId: schema id {schema_id} is not in the schemas found")
