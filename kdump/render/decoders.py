"""Kafka's stock key/value decoders (``org.apache.kafka.tools.api.*Decoder``) and the tool's message parsers.

Only the four stock classes exist here (kdump cannot load Java classes), under exactly the names Kafka 4.0 can
load: ``DumpLogSegments`` instantiates the class with ``CoreUtils.createObject`` (``Class.forName``, the public
no-argument constructor, a cast to ``Decoder``), and the only ``org.apache.kafka.tools.api.Decoder``
implementations in a 4.0 distribution are these four in ``kafka-tools-api``.  The pre-3.8 ``kafka.serializer``
names -- still the default in the tool's own ``--help`` -- are gone from 4.0 (ClassNotFoundException), so they
fail here too.  The internal-topic parsers (``--offsets-decoder`` and the
others) are :class:`kdump.render.internal_topics.InternalTopicParser`; :func:`internal_topic_parser` makes one.
"""

from __future__ import annotations

import itertools
import struct
from collections.abc import Callable
from typing import TYPE_CHECKING

from kdump.errors import KdumpError, UsageError
from kdump.facts.files import DumpOptions, MessageParser
from kdump.jdk.text import decode_utf8_jdk
from kdump.storage.record import Record

if TYPE_CHECKING:
    from kdump.storage.kafka_release import KafkaRelease

Decoder = Callable[[bytes], str]

NEW_PACKAGE = "org.apache.kafka.tools.api."
OLD_PACKAGE = "kafka.serializer."
DEFAULT_DECODER_CLASS = NEW_PACKAGE + "StringDecoder"

_identity = itertools.count(0x1B6D3586)


def _string(data: bytes) -> str:
    return decode_utf8_jdk(data)


def _integer(data: bytes) -> str:
    if len(data) < 4:
        raise KdumpError(
            f"IntegerDecoder needs 4 bytes, found {len(data)} (java.nio.BufferUnderflowException)"
        )
    return str(struct.unpack_from(">i", data)[0])


def _long(data: bytes) -> str:
    if len(data) < 8:
        raise KdumpError(f"LongDecoder needs 8 bytes, found {len(data)} (java.nio.BufferUnderflowException)")
    return str(struct.unpack_from(">q", data)[0])


def _default(data: bytes) -> str:
    # Kafka prints the byte[] object itself: "[B@" and an identity hash code that differs on every run.
    return f"[B@{next(_identity):x}"


STOCK_DECODERS: dict[str, Decoder] = {
    "StringDecoder": _string,
    "IntegerDecoder": _integer,
    "LongDecoder": _long,
    "DefaultDecoder": _default,
}


def resolve_decoder(class_name: str) -> Decoder:
    """The decoder for a Java class name, as Kafka 4.0's tool loads it; any other name fails as in Kafka (which
    dies there with ClassNotFoundException, NoSuchMethodException or ClassCastException, status 1)."""
    if class_name.startswith(NEW_PACKAGE):
        decoder = STOCK_DECODERS.get(class_name[len(NEW_PACKAGE) :])
        if decoder is not None:
            return decoder
    hint = ""
    if class_name.startswith(OLD_PACKAGE):
        hint = f" ({OLD_PACKAGE} was removed in Kafka 4.0, although its --help still names it)"
    raise UsageError(
        f"cannot load decoder class {class_name!r}{hint}: the decoders Kafka 4.0 can load are "
        f"{', '.join(NEW_PACKAGE + n for n in STOCK_DECODERS)}"
    )


def deprecated_decoder_replacement(class_name: str) -> str | None:
    """Kafka 3.9's ``DumpLogSegments.convertDeprecatedDecoderClass``: the ``org.apache.kafka.tools.api`` decoder
    that stands for a pre-3.8 ``kafka.serializer`` stock decoder name (None for any other name).  4.0 removed it."""
    if class_name.startswith(OLD_PACKAGE) and class_name[len(OLD_PACKAGE) :] in STOCK_DECODERS:
        return NEW_PACKAGE + class_name[len(OLD_PACKAGE) :]
    return None


def internal_topic_parser(decoder: str, release: KafkaRelease | None = None) -> MessageParser:
    """The parser of an internal-topic decoder flag (``offsets``, ``transaction-log``, ``cluster-metadata``,
    ``remote-log-metadata``, ``share-group-state``, with or without the ``-decoder`` suffix), as ``release``'s
    tool has it (None: Kafka 4.0's)."""
    from kdump.render.internal_topics import InternalTopicParser  # its schemas load only when asked for

    try:
        return InternalTopicParser(decoder.removeprefix("--").removesuffix("-decoder"), release)
    except ValueError as e:
        raise UsageError(str(e)) from None


class DecoderMessageParser:
    """Kafka's ``DecoderMessageParser``: key and value through their decoders; null parts stay absent."""

    def __init__(self, key_decoder: Decoder, value_decoder: Decoder) -> None:
        self.key_decoder = key_decoder
        self.value_decoder = value_decoder
        #: Both parts are plain UTF-8 text (the default), which lets the renderer take its fast path.
        self.is_string_parser = key_decoder is _string and value_decoder is _string

    def parse(self, record: Record) -> tuple[str | None, str | None]:
        key = None if record.key is None else self.key_decoder(record.key)
        payload = None if record.value is None else self.value_decoder(record.value)
        return key, payload


def message_parser(
    opts: DumpOptions, on_deprecated: Callable[[str, str], None] | None = None
) -> MessageParser:
    """The parser of a run's options, made afresh for each log as Kafka's ``messageParser`` does: an
    internal-topic decoder flag (the first in Kafka's order of precedence wins), else the value decoder class,
    read and loaded first, then the key decoder class (an absent flag means the default; an empty name is a
    name, as in Kafka).  Kafka 3.9 still took the ``kafka.serializer`` names and said so:
    ``on_deprecated(old, new)`` is told of each such name replaced."""
    if opts.internal_decoders:
        return internal_topic_parser(opts.internal_decoders[0], opts.release)

    def decoder(class_name: str | None) -> Decoder:
        name = DEFAULT_DECODER_CLASS if class_name is None else class_name
        if opts.release.deprecated_decoders:
            replacement = deprecated_decoder_replacement(name)
            if replacement is not None:
                if on_deprecated is not None:
                    on_deprecated(name, replacement)
                name = replacement
        return resolve_decoder(name)

    opts.check_option("value-decoder-class")
    value_decoder = decoder(opts.value_decoder_class)
    opts.check_option("key-decoder-class")
    key_decoder = decoder(opts.key_decoder_class)
    return DecoderMessageParser(key_decoder, value_decoder)
