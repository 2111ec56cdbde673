"""The state-change log merge as a Spark job: extract (lines of files), transform (entries, filters, order),
load (text / JSON lines / parquet, to a path or to stdout).

It applies the streaming engine's rules with the same regular expressions (`statechange.patterns`) and
produces the same output, in the same order:

* Lines come from `spark.read.text` with `lineSep="\\n"` (so `\\r\\n` endings keep their `\\r`, as the
  local engine's bytes do), tagged with their file (`_metadata.file_path`), the byte offset of their split
  (`_metadata.file_block_start`) and `monotonically_increasing_id()`, which increases along a split.
  (split offset, id) therefore orders the lines of a file however Spark cut it into tasks; a row number
  over it is the line number.
* Continuation lines join the entry above them with a running `last(..., ignorenulls)` over the file's
  lines: no file has to fit in one row (as with `wholetext`) and big files stay splittable on read.
* Filters are evaluated on each entry's first line before the shuffle; an excluded entry still travels
  as its ordering columns only, because its continuation lines must find it. `--grep` looks at the whole
  entry, so it runs once the entries are assembled, as a Python predicate (`_grep`).
* The order is the streaming merge's: a stable sort by (running maximum of the kept timestamps within
  the stream, stream position, file position in the stream, line), which is what a k-way merge of the
  streams yields even where a file's timestamps go backwards (see `statechange.merge`).

All windows are partitioned by stream (one broker's rotated files) after one explicit repartition, so
the job shuffles the lines once for the windows and once for the global sort. A single huge stream is
one window task: the price of the merge's per-stream order.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from pyspark.sql import Column, DataFrame, SparkSession, Window
from pyspark.sql import functions as F

from kafkaops.cluster.common.errors import InvalidArgumentError
from kafkaops.statechange import patterns as p
from kafkaops.statechange.filters import EntryFilter, compile_grep
from kafkaops.statechange.sources import STATE_CHANGE_NAME
from kafkaops.statechange.writers import RECORD_FIELDS

TIMESTAMP_FORMAT = "yyyy-MM-dd HH:mm:ss,SSS"
"""log4j's `%d`, as a Spark datetime pattern (for the parquet `time` column)."""


@dataclass(frozen=True)
class InputFile:
    path: str
    """As handed to Spark's reader (a local path or a Hadoop URI)."""
    source: str
    """As shown in the output: the local engine's name for it."""
    stream: int
    order: int
    """Position of the file in its stream (rotated files, oldest first)."""


def input_files(streams: Sequence[Sequence[str]]) -> list[InputFile]:
    return [
        InputFile(path, path, stream, order) for stream, files in enumerate(streams) for order, path in enumerate(files)
    ]


# --- extract ---------------------------------------------------------------------------------------------


def _hadoop_path(spark: SparkSession, path: str) -> tuple[Any, Any]:
    """(org.apache.hadoop.fs.Path, its FileSystem): py4j proxies. Listing goes through Hadoop so that
    hdfs://, s3a:// and the cluster's configuration work as they do for Spark's own reader."""
    jvm: Any = spark._jvm
    hadoop_path = jvm.org.apache.hadoop.fs.Path(path)
    return hadoop_path, hadoop_path.getFileSystem(spark._jsc.hadoopConfiguration())


_EMPTY_AUTHORITY = r"^([a-zA-Z][a-zA-Z0-9+.-]*):///"
"""`file:///x` and `file:/x` name the same file; Hadoop writes the first, Spark's file index the second."""


def file_status(spark: SparkSession, path: str) -> tuple[str, int]:
    """(`_metadata.file_path` of `path` (its qualified, URL-encoded URI) normalised as in `read_lines`,
    its size in bytes)."""
    hadoop_path, fs = _hadoop_path(spark, path)
    status = fs.getFileStatus(hadoop_path)
    return re.sub(_EMPTY_AUTHORITY, r"\1:/", str(status.getPath().toUri().toString())), int(status.getLen())


