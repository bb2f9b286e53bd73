"""Split planning of the ``kafka-log`` source without Spark: the splits of every segment cover its batches
exactly once (each split starts at a batch of the whole walk: cuts come from the offset index or the batch
headers, never from a guessed byte), small partitions are packed into few tasks, and one large segment is
cut for every core.  The oracle is the storage core's own walk of each whole segment (and, for the reader,
the records it decodes)."""

from __future__ import annotations

import json
import os
from collections import defaultdict
from datetime import UTC, datetime
from pathlib import Path

import pytest

from kdump.spark.options import OptionError, parse_options
from kdump.spark.planning import Split, pack, plan, target_split_bytes
from kdump.storage.file_records import FileRecords
from kdump.storage.local_log import LocalLog
from kdump.storage.offset_index import OffsetIndex
from tests.partition_builder import BASE_TIMESTAMP, build_partition
from tests.spark_oracle import FIXTURE_TREES


def batch_positions(path: str, start: int = 0, end: int | None = None) -> list[int]:
    with FileRecords(path) as records:
        return [b.position for b in records.batches(start, end)]


def assert_splits_cover_every_batch_once(splits: list[Split]) -> int:
    """Per segment, the batches of its splits (in plan order) are the batches of the whole file, each once;
    returns how many segments were cut."""
    by_path: dict[str, list[Split]] = defaultdict(list)
    for s in splits:
        by_path[s.path].append(s)
    cut = 0
    for path, pieces in by_path.items():
        whole = batch_positions(path)
        got: list[int] = []
        for i, s in enumerate(pieces):
            if i > 0:
                assert s.start_position == pieces[i - 1].end_position, path
            if s.start_position:
                assert s.start_position in whole, f"{path}: split starts at {s.start_position}, not a batch"
            got += batch_positions(path, s.start_position, s.end_position)
        assert pieces[0].start_position == 0 and pieces[-1].end_position is None
        assert got == whole, path
        cut += len(pieces) > 1
    return cut


def assert_tasks_hold_every_split_once(result) -> None:  # noqa: ANN001
    assert [s for task in result.tasks for s in task] == result.splits
    assert all(task for task in result.tasks)


@pytest.mark.parametrize("max_bytes", ["100", "3000", "65536", "134217728"])
@pytest.mark.parametrize("min_partitions", ["1", "2", "64"])
def test_union_of_splits_is_every_batch_of_the_fixtures(max_bytes: str, min_partitions: str) -> None:
    options = {
        "paths": json.dumps(FIXTURE_TREES),
        "maxBytesPerSplit": max_bytes,
        "minPartitions": min_partitions,
        "openCostInBytes": "0",
    }
    result = plan(parse_options(options))
    cut = assert_splits_cover_every_batch_once(result.splits)
    assert_tasks_hold_every_split_once(result)
    every_segment = sum(
        1 for _, _, d in result.partitions for s in LocalLog.scan(d).log_segments if s.log_size > 0
    )
    assert len({s.path for s in result.splits}) == every_segment
    if max_bytes == "100":
        assert cut > 5  # the small limit really cut segments


def test_a_large_segment_with_a_sparse_index_is_cut_at_its_entries_for_every_core(tmp_path: Path) -> None:
    """One segment of about 6 MB whose offset index has an entry every 256 KiB: with minPartitions 4 it is
    read by 4 or more tasks, each starting at an index entry's position (a batch start), no batch twice."""
    directory = tmp_path / "big-0"
    build_partition(
        str(directory), 1, batches_per_segment=600, records_per_batch=10, value_size=1000,
        index_interval_bytes=256 * 1024,
    )  # fmt: skip
    segment = LocalLog.scan(str(directory)).log_segments[0]
    entries = {e.position for e in OffsetIndex(segment.index_path, 0).dump_entries()}
    assert 10 < len(entries) < 40  # sparse: one entry for about 25 batches
    result = plan(parse_options({"path": str(directory), "minPartitions": "4", "openCostInBytes": "0"}))
    assert len(result.splits) >= 4 and len(result.tasks) >= 4
    assert {s.start_position for s in result.splits[1:]} <= entries
    assert_splits_cover_every_batch_once(result.splits)
    sizes = [s.size for s in result.splits]
    assert max(sizes) < 2 * segment.log_size / 4  # about even
    # the default open cost does not change that: 6 MB is worth several tasks
    assert len(plan(parse_options({"path": str(directory), "minPartitions": "4"})).tasks) >= 4


