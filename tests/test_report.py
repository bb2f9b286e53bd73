"""``kdump report``: the page's data are the other commands' facts (``ls``, ``txn``, ``retention``, ``find
--group``, ``verify``, each run on its own here), its timeline adds up to the batches ``kdump files --json``
lists, the page is self-contained (nothing to fetch), and, in a real headless Chromium when one is installed,
it opens with no console error and every chart drawn with data."""

from __future__ import annotations

import functools
import io
import json
import os
import shutil
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from kdump.analysis.index_recovery import recover_indexes
from kdump.cli import cli
from kdump.render.json_schema import COMMAND_TYPES, validate
from kdump.storage.file_records import FileRecords
from tests.builder import SimpleRecord, build_v2_batch
from tests.corpus import REPO
from tests.forensic_data import (
    T0,
    offset_commit_key,
    offset_commit_value,
    stuck_transaction_log_dir,
)
from tests.headless_chromium import CHARTS_JS, DATA_JS, TEXT_JS, Browser, chromium_path
from tests.replay import run_kdump

#: A real broker's data directory (Kafka 4.0: internal topics, codecs, a compacted topic, transactions).
BROKER = REPO / "tests" / "fixtures" / "broker"
NOW = "2026-12-01T00:00:00Z"


def _cli(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(args))
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr, result.stderr
    return result.exit_code, result.stdout


def _json(*args: str) -> list[dict[str, Any]]:
    code, out = _cli(*args)
    assert code in (0, 1), out
    return [json.loads(line) for line in out.splitlines()]


class _Page(HTMLParser):
    """The JSON of every ``script.kdump-data`` element, the charts' ``data-marks``, and every attribute that
    could fetch something."""

    def __init__(self) -> None:
        super().__init__()
        self.data: list[dict[str, Any]] = []
        self.marks: list[int] = []
        self.fetching: list[str] = []
        self.tags: set[str] = set()
        self._in_data = False
        self._text = ""

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        self.tags.add(tag)
        if tag == "script":
            assert a.get("type") == "application/json", "a script that runs"
            self._in_data, self._text = True, ""
        if tag == "svg" and "chart" in (a.get("class") or ""):
            self.marks.append(int(a.get("data-marks") or 0))
        for name in ("src", "href", "srcset", "action", "data", "poster"):
            value = a.get(name)
            if value is not None and not (name == "href" and value.startswith("#")):
                self.fetching.append(f"{tag} {name}={value}")

    def handle_data(self, data: str) -> None:
        if self._in_data:
            self._text += data

    def handle_endtag(self, tag: str) -> None:
        if tag == "script" and self._in_data:
            self.data.append(json.loads(self._text))
            self._in_data = False


