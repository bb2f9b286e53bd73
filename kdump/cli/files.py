"""``kdump files``: a drop-in replacement for ``kafka-dump-log.sh`` (same options, same output)."""

from __future__ import annotations

import sys

from kdump import KAFKA_COMPAT_VERSION
from kdump.cli import jopt
from kdump.dumplog import DEFAULT_MAX_MESSAGE_SIZE, INTERNAL_DECODERS, DumpLogSegments, DumpOptions
from kdump.errors import UsageError
from kdump.render.decoders import DEFAULT_DECODER_CLASS
from kdump.render.output import Output
from kdump.storage.file_records import INT_MAX

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
    jopt.OptionSpec("skip-record-metadata", "Whether to skip printing metadata for each record."),
    jopt.OptionSpec("help", "Print usage information."),
    jopt.OptionSpec("version", "Display Kafka version."),
]


def usage_text() -> str:
    return jopt.help_table(OPTIONS)


def _java_split(value: str) -> list[str]:
    """Java's ``String.split(",")``: trailing empty pieces dropped, interior ones kept."""
    pieces = value.split(",")
    while pieces and pieces[-1] == "" and len(pieces) > 1:
        pieces.pop()
    if pieces == [""] and value != "":
        return []
    return pieces


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


def build_options(parsed: jopt.ParsedArgs) -> DumpOptions:
    files_value = parsed.value("files")
    files = _java_split(files_value) if files_value is not None else []
    files.extend(parsed.non_options)
    return DumpOptions(
        files=files,
        print_data_log=parsed.has("print-data-log"),
        deep_iteration=parsed.has("deep-iteration"),
        verify_index_only=parsed.has("verify-index-only"),
        index_sanity_check=parsed.has("index-sanity-check"),
        skip_record_metadata=parsed.has("skip-record-metadata"),
        max_message_size=_int_option(parsed, "max-message-size", DEFAULT_MAX_MESSAGE_SIZE),
        max_bytes=_int_option(parsed, "max-bytes", INT_MAX),
        key_decoder_class=parsed.value("key-decoder-class"),
        value_decoder_class=parsed.value("value-decoder-class"),
        key_decoder_given=parsed.has("key-decoder-class"),
        value_decoder_given=parsed.has("value-decoder-class"),
        internal_decoders=tuple(d for d in INTERNAL_DECODERS if parsed.has(d)),
    )


def run(argv: list[str], out: Output, err: Output) -> int:
    """Run ``kdump files`` with ``argv``; returns the exit status (errors propagate as KdumpError)."""
    parsed = jopt.parse(OPTIONS, argv)
    if not argv or parsed.has("help"):
        err.write(DESCRIPTION + "\n" + usage_text())
        return 1
    if parsed.has("version"):
        out.write(KAFKA_COMPAT_VERSION + "\n")
        return 0
    options = build_options(parsed)
    if not parsed.has("files") and not parsed.non_options:
        err.write('Missing required argument "[files]"\n' + usage_text())
        return 1
    return DumpLogSegments(options, out, err).run()


def main(argv: list[str] | None = None) -> int:
    from kdump.cli import run_guarded

    return run_guarded(lambda out, err: run(sys.argv[1:] if argv is None else argv, out, err))