def test_a_large_segment_without_an_index_is_cut_at_batch_headers(tmp_path: Path) -> None:
    directory = tmp_path / "noindex-0"
    build_partition(str(directory), 1, batches_per_segment=300, records_per_batch=10, value_size=1000)
    (directory / "00000000000000000000.index").unlink()
    result = plan(parse_options({"path": str(directory), "minPartitions": "3", "openCostInBytes": "0"}))
    assert len(result.splits) >= 3
    assert_splits_cover_every_batch_once(result.splits)


def test_many_small_partitions_are_packed_into_few_tasks(tmp_path: Path) -> None:
    for p in range(300):
        build_partition(str(tmp_path / f"orders-{p}"), 1, batches_per_segment=2)
    result = plan(parse_options({"path": str(tmp_path), "minPartitions": "2"}))
    assert len(result.splits) == 300 and len(result.partitions) == 300
    # 300 x (1.2 KB + 1 MiB open cost) / 2 cores: two or three tasks of ~128 segments, not 300 tasks
    assert 2 <= len(result.tasks) <= 4
    assert_tasks_hold_every_split_once(result)
    # minPartitions spreads them over more tasks when asked
    assert len(plan(parse_options({"path": str(tmp_path), "minPartitions": "16"})).tasks) >= 16


def test_packing_is_sparks_file_partition_rule() -> None:
    """FilePartition.getFilePartitions: a task is closed when the next piece would take it past the target;
    each piece adds the open cost."""

    def piece(size: int) -> Split:
        return Split("x.log", "t", 0, 0, size=size)

    sizes = [5, 5, 5, 20, 1, 1, 1, 1]
    tasks = pack([piece(s) for s in sizes], target=12, open_cost=1)
    assert [[s.size for s in t] for t in tasks] == [[5, 5], [5], [20], [1, 1, 1, 1]]
    assert target_split_bytes(total=100, min_partitions=4, max_split_bytes=1000, open_cost=10) == 25
    assert target_split_bytes(total=100, min_partitions=40, max_split_bytes=1000, open_cost=10) == 10
    assert target_split_bytes(total=10**12, min_partitions=4, max_split_bytes=1000, open_cost=10) == 1000


def test_split_options_are_checked() -> None:
    for bad in ({"minPartitions": "0"}, {"minPartitions": "x"}, {"openCostInBytes": "-1"}):
        with pytest.raises(OptionError):
            parse_options({"path": "/x", **bad})


# -- filter pushdown: what Spark's filters leave unread ----------------------------------------------------


class CountingOpen:
    """Opens every segment the reader reads through a ranged byte source over the local file (4 KiB at a
    time) and counts the bytes it fetches: what the reader really reads, not the mapped file's size."""

    def __init__(self) -> None:
        self.bytes = 0
        self.files: list = []

    def __call__(self, path: str) -> FileRecords:
        from kdump.storage.byte_source import RangedSource

        f = open(path, "rb")  # noqa: SIM115 -- closed by close()
        self.files.append(f)

        def fetch(start: int, end: int) -> bytes:
            f.seek(start)
            data = f.read(end - start)
            self.bytes += len(data)
            return data

        return FileRecords.open(RangedSource(path, os.fstat(f.fileno()).st_size, fetch, read_ahead=4096))

    def close(self) -> None:
        for f in self.files:
            f.close()


