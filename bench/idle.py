"""Benchmark: what idle partitions cost, in CPU, against the same brokers with no partitions.

Three broker processes (`LocalCluster`, as `kafkaops cluster up` starts them); N partitions (default
10,000, RF 2) led by one broker and followed by another, nothing produced. Once every ISR is full and
the creation has settled, the CPU seconds each broker process uses over a window (default 30 s) are read
from /proc, as a fraction of one core. Baseline: the third broker, which holds no partition, in the same
window (its ZooKeeper session, its metadata, the controller's work if it is the controller).

The goal (issue 18): the follower of 10,000 idle partitions costs under 0.05 core (in proportion for fewer
partitions). The figure is also a row of issue 18's benchmark table (`bench/goals.py`), printed at the
end and, with `--json PATH`, written there.

Usage: .venv/bin/python bench/idle.py [--partitions 10000] [--window 30] [--settle 20] [--profile DIR] [--json PATH]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from controller import (  # bench/ is on the path
    FOLLOWER_STARTS,
    LEADER_STARTS,
    OPEN_FILES,
    Cluster,
    PartitionLines,
    cpu_seconds,
    create_topics,
    report_profile,
    require_profiler,
    wait_isrs_full,
)

from bench import goals  # bench/controller.py put the repository's root on the path
from bench.table import format_table, write_rows
from kafkaops.cluster.local.processes import raise_open_files_limit
from kafkaops.cluster.local.zookeeper import LocalZooKeeper, free_port
from kafkaops.cluster.zk.client import KafkaZkClient


def measure(cluster: Cluster, roles: dict[str, int], window_s: float) -> dict[str, float]:
    pids = {name: cluster.local.broker_pid(b) for name, b in roles.items()}
    before = {name: cpu_seconds(pid) for name, pid in pids.items()}
    started = time.monotonic()
    time.sleep(window_s)
    elapsed = time.monotonic() - started
    return {name: (cpu_seconds(pid) - before[name]) / elapsed for name, pid in pids.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--partitions", type=int, default=10_000)
    parser.add_argument("--window", type=float, default=30.0, help="seconds measured")
    parser.add_argument("--profile", type=Path, help="py-spy the follower and the leader into DIR")
    parser.add_argument("--settle", type=float, default=20.0, help="seconds waited after every ISR is full")
    parser.add_argument("--json", type=Path, help="write the row of issue 18's table here (a JSON list)")
    args = parser.parse_args()
    require_profiler(args.profile)
    raise_open_files_limit(OPEN_FILES)
    with tempfile.TemporaryDirectory() as temporary:
        state = Path(temporary)
        zookeeper = LocalZooKeeper(state / "zk", free_port(), heap_mb=1024)
        zookeeper.start()
        try:
            cluster = Cluster(zookeeper, state, "idle")
            try:
                controller = cluster.controller_id()
                leader, follower = (b for b in (0, 1, 2) if b != controller)
                following = PartitionLines(cluster.state_change_log(follower), FOLLOWER_STARTS, "idle")
                leading = PartitionLines(cluster.state_change_log(leader), LEADER_STARTS, "idle")
                with KafkaZkClient(cluster.connect) as zk:
                    topics = create_topics(zk, "idle", args.partitions, [[leader, follower]])
                following.wait_for(args.partitions, 1200)
                leading.wait_for(args.partitions, 1200)
                wait_isrs_full(cluster.connect, topics, args.partitions, 2, 1200)
                time.sleep(args.settle)
                roles = {"follower": follower, "leader": leader, "controller (no partitions)": controller}
                profiler = cluster.profile(args.profile, "idle", {"follower": follower, "leader": leader})
                cores = measure(cluster, roles, args.window)
                report_profile(profiler)
            finally:
                cluster.down()
        finally:
            zookeeper.stop()
    baseline = cores["controller (no partitions)"]
    row = goals.idle_row(args.partitions, cores["follower"], baseline)
    print(
        f"idle {args.partitions:>7} partitions over {args.window:.0f} s: follower {cores['follower']:.3f} core, "
        f"leader {cores['leader']:.3f} core; baseline (a broker holding none, the controller) {baseline:.3f} core; "
        f"goal: follower {row.goal}: {'met' if row.met else 'not met'}",
        flush=True,
    )
    print(format_table([row]), flush=True)
    if args.json:
        write_rows(args.json, [row])


if __name__ == "__main__":
    from kafkaops.cluster.local.signals import run_program  # Ctrl-C stops it, even inherited ignored

    run_program(main)
