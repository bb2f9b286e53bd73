"""``kdump files``: a drop-in replacement for ``kafka-dump-log.sh`` (same options, same output)."""

from __future__ import annotations

import dataclasses
import os
import re
import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING

from kdump.analysis.record_filter import RecordFilter
from kdump.cli import jopt
from kdump.commands.files import INTERNAL_DECODERS, DumpLogSegments
from kdump.errors import KdumpUsageError, UsageError
from kdump.exit_status import ExitStatus
from kdump.facts.files import DEFAULT_MAX_MESSAGE_SIZE, DumpOptions, FilesSink
from kdump.facts.output import Output
from kdump.jdk.text import string_split
from kdump.render.decoders import DEFAULT_DECODER_CLASS
from kdump.storage import kafka_release, locations, naming
from kdump.storage.file_records import INT_MAX
from kdump.storage.kafka_release import KafkaRelease
from kdump.storage.timestamp_type import parse_timestamp

if TYPE_CHECKING:
    from datetime import tzinfo

    from kdump.commands.remote_tier import RemoteOptions
    from kdump.payload.sources import PayloadDecoding
    from kdump.storage.byte_source import ByteSource

DESCRIPTION = (
    "This tool helps to parse a log file and dump its contents to the console, useful for debugging a "
    "seemingly corrupt log segment."
)

_DECODER_CLASS_HELP = (
    "If set, used to deserialize the {}. This class should implement org.apache.kafka.tools.api.Decoder trait. "
    "Custom jar should be available in kafka/libs directory."
)

#: Kafka 4.0's options, with its help texts.
OPTIONS: list[jopt.OptionSpec] = [
    jopt.OptionSpec(
        "print-data-log",
        "If set, printing the messages content when dumping data logs. "
        "Automatically set if any decoder option is specified.",
    ),
    jopt.OptionSpec("verify-index-only", "If set, just verify the index log without printing its content."),
    jopt.OptionSpec(
        "index-sanity-check",
        "If set, just checks the index sanity without printing its content. "
        "This is the same check that is executed on broker startup to determine if an index needs "
        "rebuilding or not.",
    ),
    jopt.OptionSpec(
        "files",
        "REQUIRED: The comma separated list of data and index log files to be dumped.",
        arg="required",
        arg_description="file1, file2, ...",
    ),
    jopt.OptionSpec(
        "max-message-size",
        "Size of largest message.",
        arg="required",
        arg_type="Integer",
        arg_description="size",
        default=str(DEFAULT_MAX_MESSAGE_SIZE),
    ),
    jopt.OptionSpec(
        "max-bytes",
        "Limit the amount of total batches read in bytes avoiding reading the whole .log file(s).",
        arg="required",
        arg_type="Integer",
        arg_description="size",
        default=str(INT_MAX),
    ),
    jopt.OptionSpec(
        "deep-iteration",
        "If set, uses deep instead of shallow iteration. Automatically set if print-data-log is enabled.",
    ),
    jopt.OptionSpec(
        "value-decoder-class",
        _DECODER_CLASS_HELP.format("messages"),
        arg="optional",
        default=DEFAULT_DECODER_CLASS,
    ),
    jopt.OptionSpec(
        "key-decoder-class", _DECODER_CLASS_HELP.format("keys"), arg="optional", default=DEFAULT_DECODER_CLASS
    ),
    jopt.OptionSpec(
        "offsets-decoder", "If set, log data will be parsed as offset data from the __consumer_offsets topic."
    ),
    jopt.OptionSpec(
        "transaction-log-decoder",
        "If set, log data will be parsed as transaction metadata from the __transaction_state topic.",
    ),
    jopt.OptionSpec(
        "cluster-metadata-decoder", "If set, log data will be parsed as cluster metadata records."
    ),
    jopt.OptionSpec(
        "remote-log-metadata-decoder",
        "If set, log data will be parsed as "
        "TopicBasedRemoteLogMetadataManager (RLMM) metadata records. Instead, the value-decoder-class "
        "option can be used if a custom RLMM implementation is configured.",
    ),
    jopt.OptionSpec(
        "share-group-state-decoder",
        "If set, log data will be parsed as share group state data from the __share_group_state topic.",
    ),
    jopt.OptionSpec("skip-record-metadata", kafka_release.SKIP_RECORD_METADATA_HELP),
    jopt.OptionSpec("help", "Print usage information."),
    jopt.OptionSpec("version", "Display Kafka version."),
]


