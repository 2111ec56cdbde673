"""The state-change log merge as a Spark batch: used by `kafkaops state-change-log-merger --engine spark`,
and runnable as is with `spark-submit` (see spark/README.md):

    spark-submit --py-files kafkaops.zip kafkaops/spark/merge_job.py --logs 'hdfs:///kafka/*/state-change.log*' ...

Only the driver runs Python, except with `--grep`: its pattern runs as a Python predicate on the executors
(see `merge._grep`), which then need a Python of the driver's minor version, as any PySpark UDF does, but
no package (the predicate uses the standard library only). The `--py-files` archive is for the driver's
imports.
"""

from __future__ import annotations

import argparse
import glob
import os
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import BinaryIO

from py4j.protocol import Py4JError  # type: ignore[import-untyped]
from pyspark.errors import PySparkException
from pyspark.sql import DataFrame, SparkSession

from kafkaops.cluster.common.errors import InvalidArgumentError, KafkaOpsError
from kafkaops.spark import merge
from kafkaops.spark.session import build_session
from kafkaops.statechange.filters import KAFKA_DEFAULT_END, KAFKA_DEFAULT_START, EntryFilter, filter_from_options
from kafkaops.statechange.sources import group_rotated

FORMATS = ("text", "json", "parquet")


@dataclass(frozen=True)
class MergeJob:
    files: Sequence[str] = ()
    """Files already listed (the CLI lists local paths itself, so both engines name sources alike)."""
    logs: Sequence[str] = ()
    """`--logs` entries to expand on their Hadoop file systems (hdfs://, s3a://, globs, directories)."""
    logs_regex: str | None = None
    spec: EntryFilter = field(default_factory=EntryFilter)
    output: str = "text"
    output_path: str | None = None
    annotate: bool = False


def execute(spark: SparkSession, job: MergeJob, out: BinaryIO) -> int | None:
    """Run the merge on `spark`; rows go to `job.output_path`, else to `out`. Returns the number of output
    rows when they went to `out` (lines, or JSON records), None when written by Spark.

    Raises InvalidArgumentError for bad input or an existing output path, KafkaOpsError if Spark fails.
    """
    if job.output == "parquet" and job.output_path is None:
        raise InvalidArgumentError("--output parquet needs --output-path")
    files = list(job.files)
    if job.logs or job.logs_regex is not None:
        files += merge.list_remote(spark, job.logs, job.logs_regex)
    lines, size = merge.read_lines(spark, merge.input_files(group_rotated(files)))
    entries = merge.entry_lines(lines, job.spec, fields=job.output != "text")
    partitions = merge.output_partitions(size)
    if job.output == "text":
        frame = merge.merged_text(entries, annotate=job.annotate, partitions=partitions)
    else:
        records = merge.merged_records(entries, with_time=job.output == "parquet", partitions=partitions)
        frame = records if job.output == "parquet" else merge.json_lines(records)
    try:
        if job.output_path is not None:
            writer = frame.write.mode("errorifexists")
            writer.parquet(job.output_path) if job.output == "parquet" else writer.text(job.output_path)
            return None
        if (spark.sparkContext.master or "").startswith("local"):
            return _through_local_files(frame, out)
        count = 0
        for text in merge.stream_text(frame):
            out.write(text.encode("utf-8") + b"\n")
            count += 1
        return count
    except PySparkException as error:
        if error.getCondition() == "PATH_ALREADY_EXISTS":
            raise InvalidArgumentError(f"Cannot write {job.output_path}: it already exists") from None
        raise KafkaOpsError(f"Spark job failed: {_first_line(error)}") from None


def _through_local_files(frame: DataFrame, out: BinaryIO) -> int:
    """Stdout from an embedded Spark: written as text files in a temporary directory, then copied in
    partition order. Bringing large results through the driver (`toLocalIterator`) pickles whole
    partitions and loses results under memory pressure; files cost one local write."""
    with tempfile.TemporaryDirectory(prefix="kafkaops-merge-") as directory:
        target = os.path.join(directory, "merged")
        frame.write.text(target)
        lines = 0
        for part in sorted(glob.glob(os.path.join(target, "part-*"))):
            with open(part, "rb") as file:
                while chunk := file.read(1 << 20):
                    out.write(chunk)
                    lines += chunk.count(b"\n")
        return lines


def run(job: MergeJob, *, master: str | None, conf: Sequence[str], verbose: bool, out: BinaryIO) -> int | None:
    """`execute` on the active session, or on one of its own stopped at the end; the JVM's log is removed
    after a success. Raises as `execute`."""
    session = build_session(master=master, conf=conf, verbose=verbose, app_name="kafkaops state-change merge")
    try:
        count = execute(session.spark, job, out)
    except (PySparkException, Py4JError) as error:
        seen = f" (Spark's log: {session.log_path})" if session.log_path else ""
        raise KafkaOpsError(f"Spark job failed: {_first_line(error)}{seen}") from None
    finally:
        if session.owned:
            session.spark.stop()
    if session.log_path is not None:  # kept only to explain a failure
        os.remove(session.log_path)
    return count


def _first_line(error: Exception) -> str:
    return (str(error).strip().splitlines() or [type(error).__name__])[0]


def main(argv: Sequence[str] | None = None) -> int:
    """The spark-submit entry: the CLI's merge options; master and Spark settings come from spark-submit."""
    parser = argparse.ArgumentParser(prog="merge_job.py", description=__doc__.splitlines()[0])
    parser.add_argument("--logs", help="comma-separated files, directories or globs, on any Hadoop file system")
    parser.add_argument("--logs-regex", help="/dir/regex, as Kafka's StateChangeLogMerger")
    parser.add_argument("--topic")
    parser.add_argument("--partitions")
    parser.add_argument("--start-time", default=KAFKA_DEFAULT_START)
    parser.add_argument("--end-time", default=KAFKA_DEFAULT_END)
    parser.add_argument("--broker")
    parser.add_argument("--controller-epoch")
    parser.add_argument("--level")
    parser.add_argument("--grep", help="a regular expression searched in each entry's whole text (Python re syntax)")
    parser.add_argument("--annotate", action="store_true")
    parser.add_argument("--output", choices=FORMATS, default="text")
    parser.add_argument("--output-path", help="a directory on any Hadoop file system (default: stdout)")
    parser.add_argument("--verbose", action="store_true")
    args = parser.parse_args(argv)
    try:
        if (args.logs is None) == (args.logs_regex is None):
            raise InvalidArgumentError("Provide exactly one of --logs or --logs-regex")
        job = MergeJob(
            logs=[entry for entry in (args.logs or "").split(",") if entry],
            logs_regex=args.logs_regex,
            spec=filter_from_options(
                args.topic,
                args.partitions,
                args.start_time,
                args.end_time,
                args.broker,
                args.controller_epoch,
                args.level,
                args.grep,
            ),
            output=args.output,
            output_path=args.output_path,
            annotate=args.annotate,
        )
        run(job, master=None, conf=(), verbose=args.verbose, out=sys.stdout.buffer)
    except KafkaOpsError as error:
        sys.stderr.write(f"{error}\n")
        return 1
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 0


if __name__ == "__main__":
    sys.exit(main())
