"""Fuzzing every kdump parser (see :mod:`tests.fuzz.harness`; run ``python -m tests.fuzz --help``)."""
