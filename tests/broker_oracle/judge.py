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
HEALTHY = ("live", "killed", "clean", "retained", "ops")


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
    if kind == "cleaner":
        return judge_cleaner(answers, data, v)
    if kind == "hanging":
        return judge_lost_coordinator(answers, data, v)
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
        if (
            listed is not None
            and kind in ("killed", "clean", "retained", "ops")
            and f"{topic}-0" not in moved
        ):
            v.expect(
                listed["logStartOffset"] == o["log_start"],
                f"{topic}-0: kdump ls log start {listed['logStartOffset']}, ListOffsets earliest {o['log_start']}",
            )
            v.expect(
                listed["logEndOffset"] == o["high_watermark"],
                f"{topic}-0: kdump ls log end {listed['logEndOffset']}, ListOffsets latest {o['high_watermark']}",
            )
    if kind == "ops":
        judge_operations(answers, data, v)
    if "findHanging" in answers:
        judge_hanging(answers, data, v)
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


def judge_cleaner(answers: dict[str, Any], data: Path, v: Verdict) -> Verdict:
    """``retention``'s prediction of one cleaning, made on the partition before the cleaning at the time the
    cleaner was let go, against what a consumer read after the real cleaner ran (``Cleaner.doClean``)."""
    for command in ("verify", "verify-index"):
        _, out = run(command, "--json", str(data))
        found = [(o["file"], o["kind"]) for o in json_lines(out) if o.get("type") == "problem"]
        v.verify_problems += len(found) if command == "verify" else 0
        v.expect(not found, f"healthy data (a live copy): kdump {command} reports {found[:5]}")
    name = answers.get("partition", "squash-0")
    configs = [x for k, val in answers["config"].items() for x in ("--config", f"{k}={val}")]
    _, out = run("retention", "--json", "--now", str(answers["now"]), *configs, str(data / name))
    (p,) = [o for o in json_lines(out) if o.get("type") == "retentionPartition"]
    c = p["compaction"]
    before, after = answers["recordsBefore"], answers["recordsAfter"]
    v.expect(
        c["records"] == len(before),
        f"{name}: kdump counts {c['records']} records, a consumer read {len(before)}",
    )
    cleaning = c.get("cleaning")
    v.expect(cleaning is not None, f"{name}: kdump predicts no cleaning: {p['problemMessages']}")
    if cleaning is None:
        return v
    v.expect(
        cleaning["cleanedUpTo"] == answers["cleanedUpTo"],
        f"{name}: kdump cleans up to {cleaning['cleanedUpTo']}, the cleaner checkpointed {answers['cleanedUpTo']}",
    )
    v.expect(
        cleaning["recordsKept"] == len(after),
        f"{name}: kdump predicts {cleaning['recordsKept']} records kept, the cleaner kept {len(after)}",
    )
    tombstones = sum(1 for _, tomb in after if tomb)
    v.expect(
        cleaning["tombstonesKept"] == tombstones,
        f"{name}: kdump predicts {cleaning['tombstonesKept']} tombstones kept, the cleaner kept {tombstones}",
    )
    return v


def _table(text: str) -> list[dict[str, str]]:
    """A table Kafka's tools print (a header row, then rows; columns split on blanks; an empty last column
    absent)."""
    lines = [line for line in text.splitlines() if line.strip()]
    header = next(
        (i for i, line in enumerate(lines) if line.split()[0] in ("GROUP", "CoordinatorId", "Topic")), None
    )
    if header is None:
        return []
    names = lines[header].split()
    return [dict(zip(names, line.split(), strict=False)) for line in lines[header + 1 :]]


def judge_report_lag(described: dict[str, str], data: Path, v: Verdict) -> None:
    """``kdump report``'s groups (every committed offset against the log end offsets of the same run) against
    ``kafka-consumer-groups.sh --describe``: each group's committed offset, LOG-END-OFFSET and LAG per
    partition; a partition whose log is not in this data directory has neither end nor lag in the report."""
    _, out = run("report", "--json", str(data))
    ours = {
        (g["group"], o["topic"], o["partition"]): o
        for unit in json_lines(out)
        if unit.get("type") == "reportGroups"
        for g in unit["groups"]
        for o in g["offsets"]
    }
    for group, text in described.items():
        for row in _table(text):
            key = (group, row["TOPIC"], int(row["PARTITION"]))
            mine = ours.get(key)
            v.expect(
                mine is not None and mine["offset"] == int(row["CURRENT-OFFSET"]),
                f"report {key}: kdump's committed offset {mine and mine['offset']}, "
                f"kafka-consumer-groups.sh {row['CURRENT-OFFSET']}",
            )
            if mine is None or row.get("LAG", "-") == "-":
                continue
            if mine["lag"] is None:
                v.expect(
                    not (data / f"{key[1]}-{key[2]}").is_dir(),
                    f"report {key}: no lag though {key[1]}-{key[2]} is here",
                )
                continue
            v.expect(
                (mine["lag"], mine["logEndOffset"]) == (int(row["LAG"]), int(row["LOG-END-OFFSET"])),
                f"report {key}: kdump's lag {mine['lag']} (log end {mine['logEndOffset']}), "
                f"kafka-consumer-groups.sh {row['LAG']} (log end {row['LOG-END-OFFSET']})",
            )


