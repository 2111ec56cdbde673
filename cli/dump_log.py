"""`kafkaops dump-log`: Kafka 2.8's kafka-dump-log.sh (DumpLogSegments), offline over segment files.

Kafka's options and lines; the reading and every printed line live in `kafkaops.cluster.log.dump_log_segments`.
Lines go to stdout as the files are read; the findings Kafka reports at the end (index mismatches,
non-consecutive offsets, time index errors) go to stderr after the last file, as Kafka prints them.

Differences from Kafka:

* Keys and values decode as UTF-8 text only: `--key-decoder-class` / `--value-decoder-class` accept
  Kafka's default `kafka.serializer.StringDecoder` and refuse any other class (no JVM to load it into),
  and need the class name (Kafka's may be given alone);
  `--transaction-log-decoder` and `--cluster-metadata-decoder` are refused (`--offsets-decoder` decodes
  `__consumer_offsets` records as Kafka's does).
* Where Kafka dies with a stack trace (a failed `--index-sanity-check`, a corrupt batch header, a file
  that does not exist, an index entry with no batch within `--max-message-size`) this prints one line
  with Kafka's message where it has one, after the lines dumped so far, and exits 1.
"""

from __future__ import annotations

import sys
from typing import Annotated

import typer
from typer._click.core import ParameterSource  # Typer vendors click

from kafkaops.cli.output import kafka_errors
from kafkaops.cluster.common.errors import InvalidArgumentError, UsageError
from kafkaops.cluster.log.dump_log_segments import DEFAULT_MAX_MESSAGE_SIZE, DumpErrors, DumpOptions, dump_files

DESCRIPTION = (
    "This tool helps to parse a log file and dump its contents to the console, useful for debugging a seemingly "
    "corrupt log segment."
)
STRING_DECODER = "kafka.serializer.StringDecoder"


def _check_decoder(option: str, value: str | None) -> None:
    if value is not None and value != STRING_DECODER:
        raise InvalidArgumentError(
            f"{option} {value}: kafkaops dump-log decodes keys and values as UTF-8 text only ({STRING_DECODER})"
        )


def _refuse(option: str, given: bool) -> None:
    if given:
        raise InvalidArgumentError(f"{option} is not available in kafkaops dump-log")


@kafka_errors()
def dump_log_command(
    ctx: typer.Context,
    files: Annotated[
        str | None,
        typer.Option(
            "--files",
            metavar="<String: file1, file2, ...>",
            help="REQUIRED: The comma separated list of data and index log files to be dumped.",
        ),
    ] = None,
    print_data_log: Annotated[
        bool,
        typer.Option(
            "--print-data-log",
            help="if set, printing the messages content when dumping data logs. Automatically set if any decoder "
            "option is specified.",
        ),
    ] = False,
    verify_index_only: Annotated[
        bool,
        typer.Option("--verify-index-only", help="if set, just verify the index log without printing its content."),
    ] = False,
    index_sanity_check: Annotated[
        bool,
        typer.Option(
            "--index-sanity-check",
            help="if set, just checks the index sanity without printing its content. This is the same check that "
            "is executed on broker startup to determine if an index needs rebuilding or not.",
        ),
    ] = False,
    max_message_size: Annotated[
        int,
        typer.Option("--max-message-size", metavar="<Integer: size>", help="Size of largest message."),
    ] = DEFAULT_MAX_MESSAGE_SIZE,
    deep_iteration: Annotated[
        bool,
        typer.Option(
            "--deep-iteration",
            help="if set, uses deep instead of shallow iteration. Automatically set if print-data-log is enabled.",
        ),
    ] = False,
    value_decoder_class: Annotated[
        str | None,
        typer.Option(
            "--value-decoder-class",
            metavar="<String>",
            help=f"if set, used to deserialize the messages. Only {STRING_DECODER} (UTF-8 text).",
        ),
    ] = None,
    key_decoder_class: Annotated[
        str | None,
        typer.Option(
            "--key-decoder-class",
            metavar="<String>",
            help=f"if set, used to deserialize the keys. Only {STRING_DECODER} (UTF-8 text).",
        ),
    ] = None,
    offsets_decoder: Annotated[
        bool,
        typer.Option(
            "--offsets-decoder",
            help="if set, log data will be parsed as offset data from the __consumer_offsets topic.",
        ),
    ] = False,
    transaction_log_decoder: Annotated[bool, typer.Option("--transaction-log-decoder", hidden=True)] = False,
    cluster_metadata_decoder: Annotated[bool, typer.Option("--cluster-metadata-decoder", hidden=True)] = False,
    skip_record_metadata: Annotated[
        bool, typer.Option("--skip-record-metadata", help="whether to skip printing metadata for each record.")
    ] = False,
) -> None:
    """This tool helps to parse a log file and dump its contents to the console, useful for debugging a seemingly
    corrupt log segment."""
    if all(ctx.get_parameter_source(name) in (ParameterSource.DEFAULT, None) for name in ctx.params):
        raise UsageError(DESCRIPTION)
    if files is None:
        raise UsageError('Missing required argument "[files]"')
    _check_decoder("--value-decoder-class", value_decoder_class)
    _check_decoder("--key-decoder-class", key_decoder_class)
    _refuse("--transaction-log-decoder", transaction_log_decoder)
    _refuse("--cluster-metadata-decoder", cluster_metadata_decoder)
    options = DumpOptions(
        print_data_log=print_data_log
        or offsets_decoder
        or value_decoder_class is not None
        or key_decoder_class is not None,
        deep_iteration=deep_iteration,
        verify_index_only=verify_index_only,
        index_sanity_check=index_sanity_check,
        skip_record_metadata=skip_record_metadata,
        max_message_size=max_message_size,
        offsets_decoder=offsets_decoder,
    )
    errors = DumpErrors()
    out = sys.stdout
    try:
        for line in dump_files(files.split(","), options, errors, _warn):
            out.write(line + "\n")
    finally:
        out.flush()
        for line in errors.lines():
            sys.stderr.write(line + "\n")


def _warn(message: str) -> None:
    sys.stdout.flush()  # keeps a warning after the lines it follows on a shared terminal
    sys.stderr.write(message + "\n")
