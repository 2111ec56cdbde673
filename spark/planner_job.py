"""Reassignment planning on Spark: `kafkaops reassign-partitions --generate --engine spark`, and a
file-to-file job for plans too big for one machine's memory:

    spark-submit --py-files kafkaops.zip spark/planner_job.py --input current.jsonl --broker-list 0-999 \\
        --output plan/ [--format json|parquet] [--stats-json stats.json] [--seed 0]

A scale-out of `admin.planner`, not a second algorithm: the same five phases over the same pure
functions, so both engines give the same plan for the same input and seed.

1. `normalize_partition` per row (executors);
2. `TopicStats` per topic with `aggregateByKey` (executors), collected: one small record per topic;
3. `solve_targets` on the driver, its per-topic targets broadcast;
4. `realize_topic` per topic after `groupByKey` (executors): a topic's partitions are planned together;
5. leader repair: cluster leader counts aggregated; only partitions `needs_leader_repair` picks are
   collected and rebalanced on the driver by `repair_leaders` (every partition, in the rare case
   that pick cannot reach the bounds).

Executors run Python (phases 1, 2, 4): they need kafkaops importable — the same virtualenv on a
local or standalone cluster, `--py-files` (a zip of the package) elsewhere. Input rows: JSON lines
`{"topic": "t", "partition": 0, "replicas": [1, 2, 3]}` or parquet with those columns. Output: the
same columns, one row per partition, as JSON lines or parquet, plus the plan report.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from pyspark import RDD, SparkContext
from pyspark.sql import SparkSession

from kafkaops.admin.planner import (
    Key,
    Layout,
    Plan,
    PlanReport,
    RepairRow,
    ReportBuilder,
    Targets,
    TopicOutcome,
    TopicStats,
    dropped_for_racks,
    leaders_balanced,
    make_layout,
    needs_leader_repair,
    normalize_partition,
    realize_topic,
    repair_leaders,
    solve_targets,
    topic_figures,
    validate_current,
)
from kafkaops.cluster.common.errors import InvalidArgumentError, KafkaOpsError

Row = tuple[str, int, list[int]]
"""(topic, partition, replicas) — the job's input and output row."""

ROW_SCHEMA = "topic string, partition int, replicas array<int>"


# --- the phases as RDD steps ---------------------------------------------------------------------


def _normalized(rows: RDD, layout: Any) -> RDD:
    """(topic, (partition, slots, kept leader, current replicas)) per row."""

    def normalize(row: Row) -> tuple[str, tuple[int, list[int], int, list[int]]]:
        topic, pid, replicas = row
        slots, leader = normalize_partition(replicas, layout.value)
        return topic, (pid, slots, leader, list(replicas))

    return rows.map(normalize)


def _check_rows(rows: RDD, layout: Layout) -> None:
    """`validate_current` on a distributed input: the first bad row raises Kafka's text."""
    limit = len(layout.brokers)
    bad = rows.filter(lambda r: not r[2] or len(set(r[2])) != len(r[2]) or len(r[2]) > limit).take(1)
    if bad:
        topic, pid, replicas = bad[0]
        validate_current({(topic, pid): replicas}, layout)


def _stats(normalized: RDD, layout: Any) -> dict[str, TopicStats]:
    def add(stats: TopicStats, part: tuple[int, list[int], int, list[int]]) -> TopicStats:
        _, slots, leader, replicas = part
        k = layout.value.num_racks
        stats.add(slots, leader, k, dropped_for_racks(replicas, slots, layout.value) if k > 1 else ())
        return stats

    def merge(a: TopicStats, b: TopicStats) -> TopicStats:
        return a.merge(b)

    return dict(normalized.aggregateByKey(TopicStats(), add, merge).collect())


def _outcomes(normalized: RDD, targets: Any, layout: Any, seed: int, partitions: int) -> RDD:
    """(TopicOutcome, current replicas by partition id) per topic."""

    def realize(
        item: tuple[str, Iterable[tuple[int, list[int], int, list[int]]]],
    ) -> tuple[TopicOutcome, dict[int, list[int]]]:
        topic, parts = item
        parts = list(parts)
        replica_targets, leader_targets = targets.value[topic]
        outcome = realize_topic(
            topic, [(p, s, lead) for p, s, lead, _ in parts], replica_targets, leader_targets, layout.value, seed
        )
        return outcome, {p: current for p, _, _, current in parts}

    return normalized.groupByKey(partitions).map(realize)


def _leader_counts(outcomes: RDD, n: int) -> list[int]:
    def count(item: tuple[TopicOutcome, dict[int, list[int]]]) -> list[int]:
        counts = [0] * n
        for _, replicas in item[0].partitions:
            counts[replicas[0]] += 1
        return counts

    return outcomes.map(count).reduce(lambda a, b: [x + y for x, y in zip(a, b, strict=True)])


