"""Benchmark: consumer-group rebalances and offset commits on a 3-broker kafkaops cluster (issue 16).

Measured with confluent-kafka (librdkafka) members, range assignor (eager: every member gives up its
partitions when a rebalance starts), session.timeout.ms 6000, heartbeat.interval.ms 300, on a topic of
--partitions partitions (RF 3), `group.initial.rebalance.delay.ms` 0:

    join        a group of --members members is stable (every partition assigned once); one more
                subscribes. Timed from its subscribe() to the moment every member holds its new
                assignment (all partitions, once each, the newcomer among them); also from the first
                revocation a member saw (the rebalance proper).
    death       a group of --members members, one of them a separate process, is stable; that process is
                SIGKILLed. The coordinator notices after the session timeout; the figure is from the
                first revocation a survivor saw to every survivor holding its new assignment (the
                session timeout excluded), and kill → done beside it.
    commits     one member commits its position synchronously (OffsetCommit, acks=all into
                `__consumer_offsets`) as fast as it can for --seconds: commits/s; beside it, in the same
                run, a producer sending one record at a time synchronously (Produce acks=all, flush after
                each) to a topic of RF 3: produces/s; and a producer flat out (linger.ms 5): records/s.

Printed: the times (ms) and the rates. Every process started here is stopped at the end, also on an
error or Ctrl-C, and the state dir (a fresh temporary one) is removed.

Usage: .venv/bin/python bench/consumer_groups.py [--members 10] [--partitions 100] [--seconds 10]
"""

from __future__ import annotations

import argparse
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

TOPIC = "bench-groups"
COMMIT_TOPIC = "bench-commits"
GROUP = "bench-group"
SESSION_MS = 6000
BROKER_OVERRIDES = {
    "auto.create.topics.enable": False,
    "auto.leader.rebalance.enable": False,
    "group.initial.rebalance.delay.ms": 0,
    "offsets.topic.num.partitions": 10,
}
VICTIM = """
import sys, time
from confluent_kafka import Consumer
c = Consumer({"bootstrap.servers": sys.argv[1], "group.id": sys.argv[2], "session.timeout.ms": int(sys.argv[4]),
              "heartbeat.interval.ms": 300, "partition.assignment.strategy": "range", "enable.auto.commit": False})
c.subscribe([sys.argv[3]], on_assign=lambda c_, ps: print("assigned", len(ps), flush=True))
while True:
    c.poll(0.1)
"""


def settings(bootstrap: str) -> dict[str, Any]:
    return {
        "bootstrap.servers": bootstrap,
        "group.id": GROUP,
        "session.timeout.ms": SESSION_MS,
        "heartbeat.interval.ms": 300,
        "partition.assignment.strategy": "range",
        "enable.auto.commit": False,
        "auto.offset.reset": "earliest",
    }


@dataclass
class Member:
    """A confluent-kafka member polling on its own thread; its assignment and when it changed."""

    bootstrap: str
    assignment: set[tuple[str, int]] = field(default_factory=set)
    revoked_at: list[float] = field(default_factory=list)
    assigned_at: list[float] = field(default_factory=list)
    stop: threading.Event = field(default_factory=threading.Event)
    thread: threading.Thread | None = None
    subscribed_at: float = 0.0

    def start(self) -> None:
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        from confluent_kafka import Consumer

        consumer = Consumer(settings(self.bootstrap))

        def on_assign(_c: Any, partitions: list[Any]) -> None:
            self.assignment = {(p.topic, p.partition) for p in partitions}
            self.assigned_at.append(time.monotonic())

        def on_revoke(_c: Any, _partitions: list[Any]) -> None:
            self.assignment = set()
            self.revoked_at.append(time.monotonic())

        self.subscribed_at = time.monotonic()
        consumer.subscribe([TOPIC], on_assign=on_assign, on_revoke=on_revoke)
        try:
            while not self.stop.is_set():
                consumer.poll(0.05)
        finally:
            consumer.close()

    def close(self) -> None:
        self.stop.set()
        if self.thread is not None:
            self.thread.join(30)


