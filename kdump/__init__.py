"""kdump: an offline forensic inspector for Apache Kafka's on-disk data."""

__version__ = "0.1.0"

#: The Kafka release whose ``kafka-dump-log.sh`` output ``kdump files`` reproduces byte for byte.
KAFKA_COMPAT_VERSION = "4.0.0"
