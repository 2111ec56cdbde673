"""Benchmark: reassignment planning, the `balanced` planner against Kafka's `--generate`, in the same run.

Scenarios (current assignments drawn with Kafka's own algorithm from a fixed seed, RF 3):

1. add-25%: 100 brokers, 100,000 partitions (1,000 topics x 100), balanced; 25 brokers added.
2. decommission-10%: the same cluster; 10 brokers removed from the broker list.
3. skewed: 100 brokers, 100,000 partitions placed with a skew toward low broker ids (the heaviest
   broker holds ~4x the lightest); planned onto the same 100 brokers.
4. racks: add-25% with 4 racks (broker id mod 4), rack-aware.
5. 1M-on-1000: 1,000,000 partitions (2,000 topics x 500) on 900 brokers; 100 brokers added.

For each: replicas moved, the lower bound on moves for the balance goal (and moves / bound), the
spread (max - min per broker) of replicas and leaders after, the worst per-topic spread, rack
violations after, leader changes, and seconds. Goals (issue 7): moves <= 1.05 x bound with spreads
<= 1; 100k partitions in <= 5 s; 1M in <= 60 s.

Usage: .venv/bin/python bench/planner.py [--only NAME[,NAME]] [--skip-1m] [--spark]
`--spark` also runs the Spark engine (embedded local[*]) on every scenario it runs.
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Callable

from kafkaops.admin.assignment import JavaRandom, assign_replicas_to_brokers
from kafkaops.admin.planner import Key, plan_balanced, plan_kafka, plan_report

Assignment = dict[Key, list[int]]


def kafka_cluster(
    brokers: list[int], topics: int, partitions: int, seed: int, racks: dict[int, str] | None = None
) -> Assignment:
    """What a cluster created by kafka-topics looks like: every topic drawn by Kafka's algorithm."""
    rng = JavaRandom(seed)
    current: Assignment = {}
    for t in range(topics):
        for p, replicas in assign_replicas_to_brokers(brokers, partitions, 3, racks=racks, rng=rng).items():
            current[(f"topic-{t:05d}", p)] = replicas
    return current


def skewed_cluster(brokers: list[int], topics: int, partitions: int, seed: int) -> Assignment:
    """Replicas drawn with weight 1 / (1 + id / 33): the first brokers hold ~4x the last."""
    rng = random.Random(seed)
    weights = [1 / (1 + i / 33) for i in range(len(brokers))]
    current: Assignment = {}
    for t in range(topics):
        for p in range(partitions):
            chosen: list[int] = []
            while len(chosen) < 3:
                b = rng.choices(brokers, weights)[0]
                if b not in chosen:
                    chosen.append(b)
            current[(f"topic-{t:05d}", p)] = chosen
    return current


def scenarios(skip_1m: bool) -> dict[str, Callable[[], tuple[Assignment, list[int], dict[int, str] | None]]]:
    hundred = list(range(100))
    found: dict[str, Callable[[], tuple[Assignment, list[int], dict[int, str] | None]]] = {
        "add-25%": lambda: (kafka_cluster(hundred, 1000, 100, 1), list(range(125)), None),
        "decommission-10%": lambda: (kafka_cluster(hundred, 1000, 100, 1), list(range(10, 100)), None),
        "skewed": lambda: (skewed_cluster(hundred, 1000, 100, 3), hundred, None),
        "racks": lambda: (
            kafka_cluster(hundred, 1000, 100, 1, {b: f"rack-{b % 4}" for b in hundred}),
            list(range(125)),
            {b: f"rack-{b % 4}" for b in range(125)},
        ),
    }
    if not skip_1m:
        found["1M-on-1000"] = lambda: (kafka_cluster(list(range(900)), 2000, 500, 5), list(range(1000)), None)
    return found


def row(
    name: str,
    strategy: str,
    current: Assignment,
    proposed: Assignment,
    brokers: list[int],
    racks,
    seconds: float,
    bound=None,
) -> str:  # type: ignore[no-untyped-def]
    report = plan_report(current, proposed, brokers, racks, bound=bound)
    lb = report.lower_bound.total
    ratio = f"{report.replicas_moved / lb:.3f}" if lb else "-"
    return (
        f"| {name} | {strategy} | {report.partitions:,} | {report.replicas_moved:,} | {lb:,} | {ratio} | "
        f"{report.replicas_after.spread:g} | {report.leaders_after.spread:g} | {report.topic_spread_after} | "
        f"{report.rack_violations_after} | {report.leader_changes:,} | {seconds:.2f} |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", help="comma-separated scenario names")
    parser.add_argument("--skip-1m", action="store_true", help="leave out the 1M-partition scenario")
    parser.add_argument("--spark", action="store_true", help="also run the Spark engine (local[*])")
    args = parser.parse_args()

    chosen = scenarios(args.skip_1m)
    if args.only:
        chosen = {k: v for k, v in chosen.items() if k in args.only.split(",")}
    spark = None
    if args.spark:
        from kafkaops.spark.planner_job import plan_on_spark
        from kafkaops.spark.session import build_session

        spark = build_session(master="local[*]").spark
    print(
        "| scenario | strategy | partitions | replicas moved | lower bound | moved / bound | replica spread "
        "| leader spread | worst topic spread | rack violations | leader changes | seconds |"
    )
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name, build in chosen.items():
        current, brokers, racks = build()
        start = time.perf_counter()
        plan = plan_balanced(current, brokers, racks, seed=0)
        seconds = time.perf_counter() - start
        print(row(name, "balanced", current, plan.proposed, brokers, racks, seconds, plan.bound), flush=True)
        if spark is not None:
            start = time.perf_counter()
            spark_plan = plan_on_spark(spark, current, brokers, racks, seed=0)
            seconds = time.perf_counter() - start
            same = "" if spark_plan.proposed == plan.proposed else " (differs from local!)"
            print(
                row(name, f"balanced, spark{same}", current, spark_plan.proposed, brokers, racks, seconds), flush=True
            )
        start = time.perf_counter()
        proposed = plan_kafka(current, brokers, racks, seed=0)
        seconds = time.perf_counter() - start
        print(row(name, "kafka", current, proposed, brokers, racks, seconds, plan.bound), flush=True)


if __name__ == "__main__":
    from kafkaops.cluster.local.signals import run_program  # Ctrl-C stops it, even inherited ignored

    run_program(main)
