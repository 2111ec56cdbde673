"""`kafkaops state-change-log-merger`: Kafka's StateChangeLogMerger, without its blind spots (§2.7).

Kafka's options and texts; unlike Kafka it keeps 1.0+ lines (`topic-0`, `[Controller id=N epoch=E]`),
entries without a partition, and multi-line entries (stack traces), which is the point of it. Beyond
Kafka: directories and globs in --logs, --broker, --controller-epoch, --level, --grep, --annotate, JSON
lines output, and a Spark engine for inputs too large for one machine.
"""

from __future__ import annotations

import enum
import os
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Annotated, BinaryIO

import typer
from typer._click.core import ParameterSource  # Typer vendors click

from kafkaops.cli.output import kafka_errors
from kafkaops.cluster.common.errors import InvalidArgumentError, UsageError
from kafkaops.statechange import filters, sources, writers
from kafkaops.statechange.filters import EntryFilter
from kafkaops.statechange.merge import TextMerge, compiled_core, merge_logs

DESCRIPTION = (
    "A tool for merging the log files from several brokers to reconnstruct a unified history of what happened."
)
EXACTLY_ONE_INPUT = 'Provide arguments to exactly one of the two options "[logs]" or "[logs-regex]"'

AUTO_SPARK_BYTES = 8 * 1024**3
"""With a --master (a Spark cluster), --engine auto hands inputs larger than this to Spark. Without one it
never does: on one machine the streaming engine is faster at any size (one core streams what embedded
Spark sorts with all of them at several times the cost: see bench/statechange_merge.py)."""


class Engine(enum.StrEnum):
    auto = "auto"
    local = "local"
    spark = "spark"


class MergeFormat(enum.StrEnum):
    text = "text"
    json = "json"
    parquet = "parquet"


def is_remote(path: str) -> bool:
    """`hdfs://...`, `s3a://...`: only the Spark engine reads those."""
    return "://" in path


def choose_engine(engine: Engine, remote: bool, local_bytes: int, output: MergeFormat, master: str | None) -> Engine:
    """Raises InvalidArgumentError for a combination only Spark can do on the local engine."""
    if engine is Engine.auto:
        on_cluster = master is not None and not master.startswith("local")
        big = on_cluster and local_bytes > AUTO_SPARK_BYTES
        return Engine.spark if remote or output is MergeFormat.parquet or big else Engine.local
    if engine is Engine.local and remote:
        raise InvalidArgumentError("Only --engine spark reads remote paths (hdfs://, s3a://, ...)")
    if engine is Engine.local and output is MergeFormat.parquet:
        raise InvalidArgumentError("--output parquet needs --engine spark")
    return engine


@contextmanager
def _binary_output(path: str | None) -> Iterator[BinaryIO]:
    if path is None:
        sys.stdout.flush()
        yield sys.stdout.buffer
        sys.stdout.buffer.flush()
    else:
        try:
            with open(path, "wb") as file:
                yield file
        except OSError as error:
            raise InvalidArgumentError(f"Cannot write {path}: {error.strerror}") from None


def merge_local(
    streams: Sequence[Sequence[str]], spec: EntryFilter, output: MergeFormat, annotate: bool, out: BinaryIO
) -> int:
    """Run the streaming engine (its compiled core, when built, for text output and the filters it does
    faster: `filters.raw_plan_pays`); returns the number of entries written."""
    fast = output is MergeFormat.text and not annotate and filters.raw_plan_pays(spec)
    core = compiled_core() if fast else None
    if core is not None:
        merged = TextMerge(core, streams, filters.raw_plan(spec))
        for chunk in merged:
            out.write(chunk)
        return merged.count
    positions = output is MergeFormat.json or annotate
    count = 0
    for batch in merge_logs(streams, filters.entry_selector(spec), positions=positions):
        count += len(batch)
        if output is MergeFormat.json:
            writers.write_json_lines(batch, out)
        elif annotate:
            writers.write_annotated(batch, out)
        else:
            writers.write_text(batch, out)
    return count