def whole(members: list[Member], partitions: int) -> bool:
    """Every partition assigned to exactly one member, every member holding some."""
    held = [tp for m in members for tp in m.assignment]
    return len(held) == partitions and len(set(held)) == partitions and all(m.assignment for m in members)


def wait(condition: Any, timeout_s: float, what: str) -> float:
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError(what)
        time.sleep(0.005)
    return time.monotonic()


def measure_join(bootstrap: str, args: argparse.Namespace, started: list[Any]) -> tuple[float, float]:
    members = [Member(bootstrap) for _ in range(args.members)]
    started.extend(m.close for m in members)
    for m in members:
        m.start()
    wait(lambda: whole(members, args.partitions), 120, "the first group stable")
    time.sleep(1.0)
    newcomer = Member(bootstrap)
    started.append(newcomer.close)
    marks = {id(m): len(m.revoked_at) for m in members}
    begin = time.monotonic()
    newcomer.start()
    everyone = [*members, newcomer]
    done = wait(lambda: whole(everyone, args.partitions), 120, "the group with the newcomer")
    first_revoke = min(m.revoked_at[marks[id(m)]] for m in members if len(m.revoked_at) > marks[id(m)])
    for m in everyone:
        m.close()
    return (done - begin) * 1000, (done - first_revoke) * 1000


def measure_death(bootstrap: str, args: argparse.Namespace, started: list[Any]) -> tuple[float, float]:
    members = [Member(bootstrap) for _ in range(args.members - 1)]
    started.extend(m.close for m in members)
    victim = subprocess.Popen(
        [sys.executable, "-c", VICTIM, bootstrap, GROUP, TOPIC, str(SESSION_MS)], stdout=subprocess.PIPE, text=True
    )

    def stop_victim() -> None:
        victim.kill()
        victim.wait()

    started.append(stop_victim)
    for m in members:
        m.start()

    def stable() -> bool:
        held = [tp for m in members for tp in m.assignment]
        return len(set(held)) == len(held) and args.partitions - len(held) > 0 and all(m.assignment for m in members)

    wait(stable, 120, "the group with the victim stable")
    time.sleep(2.0)
    marks = {id(m): len(m.revoked_at) for m in members}
    killed = time.monotonic()
    victim.send_signal(signal.SIGKILL)
    victim.wait()
    done = wait(lambda: whole(members, args.partitions), 120, "the survivors holding every partition")
    first_revoke = min(m.revoked_at[marks[id(m)]] for m in members if len(m.revoked_at) > marks[id(m)])
    for m in members:
        m.close()
    return (done - first_revoke) * 1000, (done - killed) * 1000


def measure_commits(bootstrap: str, seconds: float) -> tuple[float, float, float]:
    from confluent_kafka import Consumer, Producer
    from confluent_kafka import TopicPartition as CTopicPartition

    consumer = Consumer({**settings(bootstrap), "group.id": "bench-committer"})
    try:
        # the first commit finds the coordinator (and may create __consumer_offsets): not timed
        consumer.commit(offsets=[CTopicPartition(COMMIT_TOPIC, 0, 0)], asynchronous=False)
        commits, end = 0, time.monotonic() + seconds
        begin = time.monotonic()
        while time.monotonic() < end:
            consumer.commit(offsets=[CTopicPartition(COMMIT_TOPIC, 0, commits + 1)], asynchronous=False)
            commits += 1
        commit_rate = commits / (time.monotonic() - begin)
    finally:
        consumer.close()
    producer = Producer({"bootstrap.servers": bootstrap, "acks": "all", "linger.ms": 0})
    sent, end = 0, time.monotonic() + seconds
    begin = time.monotonic()
    while time.monotonic() < end:
        producer.produce(COMMIT_TOPIC, b"v" * 100, partition=0)
        producer.flush(30)
        sent += 1
    sync_rate = sent / (time.monotonic() - begin)
    batched = Producer({"bootstrap.servers": bootstrap, "acks": "all", "linger.ms": 5})
    count, end = 0, time.monotonic() + seconds
    begin = time.monotonic()
    while time.monotonic() < end:
        try:
            batched.produce(COMMIT_TOPIC, b"v" * 100, partition=0)
            count += 1
        except BufferError:
            batched.poll(0.01)
        batched.poll(0)
    batched.flush(60)
    return commit_rate, sync_rate, count / (time.monotonic() - begin)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--members", type=int, default=10)
    parser.add_argument("--partitions", type=int, default=100)
    parser.add_argument("--seconds", type=float, default=10.0)
    args = parser.parse_args()
    state = Path(tempfile.mkdtemp(prefix="kafkaops-bench-groups-"))
    started: list[Any] = []
    try:
        return run(state, args, started)
    finally:
        from kafkaops.cluster.local.signals import stop_started

        stop_started(started)
        shutil.rmtree(state, ignore_errors=True)


