"""Benchmark: controller elections and failover at scale, against raw ZooKeeper in the same run.

Scenarios (issue: brokers and the controller), each on a fresh in-process cluster of 3 brokers:

1. election: a broker leading N partitions (default 10,000) dies (its session closes); seconds from
   its `/brokers/ids` znode disappearing until every one of those partitions has a new leader
   written to ZooKeeper and applied by the surviving broker (LeaderAndIsr received). Baseline: the
   same number of fenced conditional state writes pipelined on one raw connection.
2. controlled shutdown: a broker leading N partitions (each with an in-sync follower) is stopped with
   a controlled shutdown; seconds from the call to its exit, every leadership moved first.
3. controller failover: with M partitions (default 100,000) the controller dies; seconds from its
   `/controller` znode disappearing until the new controller has loaded its context from ZooKeeper
   and acted on it. Baseline: pipelined reads of the same znodes with kazoo's async API and with our
   raw pipelined reader.

Usage: .venv/bin/python bench/controller.py [--partitions 10000] [--failover-partitions 100000]
"""

from __future__ import annotations

import argparse
import logging
import tempfile
import threading
import time
from pathlib import Path

from kafkaops.admin import topics as admin_topics
from kafkaops.cluster.local.inprocess import InProcessCluster
from kafkaops.cluster.local.processes import raise_open_files_limit
from kafkaops.cluster.local.zookeeper import LocalZooKeeper, free_port
from kafkaops.cluster.zk import znodes
from kafkaops.cluster.zk.client import KafkaZkClient, Op
from kafkaops.cluster.zk.pipelined import PipelinedReader

TOPIC_SIZE = 1000
REPLICATION_FACTOR = 2
FILES_PER_LOG = 1  # an empty log holds none; one per log leaves room for checkpoint files and sockets
OVERRIDES = {"auto.leader.rebalance.enable": False, "zookeeper.session.timeout.ms": 30000}
# one process holds every broker: under the GIL a long event can delay kazoo's heartbeats


def wait(condition, timeout_s: float = 600.0, interval_s: float = 0.05) -> float:  # type: ignore[no-untyped-def]
    # The brokers and the controller share this process's GIL: a check that walks every partition, run
    # every few milliseconds, took most of it and slowed what it measured (an election of 10,000 took 90 s).
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError("benchmark condition not reached")
        time.sleep(interval_s)
    return time.monotonic()


def create_topics(zk: KafkaZkClient, prefix: str, partitions: int, replicas: list[int]) -> list[str]:
    names = []
    for start in range(0, partitions, TOPIC_SIZE):
        name = f"{prefix}-{start // TOPIC_SIZE:04d}"
        count = min(TOPIC_SIZE, partitions - start)
        admin_topics.create_topic(zk, name, None, None, {p: replicas for p in range(count)}, {})
        names.append(name)
    return names


def leaders_applied(server, topics: list[str], leader: int, partitions: int) -> bool:  # type: ignore[no-untyped-def]
    roles = server.replica_manager.partitions
    return sum(1 for tp, role in list(roles.items()) if tp.topic in topics and role.leader == leader) >= partitions


def raw_fenced_writes(zk: KafkaZkClient, count: int) -> float:
    """`count` conditional setData multis with the epoch check, pipelined: the ZooKeeper ceiling."""
    zk.kazoo.ensure_path("/bench-raw")
    pending = [zk.kazoo.create_async(f"/bench-raw/n{i}", b"{}") for i in range(count)]
    for request in pending:
        request.get()
    epoch = zk.get_controller_epoch()
    assert epoch is not None
    started = time.monotonic()
    zk.fenced_multi_many([[Op.set(f"/bench-raw/n{i}", b'{"leader":1}', 0)] for i in range(count)], epoch[1])
    return time.monotonic() - started


def scenario_election(connect: str, state: Path, partitions: int) -> None:
    cluster = InProcessCluster(connect, state / "election", 3, OVERRIDES)
    cluster.start()
    try:
        controller = wait_controller(cluster)
        victim, survivor = (b for b in (0, 1, 2) if b != controller)
        with KafkaZkClient(connect) as zk:
            topics = create_topics(zk, "election", partitions, [victim, survivor])
            wait(lambda: leaders_applied(cluster.servers[survivor], topics, victim, partitions))
            baseline = raw_fenced_writes(zk, partitions)
            gone = threading.Event()
            zk.kazoo.exists(znodes.BrokerIdZNode.path(victim), watch=lambda event: gone.set())
            cluster.kill(victim)
            gone.wait(30)
            t0 = time.monotonic()
            t1 = wait(lambda: leaders_applied(cluster.servers[survivor], topics, survivor, partitions))
            events = cluster.servers[controller].controller.events
            # the BrokerChange that elected them (an ISR notification may have been handled after it)
            wait(lambda: events.processed_at.get("BrokerChange", 0.0) > t0)
            decided = events.processed_at["BrokerChange"]
        elapsed = t1 - t0
        controller_s = decided - t0
        print(
            f"election        {partitions:>7} partitions: {elapsed:6.2f} s from znode gone to all new leaders applied "
            f"({partitions / elapsed:7.0f}/s), of which {controller_s:5.2f} s for the controller to elect, write "
            f"and send; raw fenced multi ceiling {baseline:6.2f} s; ratio {controller_s / baseline:4.1f}x"
        )
    finally:
        cluster.shutdown()