def _repair_rows(outcomes: RDD, counts: list[int], targets: Targets, every: bool) -> list[RepairRow]:
    caps, floors = targets.broker_leaders, targets.leader_floors

    def pick(item: tuple[TopicOutcome, dict[int, list[int]]]) -> Iterator[RepairRow]:
        o = item[0]
        for (pid, replicas), lead in zip(o.partitions, o.original_leaders, strict=True):
            if every or needs_leader_repair(replicas, counts, caps, floors):
                yield o.topic, pid, replicas, lead

    return sorted(outcomes.flatMap(pick).collect(), key=lambda r: (r[0], r[1]))


def _final_rows(outcomes: RDD, fixed: Any, layout: Any) -> RDD:
    """(topic, partition, proposed broker ids, current broker ids) per partition."""

    def rows(item: tuple[TopicOutcome, dict[int, list[int]]]) -> Iterator[tuple[str, int, list[int], list[int]]]:
        o, current = item
        brokers = layout.value.brokers
        repaired = fixed.value
        for pid, replicas in o.partitions:
            final = repaired.get((o.topic, pid), replicas)
            yield o.topic, pid, [brokers[b] for b in final], current[pid]

    return outcomes.flatMap(rows)


@dataclasses.dataclass(frozen=True)
class SparkPlan:
    """The plan as an RDD of (topic, partition, proposed, current) rows, with what the driver learnt."""

    rows: RDD
    targets: Targets
    inexact_topics: tuple[str, ...]


_SHIPPED = "_kafkaops_shipped"


def ship_package(sc: SparkContext) -> None:
    """Make kafkaops importable on the executors, whatever Python they run: the planner's modules
    (and the few they import) zipped and added with `addPyFile`, as `--py-files` would. Once per
    SparkContext; under spark-submit with `--py-files` it is harmless."""
    if getattr(sc, _SHIPPED, False):
        return
    import importlib
    import os
    import tempfile
    import zipfile

    handle, path = tempfile.mkstemp(prefix="kafkaops-", suffix=".zip")
    os.close(handle)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        # `kafkaops` is a namespace package: zipimport finds one only through directory entries, and
        # without an __init__.py it merges with any kafkaops the executor already has
        archive.writestr("kafkaops/", b"")
        for sub in ("admin", "cluster", "spark", "statechange"):
            root = list(importlib.import_module(f"kafkaops.{sub}").__path__)[0]
            for folder, dirs, files in os.walk(root):
                dirs[:] = sorted(d for d in dirs if d != "__pycache__")
                relative = os.path.relpath(folder, root)
                archive.writestr(os.path.normpath(os.path.join("kafkaops", sub, relative)) + "/", b"")
                for name in sorted(files):
                    if name.endswith(".py"):
                        archive.write(os.path.join(folder, name), os.path.join("kafkaops", sub, relative, name))
    sc.addPyFile(path)
    setattr(sc, _SHIPPED, True)


def plan_rows(spark: SparkSession, rows: RDD, layout: Layout, seed: int = 0) -> SparkPlan:
    """Phases 1-5 on `rows` (an RDD of (topic, partition, replicas)). Nothing is collected but the
    per-topic statistics and the partitions that take part in the leader repair."""
    sc = spark.sparkContext
    ship_package(sc)
    _check_rows(rows, layout)
    layout_b = sc.broadcast(layout)
    normalized = _normalized(rows, layout_b).cache()
    stats = _stats(normalized, layout_b)
    targets = solve_targets(stats, layout, seed)
    per_topic = sc.broadcast({t: (targets.replicas[t], targets.leaders[t]) for t in stats})
    outcomes = _outcomes(normalized, per_topic, layout_b, seed, max(2, sc.defaultParallelism * 2)).cache()
    counts = _leader_counts(outcomes, len(layout.brokers))
    repaired: dict[Key, list[int]] = {}
    if not leaders_balanced(counts, targets):
        repaired = repair_leaders(lambda every: _repair_rows(outcomes, counts, targets, every), counts, targets)
    inexact = tuple(sorted(outcomes.filter(lambda item: not item[0].exact).map(lambda item: item[0].topic).collect()))
    normalized.unpersist()
    return SparkPlan(_final_rows(outcomes, sc.broadcast(repaired), layout_b), targets, inexact)


