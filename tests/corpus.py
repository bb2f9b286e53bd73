"""Access to the reference corpus (../shared/kafka-corpus): its MANIFEST of real kafka-dump-log.sh runs."""

from __future__ import annotations

import os
import shlex
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CORPUS = Path(os.environ.get("KDUMP_CORPUS", REPO.parent / "shared" / "kafka-corpus"))
FIXTURE_CORPUS = REPO / "tests" / "fixtures" / "corpus"
#: What the real tools of other releases printed for the corpus's runs (``python -m tests.differential --record
#: 4.1``): a manifest of every run and only the outputs that differ from the corpus's.
RELEASE_OUTPUTS = {"kafka-4.1.0": REPO / "tests" / "fixtures" / "kafka-4.1.0"}
#: The ``--kafka-version`` of each tool's runs.
TOOL_VERSION = {"kafka-3.9.0": "3.9", "kafka-4.0.0": "4.0", "kafka-4.1.0": "4.1", "kafka-4.2.0": "4.2"}

DECODER_FLAGS = {
    "--offsets-decoder",
    "--transaction-log-decoder",
    "--cluster-metadata-decoder",
    "--remote-log-metadata-decoder",
    "--share-group-state-decoder",
}
LOG_SUFFIXES = (".log", ".checkpoint")
#: Files kdump parses on purpose where Kafka's tool crashes or ignores them (README: "What differs").
STATE_FILES = {
    "recovery-point-offset-checkpoint",
    "replication-offset-checkpoint",
    "log-start-offset-checkpoint",
    "cleaner-offset-checkpoint",
    "leader-epoch-checkpoint",
    "quorum-state",
    "meta.properties",
    "partition.metadata",
}
INDEX_SUFFIXES = (".index", ".timeindex", ".snapshot", ".txnindex")


@dataclass(frozen=True)
class Run:
    """One run of the real tool: its arguments and what it printed."""

    tool: str
    exit_code: int
    stdout_file: str
    stderr_file: str | None
    argv: tuple[str, ...]
    line: int

    @property
    def id(self) -> str:
        name = self.stdout_file.split("/", 1)[1] if "/" in self.stdout_file else self.stdout_file
        return f"{self.tool}:{name.removesuffix('.txt')}"

    @property
    def files(self) -> list[str]:
        args = list(self.argv)
        out: list[str] = []
        for i, a in enumerate(args):
            if a == "--files" and i + 1 < len(args):
                out.extend(p for p in args[i + 1].split(",") if p)
        return out

    @property
    def category(self) -> str:
        """Which kind of run this is: ``log``, ``decoder``, ``index``, ``multi``, ``state-file`` (a file kdump
        parses on purpose, unlike Kafka), ``other-file`` or ``cli``."""
        files = self.files
        if not files:
            return "cli"
        if any(a in DECODER_FLAGS for a in self.argv):
            return "decoder"
        names = [f.rsplit("/", 1)[-1] for f in files]
        if all(n.endswith(LOG_SUFFIXES) for n in names):
            return "log"
        if len(files) > 1:
            return "multi"
        if names[0].endswith(INDEX_SUFFIXES):
            return "index"
        if names[0] in STATE_FILES:
            return "state-file"
        return "other-file"

    def expected_stdout(self, root: Path) -> bytes:
        return (root / self.stdout_file).read_bytes()

    def expected_stderr(self, root: Path) -> bytes:
        return b"" if self.stderr_file is None else (root / self.stderr_file).read_bytes()

    @property
    def kafka_version(self) -> str:
        """The ``--kafka-version`` kdump reproduces this run's tool with."""
        return TOOL_VERSION[self.tool]

    @property
    def kafka_died(self) -> bool:
        """True when the real tool ended with a JVM exception (its stderr is a stack trace)."""
        return self.exit_code != 0 and self.stderr_file is not None and "Exception" in self._stderr_head

    @property
    def _stderr_head(self) -> str:
        if self.stderr_file is None:
            return ""
        return (
            self.expected_stderr(CORPUS if (CORPUS / "MANIFEST.tsv").is_file() else FIXTURE_CORPUS)
            .split(b"\n", 1)[0]
            .decode("utf-8", "replace")
        )


@dataclass(frozen=True)
class ReleaseRun(Run):
    """A corpus run as another release's real tool printed it (:mod:`tests.release_outputs`): ``stdout_file`` and
    ``stderr_file`` are the corpus row's, the release's outputs are those applied to ``out_entry``/``err_entry``."""

    out_entry: str = "="
    err_entry: str = "="
    directory: Path = Path()

    def expected_stdout(self, root: Path) -> bytes:
        from tests.release_outputs import decode

        return decode(self.directory, self.out_entry, super().expected_stdout(root))

    def expected_stderr(self, root: Path) -> bytes:
        from tests.release_outputs import decode

        return decode(self.directory, self.err_entry, super().expected_stderr(root))

    @property
    def kafka_died(self) -> bool:
        return self.exit_code != 0 and "Exception" in self._stderr_head


def load_manifest(root: Path = CORPUS) -> list[Run]:
    runs = []
    with open(root / "MANIFEST.tsv", encoding="utf-8") as f:
        next(f)
        for n, line in enumerate(f, start=2):
            tool, code, out, err, cmd = line.rstrip("\n").split("\t")[:5]
            argv = shlex.split(cmd)[1:]
            runs.append(Run(tool, int(code), out, None if err == "-" else err, tuple(argv), n))
    return runs


def corpus_available() -> bool:
    return (CORPUS / "MANIFEST.tsv").is_file()


#: Which run categories kdump reproduces, per reference tool (the 3.9 rows matter for legacy data only).
SUPPORTED = {
    "kafka-4.0.0": {"log", "cli", "index", "multi", "other-file", "state-file", "decoder"},
    "kafka-3.9.0": {"log", "index"},
}


def supported_runs(root: Path) -> list[Run]:
    if not (root / "MANIFEST.tsv").is_file():
        return []
    return [r for r in load_manifest(root) if r.category in SUPPORTED.get(r.tool, set())]


def release_runs(tool: str, root: Path = CORPUS) -> list[Run]:
    """Every run of the corpus at ``root`` as release ``tool``'s real tool printed it (``RELEASE_OUTPUTS``; none
    when the corpus is absent), all categories but the state files' (which Kafka crashes on or ignores and kdump
    parses, in every release)."""
    from tests.release_outputs import read_manifest

    directory = RELEASE_OUTPUTS[tool]
    if not (root / "MANIFEST.tsv").is_file() or not (directory / "MANIFEST.tsv").is_file():
        return []
    by_line = {r.line: r for r in load_manifest(root)}
    runs: list[Run] = []
    for number, code, out, err in read_manifest(directory):
        base = by_line[number]
        run = ReleaseRun(
            tool, code, base.stdout_file, base.stderr_file, base.argv, number, out, err, directory
        )
        if run.category != "state-file":
            runs.append(run)
    return runs