def scenario_controlled_shutdown(connect: str, state: Path, partitions: int) -> None:
    cluster = InProcessCluster(connect, state / "shutdown", 3, OVERRIDES)
    cluster.start()
    try:
        controller = wait_controller(cluster)
        leaving, staying = (b for b in (0, 1, 2) if b != controller)
        with KafkaZkClient(connect) as zk:
            topics = create_topics(zk, "shutdown", partitions, [leaving, staying])
            wait(lambda: leaders_applied(cluster.servers[leaving], topics, leaving, partitions))
        t0 = time.monotonic()
        cluster.stop(leaving)
        elapsed = time.monotonic() - t0
        context = cluster.servers[controller].controller.context
        moved = all(
            (info := context.partition_leadership_info(tp)) is not None and info.leader_and_isr.leader == staying
            for tp in context.all_partitions()
        )
        print(
            f"controlled shut {partitions:>7} partitions: {elapsed:6.2f} s from the stop call to exit, "
            f"every leadership moved first: {moved}"
        )
    finally:
        cluster.shutdown()


def wait_controller(cluster: InProcessCluster) -> int:
    wait(lambda: (s := cluster.controller()) is not None and s.controller.failover_completed_at is not None, 60, 0.05)
    server = cluster.controller()
    assert server is not None
    return server.broker_id


def scenario_failover(connect: str, state: Path, partitions: int) -> None:
    cluster = InProcessCluster(connect, state / "failover", 3, OVERRIDES)
    cluster.start()
    try:
        controller = wait_controller(cluster)
        others = [b for b in (0, 1, 2) if b != controller]
        with KafkaZkClient(connect) as zk:
            started = time.monotonic()
            topics = create_topics(zk, "failover", partitions, others)
            wait(lambda: leaders_applied(cluster.servers[others[0]], topics, others[0], partitions), 1800, 0.2)
            created = time.monotonic() - started
            paths = [znodes.TopicPartitionStateZNode.path(t, p) for t in topics for p in range(TOPIC_SIZE)][:partitions]
            t = time.monotonic()
            zk.get_many(paths)
            kazoo_reads = time.monotonic() - t
            with PipelinedReader(connect) as reader:
                t = time.monotonic()
                reader.get_data_many(paths)
                raw_reads = time.monotonic() - t
            gone = threading.Event()
            zk.kazoo.exists(znodes.ControllerZNode.path(), watch=lambda event: gone.set())
            cluster.kill(controller)
            gone.wait(30)
            t0 = time.monotonic()
            wait(
                lambda: (s := cluster.controller()) is not None and s.controller.failover_completed_at is not None,
                600,
                0.01,
            )
            new = cluster.controller()
            assert new is not None
            elapsed = new.controller.failover_completed_at - t0
        print(
            f"ctrl failover   {partitions:>7} partitions: {elapsed:6.2f} s from /controller gone to the new controller "
            f"ready (created in {created:.0f} s); reading every state znode: kazoo async {kazoo_reads:5.2f} s, "
            f"raw pipelined {raw_reads:5.2f} s"
        )
    finally:
        cluster.shutdown()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--partitions", type=int, default=10_000)
    parser.add_argument("--failover-partitions", type=int, default=100_000)
    parser.add_argument("--skip-failover", action="store_true")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    # every broker lives in this process, so every replica's log descriptors count against one limit
    most = max(args.partitions, 0 if args.skip_failover else args.failover_partitions)
    wanted = most * REPLICATION_FACTOR * FILES_PER_LOG + 10_000
    open_files = raise_open_files_limit(wanted)
    if open_files < wanted:
        print(f"warning: open files limited to {open_files}, {wanted} wanted", flush=True)
    with tempfile.TemporaryDirectory() as state:
        server = LocalZooKeeper(Path(state) / "zk", free_port(), heap_mb=1024)
        server.start()
        try:
            scenario_election(server.connect_string + "/election", Path(state), args.partitions)
            scenario_controlled_shutdown(server.connect_string + "/shutdown", Path(state), args.partitions)
            if not args.skip_failover:
                scenario_failover(server.connect_string + "/failover", Path(state), args.failover_partitions)
        finally:
            server.stop()


if __name__ == "__main__":
    main()
