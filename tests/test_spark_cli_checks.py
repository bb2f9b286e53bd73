"""``kdump spark``: what is checked before a JVM starts (usage errors, status 2; no Spark needed to run these)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from click.testing import CliRunner

from kdump.cli import cli
from tests.corpus import FIXTURE_CORPUS

SOURCE = str(FIXTURE_CORPUS / "data" / "txn-0")


def _export(*args: str, env: dict[str, str] | None = None):  # noqa: ANN202
    return CliRunner().invoke(cli, ["spark", "export", SOURCE, *args], env=env)


def test_an_existing_output_directory(tmp_path: Path) -> None:
    result = _export("-o", str(tmp_path))
    assert result.exit_code == 2 and f"{tmp_path} exists" in result.output and "--overwrite" in result.output


def test_an_output_directory_without_parent(tmp_path: Path) -> None:
    """Missing parents are created, as salvage --out creates them (the one rule for output paths), but only
    once every check passed: a run that stops on a usage error leaves nothing behind."""
    result = _export("-o", str(tmp_path / "no" / "out"), env={"JAVA_HOME": str(tmp_path / "nojava")})
    assert result.exit_code == 2 and "no Java found" in result.output
    assert not (tmp_path / "no").exists()
    (tmp_path / "file").write_text("")
    result = _export("-o", str(tmp_path / "file" / "sub" / "out"))
    assert result.exit_code == 2 and f"{tmp_path / 'file'}: not a directory" in result.output


def test_make_parents(tmp_path: Path) -> None:
    from kdump.cli import make_parents

    make_parents(str(tmp_path / "a" / "b" / "out"))
    assert (tmp_path / "a" / "b").is_dir() and not (tmp_path / "a" / "b" / "out").exists()
    (tmp_path / "f").write_text("")
    with pytest.raises(OSError, match="cannot create the directory for"):
        make_parents(str(tmp_path / "f" / "x" / "out"))


@pytest.mark.parametrize(
    ("options", "asked"),
    [(["--topics", "orders"], "--topics orders"), (["--topic-pattern", "ord.*"], "--topic-pattern ord.*")],
)
def test_topics_that_match_nothing(tmp_path: Path, options: list[str], asked: str) -> None:
    result = _export("-o", str(tmp_path / "out"), *options)
    assert result.exit_code == 2
    assert f"no topic matches {asked}; the topics here: txn" in result.output


def test_paths_without_kafka_data(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["spark", "verify", str(tmp_path)])
    assert result.exit_code == 2 and "no Kafka data found" in result.output


def test_missing_java(tmp_path: Path) -> None:
    result = _export("-o", str(tmp_path / "out"), env={"JAVA_HOME": str(tmp_path / "nojava")})
    assert result.exit_code == 2 and "no Java found (looked in JAVA_HOME=" in result.output


def test_broken_java(tmp_path: Path) -> None:
    java = tmp_path / "jdk" / "bin" / "java"
    java.parent.mkdir(parents=True)
    java.write_text("#!/bin/sh\necho 'Error: could not find libjava.so' >&2\nexit 1\n")
    java.chmod(java.stat().st_mode | stat.S_IXUSR)
    result = _export("-o", str(tmp_path / "out"), env={"JAVA_HOME": str(tmp_path / "jdk")})
    assert result.exit_code == 2
    assert "-version fails (Error: could not find libjava.so)" in result.output


def test_old_java(tmp_path: Path) -> None:
    java = tmp_path / "jdk" / "bin" / "java"
    java.parent.mkdir(parents=True)
    java.write_text("#!/bin/sh\necho 'java version \"1.8.0_392\"' >&2\n")
    java.chmod(java.stat().st_mode | stat.S_IXUSR)
    result = _export("-o", str(tmp_path / "out"), env={"JAVA_HOME": str(tmp_path / "jdk")})
    assert result.exit_code == 2 and "is Java 8; Spark needs Java 17 or later" in result.output
    assert not (tmp_path / "out").exists()
    assert os.environ.get("PYSPARK_GATEWAY_PORT") is None
