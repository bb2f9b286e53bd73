"""Memory of the JVM engine's tasks (``kdump/spark/jvm/LogReader.java``) stays bounded with records of 1 MiB.

The reader hands a column batch to Spark once the record bytes of the Kafka batches in it reach 64 MiB
(``LogReader.BYTES_PER_BATCH``), not only at 4096 rows: 4096 records of 1 MiB would be 4 GiB of column vectors
in one batch (more than an ``OnHeapColumnVector`` can hold, and far more than a task's heap).  A segment of
records of about 1 MiB (a repeated byte each, zstd: the file is a few hundred KiB) is read with engine=jvm in
a child process whose Spark driver (``local[1]``: the executor too) has a 512 MiB heap (``-Xmx``); the heap
pools' peak and the JVM's peak RSS (``VmHWM``) are asserted, and the rows (count, every offset with its value
length, the sum of the values' CRC-32) are kafka-python's decode of the same file.

Both cases are long (the 600-record one took 2-7 minutes on the shared machine, the JVM collecting 1 MiB
objects) and run with ``KDUMP_LONG_MEMORY=1`` only: 600 records (600 MiB of values, more than the heap: with the
old 4096-row rule the JVM ran out of memory) and 4,200 (about 4.1 GiB of values), the shape of the issue, more
than 4096 rows of 1 MiB.  Run on the quiet machine (2026-11-27): both cases passed in 49 s; the 4,200-record read
peaked at the heap's 512 MiB and 790 MiB of RSS in 24 s.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zlib
from pathlib import Path

import pytest

from kdump.storage.compression import ZSTD
from tests.hostile_batches import record, v2_batch, zigzag_varint

pytestmark = pytest.mark.spark

pytest.importorskip("pyarrow")
pytest.importorskip("pyspark")
pytest.importorskip("zstandard")
if shutil.which("java") is None:  # pragma: no cover - CI installs Java
    pytest.skip("Java is not installed (Spark needs Java 17+)", allow_module_level=True)

from kdump.spark import engine  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
MIB = 1 << 20
#: Records per Kafka batch: 15 of about 1 MiB stay under the 16 MiB a batch's records may decode to.
PER_BATCH = 15
#: The driver's heap.
HEAP = "512m"

_READ = """
import json, sys
from kdump.spark import read, session
path = sys.argv[1]
spark = session("local[1]", "kdump jvm memory test", {"spark.ui.enabled": "false", "spark.driver.memory": sys.argv[2]})
df = read(spark, [path], {}, engine="jvm")
assert "kafka-log (jvm)" in df._jdf.queryExecution().executedPlan().toString()
got = df.selectExpr("offset", "length(value)", "crc32(value)").collect()
rows = sorted((r[0], r[1]) for r in got)
crc = sum(r[2] for r in got)
jvm = spark.sparkContext._jvm
management = jvm.java.lang.management.ManagementFactory
heap_max = jvm.java.lang.Runtime.getRuntime().maxMemory()
pid = jvm.java.lang.ProcessHandle.current().pid()
hwm = 0
with open(f"/proc/{pid}/status") as f:
    for line in f:
        if line.startswith("VmHWM:"):
            hwm = int(line.split()[1]) * 1024
spark.stop()
print(json.dumps({"rows": rows, "crc": crc, "heap_max": heap_max, "rss_peak": hwm}))
"""


def value_length(i: int) -> int:
    return MIB - 200 - (i * 7919) % 4096


def write_segment(directory: Path, n: int) -> Path:
    """``n`` records of about 1 MiB (record ``i``'s value: ``value_length(i)`` bytes of ``i % 251``), keys
    null, zstd batches of :data:`PER_BATCH` records."""
    directory.mkdir(parents=True)
    with open(directory / "00000000000000000000.log", "wb") as f:
        for base in range(0, n, PER_BATCH):
            count = min(PER_BATCH, n - base)
            records = b"".join(
                record(
                    j,
                    zigzag_varint(-1)
                    + zigzag_varint(value_length(base + j))
                    + bytes([(base + j) % 251]) * value_length(base + j)
                    + zigzag_varint(0),
                )
                for j in range(count)
            )
            f.write(v2_batch(records, count, ZSTD, base_offset=base))
    return directory


def kafka_python_rows(path: Path) -> tuple[list[tuple[int, int]], int]:
    """(offset, value length) of every record and the sum of the values' CRC-32, by kafka-python."""
    from kafka.record.memory_records import MemoryRecords

    rows: list[tuple[int, int]] = []
    crc = 0
    records = MemoryRecords(path.read_bytes())
    while (batch := records.next_batch()) is not None:
        for r in batch:
            rows.append((r.offset, len(r.value)))
            crc += zlib.crc32(r.value)
    return rows, crc


LONG = pytest.mark.skipif(
    os.environ.get("KDUMP_LONG_MEMORY") != "1", reason="set KDUMP_LONG_MEMORY=1 for the long memory cases"
)


@pytest.mark.parametrize(
    "n", [pytest.param(600, marks=LONG), pytest.param(4200, marks=LONG)], ids=["600-records", "4200-records"]
)
def test_records_of_1_mib_stay_within_the_heap(tmp_path: Path, n: int) -> None:
    if engine.jar_path() is None:
        pytest.skip(f"the JVM engine cannot be built here: {engine.jar_problem}")
    directory = write_segment(tmp_path / "big-0", n)
    segment = directory / "00000000000000000000.log"
    assert segment.stat().st_size < 4 * MIB  # zstd of repeated bytes: the values are n MiB only decompressed
    done = subprocess.run(
        [sys.executable, "-c", _READ, str(directory), HEAP],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=1800,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    got = json.loads(done.stdout.strip().splitlines()[-1])
    rows, crc = kafka_python_rows(segment)
    assert len(rows) == n
    assert [tuple(r) for r in got["rows"]] == rows
    assert got["crc"] == crc
    # the values are n MiB, the heap 512 MiB: with the old rule (4096 rows a column batch) the JVM ran out of
    # memory (measured: the gateway died, "Connection refused"); with the 64 MiB rule the peak RSS was 815 MiB
    assert got["heap_max"] <= 530 * MIB
    assert got["rss_peak"] < 1200 * MIB, got
