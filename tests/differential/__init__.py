"""Differential testing of ``kdump files`` against the real Kafka 4.0 ``kafka-dump-log.sh`` (see README,
"Differential testing"): generated, mutated, corpus and broker-written inputs with every option, run through both
tools and diffed by the contract (:func:`replay.differences`)."""
