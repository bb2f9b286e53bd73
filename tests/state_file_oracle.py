"""An independent reading of Kafka's small text state files, written from the file formats (not from kdump's
parsers), giving the lines ``kdump files`` must print for them (man kdump-files, STATE FILES)."""

from __future__ import annotations

import json
from pathlib import Path

OFFSET_CHECKPOINTS = {
    "recovery-point-offset-checkpoint",
    "replication-offset-checkpoint",
    "log-start-offset-checkpoint",
    "cleaner-offset-checkpoint",
}


def expected_dump(path: Path, shown: str | None = None) -> str:
    """What follows the ``Dumping <path>`` line for one well-formed state file (``shown``: the path as given on
    the command line, which an empty checkpoint's line repeats)."""
    text = path.read_text("utf-8")
    name = path.name
    if text == "" and name != "quorum-state":
        return f"{path if shown is None else shown} is empty.\n"
    if name in OFFSET_CHECKPOINTS or name == "leader-epoch-checkpoint":
        lines = text.splitlines()
        version, count, entries = int(lines[0]), int(lines[1]), [line.split() for line in lines[2:] if line]
        assert count == len(entries)
        if name == "leader-epoch-checkpoint":
            head = f"Leader epoch checkpoint version: {version} entries: {count}\n"
            return head + "".join(f"epoch: {e} startOffset: {o}\n" for e, o in entries)
        head = f"Offset checkpoint version: {version} entries: {count}\n"
        return head + "".join(f"topic: {t} partition: {p} offset: {o}\n" for t, p, o in entries)
    if name == "partition.metadata":
        fields = dict(line.split(": ", 1) for line in text.splitlines() if line)
        return f"Partition metadata version: {fields['version']} topicId: {fields['topic_id']}\n"
    if name == "meta.properties":
        props = [line.split("=", 1) for line in text.splitlines() if line and not line.startswith("#")]
        return f"Meta properties version: {dict(props)['version']}\n" + "".join(
            f"{k}: {v}\n" for k, v in props
        )
    if name == "quorum-state":
        state = json.loads(text)
        parts = [
            f"leaderId: {state['leaderId']}",
            f"leaderEpoch: {state['leaderEpoch']}",
            f"votedId: {state['votedId']}",
        ]
        if "votedDirectoryId" in state:
            parts.append(f"votedDirectoryId: {state['votedDirectoryId']}")
        if "clusterId" in state:
            parts.append(f"clusterId: {state['clusterId']}")
        if "appliedOffset" in state:
            parts.append(f"appliedOffset: {state['appliedOffset']}")
        if "currentVoters" in state:
            parts.append(
                "currentVoters: [" + ",".join(str(v["voterId"]) for v in state["currentVoters"]) + "]"
            )
        return f"Quorum state data version: {state['data_version']}\n" + " ".join(parts) + "\n"
    raise ValueError(f"not a state file: {path}")
