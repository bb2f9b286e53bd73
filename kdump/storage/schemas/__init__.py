"""Message schemas of Kafka's internal topics, held as data (:mod:`kdump.storage.message_schema`) for the generic
reader (:mod:`kdump.storage.message_reader`): one module per topic, each a block of compact schema text
transcribed from Kafka 4.0's JSON schema files, parsed once at import.  Adding a record type or version means
editing that text.

Records that Kafka releases after 4.0 changed or added are held beside them (``NEWEST_SCHEMA_TEXT``), whole, as
of :data:`NEWEST_KAFKA_SOURCE`: the default text keeps decoding with 4.0's schemas (byte-identical to Kafka
4.0's tool, which fails on them), kdump's own modes decode with the newest and say so.

The records of each Kafka release kdump reproduces the tool of (``kdump files --kafka-version``,
:mod:`kdump.storage.kafka_release`) are held as each release's changes over the one before it
(``RELEASE_SCHEMA_TEXT``, transcribed from that release's JSON schema files) and its record types
(``RELEASE_RECORD_TYPES``); :func:`release_schemas` puts a release's table together.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache

from kdump.storage.message_schema import MessageSchema, parse_schemas

#: The release lines whose changes ``RELEASE_SCHEMA_TEXT`` holds, in order (3.9 and 4.0 read 4.0's text).
_CHANGING_LINES = ("4.1", "4.2")

#: The newest Kafka source the ``NEWEST_SCHEMA_TEXT`` blocks were read from: confluentinc/kafka at commit
#: 06d492d8 (August 2026, version 8.5.0-ccs, the Apache Kafka trunk of its day).
NEWEST_KAFKA_SOURCE = "confluentinc/kafka 06d492d8 (8.5.0-ccs, 2026-08-22)"


def release_schemas(
    base: Mapping[str, MessageSchema], changes: Mapping[str, str], line: str
) -> dict[str, MessageSchema]:
    """The schema table of release ``line``: ``base`` (Kafka 4.0's) with each release's changes up to ``line``
    applied in order."""
    table = dict(base)
    for changing in _CHANGING_LINES:
        if _version(changing) > _version(line):
            break
        if changing in changes:
            table.update(_parsed(changes[changing]))
    return table


@cache
def _parsed(text: str) -> dict[str, MessageSchema]:
    return parse_schemas(text)


def _version(line: str) -> tuple[int, ...]:
    return tuple(int(p) for p in line.split("."))
