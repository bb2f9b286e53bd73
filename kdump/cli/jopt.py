"""Command-line parsing and help output compatible with jopt-simple, the parser behind Kafka's tools.

``kdump files`` accepts exactly what ``kafka-dump-log.sh`` accepts (``--name value``, ``--name=value``,
options with optional arguments, ``--`` to end options) and prints the same option table for ``--help``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kdump.errors import UsageError

OVERALL_WIDTH = 80
COLUMN_SEPARATOR = 2


@dataclass(frozen=True)
class OptionSpec:
    """One long option: ``arg`` is None (a flag), ``"required"`` or ``"optional"``."""

    name: str
    description: str
    arg: str | None = None
    arg_description: str = ""
    arg_type: str = "String"
    default: str | None = None
    #: Accepted but left out of the help table (kdump's own options: Kafka's table stays byte-identical).
    hidden: bool = False

    @property
    def display(self) -> str:
        text = f"--{self.name}"
        if self.arg is None:
            return text
        inner = self.arg_type + (f": {self.arg_description}" if self.arg_description else "")
        return f"{text} <{inner}>" if self.arg == "required" else f"{text} [{inner}]"

    @property
    def full_description(self) -> str:
        if self.default is None:
            return self.description
        return f"{self.description} (default: {self.default})"


@dataclass
class ParsedArgs:
    values: dict[str, list[str | None]] = field(default_factory=dict)
    non_options: list[str] = field(default_factory=list)

    def has(self, name: str) -> bool:
        return name in self.values

    def value(self, name: str) -> str | None:
        vals = self.values.get(name)
        if not vals:
            return None
        present = [v for v in vals if v is not None]
        if len(present) > 1:  # jopt-simple's OptionSet.valueOf: more than one argument, even equal ones
            raise UsageError(f"Found multiple arguments for option {name}, but you asked for only one")
        return present[0] if present else None


def parse(specs: list[OptionSpec], argv: list[str]) -> ParsedArgs:
    """Parse ``argv`` as jopt-simple does with abbreviations disallowed."""
    by_name = {s.name: s for s in specs}
    result = ParsedArgs()
    i = 0
    while i < len(argv):
        token = argv[i]
        i += 1
        if token == "--":
            result.non_options.extend(argv[i:])
            break
        if not _looks_like_option(token):
            result.non_options.append(token)
            continue
        body = token[2:] if token.startswith("--") else token[1:]
        name, eq, inline = body.partition("=")
        spec = by_name.get(name)
        if spec is None:
            raise UsageError(f"{name} is not a recognized option")
        values = result.values.setdefault(name, [])
        if spec.arg is None:
            if eq:
                raise UsageError(f"Option {name} does not take an argument")
            values.append(None)
        elif eq:
            values.append(inline)
        elif spec.arg == "required":
            if i >= len(argv):
                raise UsageError(f"Option {name} requires an argument")
            values.append(argv[i])
            i += 1
        else:
            if i < len(argv) and not _looks_like_option(argv[i]):
                values.append(argv[i])
                i += 1
            else:
                values.append(None)
    return result


def _looks_like_option(token: str) -> bool:
    """jopt-simple's ParserRules: anything starting with a dash but "-" itself (a negative number too: a
    required argument takes it all the same, elsewhere it is a cluster of short options)."""
    return token.startswith("-") and len(token) > 1


def help_table(specs: list[OptionSpec]) -> str:
    """The option table jopt-simple's ``BuiltinHelpFormatter`` prints, options sorted by name."""
    ordered = sorted((s for s in specs if not s.hidden), key=lambda s: s.name)
    longest = max(len(s.display) for s in ordered)
    option_width = min(longest, (OVERALL_WIDTH - COLUMN_SEPARATOR) // 2) + COLUMN_SEPARATOR
    desc_width = OVERALL_WIDTH - option_width
    rows = [("Option", "Description"), ("------", "-----------")]
    for s in ordered:
        rows.append((s.display, s.full_description))
    lines = []
    for opt, desc in rows:
        opt_pieces = _pieces(opt, option_width - COLUMN_SEPARATOR)
        desc_pieces = _pieces(desc, desc_width)
        for n in range(max(len(opt_pieces), len(desc_pieces), 1)):
            left = opt_pieces[n] if n < len(opt_pieces) else ""
            right = desc_pieces[n] if n < len(desc_pieces) else ""
            lines.append(left.ljust(option_width) + right.ljust(desc_width))
    return "\n".join(lines) + "\n"


def _words(text: str) -> list[str]:
    """Split at the line-break opportunities of Java's line ``BreakIterator`` that option texts contain:
    after a run of spaces, after a hyphen between letters, and after a period followed by a letter."""
    words = []
    start = 0
    n = len(text)
    i = 0
    while i < n:
        c = text[i]
        nxt = text[i + 1] if i + 1 < n else ""
        if c == " ":
            while i + 1 < n and text[i + 1] == " ":
                i += 1
            words.append(text[start : i + 1])
            start = i + 1
        elif c == "-" and nxt.isalnum() and i > 0 and text[i - 1].isalpha():
            words.append(text[start : i + 1])
            start = i + 1
        elif c == "." and nxt.isalpha():
            words.append(text[start : i + 1])
            start = i + 1
        i += 1
    if start < n:
        words.append(text[start:])
    return words


def _pieces(text: str, width: int) -> list[str]:
    """jopt-simple's ``Columns.piecesOf``: greedy fill; continuation pieces are indented by two spaces."""
    pieces: list[str] = []
    current = ""
    for word in _words(text.strip()):
        if len(current) + len(word) > width:
            pieces.append(current.rstrip())
            current = "  " + word
        else:
            current += word
    if current:
        pieces.append(current)
    return pieces
