"""The cases of the differential harness: inputs (corpus files, structurally mutated files, files written by a
real broker) and ``kafka-dump-log.sh`` command lines (every option alone and in combination, bad and edge values,
several files of different kinds in one ``--files``).

Case ``i`` of seed ``s`` is drawn from ``random.Random(f"{s}:{i}")`` alone, so any case is rebuilt from its seed
and number (``python -m tests.differential --seed S --start I -n 1``).  Every file of a case lives below
``case/`` (paths in the arguments are relative to the directory holding ``case/``).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from tests.fuzz import mutators, seeds
from tests.fuzz.harness import build_targets

CASE_DIR = "case"
HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
BROKER_FIXTURES = REPO / "tests" / "fixtures" / "broker"
MAX_CORPUS_FILE = 1 << 20

#: Kafka 4.0's options: name -> kind of argument (None: a flag, "int", "files", "class": optional argument).
OPTIONS: dict[str, str | None] = {
    "print-data-log": None,
    "verify-index-only": None,
    "index-sanity-check": None,
    "files": "files",
    "max-message-size": "int",
    "max-bytes": "int",
    "deep-iteration": None,
    "value-decoder-class": "class",
    "key-decoder-class": "class",
    "offsets-decoder": None,
    "transaction-log-decoder": None,
    "cluster-metadata-decoder": None,
    "remote-log-metadata-decoder": None,
    "share-group-state-decoder": None,
    "skip-record-metadata": None,
    "help": None,
    "version": None,
}
DECODER_FLAGS = (
    "offsets-decoder",
    "transaction-log-decoder",
    "cluster-metadata-decoder",
    "remote-log-metadata-decoder",
    "share-group-state-decoder",
)
DECODER_CLASSES = (
    "org.apache.kafka.tools.api.StringDecoder",
    "org.apache.kafka.tools.api.DefaultDecoder",
    "org.apache.kafka.tools.api.IntegerDecoder",
    "org.apache.kafka.tools.api.LongDecoder",
)
#: Classes Kafka 4.0 cannot use as decoders: gone (the 3.x names), not a decoder, not there at all, malformed.
BAD_DECODER_CLASSES = (
    "kafka.serializer.StringDecoder",
    "kafka.serializer.DefaultDecoder",
    "kafka.serializer.IntegerDecoder",
    "java.lang.String",
    "org.apache.kafka.tools.api.Decoder",
    "com.example.NoSuchDecoder",
    "",
    "StringDecoder",
    "org.apache.kafka.tools.api.stringdecoder",
    "org.apache.kafka.tools.api.StringDecoder ",
)
GOOD_INTS = ("0", "1", "12", "61", "100", "1000", "4096", "65536", "5242880", "2147483647")
BAD_INTS = (
    "-1",
    "-2147483648",
    "2147483648",
    "99999999999999999999",
    "abc",
    "",
    " 5",
    "5 ",
    "+5",
    "007",
    "1e3",
    "0x10",
    "1_000",
    "\u0661\u0662",  # Arabic-Indic digits: Java's Integer.parseInt accepts them
    "１２",  # fullwidth digits
    "--deep-iteration",
)
#: Names that are not segment files of the kinds Kafka dumps (parsed from the name before anything is read).
ODD_NAMES = (
    "abc.log",
    "-5.log",
    "+5.log",
    "5.log",
    ".log",
    "00000000000000000000.LOG",
    "x.index",
    "99999999999999999999.log",
    "00000000000000000000.log.deleted",
    "00000000000000000000.txt",
    "00000000000000000000.swap",
    "00000000000000000000.log.cleaned",
    "１.log",
)


@dataclass
class Case:
    """One run: files to write below ``case/`` and the arguments of both tools."""

    seed: int
    number: int
    kind: str
    label: str
    files: dict[str, bytes] = field(default_factory=dict)
    argv: list[str] = field(default_factory=list)

    @property
    def paths(self) -> list[str]:
        """The --files elements (as given)."""
        out: list[str] = []
        for i, a in enumerate(self.argv):
            if a == "--files" and i + 1 < len(self.argv):
                out.extend(p for p in self.argv[i + 1].split(",") if p)
            elif a.startswith("--files="):
                out.extend(p for p in a[len("--files=") :].split(",") if p)
        return out


# -- inputs -------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Input:
    """A set of files that belong together (a .log with its indexes) and the one to dump."""

    label: str
    files: dict[str, bytes]
    victim: str
    #: the decoder flag that fits the data (internal topics), if any
    decoder: str | None = None


def _kind(name: str) -> str:
    for suffix in (".log", ".index", ".timeindex", ".snapshot", ".txnindex", ".checkpoint"):
        if name.endswith(suffix):
            return suffix[1:]
    return "other"


_INTERNAL = {
    "__consumer_offsets": "offsets-decoder",
    "__transaction_state": "transaction-log-decoder",
    "__share_group_state": "share-group-state-decoder",
    "__cluster_metadata": "cluster-metadata-decoder",
    "__remote_log_metadata": "remote-log-metadata-decoder",
}


def _decoder_for(path: Path) -> str | None:
    for prefix, flag in _INTERNAL.items():
        if path.parent.name.startswith(prefix):
            return flag
    return "cluster-metadata-decoder" if path.name == "bootstrap.checkpoint" else None


@cache
def corpus_inputs(roots: tuple[Path, ...]) -> list[Input]:
    """Every dumpable file of the corpus roots, each with the files of its segment."""
    out = []
    for root in roots:
        if not root.is_dir():
            continue
        for path in sorted(root.rglob("*")):
            if (
                not path.is_file()
                or _kind(path.name) == "other"
                or path.stat().st_size > MAX_CORPUS_FILE
                or "expected" in path.relative_to(root).parts[0]
            ):
                continue
            stem = path.name.split(".")[0]
            files = {}
            for sibling in (".log", ".index", ".timeindex", ".txnindex"):
                other = path.with_name(stem + sibling)
                if other.is_file() and other.stat().st_size <= MAX_CORPUS_FILE:
                    files[other.name] = other.read_bytes()
            files[path.name] = path.read_bytes()
            label = f"{root.name}:{path.relative_to(root)}"
            out.append(Input(label, files, path.name, _decoder_for(path)))
    return out


@cache
def _targets(full_corpus: Path | None) -> dict:  # noqa: ANN001
    return build_targets(full_corpus)


def _mutators() -> dict[str, Callable[[bytes, random.Random], bytes]]:
    return {
        "segment": mutators.mutate_segment_structural,
        "kraft-snapshot": mutators.mutate_segment_structural,
        "internal-topic": mutators.mutate_segment_structural,
        "offset-index": mutators.mutate_offset_index,
        "time-index": mutators.mutate_time_index,
    }


def _mutator_for(name: str, full_corpus: Path | None) -> Callable[[bytes, random.Random], bytes]:
    targets = _targets(full_corpus)
    kind = _kind(name)
    if kind in ("log", "checkpoint"):
        return mutators.mutate_segment_structural
    if kind == "index":
        return mutators.mutate_offset_index
    if kind == "timeindex":
        return mutators.mutate_time_index
    if kind == "snapshot":
        return targets["producer-snapshot"].mutate
    return targets["txn-index"].mutate


def mutated_file_input(rng: random.Random, inputs: list[Input], full_corpus: Path | None) -> Input:
    """Any corpus or broker file (with its segment) mutated by the mutators of its kind."""
    inp = rng.choice(inputs)
    files = dict(inp.files)
    files[inp.victim] = _mutator_for(inp.victim, full_corpus)(files[inp.victim], rng)
    return Input(f"mutated:{inp.label}", files, inp.victim, inp.decoder)


def mutated_input(rng: random.Random, full_corpus: Path | None, inputs: list[Input] | None = None) -> Input:
    """A fuzz seed (built files, fixture and full corpus) with one file mutated structurally, or (a third of
    the time, given ``inputs``) any corpus or broker file mutated by its kind."""
    if inputs and rng.random() < 0.35:
        return mutated_file_input(rng, inputs, full_corpus)
    targets = {k: t for k, t in _targets(full_corpus).items() if k != "state-file"}
    name = rng.choice(sorted(targets))
    target = targets[name]
    seed = rng.choice(target.seeds)
    mutate = _mutators().get(name, target.mutate) if rng.random() < 0.7 else target.mutate
    data = seed.files[seed.victim]
    data = mutate(data, rng)
    files = dict(seed.files)
    files[seed.victim] = data
    # the other files of the segment are damaged too, now and then (an index against a mutated log)
    for other in files:
        if other != seed.victim and other.endswith(".log") and rng.random() < 0.15:
            files[other] = mutators.mutate_segment_structural(files[other], rng)
    decoder = target.flags.get(seed.label, "").lstrip("-") or None
    return Input(f"{name}:{seed.label}", files, seed.victim, decoder)


# -- arguments ----------------------------------------------------------------------------------------------------


def _int_value(rng: random.Random, size: int | None) -> str:
    r = rng.random()
    if r < 0.15:
        return rng.choice(BAD_INTS)
    if r < 0.5 and size:
        return str(rng.randrange(size + 64))
    return rng.choice(GOOD_INTS)


def _option(rng: random.Random, name: str, value: str | None) -> list[str]:
    """``--name value``, ``--name=value`` or (now and then) an abbreviation or a single dash."""
    spelled = f"--{name}"
    r = rng.random()
    if r < 0.03:
        spelled = f"--{name[: rng.randrange(1, len(name))]}"
    elif r < 0.04:
        spelled = f"-{name}"
    if value is None:
        return [spelled]
    if rng.random() < 0.2:
        return [f"{spelled}={value}"]
    return [spelled, value]


def option_args(rng: random.Random, kind: str, decoder: str | None, size: int) -> list[str]:
    """Options for dumping a file of ``kind`` (what fits it mostly, anything now and then)."""
    args: list[str] = []
    flags = []
    if kind in ("log", "checkpoint"):
        flags = [
            f
            for f, p in (("deep-iteration", 0.5), ("print-data-log", 0.5), ("skip-record-metadata", 0.3))
            if rng.random() < p
        ]
        if decoder and rng.random() < 0.6:
            flags.append(decoder)
        elif rng.random() < 0.1:
            flags.append(rng.choice(DECODER_FLAGS))
        if rng.random() < 0.25:
            args += _option(rng, "max-bytes", _int_value(rng, size))
    elif kind in ("index", "timeindex"):
        flags = [f for f in ("index-sanity-check", "verify-index-only") if rng.random() < 0.35]
    if rng.random() < 0.2:
        args += _option(rng, "max-message-size", _int_value(rng, size))
    if rng.random() < 0.1:
        flags.append(
            rng.choice([n for n, k in OPTIONS.items() if k is None and n not in ("help", "version")])
        )
    for f in flags:
        args += _option(rng, f, None)
    for which in ("key-decoder-class", "value-decoder-class"):
        if rng.random() < 0.08:
            r = rng.random()
            if r < 0.2:
                args.append(f"--{which}")  # the optional argument left out
            else:
                args += _option(rng, which, rng.choice(DECODER_CLASSES if r < 0.75 else BAD_DECODER_CLASSES))
    return args


def _files_arg(rng: random.Random, paths: list[str]) -> list[str]:
    value = ",".join(paths)
    if rng.random() < 0.1:
        return [f"--files={value}"]
    return ["--files", value]


def _place(case: Case, inp: Input, sub: str) -> str:
    for name, data in inp.files.items():
        case.files[f"{sub}/{name}"] = data
    return f"{CASE_DIR}/{sub}/{inp.victim}"


def single_case(case: Case, inp: Input, rng: random.Random) -> None:
    path = _place(case, inp, "p")
    size = len(inp.files[inp.victim])
    options = option_args(rng, _kind(inp.victim), inp.decoder, size)
    files = _files_arg(rng, [path])
    at = rng.randrange(len(options) + 1) if rng.random() < 0.3 else 0
    # keep option/value pairs together: insert --files only between whole options
    while 0 < at < len(options) and not options[at].startswith("-"):
        at += 1
    case.argv = options[:at] + files + options[at:]


def multi_case(case: Case, inputs: list[Input], rng: random.Random, full_corpus: Path | None) -> None:
    """Several files of different kinds (and odd elements) in one --files."""
    paths: list[str] = []
    kinds = set()
    for n in range(rng.choice((2, 2, 3, 4, 6))):
        inp = rng.choice(inputs) if rng.random() < 0.7 else mutated_input(rng, full_corpus)
        paths.append(_place(case, inp, f"f{n}"))
        kinds.add(_kind(inp.victim))
    r = rng.random()
    if r < 0.15:
        paths.insert(rng.randrange(len(paths) + 1), "")  # an empty element
    elif r < 0.25:
        paths.append(rng.choice(paths))  # the same file twice
    elif r < 0.3:
        paths.insert(rng.randrange(len(paths) + 1), f"{CASE_DIR}/missing/00000000000000000000.log")
    size = max(len(d) for d in case.files.values())
    kind = rng.choice(sorted(kinds))
    case.argv = _files_arg(rng, paths) + option_args(rng, kind, None, size)
    if rng.random() < 0.1:
        case.argv = [",".join([""] + paths + [""]) if a == ",".join(paths) else a for a in case.argv]


def odd_name_case(case: Case, inputs: list[Input], rng: random.Random) -> None:
    """A real file under a name Kafka parses differently (base offset, suffix), or no file at all."""
    inp = rng.choice(inputs)
    name = rng.choice(ODD_NAMES)
    if name.endswith(".index") or rng.random() < 0.3:
        suffix = "." + inp.victim.split(".", 1)[1]
        stem = name.split(".")[0]
        name = stem + suffix if suffix != ".log" or rng.random() < 0.5 else name
    if rng.random() < 0.85:
        case.files[f"o/{name}"] = inp.files[inp.victim]
        stem = name.split(".")[0]
        for other, data in inp.files.items():
            if other != inp.victim and rng.random() < 0.7:
                case.files[f"o/{stem}.{other.split('.', 1)[1]}"] = data
    case.argv = _files_arg(rng, [f"{CASE_DIR}/o/{name}"]) + option_args(
        rng, _kind(name), inp.decoder, len(inp.files[inp.victim])
    )


def cli_case(case: Case, inputs: list[Input], rng: random.Random) -> None:
    """The command line itself: missing arguments, repeated options, unknown options, help and version mixed
    with other options, non-option arguments."""
    inp = rng.choice(inputs)
    path = _place(case, inp, "p")
    pieces: list[list[str]] = []
    choices = [
        ["--files"],  # the required argument missing
        ["--files", path],
        ["--files", path],
        ["--files", ""],
        ["--files", ","],
        ["--files", f"{path},{path}"],
        ["--help"],
        ["--version"],
        ["--max-bytes"],
        ["--max-message-size"],
        ["--max-bytes", rng.choice(BAD_INTS + GOOD_INTS)],
        ["--max-message-size", rng.choice(BAD_INTS + GOOD_INTS)],
        ["--no-such-option"],
        [path],  # a non-option argument
        ["-"],
        ["--"],
        ["--deep-iteration", "--deep-iteration"],
        ["--value-decoder-class"],
        ["--key-decoder-class", rng.choice(DECODER_CLASSES + BAD_DECODER_CLASSES)],
        ["--print-data-log"],
        ["--skip-record-metadata"],
        [f"--{rng.choice(DECODER_FLAGS)}"],
        ["--index-sanity-check"],
        ["--verify-index-only"],
    ]
    for _ in range(rng.choice((1, 2, 3, 4))):
        pieces.append(rng.choice(choices))
    case.argv = [a for p in pieces for a in p]


# -- the draw -----------------------------------------------------------------------------------------------------

KINDS = (
    ("corpus", 0.30),
    ("mutated", 0.40),
    ("broker", 0.08),
    ("multi", 0.10),
    ("odd-name", 0.05),
    ("cli", 0.07),
)


def roots(full_corpus: Path | None) -> tuple[Path, ...]:
    found = tuple(seeds.corpus_roots(full_corpus))
    return found


def make_case(seed: int, number: int, full_corpus: Path | None, kinds: tuple[str, ...] = ()) -> Case:
    rng = random.Random(f"{seed}:{number}")
    table = [(k, w) for k, w in KINDS if not kinds or k in kinds]
    broker = corpus_inputs((BROKER_FIXTURES,))
    if not broker:
        table = [(k, w) for k, w in table if k != "broker"] or table
    kind = rng.choices([k for k, _ in table], [w for _, w in table])[0]
    corpus = corpus_inputs(roots(full_corpus)) + broker
    case = Case(seed, number, kind, "")
    if kind in ("corpus", "broker"):
        inp = rng.choice(broker if kind == "broker" and broker else corpus)
        case.label = inp.label
        single_case(case, inp, rng)
    elif kind == "mutated":
        inp = mutated_input(rng, full_corpus, corpus)
        case.label = inp.label
        single_case(case, inp, rng)
    elif kind == "multi":
        case.label = "multi"
        multi_case(case, corpus, rng, full_corpus)
    elif kind == "odd-name":
        case.label = "odd-name"
        odd_name_case(case, corpus, rng)
    else:
        case.label = "cli"
        cli_case(case, corpus, rng)
    return case


def uses_state_file(case: Case) -> bool:
    """Cases naming a checkpoint/state file Kafka crashes on or ignores and kdump parses (a deliberate
    difference, README "What differs"); the generator never names one, this is a guard."""
    from tests.corpus import STATE_FILES

    return any(p.rsplit("/", 1)[-1] in STATE_FILES for p in case.paths)