def judge_operations(answers: dict[str, Any], data: Path, v: Verdict) -> None:
    """The reassignment (the removed replica's directory renamed ``-delete``, the new replica complete), the
    group's committed offsets (``kafka-consumer-groups.sh --describe``) and the transactions' state
    (``kafka-transactions.sh describe``) against ``ls`` and ``find``."""
    node = answers["node"]
    r = answers["reassignment"]
    _, out = run("ls", "--json", str(data))
    listed = [o for o in json_lines(out) if o.get("type") == "partition" and o.get("topic") == r["topic"]]
    live = [o for o in listed if not o["directory"].endswith("-delete")]
    deleted = [o for o in listed if o["directory"].endswith("-delete")]
    if node in r["from"] and node not in r["to"]:
        v.expect(
            not live and len(deleted) == 1 and any("marked delete" in a for a in deleted[0]["anomalies"]),
            f"node {node} lost its replica of {r['topic']}-0: kdump ls lists {[(o['directory'], o['anomalies']) for o in listed]}",
        )
    else:
        v.expect(
            len(live) == 1 and not deleted,
            f"node {node} holds {r['topic']}-0: kdump ls lists {[o['directory'] for o in listed]}",
        )
    for group, text in answers["consumerGroups"].items():
        rows = _table(text)
        v.expect(bool(rows), f"kafka-consumer-groups.sh described nothing of {group}")
        code, out = run("find", "--group", group, "--json", str(data))
        (found,) = [o for o in json_lines(out) if o.get("type") == "coordinator"]
        v.expect(found["found"], f"kdump find --group {group}: not found ({found.get('problemMessages')})")
        if not found["found"]:
            continue
        ours = {(o["topic"], o["partition"]): o for o in found["offsets"]}
        for row in rows:
            key = (row["TOPIC"], int(row["PARTITION"]))
            mine = ours.get(key)
            v.expect(
                mine is not None and mine["offset"] == int(row["CURRENT-OFFSET"]),
                f"find --group {group} {key}: kdump's committed offset {mine and mine['offset']}, "
                f"kafka-consumer-groups.sh {row['CURRENT-OFFSET']}",
            )
            if mine is None or "lag" not in mine or row.get("LAG", "-") == "-":
                continue
            if mine["lag"] is None:
                # not judged: the partition's log is not in this data directory (node 1 after the
                # reassignment holds only its -delete directory)
                v.expect(
                    not (data / f"{key[0]}-{key[1]}").is_dir(),
                    f"find --group {group} {key}: kdump gives no lag though {key[0]}-{key[1]} is here",
                )
                continue
            v.expect(
                (mine["lag"], mine.get("logEndOffset")) == (int(row["LAG"]), int(row["LOG-END-OFFSET"])),
                f"find --group {group} {key}: kdump's lag {mine['lag']} (log end {mine.get('logEndOffset')}), "
                f"kafka-consumer-groups.sh {row['LAG']} (log end {row['LOG-END-OFFSET']})",
            )
    if answers["consumerGroups"]:
        judge_report_lag(answers["consumerGroups"], data, v)
    for tid, text in answers["transactions"].items():
        rows = _table(text)
        v.expect(len(rows) == 1, f"kafka-transactions.sh describe {tid}: {text!r}")
        if len(rows) != 1:
            continue
        row = rows[0]
        _, out = run("find", "--transactional-id", tid, "--json", str(data))
        (found,) = [o for o in json_lines(out) if o.get("type") == "coordinator"]
        t = found.get("transaction") or {}
        theirs = (
            int(row["ProducerId"]),
            int(row["ProducerEpoch"]),
            row["TransactionState"],
            int(row["TransactionTimeoutMs"]),
            int(row["CurrentTransactionStartTimeMs"]),
            sorted(row.get("TopicPartitions", "").split(",")) if row.get("TopicPartitions") else [],
        )
        ours_t = (
            t.get("producerId"),
            t.get("producerEpoch"),
            t.get("state"),
            t.get("timeoutMs"),
            t.get("startTimestamp"),
            sorted(f"{p['topic']}-{p['partition']}" for p in t.get("topicPartitions", [])),
        )
        v.expect(
            ours_t == theirs, f"find --transactional-id {tid}: kdump {ours_t}, kafka-transactions.sh {theirs}"
        )