@kafka_errors()
def state_change_log_merger_command(
    ctx: typer.Context,
    logs: Annotated[
        str | None,
        typer.Option(
            "--logs",
            metavar="<file1,file2,...>",
            help="Comma separated list of state change logs or a regex for the log file names. Entries may also be directories (their files), globs, or with --engine spark hdfs://, s3a://... paths.",
        ),
    ] = None,
    logs_regex: Annotated[
        str | None,
        typer.Option(
            "--logs-regex",
            metavar="<for example: /tmp/state-change.log*>",
            help="Regex to match the state change log files to be merged",
        ),
    ] = None,
    topic: Annotated[
        str | None,
        typer.Option("--topic", metavar="<topic>", help="The topic whose state change logs should be merged"),
    ] = None,
    partitions: Annotated[
        str | None,
        typer.Option(
            "--partitions",
            metavar="<0,1,2,...>",
            help="Comma separated list of partition ids whose state change logs should be merged",
        ),
    ] = None,
    start_time: Annotated[
        str,
        typer.Option(
            "--start-time",
            metavar="<start timestamp in the format yyyy-MM-dd HH:mm:ss,SSS>",
            help="The earliest timestamp of state change log entries to be merged (inclusive)",
        ),
    ] = filters.KAFKA_DEFAULT_START,
    end_time: Annotated[
        str,
        typer.Option(
            "--end-time",
            metavar="<end timestamp in the format yyyy-MM-dd HH:mm:ss,SSS>",
            help="The latest timestamp of state change log entries to be merged (inclusive)",
        ),
    ] = filters.KAFKA_DEFAULT_END,
    broker: Annotated[
        str | None,
        typer.Option("--broker", metavar="<id,...>", help="Only entries written by these brokers (or controllers)"),
    ] = None,
    controller_epoch: Annotated[
        str | None,
        typer.Option(
            "--controller-epoch",
            metavar="<epoch,...>",
            help="Only entries of these controller epochs (a broker's: the epoch of the request it handles)",
        ),
    ] = None,
    level: Annotated[
        str | None,
        typer.Option(
            "--level", metavar="<LEVEL,...>", help="Only entries of these levels (TRACE, DEBUG, INFO, WARN, ERROR)"
        ),
    ] = None,
    grep: Annotated[
        str | None,
        typer.Option(
            "--grep",
            metavar="<regex>",
            help="Only entries whose text contains a match of this regular expression (Python re syntax, unanchored search; \\d \\w \\s \\b and (?i) are ASCII-only, as in Java and grep). The text is the whole entry: its first line and its continuation lines (a stack trace) joined by newlines, without line terminators, so a match may span lines, ^ and $ are the entry's start and end, (?m) makes them each line's. Same result with either engine.",
        ),
    ] = None,
    annotate: Annotated[
        bool, typer.Option("--annotate", help="Prefix each line with its source file and line number")
    ] = False,
    output: Annotated[
        MergeFormat,
        typer.Option(
            "--output",
            help="text: the original lines; json: one JSON object per entry per line (JSON Lines: the output can be larger than memory); parquet: with --engine spark and --output-path",
        ),
    ] = MergeFormat.text,
    output_path: Annotated[
        str | None,
        typer.Option(
            "--output-path",
            metavar="<path>",
            help="Write there instead of stdout (a file for --engine local; a directory, any Hadoop path, for spark)",
        ),
    ] = None,
    engine: Annotated[
        Engine,
        typer.Option(
            "--engine",
            help="local: streaming merge on this machine; spark: a Spark job; auto: spark for remote paths or parquet, or inputs over 8 GiB with a cluster --master, else local",
        ),
    ] = Engine.auto,
    master: Annotated[
        str | None,
        typer.Option("--master", metavar="<url>", help="Spark master (default: embedded local[*])"),
    ] = None,
    conf: Annotated[
        list[str] | None, typer.Option("--conf", metavar="<key=value>", help="Spark configuration, repeatable")
    ] = None,
    verbose: Annotated[bool, typer.Option("--verbose", help="Report progress and Spark's own logs on stderr")] = False,
) -> None:
    """Merge the state-change logs of several brokers into one timeline (Kafka's StateChangeLogMerger)."""
    if all(ctx.get_parameter_source(name) == ParameterSource.DEFAULT for name in ctx.params):
        raise UsageError(DESCRIPTION)
    if (logs is None) == (logs_regex is None):
        raise UsageError(EXACTLY_ONE_INPUT)
    spec = filters.filter_from_options(topic, partitions, start_time, end_time, broker, controller_epoch, level, grep)
    entries = [entry for entry in logs.split(",") if entry] if logs is not None else []
    remote = any(map(is_remote, entries)) or (logs_regex is not None and is_remote(logs_regex))
    files: list[str] = []
    if not remote:
        files = sources.expand_logs(entries) if logs is not None else sources.logs_regex(logs_regex or "")
    chosen = choose_engine(engine, remote, 0 if remote else sources.total_size(files), output, master)
    streams = sources.group_rotated(files)
    try:
        if chosen is Engine.spark:
            from kafkaops.spark import merge_job  # pyspark takes seconds to import: only when asked for

            job = merge_job.MergeJob(
                files=files,
                logs=entries if remote else (),
                logs_regex=logs_regex if remote else None,
                spec=spec,
                output=output.value,
                output_path=output_path,
                annotate=annotate,
            )
            sys.stdout.flush()
            count = merge_job.run(job, master=master, conf=conf or [], verbose=verbose, out=sys.stdout.buffer)
            sys.stdout.buffer.flush()
        else:
            with _binary_output(output_path) as out:
                count = merge_local(streams, spec, output, annotate, out)
    except BrokenPipeError:
        # The reader (`| head`) has all it wanted; stop quietly, without Python's flush-at-exit error.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return
    if verbose and count is not None:
        unit = "lines" if chosen is Engine.spark and output is MergeFormat.text else "entries"
        sys.stderr.write(f"Merged {count} {unit} from {len(files) or 'remote'} files (engine {chosen.value})\n")