def kafka_options(release: KafkaRelease) -> list[jopt.OptionSpec]:
    """The options of ``release``'s tool, with its help texts (``DumpLogSegmentsOptions`` of that release): 3.9
    has no ``--share-group-state-decoder``, 4.2 words ``--skip-record-metadata`` differently."""
    options = []
    for spec in OPTIONS:
        if spec.name == "share-group-state-decoder" and not release.share_decoder:
            continue
        if spec.name == "skip-record-metadata":
            spec = dataclasses.replace(spec, description=release.skip_record_metadata_help)
        options.append(spec)
    return options


#: kdump's own options (man kdump-files, KDUMP OPTIONS); not in Kafka's help table.
KDUMP_OPTIONS: list[jopt.OptionSpec] = [
    jopt.OptionSpec(
        "kafka-version",
        "The Kafka release whose kafka-dump-log.sh to reproduce: "
        f"{', '.join(kafka_release.LINES)} (default: ${kafka_release.ENVIRONMENT_VARIABLE}, else "
        f"{kafka_release.NEWEST}).",
        arg="required",
        arg_type="String: version",
        hidden=True,
    ),
    jopt.OptionSpec("json", "One JSON object per line instead of Kafka's text.", hidden=True),
    jopt.OptionSpec("print-header-values", "Also print record header values.", hidden=True),
    *(
        jopt.OptionSpec(name, help_text, arg="required", arg_type=arg_type, hidden=True)
        for name, arg_type, help_text in (
            ("from-offset", "Long: offset", "First offset to show (inclusive)."),
            ("to-offset", "Long: offset", "Last offset to show (inclusive)."),
            ("from-time", "String: time", "First timestamp to show (epoch ms or ISO-8601, inclusive)."),
            ("to-time", "String: time", "Last timestamp to show (epoch ms or ISO-8601, inclusive)."),
            ("key", "String: key", "Show only records with exactly this key."),
            ("key-regex", "String: regex", "Show only records whose key matches this regular expression."),
            ("producer-id", "Long: id", "Show only batches of this producer."),
            (
                "max-records",
                "Long: n",
                "Stop after this many records (batches without deep iteration), over all files.",
            ),
        )
    ),
    jopt.OptionSpec("transactional-only", "Show only transactional batches.", hidden=True),
    jopt.OptionSpec("control-only", "Show only control batches.", hidden=True),
    *(
        jopt.OptionSpec(name, help_text, arg="required", hidden=True)
        for name, help_text in (
            ("decode-values", "Decode values framed for a schema registry (schema-registry)."),
            ("decode-keys", "Decode keys framed for a schema registry (schema-registry)."),
            (
                "schemas",
                "Where the schemas are: _schemas partition or log directories, schema directories, exports.",
            ),
            ("schema-id-map", "Schema files by id: ID=FILE,... or a JSON file of them."),
        )
    ),
    jopt.OptionSpec(
        "human-time",
        "After every epoch-millisecond timestamp of the text, the time in ISO-8601 (UTC, or --tz).",
        hidden=True,
    ),
    jopt.OptionSpec(
        "tz",
        "Time zone of --human-time: UTC (default), an offset like +02:00, or a name like Europe/Berlin.",
        arg="required",
        arg_type="String: zone",
        hidden=True,
    ),
    jopt.OptionSpec(
        "remote-root",
        "A partition directory given is a tiered partition's one log: its segments in remote storage under "
        "this root (Kafka's RemoteLogSegmentFileset layout, as kdump tiered) below its first local one, then "
        "its local .log files, each dumped as if given.",
        arg="required",
        arg_type="String: root",
        hidden=True,
    ),
    jopt.OptionSpec(
        "layout",
        "With --remote-root: the RemoteStorageManager's object layout, kafka (default) or aiven (as kdump tiered).",
        arg="required",
        arg_type="String: layout",
        hidden=True,
    ),
    jopt.OptionSpec(
        "layout-template",
        "With --remote-root: another plugin's layout, each object's key under the root (as kdump tiered).",
        arg="required",
        arg_type="String: template",
        hidden=True,
    ),
    jopt.OptionSpec(
        "aiven-key-prefix",
        "With --layout aiven: the plugin's key.prefix (as kdump tiered).",
        arg="required",
        arg_type="String: prefix",
        hidden=True,
    ),
    jopt.OptionSpec(
        "aiven-private-key",
        "With --layout aiven: [ID=]PEM, the RSA private key of a key pair of encrypted segments (repeatable).",
        arg="required",
        arg_type="String: key",
        hidden=True,
    ),
    jopt.OptionSpec(
        "kdump-help", "Print Kafka's options and kdump's own on standard output (also -h).", hidden=True
    ),
]

