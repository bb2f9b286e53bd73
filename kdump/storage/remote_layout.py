"""Where a RemoteStorageManager put a remote segment's objects: the layouts ``kdump tiered`` (and ``verify``/``ls``
with ``--remote-root``) read.

* ``kafka``: Kafka's own ``RemoteLogSegmentFileset`` (LocalTieredStorage), :mod:`kdump.storage.remote_log_segment`;
* ``aiven``: Aiven's tiered-storage plugin, :mod:`kdump.storage.aiven_segment` (its ``key.prefix`` may be
  given, and the per-segment ``object_prefix``/``object_key`` of the remote log metadata's custom metadata are
  honoured);
* a *template* for any other plugin that stores a segment's files as Kafka writes them (a plain ``.log``, the
  indexes beside it): the key of each object relative to the remote root, in Python's ``str.format`` syntax
  with these fields only --

  ``{topic}``, ``{partition}``, ``{topicId}`` (Kafka's base64 form, as in ``kafka-topics --describe``),
  ``{topicUuid}`` (the dashed UUID form), ``{startOffset}``, ``{endOffset}``, ``{segmentId}`` (base64),
  ``{segmentUuid}`` (dashed), ``{brokerId}``, ``{suffix}`` (``.log``, ``.index``, ``.timeindex``,
  ``.snapshot``, ``.leader_epoch_checkpoint``, ``.txnindex``)

  with format specs (``{startOffset:020d}``: 20 digits, zero-padded).  A template without ``{suffix}`` must end
  in ``.log``: the other files are the same key with ``.log`` replaced by their suffix.  Kafka's own layout is
  ``{topic}-{partition}-{topicId}/{startOffset:020d}-{segmentId}{suffix}``.  What a template layout cannot
  know is which objects under the root belong to no segment (orphans are not looked for).
"""

from __future__ import annotations

import string
import uuid
from dataclasses import dataclass

from kdump.storage import naming
from kdump.storage.kafka_uuid import encode_uuid

#: The fields a template may use.
FIELDS = (
    "topic",
    "partition",
    "topicId",
    "topicUuid",
    "startOffset",
    "endOffset",
    "segmentId",
    "segmentUuid",
    "brokerId",
    "suffix",
)
#: The files of a remote segment in Kafka's layout and a template's, the ``.log`` first.
SUFFIXES = (
    naming.LOG_FILE_SUFFIX,
    naming.INDEX_FILE_SUFFIX,
    naming.TIME_INDEX_FILE_SUFFIX,
    ".snapshot",
    ".leader_epoch_checkpoint",
    naming.TXN_INDEX_FILE_SUFFIX,
)


@dataclass(frozen=True)
class Template:
    """A checked layout template (:func:`parse_template`)."""

    text: str

    def key(
        self,
        *,
        topic: str,
        partition: int,
        topic_id: uuid.UUID,
        start_offset: int,
        end_offset: int,
        segment_id: uuid.UUID,
        broker_id: int,
        suffix: str,
    ) -> str:
        """The key of one object of a segment (relative to the remote root)."""
        has_suffix = any(f == "suffix" for _, f, _, _ in string.Formatter().parse(self.text))
        values = {
            "topic": topic,
            "partition": partition,
            "topicId": encode_uuid(topic_id.bytes),
            "topicUuid": str(topic_id),
            "startOffset": start_offset,
            "endOffset": end_offset,
            "segmentId": encode_uuid(segment_id.bytes),
            "segmentUuid": str(segment_id),
            "brokerId": broker_id,
            "suffix": suffix if has_suffix else naming.LOG_FILE_SUFFIX,
        }
        key = self.text.format(**values)
        if not has_suffix and suffix != naming.LOG_FILE_SUFFIX:
            key = key[: -len(naming.LOG_FILE_SUFFIX)] + suffix
        return key.lstrip("/")


def parse_template(text: str) -> Template:
    """A layout template, checked: only :data:`FIELDS`, no attribute or index access, no conversion, format
    specs that the field's type takes, and ``{suffix}`` or a ``.log`` ending.  ValueError (a usage error)
    saying what is wrong."""
    try:
        parts = list(string.Formatter().parse(text))
    except ValueError as e:
        raise ValueError(f"layout template {text!r}: {e}") from None
    names = []
    for _, field, spec, conversion in parts:
        if field is None:
            continue
        if field not in FIELDS:
            raise ValueError(
                f"layout template {text!r}: unknown field {{{field}}} (the fields: "
                + ", ".join("{" + f + "}" for f in FIELDS)
                + ")"
            )
        if conversion is not None or (spec and "{" in spec):
            raise ValueError(f"layout template {text!r}: {{{field}}} takes a format spec only (e.g. :020d)")
        names.append(field)
    if not names:
        raise ValueError(f"layout template {text!r}: no field in it (every segment would be one object)")
    if "suffix" not in names and not text.endswith(naming.LOG_FILE_SUFFIX):
        raise ValueError(f"layout template {text!r}: it needs {{suffix}} or to end in .log")
    template = Template(text)
    try:  # every spec applied once to a value of its field's type
        template.key(
            topic="t",
            partition=0,
            topic_id=uuid.UUID(int=1),
            start_offset=0,
            end_offset=0,
            segment_id=uuid.UUID(int=2),
            broker_id=0,
            suffix=naming.LOG_FILE_SUFFIX,
        )
    except (ValueError, TypeError) as e:
        raise ValueError(f"layout template {text!r}: {e}") from None
    return template


@dataclass(frozen=True)
class Layout:
    """A layout: ``kind`` ``kafka``, ``aiven`` or ``template`` (then :attr:`template`); for ``aiven`` the
    plugin's ``key.prefix`` (the remote root is then the storage root: bucket or directory)."""

    kind: str = "kafka"
    template: Template | None = None
    aiven_prefix: str = ""


def as_layout(layout: str | Layout) -> Layout:
    return layout if isinstance(layout, Layout) else Layout(layout)
