"""Benchmark: a producer over its `producer_byte_rate` quota is held to it (issue 19: within 10 %).

Measured, on a 1-broker kafkaops cluster (LocalCluster on a LocalZooKeeper), with confluent-kafka
producing --record-bytes records flat out (linger.ms=5, batch.size=16384) to a 1-partition topic, acks=1:

    baseline    a producer without a quota, for --baseline-seconds: the rate the cluster takes from one
                producer here, which the quota must be well under to mean anything;
    quota       `producer_byte_rate` = --quota bytes/s set for client id `bench-quota` the way
                `kafkaops configs --alter --entity-type clients` sets it, then that client produces
                flat out. Kafka's quota is a rate over 11 one-second samples counted as at least 10 s:
                a client first sends up to 10 s worth at once, is then held until its window passes
                10 s, and sends the next 10 s worth when the sample holding that burst expires, 11 s
                after it began. So the rate is measured over --cycles whole 11-s cycles, from 10.5 s
                (just before the second burst) on: acknowledged bytes (record values, as the
                application sees them) per second of delivery reports, and the same in wire bytes
                (what the broker counts is each Produce request's size: estimated from the v2 format's
                per-record overhead; batch and request headers are shared by hundreds of records).

Printed: both rates, the quota, their ratio to it (the goal: within 10 %), the largest throttle time the
client was told, and the baseline's rate for comparison. Every process started here is stopped at the
end, also on an error or Ctrl-C, and the state dir (a fresh temporary one) is removed.

Usage: .venv/bin/python bench/quotas.py [--quota 262144] [--cycles 3] [--record-bytes 1000]
                                        [--baseline-seconds 5]
"""

from __future__ import annotations

import argparse
import logging
import shutil
import signal
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# bench/ is not an installed package: run as a script, this file finds the repository's root (for tests.*)
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

CLIENT_ID = "bench-quota"
TOPIC = "bench-quota"
GOAL = 0.10
CYCLE_S = 11.0  # quota.window.num (11) × quota.window.size.seconds (1)
MEASURED_FROM = CYCLE_S - 0.5
BROKER_OVERRIDES = {"auto.create.topics.enable": False, "auto.leader.rebalance.enable": False}
# a v2 record's own framing (length, attributes, timestamp and offset deltas, key and value lengths, header
# count) is about 8 bytes at these sizes; a batch's 61-byte header and the request's are shared by the
# hundreds of records a throttled producer batches, and left out
RECORD_OVERHEAD = 8


@dataclass
class Run:
    """Delivery reports of one producer: (monotonic time, bytes) per acknowledged record."""

    delivered: list[tuple[float, int]] = field(default_factory=list)
    failed: int = 0
    purged: int = 0
    throttles_s: list[float] = field(default_factory=list)
    """librdkafka's throttle callback reports the broker's throttle_time_ms in seconds."""

    def rate(self, since: float, until: float) -> float:
        sent = sum(size for at, size in self.delivered if since <= at <= until)
        return sent / (until - since)


def produce(bootstrap: str, client_id: str, seconds: float, record_bytes: int) -> tuple[Run, float]:
    """Flat out for `seconds`; returns the reports and the time producing started."""
    from confluent_kafka import KafkaError, Producer

    run = Run()
    value = b"q" * record_bytes

    def delivered(err: Any, msg: object) -> None:
        if err is not None:
            # what purge() took back at the end was never acknowledged: not a failure
            purged = err.code() in (KafkaError._PURGE_QUEUE, KafkaError._PURGE_INFLIGHT)
            run.purged += purged
            run.failed += not purged
        else:
            run.delivered.append((time.monotonic(), record_bytes))

    producer = Producer(
        {
            "bootstrap.servers": bootstrap,
            "client.id": client_id,
            "acks": "1",
            "linger.ms": 5,
            # the Java producer's batch size: a request larger than a good part of a second's quota
            # overshoots it by its own size before the broker can throttle (Kafka throttles after recording)
            "batch.size": 16384,
            "queue.buffering.max.kbytes": 4096,
            "throttle_cb": lambda event: run.throttles_s.append(event.throttle_time),
        }
    )
    started = time.monotonic()
    while time.monotonic() - started < seconds:
        try:
            producer.produce(TOPIC, value=value, partition=0, on_delivery=delivered)
        except BufferError:
            producer.poll(0.01)
        producer.poll(0)
    producer.purge()  # what is still queued was never sent: it does not count
    producer.flush(30)
    return run, started


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quota", type=int, default=256 * 1024, help="producer_byte_rate, bytes/s")
    parser.add_argument("--cycles", type=int, default=3, help="11-second quota cycles measured")
    parser.add_argument("--record-bytes", type=int, default=1000)
    parser.add_argument("--baseline-seconds", type=float, default=5.0)
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    state = Path(tempfile.mkdtemp(prefix="kafkaops-bench-quotas-"))
    try:
        run_cluster(state, args)
    except KeyboardInterrupt:
        print("interrupted; cleaned up", file=sys.stderr)
        sys.exit(130)
    finally:
        shutil.rmtree(state, ignore_errors=True)