def pushed_read(
    options: dict[str, str], filters: list, monkeypatch: pytest.MonkeyPatch
) -> tuple[list, int, int]:
    """The rows a Spark query of ``filters`` gets from the source, as PySpark's pushdown worker drives it
    (``reader.pushFilters`` then ``partitions`` and ``read``), and the bytes of log read and the tasks."""
    pytest.importorskip("pyspark")
    pa = pytest.importorskip("pyarrow")
    import kdump.spark.reader as reader_module
    from kdump.spark.source import KafkaLogFilteringReader

    counting = CountingOpen()
    monkeypatch.setattr(reader_module, "FileRecords", counting)
    try:
        reader = KafkaLogFilteringReader({**options, "pushFilters": "true"})
        handed_back = list(reader.pushFilters(filters))
        assert handed_back == filters  # Spark applies every filter again
        partitions = reader.partitions()
        rows = []
        for partition in partitions:
            for batch in reader.read(partition):
                table = pa.Table.from_batches([batch])
                ts = table.column("timestamp").cast(pa.int64()).to_pylist()
                rows += zip(
                    table.column("topic").to_pylist(),
                    table.column("partition").to_pylist(),
                    table.column("offset").to_pylist(),
                    [t // 1000 for t in ts],
                    strict=True,
                )
    finally:
        counting.close()
        monkeypatch.undo()
    return sorted(rows), counting.bytes, len(partitions)


def spark_filter(rows: list, topic=None, offset_from=None, ts_from=None, offset_below=None) -> list:  # noqa: ANN001
    return [
        r
        for r in rows
        if (topic is None or r[0] == topic)
        and (offset_from is None or r[2] >= offset_from)
        and (offset_below is None or r[2] < offset_below)
        and (ts_from is None or r[3] >= ts_from)
    ]


@pytest.fixture(scope="module")
def four_segments(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """orders-0: 4 segments of 200 batches of 10 records (offsets 0-7999), distinct timestamps; and a small
    second topic."""
    root = tmp_path_factory.mktemp("pushdown")
    build_partition(
        str(root / "orders-0"), 4, batches_per_segment=200, records_per_batch=10, distinct_timestamps=True,
        index_interval_bytes=4096,
    )  # fmt: skip
    build_partition(str(root / "audit-0"), 2, batches_per_segment=50)
    return root


def test_filters_pushed_down_read_less_and_keep_the_rows(four_segments: Path, monkeypatch) -> None:  # noqa: ANN001
    from pyspark.sql.datasource import EqualTo, GreaterThanOrEqual, LessThan, Not

    options = {"path": str(four_segments), "minPartitions": "2"}
    every, whole_bytes, _ = pushed_read(options, [], monkeypatch)
    assert len(every) == 8000 + 2 * 50 * 5
    size = sum(p.stat().st_size for p in four_segments.glob("*/*.log"))
    assert whole_bytes == size  # no filter: every byte of every segment, once

    cases = {
        "offset >= 6100": ([GreaterThanOrEqual(("offset",), 6100)], {"offset_from": 6100}),
        "topic = orders, offset < 1500": (
            [EqualTo(("topic",), "orders"), LessThan(("offset",), 1500)],
            {"topic": "orders", "offset_below": 1500},
        ),
        "timestamp >= segment 3's + 500": (
            [
                GreaterThanOrEqual(
                    ("timestamp",), datetime.fromtimestamp((BASE_TIMESTAMP + 3000 + 500) / 1000, UTC)
                )
            ],
            {"ts_from": BASE_TIMESTAMP + 3000 + 500},
        ),
        "NOT offset = 5 (not used)": ([Not(EqualTo(("offset",), 5))], {}),
    }
    read = {}
    for name, (filters, wanted) in cases.items():
        rows, bytes_read, _ = pushed_read(options, filters, monkeypatch)
        # what Spark keeps after applying the filters again is what it keeps from the whole read
        assert spark_filter(rows, **wanted) == spark_filter(every, **wanted), name
        read[name] = bytes_read
    assert read["offset >= 6100"] < 0.3 * whole_bytes
    assert read["topic = orders, offset < 1500"] < 0.3 * whole_bytes
    assert read["timestamp >= segment 3's + 500"] < 0.35 * whole_bytes  # from offset 5500 (segment 2)
    assert read["NOT offset = 5 (not used)"] == whole_bytes
    print(f"\nbytes read: no filter {whole_bytes}; " + "; ".join(f"{k}: {v}" for k, v in read.items()))


def test_pushed_filters_combine_with_the_options(four_segments: Path, monkeypatch) -> None:  # noqa: ANN001
    from pyspark.sql.datasource import GreaterThan, In, LessThanOrEqual

    options = {"path": str(four_segments), "startingOffsets": json.dumps({"orders": {"0": 3000}})}
    filters = [In(("partition",), (0, 7)), GreaterThan(("offset",), 2000), LessThanOrEqual(("offset",), 4000)]
    rows, _, _ = pushed_read(options, filters, monkeypatch)
    assert {r[0] for r in rows} == {"orders"}  # audit-0 ends at offset 499
    orders = [r[2] for r in rows if r[0] == "orders"]
    assert min(orders) == 3000 and max(orders) <= 4009  # the batch holding 4000 is read whole
    assert 4000 in orders


def test_columns_option_hands_spark_only_those_columns() -> None:
    """Column pruning by option (PySpark gives a Python data source no pruning of its own): the schema and
    every Arrow batch hold the columns named, in that order, with the values of the whole read."""
    pytest.importorskip("pyspark")
    pa = pytest.importorskip("pyarrow")
    from pyspark.sql.pandas.types import to_arrow_schema

    from kdump.spark.source import KafkaLogDataSource, KafkaLogReader

    options = {"paths": json.dumps(FIXTURE_TREES), "columns": "offset, value,topic,offset"}
    schema = KafkaLogDataSource(options).schema()
    assert schema.names == ["offset", "value", "topic"]
    reader = KafkaLogReader(options)
    batches = [b for p in reader.partitions() for b in reader.read(p)]
    assert all(b.schema == to_arrow_schema(schema, timezone="UTC") for b in batches)
    got = sorted(
        (t, o, v)
        for b in batches
        for o, v, t in zip(*(b.column(i).to_pylist() for i in range(3)), strict=True)
    )
    whole = KafkaLogReader({"paths": json.dumps(FIXTURE_TREES)})
    want = sorted(
        (r["topic"], r["offset"], r["value"])
        for p in whole.partitions()
        for b in whole.read(p)
        for r in pa.Table.from_batches([b]).select(["topic", "offset", "value"]).to_pylist()
    )
    assert got == want and len(got) > 1000
    with pytest.raises(OptionError, match="no column 'nope'"):
        KafkaLogDataSource({"path": "/x", "columns": "offset,nope"}).schema()


class _FakeField:
    def __init__(self, name: str) -> None:
        self.name = name

    def getName(self) -> str:  # noqa: N802 -- java.lang.reflect.Field's name
        return self.name


class _FakeSpark:
    """Just what :func:`kdump.spark.register` asks of a session: the JVM's ``PythonScanBuilder`` fields (py4j),
    and ``dataSource.register``."""

    def __init__(self, fields: list[str] | None) -> None:
        fields_of = [_FakeField(f) for f in fields or []]
        missing = fields is None

        class Class:
            @staticmethod
            def forName(name: str, initialize: bool, loader: object) -> object:  # noqa: N802, ARG004
                if missing:
                    raise RuntimeError(f"ClassNotFoundException: {name}")
                return type("Builder", (), {"getDeclaredFields": staticmethod(lambda: fields_of)})

        class Thread:
            @staticmethod
            def currentThread() -> object:  # noqa: N802
                return type("T", (), {"getContextClassLoader": staticmethod(lambda: None)})

        jvm = type("Jvm", (), {})()
        jvm.java = type("java", (), {"lang": type("lang", (), {"Class": Class, "Thread": Thread})})
        self.sparkContext = type("SC", (), {"_jvm": jvm})()
        self.registered: list[type] = []
        self.dataSource = type("DS", (), {"register": self.registered.append})()


@pytest.mark.parametrize(
    ("fields", "per_scan"),
    [
        # PySpark 4.3.0's PythonScanBuilder (javap): the plan goes to PythonDataSourceV2.setReadInfo
        (["ds", "shortName", "outputSchema", "options", "supportedFilters"], False),
        # Spark master after SPARK-58551: "private var readInfo: Option[PythonDataSourceReadInfo]" in the builder
        (["ds", "shortName", "outputSchema", "options", "supportedFilters", "allFilters", "readInfo"], True),
        (None, False),  # no such class: not known to be safe
    ],
)
def test_push_filters_default_follows_where_spark_keeps_the_pushed_plan(fields, per_scan: bool) -> None:  # noqa: ANN001
    pytest.importorskip("pyspark")
    from kdump.spark import pushdown_plan_per_scan, register
    from kdump.spark.options import push_filters_wanted
    from kdump.spark.source import (
        KafkaLogDataSource,
        KafkaLogDataSourcePushing,
        KafkaLogPythonDataSource,
        KafkaLogPythonDataSourcePushing,
    )

    fake = _FakeSpark(fields)
    assert pushdown_plan_per_scan(fake) is per_scan
    register(fake)  # (no JVM engine in the fake: the Python source takes kafka-log too)
    if per_scan:
        assert fake.registered == [KafkaLogPythonDataSourcePushing, KafkaLogDataSourcePushing]
    else:
        assert fake.registered == [KafkaLogPythonDataSource, KafkaLogDataSource]
    assert [s.name() for s in fake.registered] == ["kafka-log-python", "kafka-log"]
    for source in fake.registered:
        assert push_filters_wanted({}, source.push_filters_default) is per_scan
        assert push_filters_wanted({"pushFilters": "false"}, source.push_filters_default) is False
        assert push_filters_wanted({"pushfilters": "TRUE"}, source.push_filters_default) is True


# -- planning many partitions: a constant number of system calls per partition -------------------------------


class CountingCalls:
    """Counts the file-system calls made through ``os`` (``getsize`` and ``isfile`` go through ``os.stat``)."""

    NAMES = ("scandir", "listdir", "stat", "lstat", "open", "fstat")

    def __init__(self, monkeypatch) -> None:  # noqa: ANN001
        self.calls: dict[str, int] = dict.fromkeys(self.NAMES, 0)
        for name in self.NAMES:
            monkeypatch.setattr(os, name, self._counting(name, getattr(os, name)))

    def _counting(self, name: str, function):  # noqa: ANN001, ANN202
        def counted(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
            self.calls[name] += 1
            return function(*args, **kwargs)

        return counted

    def total(self) -> int:
        return sum(self.calls.values())


def test_planning_costs_a_few_system_calls_a_partition(tmp_path: Path, monkeypatch) -> None:  # noqa: ANN001
    """The planner of 10,000 partitions (bench/spark_plan_bench.py: 1.6-2.2 CPU-s) does the same work for each:
    the system calls of planning 4, 8 and 16 partitions grow by the same count per partition, and a few of
    them (two listings, a stat and an open of the .log with its fstat).  Every row of the tree, read through the
    packed tasks as the Spark source reads them, is a row the storage core decodes from that partition."""
    pa = pytest.importorskip("pyarrow")
    from kdump.spark.reader import read_split
    from tests.spark_oracle import expected_rows

    for n in (4, 8, 16):
        for p in range(n):
            build_partition(str(tmp_path / f"n{n}" / f"orders-{p}"), 1, batches_per_segment=2)
    counts = []
    for n in (4, 8, 16):
        options = parse_options({"path": str(tmp_path / f"n{n}"), "minPartitions": "2"})
        with monkeypatch.context() as m:
            calls = CountingCalls(m)
            result = plan(options)
        assert len(result.splits) == n
        counts.append(calls.calls)
    per = {k: (counts[1][k] - counts[0][k]) / 4 for k in CountingCalls.NAMES}
    assert all(counts[2][k] - counts[1][k] == 8 * per[k] for k in per), counts
    assert sum(per.values()) <= 5, per
    # the whole tree through the packed tasks = each partition's records as the storage core decodes them
    tree = tmp_path / "n16"
    options = parse_options({"path": str(tree), "minPartitions": "2"})
    result = plan(options)
    assert len(result.tasks) < len(result.splits) == 16
    got = []
    for task in result.tasks:
        for split in task:
            for batch in read_split(split, options.read):
                data = batch.to_pydict()
                data["timestamp"] = [
                    t // 1000 for t in batch.column("timestamp").cast(pa.int64()).to_pylist()
                ]
                names = ("key", "value", "topic", "partition", "offset", "timestamp")
                got += zip(*(data[n] for n in names), strict=True)
    expected = [r[:6] for r in expected_rows([str(tree)])]
    assert sorted(got, key=lambda r: r[2:5]) == expected
    assert len(expected) == 16 * 2 * 5