def _page(path: Path) -> _Page:
    text = path.read_text(encoding="utf-8")
    parser = _Page()
    parser.feed(text)
    assert "url(" not in text and "@import" not in text and "<link" not in text
    return parser


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The broker's data directory, plus a producer stuck mid-transaction (``txn-0`` replaced by
    :func:`stuck_transaction_log_dir`'s, its coordinator CompleteCommit: hanging) and a group ``billing`` that committed
    offset 4 of that partition (lag 6 against its high watermark 10)."""
    root = tmp_path_factory.mktemp("report") / "data"
    shutil.copytree(BROKER, root)
    shutil.rmtree(root / "txn-0")
    shutil.rmtree(root / "__transaction_state-0")
    stuck_transaction_log_dir(str(root), coordinator_status=4)  # CompleteCommit: it hangs
    # appended to the one __consumer_offsets partition (the metadata log gives the topic 1 partition)
    log = root / "__consumer_offsets-0" / "00000000000000000000.log"
    end = _json("ls", "--json", str(log.parent))[0]["logEndOffset"]
    commit = build_v2_batch(
        [
            SimpleRecord(
                offset_commit_value(4, 0, "", T0 + 500),
                key=offset_commit_key("billing", "txn", 0),
                timestamp=T0 + 500,
            )
        ],
        base_offset=end,
    )
    with open(log, "ab") as f:
        f.write(commit)
    return root


@pytest.fixture(scope="module")
def report(data_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[list[dict], Path]:
    objects = _json("report", "--json", "--now", NOW, str(data_dir))
    page = tmp_path_factory.mktemp("page") / "report.html"
    code, _ = _cli("report", "--now", NOW, "-o", str(page), str(data_dir))
    assert code in (0, 1)
    return objects, page


def _by_dir(objects: list[dict], kind: str) -> dict[str, dict]:
    return {os.path.abspath(o["directory"]): o for o in objects if o["type"] == kind}


def test_json_is_the_schema(report: tuple[list[dict], Path]) -> None:
    objects, _ = report
    assert [o["type"] for o in objects][-1] == "reportOverview"
    for o in objects:
        assert validate(o) == [], o["type"]
        assert o["type"] in COMMAND_TYPES["report"]


def test_page_carries_the_json(report: tuple[list[dict], Path]) -> None:
    """Every unit of ``--json`` that the page draws is in the page, the same object."""
    objects, page = report
    parsed = _page(page)
    assert parsed.fetching == [] and parsed.tags >= {"svg", "table"}
    in_page = {json.dumps(o, sort_keys=True) for o in parsed.data}
    drawn = [o for o in objects if o["type"] != "reportPartition" or o["summary"]["records"]]
    drawn = [o for o in drawn if o["type"] != "reportGroups" or o["groups"]]
    drawn = [o for o in drawn if o["type"] != "reportCoordinator" or o["transactions"]]
    assert {json.dumps(o, sort_keys=True) for o in drawn} == in_page
    assert parsed.marks and min(parsed.marks) > 0
    text = page.read_text(encoding="utf-8")
    # the hanging transaction: a dark red bar of the Gantt chart, and the command that ends it
    assert 'class="mark hanging"' in text
    # --now is days after the batches: the Gantt chart ends at the newest batch (the aborted ranges keep their
    # width) and the hanging transaction's bar says how long it has been open at --now
    assert "hanging (dark red) (up to the newest batch)" in text
    assert "at 2026-12-01T00:00:00.000Z \u2192</text>" in text
    assert (
        "kafka-transactions.sh --bootstrap-server BROKER:9092 abort --topic txn --partition 0 --start-offset 4"
        in text
    )


def test_partitions_are_ls(data_dir: Path, report: tuple[list[dict], Path]) -> None:
    objects, _ = report
    ls = _by_dir(_json("ls", "--json", str(data_dir)), "partition")
    mine = {d: o["summary"] for d, o in _by_dir(objects, "reportPartition").items()}
    assert mine == ls


def test_transactions_are_txn(data_dir: Path, report: tuple[list[dict], Path]) -> None:
    objects, _ = report
    txn = _by_dir(_json("txn", "--json", "--now", NOW, str(data_dir)), "txnPartition")
    mine = {d: o["txn"] for d, o in _by_dir(objects, "reportPartition").items() if o["txn"] is not None}
    assert mine == {d: o for d, o in txn.items() if d in mine}
    stuck = mine[os.path.abspath(data_dir / "txn-0")]
    assert [(t["firstOffset"], t["hanging"]) for t in stuck["openTransactions"]] == [(4, True)]  # built so
    # partitions left out have no producer: txn finds nothing there either
    for d, o in txn.items():
        if d not in mine:
            assert o["openTransactions"] == o["abortedTransactions"] == [] and o["commits"] == 0


def test_retention_is_retention(data_dir: Path, report: tuple[list[dict], Path]) -> None:
    objects, _ = report
    retention = _by_dir(_json("retention", "--json", "--now", NOW, str(data_dir)), "retentionPartition")
    mine = {d: o["retention"] for d, o in _by_dir(objects, "reportPartition").items() if o["retention"]}
    assert mine and mine == {d: o for d, o in retention.items() if d in mine}
    assert any(o["compaction"] for o in mine.values())  # the compacted topic


def test_groups_are_find_group(data_dir: Path, report: tuple[list[dict], Path]) -> None:
    objects, _ = report
    groups = [
        g | {"directory": o["directory"]} for o in objects if o["type"] == "reportGroups" for g in o["groups"]
    ]
    assert {g["group"] for g in groups} >= {"billing"}
    for g in groups:
        [found] = _json("find", "--group", g["group"], "--json", str(data_dir))
        assert os.path.abspath(found["directory"]) == os.path.abspath(g["directory"])
        assert [
            (x["topic"], x["partition"], x["offset"], x["commitTimestamp"]) for x in found["offsets"]
        ] == [(x["topic"], x["partition"], x["offset"], x["commitTimestamp"]) for x in g["offsets"]]
    [billing] = [g for g in groups if g["group"] == "billing"]
    assert billing["offsets"] == [
        {
            "topic": "txn",
            "partition": 0,
            "offset": 4,
            "commitTimestamp": T0 + 500,
            "logEndOffset": 10,
            "lag": 6,
        }
    ]


def test_coordinator_states_are_find_transactional_id(
    data_dir: Path, report: tuple[list[dict], Path]
) -> None:
    """Every transactional id of the coordinator's table: what ``kdump find --transactional-id`` finds of it on
    its own (its ``__transaction_state`` partition by Kafka's hash, its latest state, producer, partitions)."""
    objects, _ = report
    coordinators = [o for o in objects if o["type"] == "reportCoordinator" and o["transactions"]]
    assert coordinators
    states = set()
    for o in coordinators:
        for t in o["transactions"]:
            [found] = _json("find", "--transactional-id", t["transactionalId"], "--json", str(data_dir))
            assert os.path.abspath(found["directory"]) == os.path.abspath(o["directory"])
            assert found["found"] and found["transaction"] == t
            states.add(t["state"])
    assert "CompleteCommit" in states  # the stuck transaction's coordinator says so: it hangs


def test_silences_segments_and_snapshots_are_the_files(
    data_dir: Path, report: tuple[list[dict], Path]
) -> None:
    """A partition's longest silences are the longest gaps between consecutive batches' newest timestamps of
    ``kdump files --json`` (the timeline's rule: a later batch's timestamp after an earlier one's), its segments are
    its ``.log`` files (base offset, bytes, first and largest batch timestamps), and the metadata log's KRaft
    snapshots are its ``.checkpoint`` files (end offset and epoch as Kafka names them, ``Snapshots.parse``)."""
    objects, _ = report
    checked_silences = 0
    for directory, o in _by_dir(objects, "reportPartition").items():
        gaps, spans = [], []
        previous = None
        for log in sorted(Path(directory).glob("*.log")):
            batches = _file_batches(str(log))
            stamps = [b["timestamp"] for b in batches if b["timestamp"] >= 0]
            spans.append(
                {
                    "baseOffset": int(log.name.split(".")[0]),
                    "firstOffset": batches[0]["baseOffset"] if batches else int(log.name.split(".")[0]),
                    "firstTimestamp": stamps[0] if stamps else -1,
                    "largestTimestamp": max(stamps, default=-1),
                    "bytes": log.stat().st_size,
                }
            )
            for b in batches:
                ts = b["timestamp"]
                if previous is not None and ts >= 0 and previous[0] >= 0 and ts > previous[0]:
                    gaps.append((ts - previous[0], previous[0], ts, previous[1], b["baseOffset"]))
                previous = (ts if ts >= 0 else previous[0] if previous else -1, b["lastOffset"])
        longest = sorted(gaps, key=lambda g: -g[0])[:3]
        mine = [
            (g["durationMs"], g["start"], g["end"], g["afterOffset"], g["beforeOffset"])
            for g in o["silences"]
        ]
        assert [g[0] for g in mine] == [g[0] for g in longest], directory
        if len({g[0] for g in gaps}) == len(gaps):  # no two of the same length: the same gaps
            assert mine == longest, directory
        checked_silences += len(mine)
        assert o["segmentSpans"] == spans, directory
        snapshots = sorted(Path(directory).glob("*.checkpoint"))
        if o["topic"] == "__cluster_metadata":
            assert snapshots and [
                (s["endOffset"], s["epoch"], s["bytes"]) for s in o["metadataSnapshots"]
            ] == [(int(f.stem.split("-")[0]), int(f.stem.split("-")[1]), f.stat().st_size) for f in snapshots]
        else:
            assert o["metadataSnapshots"] == []
    assert checked_silences > 10


def test_overview_is_verify(data_dir: Path, report: tuple[list[dict], Path]) -> None:
    objects, _ = report
    verify = [o for o in _json("verify", "--json", str(data_dir)) if o["type"] == "summary"]
    [overview] = [o for o in objects if o["type"] == "reportOverview"]
    assert [overview["verify"]] == verify
    unchecked = [o for o in _json("verify", "--json", str(data_dir)) if o["type"] == "unchecked"]
    assert overview["notCheckedTotal"] == len(unchecked) == overview["verify"]["unchecked"]


@functools.cache
def _file_batches(log: str) -> list[dict[str, Any]]:
    """The batch objects of ``kdump files --json`` of one ``.log`` (read once for the tests that compare)."""
    code, out, _ = run_kdump(["--files", log, "--json"])
    return [b for b in map(json.loads, out.decode().splitlines()) if b["type"] == "batch"]


def test_timeline_adds_up_to_the_batches(data_dir: Path, report: tuple[list[dict], Path]) -> None:
    """Buckets against the batch objects of ``kdump files --json`` (the format the corpus replay checks
    against Kafka's own tool): batches, records, bytes, offsets, newest timestamp, epoch changes."""
    objects, _ = report
    for directory, o in _by_dir(objects, "reportPartition").items():
        batches = []
        for log in sorted(Path(directory).glob("*.log")):
            batches += _file_batches(str(log))
        buckets = o["timeline"]["buckets"]
        assert sum(b["batches"] for b in buckets) == len(batches), directory
        assert sum(b["records"] for b in buckets) == o["summary"]["records"]
        assert sum(b["bytes"] for b in buckets) == sum(b["size"] for b in batches)
        if batches:
            assert buckets[0]["firstOffset"] == batches[0]["baseOffset"]
            assert buckets[-1]["lastOffset"] == batches[-1]["lastOffset"]
            assert max(b["maxTimestamp"] for b in buckets) == max(
                b["timestamp"] for b in batches
            )  # the batch line's CreateTime: its max timestamp
            assert max(b["maxBatchBytes"] for b in buckets) == max(b["size"] for b in batches)
        epochs, previous = [], None
        for b in batches:
            epoch = b["partitionLeaderEpoch"]
            if epoch != previous and (
                previous is not None or epoch >= 0
            ):  # no epoch at all (-1) is no change
                epochs.append((epoch, b["baseOffset"]))
            previous = epoch
        assert [(e["epoch"], e["offset"]) for e in o["epochChanges"]] == epochs
        assert sum(s["bytes"] for s in o["segmentSpans"]) == o["summary"]["sizeBytes"]
        by_producer: dict[int, dict[str, Any]] = {}
        for b in batches:
            if b["producerId"] < 0:
                continue
            p = by_producer.setdefault(
                b["producerId"], {"batches": 0, "records": 0, "markers": 0, "firstOffset": b["baseOffset"]}
            )
            p["lastOffset"], p["producerEpoch"] = b["lastOffset"], b["producerEpoch"]
            if b["isControl"]:
                p["markers"] += 1
            else:
                p["batches"] += 1
                p["records"] += b["count"]
        assert {
            p["producerId"]: {
                k: p[k]
                for k in ("batches", "records", "markers", "firstOffset", "lastOffset", "producerEpoch")
            }
            for p in o["producers"]
        } == by_producer
        assert sorted(by_producer) == o["summary"]["producers"]


def test_many_batches_fold_into_bounded_buckets() -> None:
    from kdump.analysis.timeline import MAX_BUCKETS, Timeline

    class Batch:
        def __init__(self, n: int) -> None:
            self.base_offset = self.last_offset = n
            self.max_timestamp = T0 + n * 10 + (3_600_000 if n >= 7000 else 0)
            self.size_in_bytes = 100 + n % 7
            self.partition_leader_epoch = 0 if n < 5000 else 1
            self.producer_id, self.producer_epoch = n % 3, 0
            self.is_control_batch = self.is_transactional = False

    t = Timeline()
    t.start_segment(0)
    for n in range(10_000):
        t.add(Batch(n), 1)  # type: ignore[arg-type]
    t.end_segment()
    assert len(t.buckets) <= MAX_BUCKETS
    assert sum(b.batches for b in t.buckets) == sum(b.records for b in t.buckets) == 10_000
    assert sum(b.bytes for b in t.buckets) == sum(100 + n % 7 for n in range(10_000))
    assert [(e.epoch, e.offset) for e in t.epoch_changes] == [(0, 0), (1, 5000)]
    assert (t.silences[0].after_offset, t.silences[0].before_offset) == (6999, 7000)
    assert t.silences[0].duration == 3_600_000 + 10
    first, last = t.buckets[0], t.buckets[-1]
    assert (first.first_offset, last.last_offset) == (0, 9999)
    assert {p: (a.batches, a.first_offset, a.last_offset) for p, a in t.producers.items()} == {
        0: (3334, 0, 9999),
        1: (3333, 1, 9997),
        2: (3333, 2, 9998),
    }
    assert all(a.last_offset + 1 == b.first_offset for a, b in zip(t.buckets, t.buckets[1:], strict=False))


def test_names_from_disk_stay_text(tmp_path: Path) -> None:
    """A topic named with markup and a control character: shown as text (escaped as kdump's own text escapes
    it), never markup; the JSON keeps the exact name."""
    name = "x<img src=y>\x1b]0;t\x07"
    shutil.copytree(BROKER / "txn-0", tmp_path / f"{name}-0")
    page = tmp_path / "page.html"
    code, _ = _cli("report", "-o", str(page), str(tmp_path))
    parsed = _page(page)
    text = page.read_text(encoding="utf-8")
    assert parsed.fetching == [] and "img" not in parsed.tags
    assert "\x1b" not in text and "\x07" not in text
    assert "x&lt;img src=y&gt;\\x1b]0;t\\x07-0" in text
    [unit] = [o for o in parsed.data if o["type"] == "reportPartition"]
    assert unit["topic"] == name


def test_several_log_directories(tmp_path: Path) -> None:
    """Copies of the same partitions in two log directories (two brokers' disks): each row says which."""
    for copy in ("broker1", "broker2"):
        shutil.copytree(BROKER, tmp_path / copy)
    page = tmp_path / "page.html"
    _cli("report", "-o", str(page), str(tmp_path / "broker1"), str(tmp_path / "broker2"))
    text = page.read_text(encoding="utf-8")
    assert "txn-0 (broker1)" in text and "txn-0 (broker2)" in text
    parsed = _page(page)
    [overview] = [o for o in parsed.data if o["type"] == "reportOverview"]
    assert len(overview["logDirs"]) == 2


def test_usage() -> None:
    code, out = _cli("report", str(BROKER))
    assert code == 2


def _same_numbers(obj: Any) -> str:
    def norm(v: Any) -> Any:
        if isinstance(v, float) and v.is_integer():
            return int(v)
        if isinstance(v, dict):
            return {k: norm(x) for k, x in v.items()}
        if isinstance(v, list):
            return [norm(x) for x in v]
        return v

    return json.dumps(norm(obj), sort_keys=True)


@pytest.mark.skipif(chromium_path() is None, reason="chromium is not installed (apt-get install chromium)")
def test_in_a_real_browser(report: tuple[list[dict], Path], tmp_path: Path) -> None:
    """Headless Chromium opens the page from disk: no console error (nothing failed to load, no script
    error), every chart drawn with data marks of non-zero size, no word of a chart cut at its edge or drawn over
    another, the data the browser parses is ``--json``'s, and screenshots of the overview and of a partition
    are made."""
    objects, page = report
    with Browser() as browser:
        browser.open(page.as_uri())
        charts = browser.evaluate(CHARTS_JS)
        assert browser.evaluate(TEXT_JS) == []
        data = browser.evaluate(DATA_JS)
        errors = browser.console_errors()
        browser.screenshot(str(tmp_path / "overview.png"), "#overview")
        first = browser.evaluate("document.querySelector('section.partition').id")
        browser.screenshot(str(tmp_path / "partition.png"), f"#{first}")
    assert errors == []
    assert len(charts) >= 10
    for c in charts:
        assert c["drawn"] > 0 and c["drawn"] == c["marks"] == c["said"], c
        assert c["width"] > 300, c
    # JavaScript has one number type: 0.0 comes back as 0
    assert {_same_numbers(o) for o in data} <= {_same_numbers(o) for o in objects}
    assert any(o["type"] == "reportOverview" for o in data)
    for name in ("overview.png", "partition.png"):
        png = (tmp_path / name).read_bytes()
        assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 10_000
        width, height = int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")
        assert width > 600 and height > 300, (name, width, height)


def test_partitions_read_side_by_side_are_the_same(
    data_dir: Path, report: tuple[list[dict], Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two forked workers reading the partitions (each one partition in one walk at a time) give the facts of
    the run in one process, in the same order."""
    objects, _ = report
    monkeypatch.setenv("KDUMP_WORKERS", "2")
    monkeypatch.setenv("KDUMP_PARALLEL_MIN_BYTES", "0")
    assert _json("report", "--json", "--now", NOW, str(data_dir)) == objects


def _uncompressed_sizes(directory: Path) -> tuple[int, int, int]:
    """(compressed v2 batches, their bytes, their bytes with the records decompressed), by kafka-python's codecs
    (``kafka.codec``, not kdump's) over batches framed here (offset, length, magic at 16, attributes at 21)."""
    from kafka import codec

    decode = {1: codec.gzip_decode, 2: codec.snappy_decode, 3: codec.lz4_decode, 4: codec.zstd_decode}
    batches = compressed = uncompressed = 0
    for log in sorted(directory.glob("*.log")):
        data = log.read_bytes()
        at = 0
        while at + 61 <= len(data):
            length = int.from_bytes(data[at + 8 : at + 12], "big")
            size = 12 + length
            codec_id = int.from_bytes(data[at + 21 : at + 23], "big") & 7
            if data[at + 16] == 2 and codec_id:
                batches += 1
                compressed += size
                uncompressed += 61 + len(decode[codec_id](data[at + 61 : at + size]))
            at += size
    return batches, compressed, uncompressed


def test_compression_ratio_is_the_codecs(report: tuple[list[dict], Path]) -> None:
    """Where every compressed batch was sampled (the small partitions), the uncompressed size is kafka-python's
    decompression of each batch; a partition with more batches than the sample says so and stays close."""
    objects, _ = report
    exact = 0
    for directory, o in _by_dir(objects, "reportPartition").items():
        c = o["compression"]
        batches, compressed, uncompressed = _uncompressed_sizes(Path(directory))
        if c is None:
            assert batches == 0, directory
            continue
        assert (c["compressedBatches"], c["compressedBytes"]) == (batches, compressed), directory
        if c["exact"]:
            exact += 1
            assert (c["sampledBytes"], c["uncompressedBytes"]) == (compressed, uncompressed), directory
        else:
            assert c["sampledBatches"] < batches
            assert abs(c["ratio"] - uncompressed / compressed) < 0.1 * uncompressed / compressed, directory
    assert exact >= 4  # the four codecs' topics


def _interest_of(o: dict[str, Any], lags: dict[tuple[str, int], int]) -> tuple[Any, ...]:
    """The page's order of interest computed from a ``reportPartition``'s JSON (and the groups' lags): problems,
    hanging, open transactions, lag, retention's pending deletions, offset gaps (not compacted),
    size."""
    s = o["summary"]
    txn = o["txn"]
    opened = txn["openTransactions"] if txn is not None else s["openTransactions"]
    ret = o["retention"]
    return (
        bool(sum(o["problemKinds"].values())),
        any(t.get("hanging") for t in opened),
        bool(opened),
        lags.get((o["topic"], o["partition"]), 0) > 0,
        bool(ret and any(f["deletedBy"] for f in ret["segmentFates"])),
        bool(o["timeline"]["offsetJumps"] and (ret is None or ret["compaction"] is None)),
        s["sizeBytes"],
    )


def test_the_most_interesting_partitions_are_drawn(data_dir: Path, tmp_path: Path) -> None:
    """Partitions with something to see are drawn whatever their place in the walk: with twelve sound partitions
    walked first and a damaged one walked last, --max-partitions 4 draws the hanging transaction (also lagging,
    with problems), the damaged one, then the next by the page's order, computed here from the JSON facts; the
    others are counted in the note and reachable from their table rows."""
    root = tmp_path / "data"
    shutil.copytree(data_dir, root)
    for i in range(12):
        part = root / f"aaa-{i}"
        part.mkdir()
        log = b"".join(
            build_v2_batch([SimpleRecord(b"x" * (10 + i), timestamp=T0 + n)], base_offset=n) for n in range(3)
        )
        (part / "00000000000000000000.log").write_bytes(log)
        recovered = recover_indexes(FileRecords.from_bytes(log), 0, 4096)
        (part / "00000000000000000000.index").write_bytes(recovered.offset_index_bytes())
        (part / "00000000000000000000.timeindex").write_bytes(recovered.time_index_bytes())
    bad = root / "zzz-0"
    bad.mkdir()
    data = bytearray(build_v2_batch([SimpleRecord(b"y" * 50, timestamp=T0)], base_offset=0))
    data[-1] ^= 0xFF  # a CRC problem
    (bad / "00000000000000000000.log").write_bytes(bytes(data))
    page = tmp_path / "report.html"
    code, _ = _cli("report", "--crc", "--now", NOW, "--max-partitions", "4", "-o", str(page), str(root))
    assert code == 1
    objects = _json("report", "--json", "--crc", "--now", NOW, str(root))
    lags: dict[tuple[str, int], int] = {}
    for g in (o for o in objects if o["type"] == "reportGroups"):
        for group in g["groups"]:
            for x in group["offsets"]:
                key = (x["topic"], x["partition"])
                lags[key] = max(lags.get(key, 0), x["lag"] or 0)
    parts = [o for o in objects if o["type"] == "reportPartition" and o["summary"]["records"]]
    chosen = sorted(parts, key=lambda o: _interest_of(o, lags), reverse=True)[
        :4
    ]  # stable: walk order on ties
    expected = sorted(chosen, key=lambda o: o["topic"].startswith("__"))  # internal topics' sections last
    drawn = [d["directory"] for d in _page(page).data if d.get("type") == "reportPartition"]
    assert drawn == [o["directory"] for o in expected]
    # txn-0 has problems (no index files) and a hanging transaction; zzz-0 only a problem (its CRC)
    assert [os.path.basename(d) for d in drawn[:2]] == ["txn-0", "zzz-0"]
    text = page.read_text(encoding="utf-8")
    assert f"4 of {len(parts)} partitions with records are drawn below" in text
    assert "drawn for: 2 problem(s), 1 hanging transaction(s), consumer lag 6" in text
    assert "drawn for: 3 problem(s)" in text
    # every partition not drawn links to its table row, and its directory is its row's tooltip
    for o in parts:
        if o["directory"] not in drawn:
            assert f'title="{o["directory"]}"' in text


def test_lag_of_thousands_of_partitions_is_aggregated() -> None:
    """A group that committed 3,000 partitions and 40 groups: the group's chart draws the 29 lagging most and
    the other 2,971 summed in one bar (their lags added), the groups' chart the same by group; every bar's
    figure adds up to the total lag; the group's table is folded, lagging most first."""
    from kdump.facts.coordinator import GroupState
    from kdump.facts.incident import GroupLag, GroupsReport
    from kdump.facts.output import Output
    from kdump.render.html_report import HtmlSink

    lags = [GroupLag("big", p, 1000 - p % 997, T0, 1000) for p in range(3000)]
    groups = [GroupState("big-readers", "d")] + [GroupState(f"g{i}", "d") for i in range(39)]
    report = GroupsReport(
        "/x/__consumer_offsets-0",
        groups,
        {"big-readers": lags, **{f"g{i}": [GroupLag("t", 0, 10, T0, 10 + i)] for i in range(39)}},
        [],
    )
    sink = HtmlSink(Output(io.BytesIO()), paths=["/x"])
    sink.fact(report)
    html = sink._groups()
    total = sum(x.lag or 0 for x in lags)
    parser = _Page()
    parser.feed(html)
    assert len(parser.marks) == 41 and all(parser.marks), parser.marks  # the groups', then one per group
    charts = html.split("<svg")[1:]
    for chart, rows in ((charts[0], 30), (charts[1], 30)):
        assert chart.count('class="row-label"') == rows
    ranked = sorted((x.lag or 0 for x in lags), reverse=True)
    assert f"2,971 other partitions: lag {sum(ranked[29:]):,} in all" in html
    figures = [int(t.split(": lag ")[1].split()[0].replace(",", "")) for t in charts[1].split("<title>")[1:]]
    assert sum(figures) == total
    assert "11 other groups: lag" in html and "all 3,000 committed partitions, lagging most first" in html


def test_a_log_directory_is_listed_once_not_once_per_partition(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """verify's selection (which the report makes) looks for a log directory's files in the parent of each
    partition once per parent: 10,000 partitions listed their log directory 10,000 times (quadratic: minutes)."""
    from kdump.commands import verify
    from kdump.storage import locations

    root = tmp_path / "data"
    root.mkdir()
    (root / "meta.properties").write_text("version=1\nnode.id=1\n")
    for i in range(40):
        part = root / f"t-{i}"
        part.mkdir()
        (part / "00000000000000000000.log").write_bytes(build_v2_batch([SimpleRecord(b"x", timestamp=T0)]))
    listed: list[str] = []
    real = locations.listdir

    def counting(path: str) -> list[str]:
        listed.append(os.path.normpath(path))
        return real(path)

    monkeypatch.setattr(locations, "listdir", counting)
    targets, log_dirs = verify.select([str(root)])
    assert len(targets) == 40 and log_dirs == [str(root)]
    assert listed.count(os.path.normpath(str(root))) <= 2, listed


def _problems(objects: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    """Every finding of the report's (partitions' and log directories') or of ``verify --json``'s problems, as
    (kind, file, position, offset), sorted."""
    found = []
    for o in objects:
        if o["type"] == "problem":
            found.append((o["kind"], o["file"], o["position"], o["offset"]))
        for f in o.get("findings") or []:
            found.append((f["kind"], f["file"], f["position"], f["offset"]))
        for f in o.get("logDirFindings") or []:
            found.append((f["kind"], f["file"], f["position"], f["offset"]))
    return sorted(found, key=repr)


def test_the_header_pass_checks_all_but_the_crcs(tmp_path: Path) -> None:
    """Without --crc the report reads batch headers and indexes only: on every damaged corpus case and on a
    partition with a flipped record byte, its findings are ``kdump verify``'s (the oracle, run on its own) less
    the ``crc`` ones (nothing more: no false alarm), it says so (``crcChecked`` false, the page's health summary
    and what could not be checked); with --crc they are verify's, all of them."""
    from tests.corpus import FIXTURE_CORPUS

    flipped = tmp_path / "flipped" / "t-0"
    flipped.mkdir(parents=True)
    log = bytearray(
        b"".join(build_v2_batch([SimpleRecord(b"v" * 40, timestamp=T0 + n)], base_offset=n) for n in range(5))
    )
    log[len(log) // 2] ^= 0x01  # a byte of a record in the middle batch: its header is intact
    (flipped / "00000000000000000000.log").write_bytes(bytes(log))
    cases = sorted(p for p in (FIXTURE_CORPUS / "damaged").iterdir() if p.is_dir()) + [flipped.parent]
    crcs = 0
    for case in cases:
        verify = _problems(_json("verify", "--json", str(case)))
        deep = _json("report", "--json", "--crc", "--now", NOW, str(case))
        header = _json("report", "--json", "--now", NOW, str(case))
        assert _problems(deep) == verify, case
        assert _problems(header) == [p for p in verify if p[0] != "crc"], case
        crcs += sum(1 for p in verify if p[0] == "crc")
        assert [o["crcChecked"] for o in deep if o["type"] == "reportOverview"] == [True]
        assert [o["crcChecked"] for o in header if o["type"] == "reportOverview"] == [False]
    assert crcs >= 3  # crc-flip-compressed, crc-flip-uncompressed, the flipped record
    page = tmp_path / "header.html"
    _cli("report", "--now", NOW, "-o", str(page), str(flipped.parent))
    text = page.read_text(encoding="utf-8")
    assert "verify problems (CRCs not checked)" in text
    health = text[text.index('<section id="health">') :]
    assert "<li>Record CRCs were not checked" in health
    assert "Everything found was checked" not in health
    _cli("report", "--crc", "--now", NOW, "-o", str(page), str(flipped.parent))
    text = page.read_text(encoding="utf-8")
    assert "CRCs not checked" not in text and "Every batch's CRC was checked (--crc)" in text


def _bars(chart: str) -> list[tuple[str, float, str]]:
    """The bars of one chart's SVG: (class, width in pixels, title)."""
    import re

    return [
        (m.group(1), float(m.group(2)), m.group(3))
        for m in re.finditer(
            r'<rect class="mark ([a-z-]+)" x="[^"]+" y="[^"]+" width="([^"]+)"[^>]*><title>([^<]*)', chart
        )
    ]


def test_a_large_sum_of_the_others_does_not_squash_the_top_bars() -> None:
    """When the others summed lag far more than the partitions (or groups) lagging most, their bar is cut at the
    end of the scale, which the 29 bars shown set: the largest spans the plot, the smallest keeps its share of
    it, the others' bar carries a break and its sum in words; when the sum is near the top bars, it is drawn to
    scale, uncut."""
    from kdump.facts.incident import GroupLag
    from kdump.render import html_report
    from kdump.render.svg import WIDTH

    plot = WIDTH - 200 - 16  # the rows chart's plot: left margin 200, right 16
    lags = [GroupLag("t", p, 0, T0, 1000 - p) for p in range(29)]  # lags 1000 down to 972
    lags += [GroupLag("t", 100 + p, 0, T0, 50) for p in range(3000)]  # 150,000 summed
    chart = html_report._lag_chart("g", lags)
    bars = _bars(chart)
    assert [b[0] for b in bars] == ["lag"] * 29 + ["rest"]
    assert bars[0][1] == pytest.approx(plot, abs=1)  # the largest lag spans the plot
    assert bars[28][1] == pytest.approx(plot * 972 / 1000, abs=1)  # the 29th keeps its share
    assert bars[29][2] == "3,000 other partitions: lag 150,000 in all"
    assert bars[29][1] <= plot + 1 and '<path class="cut"' in chart
    assert "150,000 in all, 150 times the scale: the bar is cut" in chart
    assert "summed (their bar is cut)" in chart
    # near the top bars' size: to scale, no cut
    near = [GroupLag("t", p, 0, T0, 1000) for p in range(29)] + [GroupLag("t", 99, 0, T0, 1200)]
    near += [GroupLag("t", 100 + p, 0, T0, 1) for p in range(200)]  # 1,000 + 200 summed (the 30th row on)
    chart = html_report._lag_chart("g", near)
    bars = _bars(chart)
    assert bars[-1][0] == "rest" and "cut" not in chart
    assert bars[0][1] == pytest.approx(plot, abs=1) and bars[-1][1] == pytest.approx(
        plot * 1200 / 1200, abs=1
    )
    # the groups' totals the same way
    totals = [(f"g{i}", 500 - i) for i in range(29)] + [(f"h{i}", 400) for i in range(100)]
    chart = html_report._groups_lag_chart(totals)
    bars = _bars(chart)
    assert bars[0][1] == pytest.approx(plot, abs=1) and bars[-1][2] == "100 other groups: lag 40,000 in all"
    assert "40,000 in all, 80 times the scale: the bar is cut" in chart


def test_a_partitions_result_does_not_grow_with_the_run(tmp_path: Path) -> None:
    """What a worker sends back for one partition (its report and verify's findings in it) is the same size in
    a run of 5 partitions and of 60: it carried the run's map of every partition (10,000 partitions pickled 5 GB
    through the pool, most of the main process's time)."""
    import pickle

    from kdump.commands.report import ReportCommand
    from tests.partition_builder import build_partition

    sizes = []
    for n in (5, 60):
        root = tmp_path / ("a" if n == 5 else "b")
        for i in range(n):
            build_partition(str(root / f"t-{i}"), 1, batches_per_segment=2, records_per_batch=2)
        cmd = ReportCommand([str(root)], now=0, workers=1)
        cmd._select()
        cmd._read_groups()
        report, findings = cmd._partition_at(0)
        sizes.append(len(pickle.dumps(findings)) + len(pickle.dumps(report)))
    assert sizes[0] == sizes[1], sizes


def _columns(chart: str) -> list[tuple[str, float, float, str, str]]:
    """The column bars of one chart's SVG: (class, y, height in pixels, title, link)."""
    import re

    return [
        (m.group(2), float(m.group(3)), float(m.group(4)), m.group(5), m.group(1) or "")
        for m in re.finditer(
            r'(?:<a href="([^"]*)">)?<rect class="mark ([a-z-]+)" x="[^"]+" y="([^"]+)" width="[^"]+" '
            r'height="([^"]+)"><title>([^<]*)',
            chart,
        )
    ]


def _size_rows(sizes: list[int], topic: str = "t") -> list[Any]:
    from kdump.render.html_report import _Row

    return [
        _Row(
            anchor=None,
            topic=topic,
            partition=i,
            directory=f"/data/{topic}-{i}",
            internal=False,
            segments=1,
            size=size,
            records=size // 100,
            log_start=0,
            log_end=size // 100,
            high_watermark=size // 100,
            min_ts=None,
            max_ts=None,
            open_txns=0,
            hanging=0,
            problems=0,
            deleted_bytes=0,
            deleted_segments=0,
            dirty_ratio=None,
            unreadable=False,
            kinds={},
            index=i,
        )
        for i, size in enumerate(sizes)
    ]


def test_one_partition_a_thousand_times_the_others_leaves_them_readable() -> None:
    """The strip of every partition by size, a topic's partitions and the topics by size: when one partition
    (topic) is 1,000 times the others, the others set the scale and keep their proportions (each bar's height
    is its size over the scale's end), the outlier goes to the top of the plot with a break, its name, size and
    how many times the scale written beside it; 10,000 partitions stay 400 bars, each a link to the largest of
    its bin (the outlier's to its own row); many outliers take a log scale (each height its size's place
    between the scale's floor and top); without an outlier the scale is the largest bar's."""
    import math
    import re

    from kdump.render import html_report
    from kdump.render.svg import log_floor

    plot = 180 - 26 - 34  # the strip's height less its top and bottom margins
    sizes = [10_000 + (i * 7919) % 10_000 for i in range(9_999)] + [15_000_000]
    chart = html_report._all_partitions_chart(_size_rows(sizes)).split("</svg>")[0]
    bars = _columns(chart)
    assert len(bars) == 400  # 25 partitions a bar
    assert "largest first (each bar: 25 partitions, the largest) (the largest cut)" in chart
    assert bars[0][2] == pytest.approx(plot, abs=0.1) and bars[0][4] == "#r9999"  # the outlier: to the top
    ranked = sorted(sizes, reverse=True)
    scale = ranked[25] * 1.25  # the largest of the second bar (the first bar's is the outlier's), room above
    times = round(15_000_000 / ranked[25])
    assert (
        f"t-9999: 14.3 MiB, {times} times the scale (cut)" in chart and chart.count('<path class="cut"') == 1
    )
    for k, (_, _, height, title, _) in enumerate(bars[1:], 1):
        largest = ranked[k * 25]  # the bin's largest
        assert height == pytest.approx(plot * largest / scale, abs=0.1), k
        assert title.startswith(f"25 partitions (ranks {k * 25 + 1:,} to {k * 25 + 25:,}): ")
    assert min(b[2] for b in bars) > 0.4 * plot  # the others: not squashed (they are 10 to 20 KB)
    # three outliers (a broker's three busy partitions): each cut with a break, named under the chart
    few = [290_000, 265_000, 239_000, 27_000, 7_700, 5_600, 4_400, 4_000, 3_900, 866, 800, 700]
    chart = html_report._all_partitions_chart(_size_rows(few))
    bars = _columns(chart.split("</svg>")[0])
    assert "largest first (the 3 largest cut)" in chart and chart.count('<path class="cut"') == 3
    assert [b[2] for b in bars[:3]] == [pytest.approx(plot, abs=0.1)] * 3 and "cut-label" not in chart
    assert bars[3][2] == pytest.approx(plot * 27_000 / (27_000 * 1.25), abs=0.1)
    assert (
        "Cut at the end of the scale the other bars set (more than 20 times the median bar): "
        '<a href="#r0">t-0</a>: 283.2 KiB, 11 times the scale; <a href="#r1">t-1</a>: 258.8 KiB, 9.8 times the '
        'scale; <a href="#r2">t-2</a>: 233.4 KiB, 8.9 times the scale.'
    ) in chart
    # the same partitions without the outlier: to the largest's scale, nothing cut
    linear = html_report._all_partitions_chart(_size_rows(sizes[:-1])).split("</svg>")[0]
    assert "cut" not in linear and "log scale" not in linear
    bars = _columns(linear)
    assert bars[0][2] == pytest.approx(plot / 1.1, abs=0.1)
    assert bars[-1][2] == pytest.approx(plot / 1.1 * min(sizes) / max(sizes[:-1]), abs=0.2)
    # ten outliers among 390 partitions (a bar each): a log scale
    many = sizes[:380] + [15_000_000 + i for i in range(10)]
    chart = html_report._all_partitions_chart(_size_rows(many)).split("</svg>")[0]
    assert "largest first (log scale)" in chart and "cut" not in chart
    top, floor = (15_000_000 + 9) * 1.1, log_floor(min(many))
    ranked = sorted(many, reverse=True)
    bars = _columns(chart)
    assert len(bars) == 390
    for k, (_, _, height, _, _) in enumerate(bars):
        expected = plot * math.log10(ranked[k] / floor) / math.log10(top / floor)
        assert height == pytest.approx(expected, abs=0.1), k
    assert min(b[2] for b in bars) > 0.2 * plot
    # a topic's partitions, by partition number: the outlier is partition 7 of 12
    topic = html_report._Topic("t", False, rows=_size_rows([12_000] * 7 + [12_000_000] + [15_000] * 4))
    chart = html_report._partition_sizes_chart(topic)
    bars = _columns(chart)
    assert len(bars) == 12 and "t: size of each partition (the largest cut)" in chart
    plot = 150 - 26 - 34
    assert bars[7][2] == pytest.approx(plot, abs=0.1) and "t-7: 11.4 MiB, 800 times the scale (cut)" in chart
    assert [b[2] for b in bars[:7]] == [pytest.approx(plot * 12_000 / 18_750, abs=0.1)] * 7
    ticks = re.findall(r'<text class="tick" x="[^"]+" y="13\d" [^>]*>([^<]+)<', chart)
    assert ticks == ["0", "2", "4", "6", "8", "10"]  # partitions are whole numbers
    # topics by size (bar widths): one topic 1,000 times the others
    topics = [html_report._Topic(f"t{i}", False, size=10_000 + i * 1_000, partitions=1) for i in range(10)]
    topics.append(html_report._Topic("huge", False, size=19_000_000, partitions=1))
    chart = html_report._topic_charts(topics, None).split("</svg>")[0]
    widths = [w for _, w, _ in _bars(chart)]
    plot_w = 960 - 200 - 16
    assert "size on disk by topic (the largest cut)" in chart
    assert "18.1 MiB, 1,000 times the scale: the bar is cut" in chart
    assert widths[0] == pytest.approx(plot_w, abs=1) and widths[1] == pytest.approx(
        plot_w, abs=1
    )  # t9: 19,000
    assert widths[-1] == pytest.approx(plot_w * 10_000 / 19_000, abs=1)
