"""``kdump files``' sink protocol (``kdump.facts.files.FilesSink``): a sink that only records the facts it is handed
gets exactly what Kafka's own tool shows, so a new output format is one class and the command never formats.

The oracle is the real ``kafka-dump-log.sh`` output in the fixture corpus: its batch lines, record lines and
non-consecutive-offset report.  A filter is a stage before the sink: the recording sink knows nothing of it and
still receives only the records Kafka's output shows inside the bounds."""

from __future__ import annotations

import re
from typing import Any

from kdump.analysis.record_filter import RecordFilter
from kdump.commands.files import DumpLogSegments
from kdump.facts.files import DumpOptions, FileHeader, Findings, JavaFile, MessageParser
from kdump.render.decoders import message_parser
from tests.corpus import FIXTURE_CORPUS

SEGMENT = FIXTURE_CORPUS / "data" / "compact-0" / "00000000000000000000.log"
EXPECTED = FIXTURE_CORPUS / "expected" / "data" / "compact-0" / "00000000000000000000.log.deep-iteration"


class RecordingLog:
    def __init__(self, sink: RecordingSink) -> None:
        self.sink = sink

    def segment_renderer(self, records: Any, deep: bool) -> None:
        return None  # batch by batch

    def batch(self, batch: Any, records: Any = None) -> None:
        offsets = None if records is None else [r.offset for r in records]
        self.sink.facts.append(("batch", batch.base_offset, batch.last_offset, offsets))

    def invalid_bytes(self, count: int, position: int) -> None:
        self.sink.facts.append(("invalid", count, position))


class RecordingSink:
    """Every fact, as a tuple; no text at all."""

    def __init__(self) -> None:
        self.facts: list[tuple[Any, ...]] = []
        self.findings: Findings | None = None
        self.out = None

    def dumping(self, file: JavaFile, *, held: bool = False) -> None:
        self.facts.append(("dumping", file.name, held))

    def header(self, file: JavaFile, header: FileHeader) -> None:
        self.facts.append(("header", header))

    def failed(self) -> None:
        self.facts.append(("failed",))

    def log(self, file: JavaFile, parser: Any) -> RecordingLog:
        return RecordingLog(self)

    def summaries(self, findings: Findings) -> None:
        self.findings = findings

    def message_parser(self, file: object) -> MessageParser:
        return message_parser(DumpOptions())

    def error(self, error: Exception) -> None:
        self.facts.append(("error", str(error)))


def _kafka_batches() -> list[tuple[int, int, list[int]]]:
    """(baseOffset, lastOffset, record offsets) of every batch Kafka's --deep-iteration output shows."""
    batches: list[tuple[int, int, list[int]]] = []
    for line in (EXPECTED.parent / (EXPECTED.name + ".txt")).read_text().splitlines():
        m = re.match(r"baseOffset: (\d+) lastOffset: (\d+) ", line)
        if m:
            batches.append((int(m[1]), int(m[2]), []))
        m = re.match(r"\| offset: (\d+) ", line)
        if m:
            batches[-1][2].append(int(m[1]))
    return batches


def _run(options: DumpOptions) -> RecordingSink:
    sink = RecordingSink()
    assert DumpLogSegments(options, sink).run() == 0  # type: ignore[arg-type]
    return sink


def test_a_recording_sink_gets_the_batches_records_and_gaps_kafka_shows() -> None:
    sink = _run(DumpOptions(files=[str(SEGMENT)], deep_iteration=True))
    assert sink.facts[:2] == [
        ("dumping", SEGMENT.name, False),
        ("header", FileHeader("log", log_starting_offset=0)),
    ]
    got = [(f[1], f[2], f[3]) for f in sink.facts if f[0] == "batch"]
    assert got == _kafka_batches()
    assert [f for f in sink.facts if f[0] not in ("dumping", "header", "batch")] == []
    kafka_gaps = [
        tuple(int(n) for n in m)
        for m in re.findall(
            r"^  (\d+) is followed by (\d+)$",
            (EXPECTED.parent / (EXPECTED.name + ".stderr.txt")).read_text(),
            re.M,
        )
    ]
    assert kafka_gaps  # the compacted segment has gaps: the check below can fail
    assert sink.findings is not None
    assert [(path, list(pairs)) for path, pairs in sink.findings.non_consecutive] == [
        (str(SEGMENT), kafka_gaps)
    ]


def test_filters_are_a_stage_before_the_sink() -> None:
    batches = _kafka_batches()
    # from inside the second batch to the first record of the last but one
    low, high = batches[1][2][1], batches[-2][2][0]
    sink = _run(
        DumpOptions(
            files=[str(SEGMENT)],
            deep_iteration=True,
            record_filter=RecordFilter(from_offset=low, to_offset=high),
        )
    )
    expected = [
        (base, last, kept)
        for base, last, offsets in batches
        if (kept := [o for o in offsets if low <= o <= high])
    ]
    assert [(f[1], f[2], f[3]) for f in sink.facts if f[0] == "batch"] == expected
    assert sink.facts[0] == ("dumping", SEGMENT.name, True)  # the header may wait for a match
