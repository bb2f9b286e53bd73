"""The offset checkpoints of a log directory (``log-start-offset-checkpoint``, ``replication-offset-checkpoint``,
``recovery-point-offset-checkpoint``, ``cleaner-offset-checkpoint``), read for ``ls``, ``diff``, ``retention`` and
``report``: a module of its own so that a command needing only these does not load the partition summary's."""

from __future__ import annotations

import os

from kdump.errors import KdumpError
from kdump.problem import Problem, problem_of
from kdump.storage import locations
from kdump.storage.checkpoint import (
    CLEANER_OFFSET_CHECKPOINT_FILE,
    HIGH_WATERMARK_CHECKPOINT_FILE,
    LOG_START_OFFSET_CHECKPOINT_FILE,
    RECOVERY_POINT_CHECKPOINT_FILE,
)
from kdump.storage.offset_checkpoint import CheckpointOffsets, read_offset_checkpoint

#: The offset checkpoints of a log directory (their names: :mod:`kdump.storage.checkpoint`) and the field of the
#: partition summary (:class:`kdump.analysis.log_summary.PartitionSummary`) each one feeds.
LOG_DIR_CHECKPOINTS = {
    LOG_START_OFFSET_CHECKPOINT_FILE: "log_start_offset_checkpoint",
    HIGH_WATERMARK_CHECKPOINT_FILE: "high_watermark",
    RECOVERY_POINT_CHECKPOINT_FILE: "recovery_point",
    CLEANER_OFFSET_CHECKPOINT_FILE: "cleaner_checkpoint",
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