def judge_lost_coordinator(answers: dict[str, Any], data: Path, v: Verdict) -> Verdict:
    """A node whose ``__transaction_state`` directories were removed: ``verify`` names each removed partition
    (``absent-partition``, the checkpoints still list them) and nothing else; ``txn`` calls the open transaction
    hanging as ``find-hanging`` does."""
    _, out = run("verify", "--json", str(data))
    found = [o for o in json_lines(out) if o.get("type") == "problem"]
    v.verify_problems = len(found)
    removed = {d["file"] for d in answers["damage"]}
    named = {o["message"].split(":")[0] for o in found if o["kind"] == "absent-partition"}
    for d in answers["damage"]:
        v.damages += 1
        v.damages_found += d["file"] in named
        v.expect(d["file"] in named, f"removed {d['file']}: kdump verify does not name it")
    others = [
        (o["file"], o["kind"])
        for o in found
        if o["kind"] != "absent-partition" or o["message"].split(":")[0] not in removed
    ]
    v.expect(not others, f"kdump verify reports more than the removed partitions: {others[:5]}")
    judge_hanging(answers, data, v)
    return v


def judge_hanging(answers: dict[str, Any], data: Path, v: Verdict) -> None:
    """``txn``'s hanging transactions (at the time find-hanging ran, with its maximum timeout) against
    ``kafka-transactions.sh find-hanging --broker-id N`` (``FindHangingTransactionsCommand``)."""
    h = answers["findHanging"]
    theirs = {
        (row["Topic"], int(row["Partition"]), int(row["ProducerId"]), int(row["StartOffset"]))
        for row in _table(h["out"])
    }
    ours = set()
    for part in sorted(data.iterdir()):
        if not part.is_dir() or part.name.startswith("__") or part.name.endswith("-delete"):
            continue
        _, out = run(
            "txn", "--json", "--now", str(h["at"]), "--max-timeout-ms", str(h["maxTimeoutMs"]), str(part)
        )
        for t in json_lines(out):
            if t.get("type") != "txnPartition":
                continue
            ours |= {
                (t["topic"], t["partition"], o["producerId"], o["firstOffset"])
                for o in t["openTransactions"]
                if o["hanging"]
            }
    v.expect(ours == theirs, f"txn's hanging transactions {sorted(ours)}, find-hanging {sorted(theirs)}")


def scenarios(root: Path) -> list[Path]:
    return sorted(root.glob("*.json"))


def judge_fixture(answers_path: Path, work: Path) -> Verdict:
    """Judge one recorded scenario (``<name>.json`` beside ``<name>.tar.xz``), extracted below ``work``."""
    answers = json.loads(answers_path.read_text())
    data = extract(answers_path.parent / f"{answers['scenario']}.tar.xz", work)
    verdict = judge(answers, data, work)
    if answers["kind"] == "ops" and answers["node"] == 3:
        judge_moved(answers, answers_path.parent, work / "moved", verdict)
    return verdict


def judge_moved(answers: dict[str, Any], fixtures: Path, work: Path, v: Verdict) -> None:
    """The reassigned partition across the nodes (the ops scenarios of one version): the replica the
    reassignment removed (its ``-delete`` directory) and those it kept or created hold the records the leader
    answered for, so ``diff`` calls them copies of one partition, not diverged, each ending at the high
    watermark ListOffsets answered."""
    r = answers["reassignment"]
    copies = []
    for node in sorted(set(r["from"]) | set(r["to"])):
        data = extract(fixtures / f"{answers['version']}-ops-node{node}.tar.xz", work / str(node))
        found = sorted(data.glob(f"{r['topic']}-0" if node in r["to"] else f"{r['topic']}-0.*-delete"))
        v.expect(len(found) == 1, f"node {node}: no replica directory of {r['topic']}-0")
        copies += [str(p) for p in found]
    code, out = run("diff", "--json", *copies)
    (p,) = [o for o in json_lines(out) if o.get("type") == "diffPartition"]
    hw = answers["listOffsets"][r["topic"]]["high_watermark"]
    v.expect(
        code == 0 and p["diverged"] is False and p["name"] == f"{r['topic']}-0",
        f"diff of the reassigned replicas: {p['name']} diverged {p['diverged']}, exit {code}",
    )
    ends = [c["logEndOffset"] for c in p["copies"]]
    v.expect(
        ends == [hw] * len(copies),
        f"diff of the reassigned replicas: log ends {ends}, the high watermark {hw}",
    )
