"""kdump: an offline forensic inspector for Apache Kafka's on-disk data."""

__version__ = "0.1.0"

#: The Kafka releases whose ``kafka-dump-log.sh`` output ``kdump files`` reproduces byte for byte
#: (``--kafka-version``; :mod:`kdump.storage.kafka_release`, which holds the same list as ``LINES``).
KAFKA_COMPAT_VERSION = "3.9, 4.0, 4.1, 4.2"