def list_remote(spark: SparkSession, entries: Sequence[str], logs_regex: str | None) -> list[str]:
    """Expand `--logs` entries (files, directories, globs) or a `--logs-regex` on any Hadoop file system,
    with the local engine's rules (`statechange.sources`). Raises InvalidArgumentError."""
    files: list[str] = []
    if logs_regex is not None:
        slash = logs_regex.rfind("/")
        try:
            name_regex = re.compile(logs_regex[slash + 1 :])
        except re.error as error:
            raise InvalidArgumentError(f"Invalid regular expression in --logs-regex: {error}") from None
        directory = logs_regex[:slash] if slash >= 0 else "."
        files = [f for f in _list_files(spark, directory) if name_regex.search(posixpath.basename(f))]
    for entry in entries:
        hadoop_path, fs = _hadoop_path(spark, entry)
        statuses = fs.globStatus(hadoop_path) or []
        if not statuses:
            raise InvalidArgumentError(f"No state-change log matches {entry}")
        for status in sorted(statuses, key=lambda s: str(s.getPath().toString())):
            path = str(status.getPath().toString())
            if status.isDirectory():
                files += [f for f in _list_files(spark, path) if STATE_CHANGE_NAME in posixpath.basename(f)]
            else:
                files.append(path)
    if not files:
        raise InvalidArgumentError("No state-change log to merge")
    return list(dict.fromkeys(files))


def _list_files(spark: SparkSession, directory: str) -> list[str]:
    hadoop_path, fs = _hadoop_path(spark, directory)
    try:
        statuses = fs.listStatus(hadoop_path)
    except Exception as error:  # py4j wraps the FileNotFoundException
        raise InvalidArgumentError(f"Cannot list directory {directory}: {error}") from None
    return sorted(str(s.getPath().toString()) for s in statuses if s.isFile())


def read_lines(spark: SparkSession, files: Sequence[InputFile]) -> tuple[DataFrame, int]:
    """(value, source, stream, file_order, block, row: one row per line of the files; their size in bytes)."""
    statuses = [file_status(spark, f.path) for f in files]
    table = spark.createDataFrame(
        [(key, f.source, f.stream, f.order) for (key, _), f in zip(statuses, files, strict=True)],
        "file_key string, source string, stream int, file_order int",
    )
    lines = (
        spark.read.option("lineSep", "\n")
        .text([f.path for f in files])
        .select(
            "value",
            F.regexp_replace("_metadata.file_path", _EMPTY_AUTHORITY, "$1:/").alias("file_key"),
            F.col("_metadata.file_block_start").alias("block"),
            # Increases along a split; computed on the scan, before anything can reorder rows.
            F.monotonically_increasing_id().alias("row"),
        )
    )
    return lines.join(F.broadcast(table), "file_key").drop("file_key"), sum(size for _, size in statuses)


# --- transform -------------------------------------------------------------------------------------------


def _group(message: Column, pattern: str, groups: Sequence[int]) -> Column:
    """The first participating group, as the local `_first_group` (Spark reports absent groups as "")."""
    return F.coalesce(*(F.nullif(F.regexp_extract(message, pattern, g), F.lit("")) for g in groups)).cast("bigint")


def _partitions(message: Column) -> Column:
    """array<struct<topic, partition>>: `parse.partitions_in`, over regexp_extract_all of each group."""
    topic_groups = [F.regexp_extract_all(message, F.lit(p.PARTITION), F.lit(t)) for t, _ in p.PARTITION_GROUPS]
    number_groups = [F.regexp_extract_all(message, F.lit(p.PARTITION), F.lit(n)) for _, n in p.PARTITION_GROUPS]
    # One struct per match, fields "0".."2n-1": the n topic groups, then the n partition groups.
    matches = F.arrays_zip(*[group.alias(str(i)) for i, group in enumerate(topic_groups + number_groups)])
    count = len(p.PARTITION_GROUPS)

    def pick(match: Column) -> Column:
        topic = F.coalesce(*(F.nullif(match[str(i)], F.lit("")) for i in range(count)))
        number = F.coalesce(*(F.nullif(match[str(count + i)], F.lit("")) for i in range(count)))
        return F.struct(topic.alias("topic"), number.cast("bigint").alias("partition"))

    return F.array_distinct(F.transform(matches, pick))


def _keep(spec: EntryFilter, ts: Column, level: Column, actor_id: Column, epoch: Column, parts: Column) -> Column:
    """`filters.fields_match` plus the time bounds, on one entry's first-line fields."""
    keep = F.lit(True)
    if spec.start is not None:
        keep = keep & (ts >= F.lit(spec.start))
    if spec.end is not None:
        keep = keep & (ts <= F.lit(spec.end))
    if spec.levels:
        keep = keep & level.isin(*sorted(spec.levels))
    if spec.brokers:
        keep = keep & actor_id.isin(*sorted(spec.brokers))
    if spec.controller_epochs:
        keep = keep & epoch.isin(*sorted(spec.controller_epochs))
    if spec.topic is not None:
        wanted = sorted(spec.partitions)
        keep = keep & F.exists(
            parts,
            lambda part: (
                (part["topic"] == F.lit(spec.topic)) & (part["partition"].isin(*wanted) if wanted else F.lit(True))
            ),
        )
    return F.coalesce(keep, F.lit(False))


