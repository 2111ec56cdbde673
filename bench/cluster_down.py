"""Benchmark: `kafkaops cluster down` of a 3-broker cluster holding data, against the old path in the same run.

Issue 19's figure (target: <= 5 s, no "unclean shutdown" line in any broker's log). Each round starts a fresh
local cluster (its own ZooKeeper, 3 brokers with default settings) under a temporary state dir, creates a topic
of 12 partitions with replication factor 3, writes 20,000 records of 100 bytes with acks=all through
`producer-perf-test`, then stops the cluster and times it:

- new: `LocalCluster.down()`: every broker stops at once, cleanly, without a controlled shutdown;
- old (the baseline): what `down()` did before: one broker after another, each with a controlled shutdown
  (SIGTERM), then ZooKeeper. The last brokers ask a controller that is gone, or one with nobody left to take
  their leaderships, and give up after `controlled.shutdown.max.retries` (3) x the 5 s backoff.

For each it prints the seconds, the "unclean shutdown" lines found in the brokers' logs and whether every
broker process is gone. The load average is printed first: the machine is shared, read figures with it.

Usage: .venv/bin/python bench/cluster_down.py [--rounds 1]
Stops every process it started on exit, error, SIGINT or SIGTERM.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from kafkaops.cluster.local.cluster import LocalCluster
from kafkaops.cluster.local.signals import run_program
from kafkaops.cluster.local.zookeeper import LocalZooKeeper

KAFKAOPS = str(Path(sys.executable).parent / "kafkaops")
UNCLEAN = "unclean shutdown"


def fill(local: LocalCluster) -> None:
    """A topic of 12 partitions, RF 3, with 20,000 records written with acks=all."""
    env = {**os.environ, "KAFKAOPS_ZOOKEEPER": local.zookeeper_connect}
    subprocess.run(
        [KAFKAOPS, "topics", "--create", "--topic", "data", "--partitions", "12", "--replication-factor", "3"],
        env=env,
        check=True,
        capture_output=True,
    )
    bootstrap = local.status().bootstrap_servers
    subprocess.run(
        [KAFKAOPS, "producer-perf-test", "--topic", "data", "--num-records", "20000", "--record-size", "100"]
        + ["--throughput", "-1", "--producer-props", f"bootstrap.servers={bootstrap}", "acks=all"],
        env=env,
        check=True,
        capture_output=True,
    )


def old_down(local: LocalCluster) -> None:
    """The path `down()` took before issue 19: controlled shutdowns, one broker after another."""
    for broker_id in local.broker_ids():
        local.stop_broker(broker_id)
    LocalZooKeeper.from_state_dir(local.state_dir).stop()


def unclean_lines(local: LocalCluster) -> int:
    return sum(
        line.lower().count(UNCLEAN)
        for log in local.state_dir.glob("brokers/*/logs/*")
        for line in log.read_text(errors="replace").splitlines()
    )


def round_of(name: str, base: Path) -> float:
    local = LocalCluster(base / name)
    try:
        local.up(brokers=3)
        fill(local)
        started = time.monotonic()
        if name == "old":
            old_down(local)
        else:
            local.down()
        elapsed = time.monotonic() - started
        gone = all(local.broker_pid(b) is None for b in local.broker_ids())
        unclean = unclean_lines(local)
        print(f"{name:>4}: {elapsed:6.2f} s, {unclean} unclean-shutdown line(s), every broker gone: {gone}")
        return elapsed
    finally:
        for broker_id in local.broker_ids():
            local.stop_broker(broker_id, hard=True)
        LocalZooKeeper.from_state_dir(local.state_dir).stop(hard=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=1)
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.2f}; 3 brokers, 12 partitions x RF 3, 20,000 records")
    base = Path(tempfile.mkdtemp(prefix="cluster-down-"))
    try:
        for _ in range(args.rounds):
            new = round_of("new", base)
            old = round_of("old", base)
            print(f"cluster down: {new:.2f} s; the old path: {old:.2f} s ({old / new:.0f}x)")
            shutil.rmtree(base / "new")
            shutil.rmtree(base / "old")
    finally:
        shutil.rmtree(base, ignore_errors=True)
    print(f"load average {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    run_program(main)
