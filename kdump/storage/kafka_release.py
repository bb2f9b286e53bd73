"""The Kafka releases whose ``kafka-dump-log.sh`` kdump reproduces (``kdump files --kafka-version``), and what
their tools differ in, as data read from each release's source (``kafka.tools.DumpLogSegments`` and the
generated message schemas of the tags 3.9.1, 4.0.0, 4.1.0 and 4.2.0-rc1 of apache/kafka).

A release is chosen once, at start-up; the renderers pick their functions from it when they are built, so no
record pays for the choice.  kdump's own modes (JSON, verify, ls, txn, ...) ignore it and decode with the
newest schemas kdump holds.

What differs between the tools (a rule each, applied where the text is made):

* ``--version`` prints the release (``AppInfoParser.getVersion``); a patch release (``4.1.1``) is its line's
  tool (4.1.1 and 4.0.1 did not change DumpLogSegments) printing its own version.
* 3.9 has no ``--share-group-state-decoder`` (KIP-932's decoder came in 4.0), and still loads the pre-3.8
  ``kafka.serializer.*Decoder`` names (``DumpLogSegments.newDecoder``: a deprecation line on standard output,
  then the ``org.apache.kafka.tools.api`` decoder of the same name).
* 4.1 prints LEADER_CHANGE control records as ``LeaderChange: {json}`` (KAFKA-19069,
  ``DumpLogSegments.printControlRecord``); 4.0 and 3.9 print ``controlType: LEADER_CHANGE(2)``.
* 4.1 decodes ``__consumer_offsets``, ``__transaction_state`` and ``__share_group_state`` with one parser,
  ``CoordinatorRecordMessageParser`` (KAFKA-18207/18616): the key as ``{"type":"<record type>","data":...}``,
  the value as ``{"version":"<v>","data":...}`` (the transaction log too, which 4.0 printed as
  ``transaction_metadata::transactionalId=...`` text and whose failures were fatal), and a record without key
  dies with "... using the specified decoder (message had a missing key)".
* The coordinators' record types and schemas of each release (:mod:`kdump.storage.schemas`): 3.9's group
  coordinator knows types 0-8; 4.0 adds the early-access share-group types 9-15 and 16 (regular expressions);
  4.1 drops type 9 (ShareGroupPartitionMetadata), reads type 0 as ``LegacyOffsetCommitValue`` (version 0
  only), adds the streams-group types 17 and 19-23 and changes several values (KAFKA-18672, KIP-1101's
  ``MetadataHash``, the share coordinator's new value layout); 4.2 changes the share values and two streams
  values again.
* 4.2 changed only the help text of ``--skip-record-metadata``.

The KRaft metadata records did not change between 4.0, 4.1 and 4.2 (``RegisterBrokerRecord`` is at versions
0-3 in all three; its version 4 is on trunk only), so ``--cluster-metadata-decoder`` reads the same records in
every release.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

#: ``--skip-record-metadata``'s help text up to 4.1, and from 4.2 on.
SKIP_RECORD_METADATA_HELP = "Whether to skip printing metadata for each record."
SKIP_RECORD_METADATA_HELP_42 = "Skip metadata when printing records. This flag also skips control records."


@dataclass(frozen=True)
class KafkaRelease:
    """One release line of Kafka's tool, as ``kdump files --kafka-version`` names it."""

    #: The line, ``"4.1"``.
    line: str
    #: What the tool's ``--version`` prints (``4.1.0``, or the patch release asked for).
    version: str
    #: The tool has ``--share-group-state-decoder`` (4.0 on).
    share_decoder: bool
    #: The tool loads the ``kafka.serializer.*Decoder`` names (3.9).
    deprecated_decoders: bool
    #: LEADER_CHANGE control records print as ``LeaderChange: {json}`` (4.1 on).
    leader_change_json: bool
    #: One ``CoordinatorRecordMessageParser`` for the three coordinator topics (4.1 on).
    coordinator_parser: bool
    skip_record_metadata_help: str

    @property
    def schemas(self) -> str:
        """The name of the release's schema tables in :mod:`kdump.storage.schemas` (``"4.1"``)."""
        return self.line


def _release(line: str, version: str | None = None) -> KafkaRelease:
    major, minor = (int(p) for p in line.split("."))
    at_least = (major, minor).__ge__
    return KafkaRelease(
        line=line,
        version=version or f"{line}.0",
        share_decoder=at_least((4, 0)),
        deprecated_decoders=not at_least((4, 0)),
        leader_change_json=at_least((4, 1)),
        coordinator_parser=at_least((4, 1)),
        skip_record_metadata_help=SKIP_RECORD_METADATA_HELP_42
        if at_least((4, 2))
        else SKIP_RECORD_METADATA_HELP,
    )


#: The release lines kdump knows, oldest first.
LINES = ("3.9", "4.0", "4.1", "4.2")
#: The default: the newest release.
NEWEST = LINES[-1]
#: The environment variable that picks a release when ``--kafka-version`` is not given.
ENVIRONMENT_VARIABLE = "KDUMP_KAFKA_VERSION"

_VERSION = re.compile(r"(\d+)\.(\d+)(?:\.(\d+))?")


def release(text: str | None = None) -> KafkaRelease:
    """The release ``text`` names (``4.1``, ``4.1.1``; None: the newest).  ValueError, naming the releases
    kdump knows, for anything else."""
    if text is None:
        return _release(NEWEST)
    m = _VERSION.fullmatch(text.strip())
    line = None if m is None else f"{int(m.group(1))}.{int(m.group(2))}"
    if m is None or line not in LINES:
        raise ValueError(
            f"unknown Kafka version {text!r}: kdump reproduces the tool of Kafka {', '.join(LINES)} "
            "(a patch release such as 4.1.1 means its line)"
        )
    return _release(line, f"{line}.{int(m.group(3))}" if m.group(3) is not None else None)