def run_cluster(state: Path, args: argparse.Namespace) -> None:
    from kafkaops.admin import configs as admin_configs
    from kafkaops.admin import topics as admin_topics
    from kafkaops.admin.assignment import JavaRandom
    from kafkaops.cluster.local.cluster import LocalCluster
    from kafkaops.cluster.local.waiting import wait_for
    from kafkaops.cluster.local.zookeeper import LocalZooKeeper, free_port
    from kafkaops.cluster.zk.client import KafkaZkClient
    from kafkaops.cluster.zk.values import TopicPartition

    zookeeper = LocalZooKeeper(state / "zk", free_port())
    cluster = LocalCluster(state / "cluster")
    zookeeper.start()
    try:
        connect = zookeeper.connect_string + "/bench-quotas"
        status = cluster.up(brokers=1, zookeeper_connect=connect, broker_overrides=BROKER_OVERRIDES)
        bootstrap = ",".join(b.endpoint.removeprefix("PLAINTEXT://") for b in status.brokers if b.endpoint)
        with KafkaZkClient(connect) as zk:
            admin_topics.create_topic(zk, TOPIC, 1, 1, None, {}, rng=JavaRandom(1))
            tp = TopicPartition(TOPIC, 0)
            wait_for(lambda: (s := zk.get_partition_states([tp])[tp]) is not None and s.leader_and_isr.leader >= 0)
            # set first: the broker has long applied it (a watch) when the baseline run is over
            entity = admin_configs.parse_client_quota_entity(["clients"], [CLIENT_ID], alter=True)
            admin_configs.alter_config(zk, entity, {"producer_byte_rate": str(args.quota)}, [])
            baseline, started = produce(bootstrap, "bench-unlimited", args.baseline_seconds, args.record_bytes)
            baseline_rate = baseline.rate(started, started + args.baseline_seconds)
        run, started = produce(bootstrap, CLIENT_ID, MEASURED_FROM + args.cycles * CYCLE_S, args.record_bytes)
        report(args, run, started, baseline_rate)
    finally:
        for broker_id in cluster.broker_ids() if cluster.config_file.exists() else []:
            cluster.stop_broker(broker_id, hard=True)
        zookeeper.stop()


def report(args: argparse.Namespace, run: Run, started: float, baseline_rate: float) -> None:
    since = started + MEASURED_FROM
    until = since + args.cycles * CYCLE_S
    measured = run.rate(since, until)
    wire = measured * (args.record_bytes + RECORD_OVERHEAD) / args.record_bytes
    ratio, wire_ratio = measured / args.quota, wire / args.quota
    verdict = "meets" if abs(wire_ratio - 1) <= GOAL else "misses"
    print(f"baseline      : {baseline_rate / 1024:8.1f} KiB/s (one producer without a quota, acks=1)")
    print(f"quota         : {args.quota / 1024:8.1f} KiB/s producer_byte_rate for client id {CLIENT_ID}")
    print(
        f"measured      : {measured / 1024:8.1f} KiB/s of record values over {args.cycles} cycles "
        f"({MEASURED_FROM:.1f} s to {until - started:.1f} s), ratio {ratio:.3f}; ~{wire / 1024:.1f} KiB/s on the "
        f"wire, ratio {wire_ratio:.3f}: {verdict} the ±{GOAL:.0%} goal"
    )
    first = run.rate(started, since)
    print(
        f"first window  : {first / 1024:8.1f} KiB/s over the first {MEASURED_FROM:.1f} s (the burst Kafka's "
        "window allows, then held)"
    )
    print(
        f"throttle      : largest throttle_time_ms told to the client {max(run.throttles_s, default=0) * 1000:.0f}, "
        f"{len(run.delivered)} records acknowledged, {run.failed} failed, {run.purged} still queued at the end"
    )


if __name__ == "__main__":
    from kafkaops.cluster.local.signals import run_program  # Ctrl-C stops it, even inherited ignored

    run_program(main)
