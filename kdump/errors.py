"""Error types shared by the storage core and the command line.

Every problem found in a file is raised as a :class:`KdumpError` subclass that knows the file and, where it
applies, the byte position.  The command-line layer turns these into one line on stderr and an exit status;
nothing in the storage core prints.
"""

from __future__ import annotations

from kdump.exit_status import ExitStatus


class KdumpError(Exception):
    """Base class of every error kdump reports to a user.

    ``kafka_class`` names the Java exception the real ``kafka-dump-log.sh`` throws in the same situation, so the
    command line can say which Kafka failure this corresponds to.
    """

    kafka_class = "org.apache.kafka.common.KafkaException"
    #: The status a run ends with when this error stops it.
    exit_status = ExitStatus.PROBLEMS

    def __init__(self, message: str, *, path: str | None = None, position: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.path = path
        self.position = position

    def __reduce__(self) -> tuple:
        """Pickle with the file, position and any subclass attributes (errors cross process boundaries)."""
        return (_rebuild_error, (type(self), self.message, self.__dict__.copy()))

    def located(self, path: str | None = None, position: int | None = None) -> KdumpError:
        """Fill in the file and position if they are not known yet; returns self for ``raise e.located(...)``."""
        if self.path is None:
            self.path = path
        if self.position is None:
            self.position = position
        return self

    def describe(self) -> str:
        where = []
        if self.path is not None:
            where.append(self.path)
        if self.position is not None:
            where.append(f"byte {self.position}")
        prefix = ": ".join(where)
        return f"{prefix}: {self.message}" if prefix else self.message


class CorruptRecordError(KdumpError):
    """A batch or record does not follow the format (Kafka: CorruptRecordException / InvalidRecordException)."""

    kafka_class = "org.apache.kafka.common.errors.CorruptRecordException"


class InvalidRecordError(CorruptRecordError):
    kafka_class = "org.apache.kafka.common.InvalidRecordException"


class DecompressionError(KdumpError):
    """A compressed payload could not be decompressed (Kafka: KafkaException from the codec stream)."""


class DecompressionLimitError(DecompressionError):
    """A compressed payload expands beyond the configured bound."""


class UsageError(KdumpError):
    """Bad command-line arguments (of Kafka's own options: status 1, as Kafka's tool exits)."""


class KdumpUsageError(UsageError):
    """A bad value of one of kdump's own options (not Kafka's): a usage error, status 2."""

    exit_status = ExitStatus.USAGE


class UnreadableFileError(KdumpError):
    """A file that exists but cannot be opened or read (permissions, an I/O error): the one rule of every
    command is a problem naming it and status 1 (see ``man kdump``, UNREADABLE FILES AND DIRECTORIES)."""


class CorruptIndexError(KdumpError):
    """An index failed Kafka's sanity check (Kafka: CorruptIndexException)."""

    kafka_class = "org.apache.kafka.storage.internals.log.CorruptIndexException"


class CorruptSnapshotError(KdumpError):
    """A producer-state snapshot is unreadable (Kafka: CorruptSnapshotException; reported, not fatal)."""

    kafka_class = "org.apache.kafka.storage.internals.log.CorruptSnapshotException"


class CheckpointFormatError(KdumpError):
    """A text checkpoint file is malformed."""


def _rebuild_error(cls: type[KdumpError], message: str, state: dict) -> KdumpError:
    error = cls.__new__(cls)
    Exception.__init__(error, message)
    error.__dict__.update(state)
    return error