def entry_lines(lines: DataFrame, spec: EntryFilter, *, fields: bool) -> DataFrame:
    """The kept lines, each with its entry and merge key: columns value, content (without a trailing
    `\\r`), source, stream, file_order, line, entry (struct: line, timestamp, level, actor, actor_id,
    controller_epoch, partitions, message — the parsed fields only if `fields`), key."""
    value = F.col("value")
    content = F.when(value.endswith("\r"), value.substr(F.lit(1), F.length(value) - 1)).otherwise(value)
    starts = value.rlike("^" + p.ENTRY_START)
    ts = F.when(starts, F.regexp_extract(value, p.ENTRY_TIMESTAMP, 1))  # either layout
    parse = fields or spec.needs_fields
    level = F.when(starts, F.nullif(F.regexp_extract(content, p.HEADER, p.HEADER_LEVEL), F.lit("")))
    message = F.when(starts, F.regexp_extract(content, p.HEADER, p.HEADER_MESSAGE)).otherwise(content)
    controller_id = _group(message, p.ACTOR, p.ACTOR_CONTROLLER_ID)
    broker_id = _group(message, p.ACTOR, p.ACTOR_BROKER_ID)
    actor_id = F.coalesce(controller_id, broker_id)
    actor = F.when(controller_id.isNotNull(), F.lit("controller")).when(broker_id.isNotNull(), F.lit("broker"))
    epoch = F.coalesce(
        _group(message, p.ACTOR, p.ACTOR_EPOCH), _group(message, p.REQUEST_EPOCH, (p.REQUEST_EPOCH_EPOCH,))
    )
    parts = _partitions(message) if parse else F.array()
    keep = _keep(spec, ts, level, actor_id, epoch, parts)
    if spec.topic is not None:  # cheap test first: a line naming a partition of T contains T
        keep = F.when(F.instr(value, spec.topic) > 0, keep).otherwise(F.lit(False))
    header = [ts.alias("timestamp"), keep.alias("keep")]
    if fields:  # an excluded entry's fields are never shown: they do not travel
        header += [
            F.when(keep, column).alias(name)
            for name, column in (
                ("level", level),
                ("actor", actor),
                ("actor_id", actor_id),
                ("controller_epoch", epoch),
                ("partitions", parts),
                ("message", message),
            )
        ]
    # Parsed and filtered before the shuffle; the first line of an excluded entry travels as a tombstone
    # (no text), because its continuation lines must still find it to be dropped with it.
    tagged = lines.select(
        F.when(starts & ~keep, F.lit(None)).otherwise(value).alias("value"),
        "source",
        "stream",
        "file_order",
        "block",
        "row",
        starts.alias("starts"),
        F.struct(*header).alias("header"),
    )
    by_file = Window.partitionBy("stream", "file_order").orderBy("block", "row")
    by_stream = Window.partitionBy("stream").orderBy("file_order", "block", "row")
    running = Window.unboundedPreceding, Window.currentRow
    numbered = tagged.repartition("stream").select(  # one shuffle serves every window below
        "*", F.row_number().over(by_file).alias("line")
    )
    # A timestamped line opens an entry; so does a file's first line (an orphan entry, no timestamp).
    opens = F.col("starts") | (F.col("line") == 1)
    entries = numbered.select(
        "*",
        F.last(F.when(opens, F.struct(F.col("line").alias("line"), "header.*")), ignorenulls=True)
        .over(by_file.rowsBetween(*running))
        .alias("entry"),
    ).where(F.col("entry.keep"))
    if spec.grep is not None:
        entries = _grep(entries, spec.grep, content)
    key = F.max(F.when(opens, F.coalesce(F.col("entry.timestamp"), F.lit("")))).over(by_stream.rowsBetween(*running))
    return entries.select(
        "value",
        content.alias("content"),
        "source",
        "stream",
        "file_order",
        "line",
        "entry",
        F.coalesce(key, F.lit("")).alias("key"),
    )