#: What asks for kdump's help of ``files`` (``--help`` stays Kafka's table on standard error, status 1).
KDUMP_HELP_OPTIONS = ("-h", "--kdump-help")


def kdump_help_text(release: KafkaRelease | None = None) -> str:
    """``kdump help files``: Kafka's option table, then kdump's own options in the same form."""
    import textwrap  # help text only

    release = release or chosen_release([])
    own = [dataclasses.replace(s, hidden=False) for s in KDUMP_OPTIONS]
    return (
        "Usage: kdump files [OPTIONS] [--files] FILE[,FILE...]\n\n"
        f"{textwrap.fill(DESCRIPTION, jopt.OVERALL_WIDTH)}\n\n"
        f"Kafka's options (kafka-dump-log.sh {release.version}); with these alone the output is\n"
        "Kafka's, byte for byte:\n"
        f"{jopt.help_table(kafka_options(release))}\n"
        "kdump's own options (opt-in; man kdump-files, KDUMP OPTIONS); files may also be\n"
        "given as arguments:\n"
        f"{jopt.help_table(own)}\n"
        "kdump files --help prints Kafka's table alone, on standard error with status 1,\n"
        "as kafka-dump-log.sh does.\n\n"
        + textwrap.fill(
            "Kafka release: kdump files reproduces the kafka-dump-log.sh of Kafka "
            f"{', '.join(kafka_release.LINES)}; the newest, {kafka_release.NEWEST}, unless --kafka-version or "
            f"${kafka_release.ENVIRONMENT_VARIABLE} names another (a patch release such as 4.1.1 means its "
            "line). What differs: 4.1 prints LEADER_CHANGE control records as 'LeaderChange: {json}' and the "
            "transaction log as JSON, and reads the 4.1 coordinator schemas (streams groups; 4.0's early-access "
            "share-group records no longer decode); 4.2 reads the 4.2 share and streams schemas and rewords "
            "--skip-record-metadata's help; 3.9 has no --share-group-state-decoder, knows group record types "
            "0-8 only and still loads the kafka.serializer decoder names. man kdump-files, KAFKA VERSIONS.",
            jopt.OVERALL_WIDTH,
            break_on_hyphens=False,
        )
        + "\n"
    )


def asks_kdump_help(argv: list[str]) -> bool:
    """True when ``-h`` or ``--kdump-help`` is an option of ``argv`` (not the argument of another option)."""
    takes_argument = {f"--{s.name}" for s in OPTIONS + KDUMP_OPTIONS if s.arg == "required"}
    skip = False
    for token in argv:
        if skip:
            skip = False
            continue
        if token == "--":
            return False
        if token in KDUMP_HELP_OPTIONS:
            return True
        skip = token in takes_argument
    return False


def usage_text(release: KafkaRelease | None = None) -> str:
    """Kafka's option table of ``release`` (None: the release the environment names, else the newest)."""
    return jopt.help_table(kafka_options(release or chosen_release([])))


