"""What the corpus's damaged/CASES.tsv says was damaged in each index case: the oracle of verify-index and
verify."""

from __future__ import annotations

#: What CASES.tsv says was damaged, as (file, problem kind, index entry) -- entries are 0-based there too.
INDEX_DAMAGED = {
    "index-out-of-order": {("small-index-0/00000000000000000180.index", "out-of-order", 3)},
    "index-wrong-offset": {("small-index-0/00000000000000000180.index", "offset-mismatch", 3)},
    "timeindex-decreasing": {
        ("small-index-0/00000000000000000180.timeindex", "out-of-order", 2),
        ("small-index-0/00000000000000000180.timeindex", "timestamp-mismatch", 2),
    },
    "index-zero-tail": {
        ("small-index-0/00000000000000000358.index", "zero-tail", 7),
        ("small-index-0/00000000000000000358.timeindex", "zero-tail", 7),
        ("small-index-0/00000000000000000358.timeindex", "sanity-check", None),
    },
    "index-zero-tail-base0": {
        ("small-index-0/00000000000000000000.index", "zero-tail", 7),
        ("small-index-0/00000000000000000000.timeindex", "zero-tail", 7),
        ("small-index-0/00000000000000000000.timeindex", "sanity-check", None),
    },
    "index-bad-length": {
        ("small-index-0/00000000000000000358.index", "bad-length", None),
        ("small-index-0/00000000000000000358.index", "sanity-check", None),
        ("small-index-0/00000000000000000358.timeindex", "bad-length", None),
        ("small-index-0/00000000000000000358.timeindex", "sanity-check", None),
    },
    "index-missing-log": {
        ("small-index-0/00000000000000000358.index", "orphaned-index", None),
        ("small-index-0/00000000000000000358.timeindex", "orphaned-index", None),
    },
    "txnindex-partial": {
        ("txn-0/00000000000000000030.txnindex", "txn-index", 1),
        ("txn-0/00000000000000000030.txnindex", "orphaned-index", None),
    },
    "truncated-mid-batch": {
        ("plain-0/00000000000000000000.log", "log", None),
        ("plain-0/00000000000000000000.timeindex", "past-end", 1),
    },
}