def _grep(entries: DataFrame, pattern: str, content: Column) -> DataFrame:
    """The lines of the entries whose text (`parse.entry_text`: the entry's lines without terminators,
    joined by `\\n`) contains a match of `pattern`, searched by Python's `re` on the executors.

    Not `rlike`: Java's regular expressions read the same source differently in too many places (`$`,
    `.`, `\\Z`, `\\b`, nested classes `[[]` and `&&`, octal `\\101`, `(?u)`, `(?x)` whitespace inside
    classes, case folding), so `rlike` would keep other entries than the streaming engine for some
    patterns, silently. The predicate is the pattern that `filters.compile_grep` compiled, pickled as its
    source and flags; it runs once per entry, on its first line's row (the text is collected over the
    entry, a window within the stream partitioning, so no extra shuffle), and only for entries that the
    other filters kept.
    """
    search = compile_grep(pattern).search

    def matches(text: str | None) -> bool | None:  # pickled by value: executors need only Python's stdlib
        return None if text is None else search(text) is not None

    by_entry = Window.partitionBy("stream", "file_order", "entry.line")
    whole = by_entry.orderBy("line").rowsBetween(Window.unboundedPreceding, Window.unboundedFollowing)
    text = F.when(F.col("line") == F.col("entry.line"), F.concat_ws("\n", F.collect_list(content).over(whole)))
    found = entries.select("*", F.udf(matches, "boolean", useArrow=False)(text).alias("grep"))
    return found.select("*", F.max("grep").over(by_entry).alias("hit")).where("hit").drop("grep", "hit")


OUTPUT_PARTITION_BYTES = 32 * 1024**2
"""Output partitions are sized from the input: small enough to stream one to the driver (toLocalIterator
pickles a whole partition), and `part-*` files of a sensible size. `orderBy` would let adaptive execution
coalesce the sorted partitions up to 64 MB each; one partition per 32 MB of input stays below that."""


def output_partitions(input_bytes: int) -> int:
    return max(1, -(-input_bytes // OUTPUT_PARTITION_BYTES))


def _sorted(frame: DataFrame, keys: Sequence[str], partitions: int) -> DataFrame:
    """`orderBy(*keys)` with a chosen number of partitions (an explicit range repartition, not coalesced)."""
    return frame.repartitionByRange(partitions, *keys).sortWithinPartitions(*keys)


def merged_text(entries: DataFrame, *, annotate: bool, partitions: int) -> DataFrame:
    """One string column `text`, the merged lines (annotated `source:line: ` if asked), globally sorted."""
    text = F.concat_ws(":", "source", "line", F.concat(F.lit(" "), "value")) if annotate else F.col("value")
    return _sorted(entries, ("key", "stream", "file_order", "line"), partitions).select(text.alias("text"))


def merged_records(entries: DataFrame, *, partitions: int, with_time: bool = False) -> DataFrame:
    """One row per entry, the JSON record's fields in RECORD_FIELDS order, globally sorted."""
    grouped = entries.groupBy("stream", "file_order", F.col("entry.line").alias("entry_line")).agg(
        F.first("entry").alias("entry"),
        F.first("key").alias("key"),
        F.first("source").alias("source"),
        F.array_sort(F.collect_list(F.when(F.col("line") > F.col("entry.line"), F.struct("line", "content")))).alias(
            "more"
        ),
    )
    columns = {
        "timestamp": F.col("entry.timestamp"),
        "level": F.col("entry.level"),
        "actor": F.col("entry.actor"),
        "actor_id": F.col("entry.actor_id"),
        "controller_epoch": F.col("entry.controller_epoch"),
        "partitions": F.col("entry.partitions"),
        "message": F.col("entry.message"),
        "continuation": F.transform("more", lambda line: line["content"]),
        "source": F.col("source"),
        "line": F.col("entry_line"),
    }
    selected = [columns[name].alias(name) for name in RECORD_FIELDS]
    if with_time:
        selected.append(F.try_to_timestamp(F.col("entry.timestamp"), F.lit(TIMESTAMP_FORMAT)).alias("time"))
    return _sorted(grouped, ("key", "stream", "file_order", "entry_line"), partitions).select(*selected)


def json_lines(records: DataFrame) -> DataFrame:
    """One string column `text`: each record as a JSON object (nulls written, as the local engine does)."""
    return records.select(F.to_json(F.struct(*records.columns), {"ignoreNullFields": "false"}).alias("text"))


# --- load ------------------------------------------------------------------------------------------------


def stream_text(frame: DataFrame) -> Iterator[str]:
    """The rows of a one-string-column frame, in order, a partition at a time (never all in memory)."""
    for row in frame.toLocalIterator(prefetchPartitions=True):
        yield row[0]