def chosen_release(argv: list[str], environ: Mapping[str, str] | None = None) -> KafkaRelease:
    """The release ``--kafka-version`` names (the last one given), else ``$KDUMP_KAFKA_VERSION``, else the
    newest; decided once, before the options are parsed (the release decides which options exist)."""
    text = None
    takes_argument = {f"--{s.name}" for s in OPTIONS + KDUMP_OPTIONS if s.arg == "required"}
    i = 0
    while i < len(argv):
        token = argv[i]
        i += 1
        if token == "--":
            break
        if token == "--kafka-version":
            if i >= len(argv):
                raise KdumpUsageError("--kafka-version needs a version: " + ", ".join(kafka_release.LINES))
            text = argv[i]
            i += 1
        elif token.startswith("--kafka-version="):
            text = token.partition("=")[2]
        elif token in takes_argument:
            i += 1
    where = "--kafka-version"
    if text is None:
        env = os.environ if environ is None else environ
        text = env.get(kafka_release.ENVIRONMENT_VARIABLE) or None
        where = kafka_release.ENVIRONMENT_VARIABLE
    try:
        return kafka_release.release(text)
    except ValueError as e:
        raise KdumpUsageError(f"{where}: {e}") from None


#: ``--files``' separator, for Java's ``String.split(",")``.
_COMMA = re.compile(",")


def _int_option(parsed: jopt.ParsedArgs, name: str, default: int) -> int:
    raw = parsed.value(name)
    if raw is None:
        return default
    try:
        value = int(raw, 10)
        if not -(2**31) <= value < 2**31 or not raw.strip("+-").isdigit():
            raise ValueError
    except ValueError:
        raise UsageError(f"Cannot parse argument '{raw}' of option {name}") from None
    return value


def _kafka_arguments(argv: list[str]) -> list[str]:
    """``argv`` without ``--kafka-version`` and its value (which Kafka's tool never sees)."""
    out = []
    skip = False
    for token in argv:
        if skip:
            skip = False
        elif token == "--kafka-version":
            skip = True
        elif not token.startswith("--kafka-version="):
            out.append(token)
    return out


def build_options(parsed: jopt.ParsedArgs, release: KafkaRelease | None = None) -> DumpOptions:
    files_value = parsed.value("files")
    # Kafka reads --files only and ignores other arguments; files given without --files are kdump's
    # convenience, where Kafka would stop with 'Missing required argument "[files]"'
    files = string_split(_COMMA, files_value) if files_value is not None else list(parsed.non_options)
    remote_root = parsed.value("remote-root")
    start_offsets: dict[str, int] = {}
    sources: dict[str, ByteSource] = {}
    remote = _remote_options(parsed) if any(parsed.has(n) for n in _REMOTE_OPTIONS) else None
    if remote_root is not None and remote is not None:
        files, start_offsets, sources = one_log_files(files, remote_root, remote)
    # Kafka's options are lazy vals: an integer argument is converted (and fails) only where it is first used
    integers = {"max-message-size": DEFAULT_MAX_MESSAGE_SIZE, "max-bytes": INT_MAX}
    errors = {}
    for name, default in integers.items():
        try:
            integers[name] = _int_option(parsed, name, default)
        except UsageError as e:
            errors[name] = e.message
    classes: dict[str, str | None] = {}
    for name in ("key-decoder-class", "value-decoder-class"):
        try:
            classes[name] = parsed.value(name)
        except UsageError as e:  # given twice: Kafka fails where it first reads it (for a .log)
            classes[name] = None
            errors[name] = e.message
    return DumpOptions(
        option_errors=errors,
        files=files,
        print_data_log=parsed.has("print-data-log"),
        deep_iteration=parsed.has("deep-iteration"),
        verify_index_only=parsed.has("verify-index-only"),
        index_sanity_check=parsed.has("index-sanity-check"),
        skip_record_metadata=parsed.has("skip-record-metadata"),
        max_message_size=integers["max-message-size"],
        max_bytes=integers["max-bytes"],
        key_decoder_class=classes["key-decoder-class"],
        value_decoder_class=classes["value-decoder-class"],
        key_decoder_given=parsed.has("key-decoder-class"),
        value_decoder_given=parsed.has("value-decoder-class"),
        internal_decoders=tuple(d for d in INTERNAL_DECODERS if parsed.has(d)),
        json=parsed.has("json"),
        print_header_values=parsed.has("print-header-values"),
        record_filter=build_filter(parsed),
        payload_decoding=build_payload_decoding(parsed),
        human_time=parsed.has("human-time") or parsed.has("tz"),
        tz=_zone(parsed.value("tz")),
        release=release or kafka_release.release(),
        start_offsets=start_offsets,
        sources=sources,
    )


