"""The offset checkpoints of a log directory (``log-start-offset-checkpoint``, ``replication-offset-checkpoint``,
``recovery-point-offset-checkpoint``, ``cleaner-offset-checkpoint``), read for ``ls``, ``diff``, ``retention`` and
``report``: a module of its own so that a command needing only these does not load the partition summary's."""

from __future__ import annotations

import os

from kdump.errors import KdumpError
from kdump.problem import Problem, problem_of
from kdump.storage import locations
from kdump.storage.offset_checkpoint import CheckpointOffsets, read_offset_checkpoint

#: The offset checkpoints of a log directory and the summary field each one feeds.
LOG_DIR_CHECKPOINTS = {
    "log-start-offset-checkpoint": "log_start_offset_checkpoint",
    "replication-offset-checkpoint": "high_watermark",
    "recovery-point-offset-checkpoint": "recovery_point",
    "cleaner-offset-checkpoint": "cleaner_checkpoint",
}


def read_log_dir_checkpoints(
    log_dir: str, anomalies: list[Problem] | None = None
) -> dict[str, CheckpointOffsets]:
    """``{file name: {(topic, partition): offset}}`` for the offset checkpoints present in ``log_dir``.  A file
    that cannot be read is left out and, when ``anomalies`` is given, reported there."""
    found: dict[str, CheckpointOffsets] = {}
    for name in LOG_DIR_CHECKPOINTS:
        path = os.path.join(log_dir, name)
        if not locations.isfile(path):
            continue
        try:
            found[name] = read_offset_checkpoint(path).offsets()
        except (KdumpError, OSError) as e:
            if anomalies is not None:
                anomalies.append(problem_of(e, path))
    return found
