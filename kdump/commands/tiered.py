"""``kdump tiered``: a tiered partition (KIP-405) as one log -- its local partition directory, its segments in
remote storage (Kafka's ``RemoteLogSegmentFileset`` layout under a remote root, a local directory or a URL) and
what ``__remote_log_metadata`` says of them -- with the checks of :mod:`kdump.analysis.tiered`."""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable

from kdump.analysis.remote_log_metadata import (
    DEFAULT_METADATA_PARTITIONS,
    METADATA_TOPIC,
    RemoteLogMetadata,
    metadata_partition,
    metadata_partition_dirs,
    read_remote_log_metadata,
)
from kdump.analysis.tiered import TieredFacts, check_tiered, remote_partition_dirs
from kdump.errors import KdumpError
from kdump.exit_status import ExitStatus
from kdump.facts.report import ReportSink, hand_over
from kdump.problem import UNREADABLE, Problem, problem
from kdump.storage import locations, naming
from kdump.storage.aiven_segment import Keyring
from kdump.storage.kafka_uuid import decode_uuid
from kdump.storage.local_log import LocalLog
from kdump.storage.partition_metadata import read_partition_metadata
from kdump.storage.remote_layout import Layout


class TieredCommand:
    """One ``kdump tiered`` run over a partition directory."""

    def __init__(
        self,
        partition_dir: str,
        remote_root: str,
        metadata: list[str] | None = None,
        *,
        metadata_partitions: int = DEFAULT_METADATA_PARTITIONS,
        deep: bool = False,
        layout: str | Layout = "kafka",
        metadata_reader: Callable[[list[str]], RemoteLogMetadata] = read_remote_log_metadata,
        keyring: Keyring | None = None,
    ) -> None:
        self.layout = layout
        #: The private keys of Aiven's encrypted segments (``--aiven-private-key``).
        self.keyring = keyring
        #: Reads the metadata partitions (``kdump verify --remote-root`` passes one that reads each set once).
        self.metadata_reader = metadata_reader
        self.partition_dir = partition_dir
        self.remote_root = remote_root
        parent = os.path.dirname(os.path.normpath(locations.abspath(partition_dir)))
        self.metadata = metadata or [parent]
        self.metadata_partitions = metadata_partitions
        self.deep = deep
        name = naming.parse_partition_dir(os.path.basename(os.path.normpath(partition_dir)))
        if name is None:
            raise ValueError(f"{partition_dir}: not a partition directory name (<topic>-<partition>)")
        self.topic, self.partition = name.topic, name.partition

    def run(self, sink: ReportSink[TieredFacts]) -> int:
        facts = self.facts()
        hand_over(sink, [facts])
        return ExitStatus.PROBLEMS if facts.problems else ExitStatus.OK

    def facts(self) -> TieredFacts:
        facts = TieredFacts(self.partition_dir, self.topic, self.partition, None, None)
        problems = facts.problems
        local: LocalLog | None
        try:
            local = LocalLog.scan(self.partition_dir)
        except OSError as e:
            problems.append(problem(UNREADABLE, self.partition_dir, case="read", reason=str(e)))
            local = None
        topic_id = self._topic_id(problems)
        # the metadata partition that holds this partition's records, when it is among those given
        dirs = [d for path in self.metadata for d in _metadata_dirs(path, problems)]
        if topic_id is not None:
            wanted = (
                f"{METADATA_TOPIC}-{metadata_partition(topic_id, self.partition, self.metadata_partitions)}"
            )
            chosen = [d for d in dirs if os.path.basename(os.path.normpath(d)) == wanted]
            dirs = chosen or dirs
        if not dirs:
            problems.append(problem("metadata", self.metadata[0], case="none-found", topic=METADATA_TOPIC))
        metadata = self.metadata_reader(dirs)
        remote = metadata.partition(self.topic, self.partition)
        if remote is not None and topic_id is not None and remote.topic_id != topic_id:
            problems.append(
                problem(
                    "metadata",
                    self.partition_dir,
                    case="topic-id",
                    topic=self.topic,
                    partition=self.partition,
                )
            )
        if topic_id is None and remote is not None:
            topic_id = remote.topic_id
        facts.topic_id = None if topic_id is None else _kafka_id(topic_id)
        names: dict[str, int] | None = None
        if topic_id is not None:
            candidates = remote_partition_dirs(
                self.remote_root, self.topic, self.partition, topic_id, self.layout
            )
            facts.remote_dir = next((c for c in candidates if locations.isdir(c)), candidates[0])
            try:
                names = locations.file_sizes(facts.remote_dir)
            except OSError as e:
                if remote is not None and remote.segments:
                    problems.append(
                        problem(UNREADABLE, facts.remote_dir, case="list", reason=e.strerror or str(e))
                    )
        key = None if topic_id is None else (topic_id, self.partition)
        mine = [p for p in metadata.problems if p.topic_partition in (key, None)]
        try:
            check_tiered(
                facts, remote, names, local, mine, deep=self.deep, layout=self.layout, keyring=self.keyring
            )
        except KdumpError as e:
            problems.append(problem(UNREADABLE, e.path or self.partition_dir, reason=e.message))
        return facts

    def _topic_id(self, problems: list[Problem]) -> uuid.UUID | None:
        path = os.path.join(self.partition_dir, "partition.metadata")
        if not locations.exists(path):
            return None
        try:
            return uuid.UUID(bytes=read_partition_metadata(path).topic_id_bytes)
        except (KdumpError, OSError, ValueError) as e:
            problems.append(problem(UNREADABLE, path, reason=str(e)))
            return None


def _metadata_dirs(path: str, problems: list[Problem]) -> list[str]:
    try:
        return metadata_partition_dirs(path)
    except OSError as e:
        problems.append(problem(UNREADABLE, path, case="read", reason=e.strerror or str(e)))
        return []


def _kafka_id(u: uuid.UUID) -> str:
    from kdump.storage.kafka_uuid import encode_uuid

    return encode_uuid(u.bytes)


def parse_topic_id(text: str) -> uuid.UUID:
    return uuid.UUID(bytes=decode_uuid(text))