#: kdump's own options of a tiered partition's remote part (click is loaded only when one is given).
_REMOTE_OPTIONS = ("remote-root", "layout", "layout-template", "aiven-key-prefix", "aiven-private-key")


def _remote_options(parsed: jopt.ParsedArgs) -> RemoteOptions | None:
    """``--remote-root`` with ``--layout``, ``--layout-template``, ``--aiven-key-prefix`` and
    ``--aiven-private-key`` (repeatable): the other commands' :class:`~kdump.cli.remote_options.RemoteArgs` made of
    Kafka-style options (None without ``--remote-root``; the others alone are a usage error)."""
    import click

    from kdump.cli.remote_options import RemoteArgs

    layout = parsed.value("layout")
    args = RemoteArgs(
        remote_root=parsed.value("remote-root"),
        layout=layout,
        layout_template=parsed.value("layout-template"),
        aiven_key_prefix=parsed.value("aiven-key-prefix"),
        private_keys=tuple(v for v in parsed.values.get("aiven-private-key", []) if v is not None),
    )
    try:
        if args.remote_root is not None and layout not in (None, "kafka", "aiven"):
            raise KdumpUsageError(f"--layout: {layout!r} is not kafka or aiven")
        return args.options()
    except click.ClickException as e:
        raise KdumpUsageError(e.format_message()) from None


def one_log_files(
    files: list[str], remote_root: str, options: RemoteOptions | None = None
) -> tuple[list[str], dict[str, int], dict[str, ByteSource]]:
    """``--remote-root``: each partition directory among ``files`` replaced by the ``.log`` files of its one log
    (:meth:`kdump.commands.remote_tier.RemoteChecks.one_log`: remote segments below the first local one, then
    the local ones; a partition that is not tiered: its local ``.log`` files); other files stay as given.  With
    the start offset of each remote object (its name is not Kafka's: Kafka's tool takes the offset from it), and
    the source of each that is not a plain file (Aiven's layout: read back through its chunks)."""
    from kdump.commands.remote_tier import RemoteChecks, RemoteOptions
    from kdump.storage.local_log import LocalLog

    if not locations.isdir(remote_root):
        raise KdumpUsageError(f"--remote-root: {remote_root}: not a directory")
    checks = RemoteChecks(options or RemoteOptions(remote_root))
    out: list[str] = []
    starts: dict[str, int] = {}
    sources: dict[str, ByteSource] = {}
    for path in files:
        if not locations.isdir(path):
            out.append(path)
            continue
        try:
            log = LocalLog.scan(path)
        except OSError as e:
            raise KdumpUsageError(f"{path}: cannot read it: {e.strerror or e}") from None
        one = checks.one_log(log)
        for segment in (one[0] if one is not None else log).log_segments:
            out.append(segment.log_path)
            if segment.directory != log.directory:
                starts[segment.log_path] = segment.base_offset
                source = segment.source(naming.LOG_FILE_SUFFIX)
                if not isinstance(source, str):
                    sources[segment.log_path] = source
    return out, starts, sources


def _zone(raw: str | None) -> tzinfo | None:
    if raw is None:
        return None
    from kdump.render.human_time import parse_tz

    try:
        return parse_tz(raw)
    except ValueError as e:
        raise KdumpUsageError(f"--tz: {e}") from None


def _long_option(parsed: jopt.ParsedArgs, name: str) -> int | None:
    raw = parsed.value(name)
    if raw is None:
        return None
    try:
        return naming.parse_java_long(raw)
    except naming.NumberFormatError:
        raise KdumpUsageError(f"--{name}: not a number: {raw!r}") from None


def parse_time(raw: str, name: str = "time") -> int:
    """``--from-time``/``--to-time``: epoch milliseconds or ISO-8601, as ``kdump find --timestamp`` reads it."""
    try:
        return parse_timestamp(raw)
    except ValueError as e:
        raise KdumpUsageError(f"--{name}: {e}") from None


