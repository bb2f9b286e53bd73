"""kdump's judgments on a broker oracle scenario, against what the brokers answered (``record.py``).

:func:`judge` runs ``verify``, ``verify-index``, ``rebuild-index``, ``txn``, ``ls`` and ``retention`` on one
scenario's data directory and returns every disagreement with the recorded broker answers:

* ``verify``/``verify-index``: a scenario the brokers loaded without repair gets no problem; every byte a broker
  truncated on load (``Found invalid messages in log segment F at byte offset N``) is a problem of kdump's at
  that file and byte; every injected damage is found in its file;
* ``rebuild-index``: on a copy, the index files kdump writes are byte-identical to those the broker rebuilt
  (for the partitions it rebuilt without truncating), and a dry run on healthy data rewrites nothing;
* ``txn``: the last stable offset is the one ListOffsets (read_committed) answered;
* ``ls``: log start and end offsets are ListOffsets' earliest and (after a clean shutdown) latest;
* ``retention``: the segments kdump predicts deleted at the broker's time are those the broker deleted.
"""

from __future__ import annotations

import json
import shutil
import tarfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from kdump.cli import cli
from tests.broker_oracle.record import index_bytes

#: Scenario kinds whose data a broker wrote and loaded without repair.
HEALTHY = ("live", "killed", "clean", "retained")


@dataclass
class Verdict:
    scenario: str
    kind: str
    version: str
    checks: int = 0
    disagreements: list[str] = field(default_factory=list)
    verify_problems: int = 0
    index_problems: int = 0
    damages: int = 0
    damages_found: int = 0

    def expect(self, ok: bool, message: str) -> None:
        self.checks += 1
        if not ok:
            self.disagreements.append(message)


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return result.exit_code, result.output


def json_lines(text: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in text.splitlines() if line.startswith("{")]


def extract(archive: Path, dest: Path) -> Path:
    with tarfile.open(archive) as tar:
        tar.extractall(dest, filter="data")
    return dest / "data"


def _rel(path: str, root: Path) -> str:
    """A broker's absolute path (or kdump's) as ``<partition>/<file>``."""
    parts = Path(path).parts
    return "/".join(parts[-2:]) if len(parts) >= 2 else path


def truncated_by(answers: dict[str, Any]) -> list[dict[str, Any]]:
    """The broker's truncations on load (``Corruption found in segment N, truncating to offset M``), each with
    its partition."""
    return [r for r in answers.get("repairs", []) if r["what"] == "truncate" and r.get("partition")]


def judge_unclean(answers: dict[str, Any], data: Path, v: Verdict) -> Verdict:
    """Diverged replicas: each copy is healthy; ``diff`` names the divergence and the offset the old leader
    truncates to as a follower of the new one, which is where the real broker truncated."""
    old, new = data / "old-leader", data / "new-leader"
    for copy in (old, new):
        _, out = run("verify", "--json", str(copy))
        found = [o for o in json_lines(out) if o.get("type") == "problem"]
        v.verify_problems += len(found)
        v.expect(
            not found,
            f"{copy.name}: healthy copy, kdump verify reports {[(o['file'], o['kind']) for o in found][:5]}",
        )
    code, out = run("diff", "--json", str(old / "split-0"), str(new / "split-0"))
    (p,) = [o for o in json_lines(out) if o.get("type") == "diffPartition"]
    v.expect(
        p["diverged"] is True and code == 1,
        f"diff of the diverged replicas: diverged {p['diverged']}, exit {code}",
    )
    ours = {(t["follower"], t["leader"]): t["truncateTo"] for t in p["truncations"]}
    truth = answers["truncatedTo"] or answers["fetcherTruncation"]
    v.expect(bool(truth), "the old leader's log names no truncation")
    if truth:
        v.expect(
            ours.get((0, 1)) == truth[-1],
            f"diff: the old leader truncates to {ours.get((0, 1))} as a follower; the broker truncated to {truth[-1]}",
        )
    return v


