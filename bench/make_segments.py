"""Build the benchmark segments for ``kdump files`` (reproducible: fixed seed, same bytes every run).

The shape follows the Kafka reference run that ``bench/run.py`` compares with: 2,230,000 records with 9-byte
keys and 100-byte values, 136 records per batch (~16 KiB batches, the producer's default ``batch.size``),
about 254 MiB, written once uncompressed (``plain-0``) and once with zstd (``zstd-0``)::

    bench/data/plain-0/00000000000000000000.log
    bench/data/zstd-0/00000000000000000000.log
    bench/data/manifest.json        parameters, sizes and SHA-256 of what was written

Values are random upper-case letters, as ``kafka-producer-perf-test.sh`` makes them; keys are the offset as 9
decimal digits.  Batches carry an idempotent producer's fields (producer id, epoch 0, increasing sequences).
Batches are encoded and written one at a time, so memory stays small whatever the size.  ``--quick`` writes a
data set 10x smaller to ``bench/data/quick/``.

``--avro`` (needs fastavro) writes the schema-registry variant instead, for ``bench/avro_bench.py``: the same
record count, keys and batching, values an Avro record framed in Confluent's wire format (magic byte, schema
id 1, then the datum; 100 bytes each), and a ``_schemas-0`` partition beside it holding that schema as the
Schema Registry stores it::

    bench/data/avro/avro-0/00000000000000000000.log
    bench/data/avro/_schemas-0/00000000000000000000.log

Usage::

    .venv/bin/python bench/make_segments.py [--quick] [--force]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import sys
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH.parent))

from kdump.storage.compression import NONE, ZSTD, compress  # noqa: E402
from tests.builder import SimpleRecord, build_v2_batch, encode_v2_records  # noqa: E402

SEED = 20250401
RECORDS = 2_230_000
RECORDS_PER_BATCH = 136
KEY_SIZE = 9
VALUE_SIZE = 100
BASE_TIMESTAMP = 1_700_000_000_000
RECORDS_PER_MS = 10
PRODUCER_ID = 1000
SEGMENT = "00000000000000000000.log"
LAYOUT = {"plain-0": NONE, "zstd-0": ZSTD}

# byte -> 'A'..'Z', so that one randbytes() call gives a batch of perf-test style values
_LETTERS = bytes(65 + b % 26 for b in range(256))


def data_dir(quick: bool) -> Path:
    """Where the data set lives: ``bench/data`` or ``bench/data/quick``."""
    return BENCH / "data" / "quick" if quick else BENCH / "data"


def parameters(quick: bool) -> dict[str, int]:
    return {
        "seed": SEED,
        "records": RECORDS // 10 if quick else RECORDS,
        "records_per_batch": RECORDS_PER_BATCH,
        "key_size": KEY_SIZE,
        "value_size": VALUE_SIZE,
        "base_timestamp": BASE_TIMESTAMP,
        "producer_id": PRODUCER_ID,
    }


def batches(params: dict[str, int]):
    """Yield ``(records, base_offset)`` per batch, from the seeded generator."""
    rng = random.Random(params["seed"])
    total = params["records"]
    per_batch = params["records_per_batch"]
    vsize = params["value_size"]
    ts0 = params["base_timestamp"]
    for base in range(0, total, per_batch):
        n = min(per_batch, total - base)
        values = rng.randbytes(n * vsize).translate(_LETTERS)
        records = [
            SimpleRecord(
                value=values[i * vsize : (i + 1) * vsize],
                key=b"%09d" % (base + i),
                timestamp=ts0 + (base + i) // RECORDS_PER_MS,
            )
            for i in range(n)
        ]
        yield records, base


def build(quick: bool, *, force: bool = False, verbose: bool = True) -> Path:
    """Write the data set (unless an identical one is already there); returns its directory."""
    out = data_dir(quick)
    params = parameters(quick)
    manifest_path = out / "manifest.json"
    if not force and manifest_path.is_file():
        manifest = json.loads(manifest_path.read_text())
        if manifest.get("parameters") == params and all(
            (out / name / SEGMENT).is_file() and (out / name / SEGMENT).stat().st_size == info["bytes"]
            for name, info in manifest["segments"].items()
        ):
            if verbose:
                print(f"{out}: up to date ({params['records']:,} records)")
            return out
    started = time.perf_counter()
    files, hashes, sizes, counts = {}, {}, {}, {}
    for name in LAYOUT:
        (out / name).mkdir(parents=True, exist_ok=True)
        files[name] = open(out / name / (SEGMENT + ".tmp"), "wb")  # noqa: SIM115
        hashes[name] = hashlib.sha256()
        sizes[name] = 0
        counts[name] = 0
    try:
        for records, base in batches(params):
            plain = encode_v2_records(records, base_offset=base, base_timestamp=records[0].timestamp)
            for name, codec in LAYOUT.items():
                batch = build_v2_batch(
                    records,
                    base_offset=base,
                    compression=codec,
                    producer_id=params["producer_id"],
                    producer_epoch=0,
                    base_sequence=base % 2**31,
                    # the records region is encoded once and reused for both files
                    payload=compress(codec, plain) if codec != NONE else plain,
                )
                files[name].write(batch)
                hashes[name].update(batch)
                sizes[name] += len(batch)
                counts[name] += 1
    finally:
        for f in files.values():
            f.close()
    for name in LAYOUT:
        (out / name / (SEGMENT + ".tmp")).replace(out / name / SEGMENT)
    manifest = {
        "parameters": params,
        "segments": {
            name: {
                "path": f"{name}/{SEGMENT}",
                "codec": codec,
                "bytes": sizes[name],
                "batches": counts[name],
                "sha256": hashes[name].hexdigest(),
            }
            for name, codec in LAYOUT.items()
        },
        "seconds": round(time.perf_counter() - started, 2),
    }
    manifest_path.write_text(json.dumps(manifest, indent=2) + "\n")
    if verbose:
        for info in manifest["segments"].values():
            print(
                f"{out / info['path']}: {info['bytes'] / 2**20:.1f} MiB, {info['batches']:,} batches, "
                f"{params['records']:,} records, sha256 {info['sha256'][:16]}…"
            )
        print(f"built in {manifest['seconds']} s")
    return out


#: The Avro value of the schema-registry variant: framed, 100 bytes like the plain values.
AVRO_SCHEMA = {
    "type": "record",
    "name": "Order",
    "namespace": "bench",
    "fields": [
        {"name": "id", "type": "long"},
        {"name": "customer", "type": "string"},
        {"name": "amount", "type": "double"},
        {"name": "status", "type": {"type": "enum", "name": "Status", "symbols": ["NEW", "PAID", "SHIPPED"]}},
        {"name": "note", "type": ["null", "string"], "default": None},
    ],
}
AVRO_SCHEMA_ID = 1


def avro_dir(quick: bool) -> Path:
    return data_dir(quick) / "avro"


def build_avro(quick: bool, *, force: bool = False, verbose: bool = True) -> Path:
    """The schema-registry variant (see the module's doc); returns the log directory holding ``avro-0`` and
    ``_schemas-0``."""
    import dataclasses
    import io

    import fastavro

    out = avro_dir(quick)
    params = parameters(quick) | {"avro_schema_id": AVRO_SCHEMA_ID}
    manifest_path = out / "manifest.json"
    segment = out / "avro-0" / SEGMENT
    if not force and manifest_path.is_file() and segment.is_file():
        manifest = json.loads(manifest_path.read_text())
        if manifest.get("parameters") == params and manifest.get("bytes") == segment.stat().st_size:
            if verbose:
                print(f"{out}: up to date ({params['records']:,} records)")
            return out
    started = time.perf_counter()
    schema_text = json.dumps(AVRO_SCHEMA, separators=(",", ":"))
    (out / "_schemas-0").mkdir(parents=True, exist_ok=True)
    (out / "avro-0").mkdir(parents=True, exist_ok=True)
    registry_key = json.dumps({"keytype": "SCHEMA", "subject": "avro-value", "version": 1, "magic": 1})
    registry_value = json.dumps(
        {"subject": "avro-value", "version": 1, "id": AVRO_SCHEMA_ID, "schema": schema_text, "deleted": False}
    )
    (out / "_schemas-0" / SEGMENT).write_bytes(
        build_v2_batch(
            [
                SimpleRecord(
                    registry_value.encode(), key=registry_key.encode(), timestamp=params["base_timestamp"]
                )
            ],
            base_offset=0,
        )
    )
    parsed = fastavro.parse_schema(AVRO_SCHEMA)
    header = bytes([0]) + AVRO_SCHEMA_ID.to_bytes(4, "big")
    statuses = ("NEW", "PAID", "SHIPPED")
    rng = random.Random(params["seed"])
    digest = hashlib.sha256()
    size = 0
    tmp = segment.with_suffix(".tmp")
    with open(tmp, "wb") as f:
        for records, base in batches(params):
            framed = []
            for r in records:  # the plain value's letters, spread over the record's fields
                assert r.value is not None and r.key is not None
                letters = r.value.decode()
                buf = io.BytesIO()
                fastavro.schemaless_writer(
                    buf,
                    parsed,
                    {
                        "id": int(r.key),
                        "customer": letters[:20],
                        "amount": rng.randrange(100_000) / 100,
                        "status": statuses[rng.randrange(3)],
                        "note": letters[20:79],
                    },
                )
                framed.append(dataclasses.replace(r, value=header + buf.getvalue()))
            records = framed
            batch = build_v2_batch(
                records,
                base_offset=base,
                producer_id=params["producer_id"],
                producer_epoch=0,
                base_sequence=base % 2**31,
            )
            f.write(batch)
            digest.update(batch)
            size += len(batch)
    tmp.replace(segment)
    manifest = {
        "parameters": params,
        "bytes": size,
        "sha256": digest.hexdigest(),
        "seconds": round(time.perf_counter() - started, 2),
    }
    manifest_path.write_text(json.dumps(manifest, indent=2) + "\n")
    if verbose:
        print(
            f"{segment}: {size / 2**20:.1f} MiB, {params['records']:,} records, built in {manifest['seconds']} s"
        )
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a 10x smaller data set, in bench/data/quick/")
    parser.add_argument("--force", action="store_true", help="rebuild even if the data set is up to date")
    parser.add_argument("--avro", action="store_true", help="the schema-registry (Avro) variant")
    args = parser.parse_args(argv)
    if args.avro:
        build_avro(args.quick, force=args.force)
    else:
        build(args.quick, force=args.force)
    return 0


if __name__ == "__main__":
    sys.exit(main())