def build_filter(parsed: jopt.ParsedArgs) -> RecordFilter | None:
    """The selection the filter options ask for, or None when none is given."""
    names = (
        "from-offset",
        "to-offset",
        "from-time",
        "to-time",
        "key",
        "key-regex",
        "producer-id",
        "max-records",
    )
    if not any(parsed.has(n) for n in (*names, "transactional-only", "control-only")):
        return None
    regex = parsed.value("key-regex")
    try:
        compiled = None if regex is None else re.compile(regex)
    except re.error as e:
        raise KdumpUsageError(f"--key-regex: {e}") from None
    key = parsed.value("key")
    max_records = _long_option(parsed, "max-records")
    if max_records is not None and max_records < 1:
        raise KdumpUsageError(f"--max-records must be at least 1, not {max_records}")
    offsets = {n: _long_option(parsed, n) for n in ("from-offset", "to-offset")}
    for name, offset in offsets.items():
        if offset is not None and offset < 0:
            raise KdumpUsageError(f"--{name} must be an offset (0 or more), not {offset}")
    from_offset, to_offset = offsets["from-offset"], offsets["to-offset"]
    if from_offset is not None and to_offset is not None and from_offset > to_offset:
        raise KdumpUsageError(
            f"--from-offset {from_offset} is after --to-offset {to_offset}: nothing to show"
        )
    times = {
        n: None if (text := parsed.value(n)) is None else parse_time(text, n)
        for n in ("from-time", "to-time")
    }
    return RecordFilter(
        from_offset=from_offset,
        to_offset=to_offset,
        from_time=times["from-time"],
        to_time=times["to-time"],
        key=None if key is None else key.encode("utf-8"),
        key_regex=compiled,
        producer_id=_long_option(parsed, "producer-id"),
        transactional_only=parsed.has("transactional-only"),
        control_only=parsed.has("control-only"),
        max_records=max_records,
    )


def run(argv: list[str], out: Output, err: Output) -> int:
    """Run ``kdump files`` with ``argv``; returns the exit status (errors propagate as KdumpError)."""
    release = chosen_release(argv)
    if asks_kdump_help(argv):
        out.write(kdump_help_text(release))
        return 0
    parsed = jopt.parse(kafka_options(release) + KDUMP_OPTIONS, argv)
    # a run without Kafka's arguments is Kafka's run without arguments (kdump's own options aside)
    if not _kafka_arguments(argv) or parsed.has("help"):
        err.write(DESCRIPTION + "\n" + usage_text(release))
        return ExitStatus.PROBLEMS  # Kafka's CommandLineUtils.printUsageAndExit: status 1
    if parsed.has("version"):
        out.write(release.version + "\n")
        return ExitStatus.OK
    options = build_options(parsed, release)
    if not parsed.has("files") and not parsed.non_options:
        err.write('Missing required argument "[files]"\n' + usage_text(release))
        return ExitStatus.PROBLEMS
    return DumpLogSegments(options, make_sink(options, out, err)).run()


def make_sink(options: DumpOptions, out: Output, err: Output) -> FilesSink:
    """The sink of the run's facts: JSON lines with ``--json``, Kafka's text otherwise."""
    if options.json:
        from kdump.render.files_json import JsonLinesSink

        return JsonLinesSink(out, options)
    from kdump.render.files_text import KafkaTextSink

    return KafkaTextSink(out, err, options)


def main(argv: list[str] | None = None) -> int:
    from kdump.cli import run_guarded

    return run_guarded(lambda out, err: run(sys.argv[1:] if argv is None else argv, out, err))


def build_payload_decoding(parsed: jopt.ParsedArgs) -> PayloadDecoding | None:
    """``--decode-values``/``--decode-keys`` and their schema sources, or None when neither is given."""
    if not any(parsed.has(n) for n in ("decode-values", "decode-keys", "schemas", "schema-id-map")):
        return None  # kdump.payload is not even imported
    from kdump.payload.sources import payload_decoding

    sources = parsed.value("schemas")
    try:
        return payload_decoding(
            parsed.value("decode-keys"),
            parsed.value("decode-values"),
            [p for p in sources.split(",") if p] if sources else [],
            parsed.value("schema-id-map"),
        )
    except ValueError as e:
        raise KdumpUsageError(str(e)) from None
