"""A built C column builder (``kdump/_columns.c``) loads: a build that does not (an undefined symbol after a
change of ``_batch_walk.h`` it shares with ``_speedups.c``: seen when ``batch_walk_init`` became
``batch_walk_from_args``) would leave every Spark read to the pure-Python builder without a word, and
test_spark_columns, which needs the builder, would only be skipped."""

from __future__ import annotations

import importlib
import os
from pathlib import Path

import pytest


def test_a_built_column_builder_loads() -> None:
    package = Path(__file__).resolve().parents[1] / "kdump"
    built = [p for p in package.iterdir() if p.name.startswith("_columns.") and p.suffix in (".so", ".pyd")]
    if not built or os.environ.get("KDUMP_PURE_PYTHON"):
        pytest.skip("kdump._columns is not built here (or KDUMP_PURE_PYTHON is set)")
    pytest.importorskip("pyarrow")
    module = importlib.import_module("kdump._columns")
    from kdump.spark import reader

    assert module.REVISION == reader.COLUMNS_REVISION, "a stale build: pip install -e . rebuilds it"
    assert reader.BUILDER is not None