def judge(answers: dict[str, Any], data: Path, work: Path) -> Verdict:
    v = Verdict(answers["scenario"], answers["kind"], answers["version"])
    kind = answers["kind"]
    if kind == "unclean":
        return judge_unclean(answers, data, v)
    damaged_partitions = {d["file"].split("/")[0] for d in answers.get("damage", [])}
    code, out = run("verify", "--json", str(data))
    found = [o for o in json_lines(out) if o.get("type") == "problem"]
    v.verify_problems = len(found)
    at = {(_rel(o["file"], data), o.get("position")) for o in found}
    files = {_rel(o["file"], data) for o in found}
    truncated = [r for r in answers.get("repairs", []) if r["what"] == "invalid"]
    for r in truncated:
        v.expect(
            (_rel(r["file"], data), r["position"]) in at,
            f"broker truncated {_rel(r['file'], data)} at byte {r['position']}; kdump verify did not name that byte",
        )
    if kind != "damaged":
        v.expect(
            not found,
            f"healthy data loaded without repair: kdump verify reports {[(o['file'], o['kind'], o.get('position')) for o in found][:5]}",
        )
        code_i, out_i = run("verify-index", "--json", str(data))
        index_found = [o for o in json_lines(out_i) if o.get("type") == "problem"]
        v.index_problems = len(index_found)
        v.expect(
            not index_found,
            f"healthy data: kdump verify-index reports {[(o['file'], o['kind']) for o in index_found][:5]}",
        )
        code_r, out_r = run("rebuild-index", "--dry-run", "--json", str(data))
        rewrites = [
            o
            for o in json_lines(out_r)
            if o.get("type") == "indexFile" and o.get("action") not in ("unchanged", "left-sound")
        ]
        v.expect(
            not rewrites,
            f"healthy data: rebuild-index --dry-run would change {[o.get('file') for o in rewrites][:5]}",
        )
    else:
        for d in answers["damage"]:
            v.damages += 1
            target = d["file"]
            if d["damage"] == "delete-indexes":
                hit = any(f.startswith(target + "/") for f in files)
            else:
                hit = target in files
            v.damages_found += hit
            v.expect(hit, f"injected {d['damage']} in {target}: kdump verify found nothing there")
        outside = [
            (o["file"], o["kind"], o.get("message", "")[:80])
            for o in found
            if _rel(o["file"], data).split("/")[0] not in damaged_partitions
            and not any(o.get("message", "").startswith(p + ":") for p in damaged_partitions)
        ]
        v.expect(not outside, f"kdump verify reports problems outside the damaged partitions: {outside[:5]}")
        # rebuild-index against the indexes the broker rebuilt
        copy = work / "rebuild"
        shutil.copytree(data, copy, symlinks=True)
        run("rebuild-index", "--force", str(copy))
        # a partition the broker truncated fetches its segments again from the leader (new appends, not a
        # recovery's rebuild); a -delete directory is loaded only to be deleted
        refetched = {r["partition"] for r in truncated_by(answers)}
        for name, recorded in answers.get("rebuiltIndexes", {}).items():
            part = name.split("/")[0]
            if part in refetched or part.endswith("-delete"):
                continue
            mine = copy / name
            theirs = bytes.fromhex(recorded) if isinstance(recorded, str) else index_bytes(recorded)
            # a broker that did not shut down cleanly leaves the active segment's index preallocated: its
            # entries, then zeros
            ours = mine.read_bytes() if mine.is_file() else None
            same = ours is not None and (
                ours == theirs or (theirs.startswith(ours) and not theirs[len(ours) :].strip(b"\0"))
            )
            v.expect(
                same,
                f"rebuild-index {name}: not byte-identical to the broker's rebuild ({mine.stat().st_size if mine.is_file() else 'absent'} vs {len(theirs)} bytes)",
            )
    # txn and ls against ListOffsets
    offsets = answers.get("listOffsets", {})
    for topic, o in offsets.items():
        part = data / f"{topic}-0"
        if not part.is_dir() or f"{topic}-0" in damaged_partitions:
            continue
        _, out_t = run("txn", "--json", str(part))
        (t,) = [x for x in json_lines(out_t) if x.get("type") == "txnPartition"] or [None]
        described = answers.get("describeProducers")
        if t is not None and topic == "txn" and described and kind in ("live", "killed"):
            # kafka-transactions.sh describe-producers: the producers with an open transaction and its start
            broker_open = {
                (int(row.split()[0]), int(row.split()[5]))
                for row in described.splitlines()[1:]
                if len(row.split()) >= 6 and row.split()[5] != "None"
            }
            kdump_open = {(x["producerId"], x["firstOffset"]) for x in t["openTransactions"]}
            v.expect(
                kdump_open == broker_open,
                f"txn-0: kdump txn open transactions {sorted(kdump_open)}, describe-producers {sorted(broker_open)}",
            )
        if t is not None and kind in HEALTHY:
            v.expect(
                t["lastStableOffset"] == o["lso"],
                f"{topic}-0: kdump txn last stable offset {t['lastStableOffset']}, the broker's (ListOffsets read_committed) {o['lso']}",
            )
        _, out_l = run("ls", "--json", str(part))
        (listed,) = [x for x in json_lines(out_l) if x.get("type") == "partition"] or [None]
        # a partition whose segments the broker deleted after it answered (its first retention check, 30 s
        # after start-up) is not compared
        moved = {d["partition"] for d in answers.get("deletedAfterAnswers", [])}
        if listed is not None and kind in ("killed", "clean", "retained") and f"{topic}-0" not in moved:
            v.expect(
                listed["logStartOffset"] == o["log_start"],
                f"{topic}-0: kdump ls log start {listed['logStartOffset']}, ListOffsets earliest {o['log_start']}",
            )
            v.expect(
                listed["logEndOffset"] == o["high_watermark"],
                f"{topic}-0: kdump ls log end {listed['logEndOffset']}, ListOffsets latest {o['high_watermark']}",
            )
    retention = answers.get("retention")
    if retention is not None:
        _, out_r = run("retention", "--json", "--now", str(retention["now"]), str(data))
        predicted = {
            (f"{p['topic']}-{p['partition']}", s["baseOffset"])
            for p in json_lines(out_r)
            if p.get("type") == "retentionPartition"
            for s in p["segmentFates"]
            if s["deletedBy"] is not None
        }
        deleted = {(d["partition"], d["segment"]) for d in retention["deleted"] if "segment" in d}
        v.expect(
            predicted == deleted,
            f"retention at {retention['now']}: kdump predicts {sorted(predicted)}, the broker deleted {sorted(deleted)}",
        )
    return v


def scenarios(root: Path) -> list[Path]:
    return sorted(root.glob("*.json"))


def judge_fixture(answers_path: Path, work: Path) -> Verdict:
    """Judge one recorded scenario (``<name>.json`` beside ``<name>.tar.xz``), extracted below ``work``."""
    answers = json.loads(answers_path.read_text())
    data = extract(answers_path.parent / f"{answers['scenario']}.tar.xz", work)
    return judge(answers, data, work)
