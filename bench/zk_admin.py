"""Benchmark: kafkaops topics against raw ZooKeeper access patterns, in the same run.

1. describe: `admin.topics.describe_topics` (pipelined reads) against the sequential reads Kafka
   2.8's `kafka-topics --zookeeper --describe` makes (per topic: assignment, config; per partition:
   deletion marker, partition state — one synchronous round trip each), done with raw kazoo.
2. create: `admin.topics.create_topic` (validation + one multi per topic) against raw kazoo writing
   the same two znodes per topic with no validation (Kafka's two sequential writes).

Usage: .venv/bin/python bench/zk_admin.py [--topics 200] [--partitions 20]
Starts its own ZooKeeper on a free loopback port and stops it at the end.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from kafkaops.admin import topics as admin_topics
from kafkaops.admin.assignment import JavaRandom
from kafkaops.cluster.local.standin import register_standin_brokers
from kafkaops.cluster.local.zookeeper import LocalZooKeeper, free_port
from kafkaops.cluster.zk import znodes
from kafkaops.cluster.zk.client import KafkaZkClient
from kafkaops.cluster.zk.values import LeaderAndIsr, LeaderIsrAndControllerEpoch


def timed(action) -> float:  # type: ignore[no-untyped-def]
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--topics", type=int, default=200)
    parser.add_argument("--partitions", type=int, default=20)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as state:
        server = LocalZooKeeper(Path(state), free_port())
        server.start()
        try:
            run(server.connect_string, args.topics, args.partitions)
        finally:
            server.stop()


def run(connect: str, n_topics: int, n_partitions: int) -> None:
    ours = KafkaZkClient(connect + "/ours")
    raw = KafkaZkClient(connect + "/raw")
    register_standin_brokers(ours, [0, 1, 2])
    raw.ensure_paths(znodes.PERSISTENT_PATHS)
    rng = JavaRandom(1)
    names = [f"topic-{i:05d}" for i in range(n_topics)]

    # --- create ---------------------------------------------------------------------------
    def create_ours() -> None:
        for name in names:
            admin_topics.create_topic(ours, name, n_partitions, 3, None, {}, rng=rng)

    def create_raw() -> None:
        zk = raw.kazoo
        for name in names:
            assignment = {p: [p % 3, (p + 1) % 3, (p + 2) % 3] for p in range(n_partitions)}
            zk.create(znodes.ConfigEntityZNode.path("topics", name), znodes.ConfigEntityZNode.encode({}))
            zk.create(znodes.TopicZNode.path(name), znodes.TopicZNode.encode_replicas(assignment))

    create_ours_s = timed(create_ours)
    create_raw_s = timed(create_raw)

    # partition states, as a controller would have written them (same for both trees)
    for client in (ours, raw):
        pending = []
        for name in names:
            for p in range(n_partitions):
                state = LeaderIsrAndControllerEpoch(LeaderAndIsr(p % 3, 0, (p % 3, (p + 1) % 3)), 1)
                pending.append(
                    client.kazoo.create_async(
                        znodes.TopicPartitionStateZNode.path(name, p),
                        znodes.TopicPartitionStateZNode.encode(state),
                        makepath=True,
                    )
                )
        for request in pending:
            request.get()

    # --- describe -------------------------------------------------------------------------
    def describe_ours() -> None:
        descriptions = admin_topics.describe_topics(ours)
        assert sum(len(d.partitions) for d in descriptions) == n_topics * n_partitions

    def describe_raw() -> None:
        # Kafka 2.8 ZookeeperTopicService.describeTopic: one synchronous request after another
        zk = raw.kazoo
        zk.get_children("/brokers/ids")
        seen = 0
        for name in sorted(zk.get_children("/brokers/topics")):
            zk.get(znodes.TopicZNode.path(name))
            zk.get(znodes.ConfigEntityZNode.path("topics", name))
            for p in range(n_partitions):
                zk.exists(znodes.DeleteTopicsTopicZNode.path(name))
                zk.get(znodes.TopicPartitionStateZNode.path(name, p))
                seen += 1
        assert seen == n_topics * n_partitions

    describe_raw()  # warm both paths once
    describe_ours()
    describe_raw_s = min(timed(describe_raw) for _ in range(3))
    describe_ours_s = min(timed(describe_ours) for _ in range(3))

    ours.close()
    raw.close()
    partitions = n_topics * n_partitions
    print(f"topics={n_topics} partitions/topic={n_partitions} (ZooKeeper 127.0.0.1, same run)")
    print(
        f"create   kafkaops {create_ours_s * 1000 / n_topics:7.2f} ms/topic   "
        f"raw kazoo 2 writes {create_raw_s * 1000 / n_topics:7.2f} ms/topic   "
        f"ratio {create_ours_s / create_raw_s:5.2f}x the raw time"
    )
    print(
        f"describe kafkaops {describe_ours_s:7.3f} s ({partitions / describe_ours_s:9.0f} partitions/s)   "
        f"Kafka's sequential reads {describe_raw_s:7.3f} s ({partitions / describe_raw_s:9.0f} partitions/s)   "
        f"speed-up {describe_raw_s / describe_ours_s:5.1f}x"
    )


if __name__ == "__main__":
    from kafkaops.cluster.local.signals import run_program  # Ctrl-C stops it, even inherited ignored

    run_program(main)