def run(state: Path, args: argparse.Namespace, started: list[Any]) -> int:
    from kafkaops.admin import topics as admin_topics
    from kafkaops.cluster.local.cluster import LocalCluster
    from kafkaops.cluster.local.waiting import wait_for
    from kafkaops.cluster.local.zookeeper import LocalZooKeeper, free_port
    from kafkaops.cluster.zk.client import KafkaZkClient
    from kafkaops.cluster.zk.values import TopicPartition

    zookeeper = LocalZooKeeper(state / "zk", free_port())
    cluster = LocalCluster(state / "cluster")
    zookeeper.start()
    started.append(zookeeper.stop)
    started.append(
        lambda: [
            cluster.stop_broker(b, hard=True) for b in (cluster.broker_ids() if cluster.config_file.exists() else [])
        ]
    )
    connect = zookeeper.connect_string + "/bench-groups"
    status = cluster.up(brokers=3, zookeeper_connect=connect, broker_overrides=BROKER_OVERRIDES)
    bootstrap = ",".join(b.endpoint.removeprefix("PLAINTEXT://") for b in status.brokers if b.endpoint)
    with KafkaZkClient(connect) as zk:
        for topic, count in ((TOPIC, args.partitions), (COMMIT_TOPIC, 1)):
            admin_topics.create_topic(zk, topic, count, 3, None, {})
            tps = [TopicPartition(topic, p) for p in range(count)]

            def led(tps: list[TopicPartition] = tps) -> bool:
                states = zk.get_partition_states(tps)
                return all(s is not None and s.leader_and_isr.leader >= 0 for s in states.values())

            wait_for(led, 60, what=f"leaders of {topic}")
    commit_rate, sync_rate, batched_rate = measure_commits(bootstrap, args.seconds)
    join_total, join_rebalance = measure_join(bootstrap, args, started)
    death_rebalance, death_total = measure_death(bootstrap, args, started)
    print(f"cluster        : 3 brokers, topic of {args.partitions} partitions (RF 3), range assignor, "
          f"session.timeout.ms {SESSION_MS}")  # fmt: skip
    print(f"member joins   : {join_rebalance:8.0f} ms rebalance (first revocation → all {args.members + 1} "
          f"assigned), {join_total:.0f} ms from the newcomer's subscribe")  # fmt: skip
    print(f"member dies    : {death_rebalance:8.0f} ms rebalance (first revocation → {args.members - 1} survivors "
          f"assigned, session timeout excluded), {death_total:.0f} ms from SIGKILL")  # fmt: skip
    print(f"offset commits : {commit_rate:8.0f} /s synchronous OffsetCommit (acks=all into __consumer_offsets)")
    print(f"produce        : {sync_rate:8.0f} /s synchronous single-record Produce (acks=all, RF 3), "
          f"ratio commits/produces {commit_rate / sync_rate:.2f}; {batched_rate:.0f} records/s batched")  # fmt: skip
    return 0


if __name__ == "__main__":
    from kafkaops.cluster.local.signals import run_program

    run_program(main)
