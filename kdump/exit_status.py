"""The one set of exit statuses every kdump command returns (documented in ``man kdump``, EXIT STATUS)."""

from __future__ import annotations

from enum import IntEnum


class ExitStatus(IntEnum):
    """How a kdump run ended.

    ``kdump files`` keeps Kafka's own statuses (0, or 1 where kafka-dump-log.sh dies), which fall on the same
    values.
    """

    #: Everything asked for was done and nothing wrong was found.
    OK = 0
    #: Problems were found in the data (a check failed, a record is corrupt, a lookup found nothing), or the run
    #: stopped on a data error after saying so on stderr.
    PROBLEMS = 1
    #: The command line was wrong (unknown option, bad value, no input given or no Kafka data found).
    USAGE = 2
    #: Interrupted by the user (SIGINT), as a shell reports it.
    INTERRUPTED = 130