def plan_on_spark(
    spark: SparkSession,
    current: Mapping[Key, Sequence[int]],
    brokers: Iterable[int],
    racks: Mapping[int, str] | None = None,
    seed: int = 0,
) -> Plan:
    """`admin.planner.plan_balanced` on Spark, for an assignment held in memory (the CLI's engine).

    Raises the planner's errors for bad input, KafkaOpsError when Spark fails.
    """
    layout = make_layout(brokers, racks)
    validate_current(current, layout)
    sc = spark.sparkContext
    data = [(t, p, list(r)) for (t, p), r in current.items()]
    rows = sc.parallelize(data, max(2, min(sc.defaultParallelism * 4, len(data) // 20_000 + 1)))
    try:
        result = plan_rows(spark, rows, layout, seed)
        proposed = {(t, p): new for t, p, new, _ in result.rows.collect()}
    except KafkaOpsError:
        raise
    except Exception as error:  # Py4J and Spark's own exceptions: a failure of the engine, not of the input
        raise KafkaOpsError(f"The Spark job failed: {error}") from error
    return Plan(proposed, result.targets.bound, result.inexact_topics)


def report_on_spark(plan: SparkPlan, layout: Layout, all_racks: Mapping[int, str] | None = None) -> PlanReport:
    """The plan report, aggregated on the executors (per-topic figures merged by a reduce)."""
    known = dict(all_racks or {})
    known.update(layout.racks or {})
    racks_before = len(set(known.values())) if known else 1
    rack_map = known if layout.racks else {}
    brokers = layout.brokers
    num_racks = layout.num_racks

    def figures(item: tuple[str, Iterable[tuple[list[int], list[int]]]]) -> ReportBuilder:
        topic, rows = item
        return ReportBuilder().add(
            topic_figures(topic, ((cur, new, 0) for new, cur in rows), brokers, rack_map, racks_before, num_racks)
        )

    by_topic = plan.rows.map(lambda r: (r[0], (r[2], r[3]))).groupByKey()
    builder = by_topic.map(figures).reduce(lambda a, b: a.merge(b))
    return builder.finish(brokers, known, plan.targets.bound, with_bytes=False)


# --- files ---------------------------------------------------------------------------------------


def read_rows(spark: SparkSession, path: str, fmt: str) -> RDD:
    """Rows of a JSON-lines or parquet file (or directory): columns topic, partition, replicas."""
    # an explicit schema spares JSON a pass to infer one
    reader = spark.read.parquet(path) if fmt == "parquet" else spark.read.schema(ROW_SCHEMA).json(path)
    missing = {"topic", "partition", "replicas"} - set(reader.columns)
    if missing:
        raise InvalidArgumentError(f"{path}: missing column(s) {', '.join(sorted(missing))}")
    return reader.select("topic", "partition", "replicas").rdd.map(lambda r: (r[0], int(r[1]), [int(b) for b in r[2]]))


def write_rows(spark: SparkSession, rows: RDD, path: str, fmt: str) -> None:
    """One row per partition, sorted within each output file (a global sort would cost a shuffle)."""
    frame = spark.createDataFrame(rows.map(lambda r: (r[0], r[1], r[2])), ROW_SCHEMA)
    writer = frame.sortWithinPartitions("topic", "partition").write.mode("errorifexists")
    if fmt == "parquet":
        writer.parquet(path)
    else:
        writer.json(path)


def parse_brokers(text: str) -> list[int]:
    """`0,1,2` or ranges `0-999` (the job's own flag; the CLI takes Kafka's --broker-list)."""
    brokers: list[int] = []
    for part in text.split(","):
        first, dash, last = part.partition("-")
        try:
            brokers.extend(range(int(first), int(last) + 1) if dash else [int(first)])
        except ValueError:
            raise InvalidArgumentError(f'Invalid broker list "{text}": expected ids or ranges like 0-999') from None
    return brokers


def main(argv: Sequence[str] | None = None) -> int:
    from kafkaops.spark.session import build_session

    parser = argparse.ArgumentParser(description="Plan a reassignment on Spark, files in, files out.")
    parser.add_argument("--input", required=True, help="current assignment: JSON lines or parquet")
    parser.add_argument("--input-format", choices=("json", "parquet"), default=None)
    parser.add_argument("--output", required=True, help="directory for the proposed assignment")
    parser.add_argument("--format", choices=("json", "parquet"), default="json")
    parser.add_argument("--broker-list", required=True, help="target brokers: 0,1,2 or 0-999")
    parser.add_argument("--racks-json", help='a JSON object {"<broker id>": "<rack>"} for rack-aware planning')
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--stats-json", help="write the plan report here")
    parser.add_argument("--master")
    parser.add_argument("--conf", action="append", default=[])
    args = parser.parse_args(argv)
    try:
        brokers = parse_brokers(args.broker_list)
        racks = None
        if args.racks_json:
            with open(args.racks_json) as handle:
                racks = {int(b): str(r) for b, r in json.load(handle).items()}
        layout = make_layout(brokers, racks)
        session = build_session(master=args.master, conf=args.conf, app_name="kafkaops-planner")
        spark = session.spark
        try:
            fmt = args.input_format or ("parquet" if args.input.rstrip("/").endswith(".parquet") else "json")
            rows = read_rows(spark, args.input, fmt)
            plan = plan_rows(spark, rows, layout, args.seed)
            plan.rows.cache()
            write_rows(spark, plan.rows, args.output, args.format)
            report = report_on_spark(plan, layout)
            document = report.as_dict()
            if args.stats_json:
                with open(args.stats_json, "w") as handle:
                    json.dump(document, handle, indent=2)
            sys.stderr.write(
                f"Planned {report.partitions} partitions: {report.replicas_moved} replicas moved "
                f"(lower bound {report.lower_bound.total}), replica spread {report.replicas_after.spread:g}, "
                f"leader spread {report.leaders_after.spread:g}\n"
            )
        finally:
            if session.owned:
                spark.stop()
    except KafkaOpsError as error:
        sys.stderr.write(f"Error: {error}\n")
        return 1
    except Exception as error:  # Spark's and Py4J's: an existing output path, an unreadable input...
        first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        sys.stderr.write(f"Error: The Spark job failed: {first}\n")
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
