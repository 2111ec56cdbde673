"""Kafka's replication system test in small (kafkatest `tests/core/replication_test.py`).

Three brokers, a topic of 3 partitions with replication factor 3, min.insync.replicas=2 and unclean
leader election off. kafka-python's default producer (idempotent, acks=all) runs on a thread and records
every acknowledged (partition, offset, value), values numbered and unique, while the test hits the leader
of partition 0 with one failure:

    clean_shutdown   SIGTERM: controlled shutdown, leaderships moved first; the broker stays down
    hard_shutdown    SIGKILL: the controller notices when its ZooKeeper session expires (6 s here)
    clean_bounce     SIGTERM, then started again
    hard_bounce      SIGKILL, then started again

Then, as Kafka's ProduceConsumeValidateTest does: everything is consumed from the beginning and
* every acknowledged record is there, at the offset it was acknowledged with (acked ⊆ consumed),
* offsets run without gaps and no value appears twice (the producer is idempotent: a batch retried after a
  leader change must not be appended again),
* once a stopped broker is back (shutdown modes restart it at the end) and the ISR is full again, every
  replica's log is the same, batch for batch and byte for byte, read from its segment files.

Script mode, to repeat the scenarios and catch rare races (its own ZooKeeper, a fresh cluster per run,
everything stopped at the end; exit code 1 if any run failed):

    cd /work/main && .venv/bin/python -m tests.cluster.test_replication_faults --runs 20
    cd /work/main && .venv/bin/python -m tests.cluster.test_replication_faults --runs 20 --mode hard_bounce --bounces 3
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import pytest

from kafkaops.admin import topics as admin_topics
from kafkaops.admin.assignment import JavaRandom
from kafkaops.cluster.local.cluster import LocalCluster
from kafkaops.cluster.zk.client import KafkaZkClient
from tests.cluster.clients_util import (
    Background,
    Rec,
    all_bootstraps,
    broker_log_tail,
    close_kafka_python_producer,
    compare_replica_logs,
    confluent_consume,
    leader_of,
    wait_partitions,
)
from tests.cluster.conftest import FAST

MODES = ("clean_shutdown", "hard_shutdown", "clean_bounce", "hard_bounce")
TOPIC = "replicated"
PARTITIONS = 3
TOPIC_CONFIG = {"min.insync.replicas": "2", "unclean.leader.election.enable": "false"}
BROKER_OVERRIDES = {"unclean.leader.election.enable": False}


@dataclass(frozen=True)
class FaultReport:
    mode: str
    victim: int
    acked: int
    consumed: int
    seconds: float


def _producer_loop(bootstrap: str, acked: list[Rec], failed: list[object]):  # type: ignore[no-untyped-def]
    """kafka-python's default producer: idempotent, acks=all; unique values round-robin over the partitions."""
    from kafka import KafkaProducer

    def run(stop: threading.Event) -> None:
        producer = KafkaProducer(bootstrap_servers=bootstrap, request_timeout_ms=30000)
        try:
            i = 0
            while not stop.is_set():
                value = f"value-{i:07d}".encode()
                future = producer.send(TOPIC, key=f"key-{i}".encode(), value=value, partition=i % PARTITIONS)
                future.add_callback(lambda md, v=value: acked.append(Rec(md.partition, None, v, (), md.offset)))
                future.add_errback(lambda exc, v=value: failed.append((v, exc)))
                i += 1
                time.sleep(0.002)
            producer.flush(90)
        finally:
            close_kafka_python_producer(producer)

    return run


def _wait(condition, timeout_s: float, what: str) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {timeout_s}s: {what}")
        time.sleep(0.05)


def _check_consumed(acked: list[Rec], consumed: list[Rec], when: str) -> None:
    by_partition: dict[int, list[int]] = {}
    for record in consumed:
        by_partition.setdefault(record.partition, []).append(record.offset)
    for partition, offsets in by_partition.items():
        assert offsets == list(range(len(offsets))), f"{when}: partition {partition} offsets have gaps or repeats"
    at = {(r.partition, r.offset): r.value for r in consumed}
    missing = [(r.partition, r.offset, r.value) for r in acked if at.get((r.partition, r.offset)) != r.value]
    assert not missing, (
        f"{when}: {len(missing)} of {len(acked)} acked records not consumed at their offsets, e.g. "
        f"{[(p, o, v, at.get((p, o))) for p, o, v in missing[:5]]} (partition, offset, acked, found)"
    )
    duplicates = [v for v, n in Counter(r.value for r in consumed).items() if n > 1]
    assert not duplicates, f"{when}: {len(duplicates)} values appended twice, e.g. {duplicates[:5]}"


def _consume_all(local: LocalCluster) -> list[Rec]:
    return confluent_consume(all_bootstraps(local), TOPIC, range(PARTITIONS), timeout_s=30)


def run_fault(local: LocalCluster, zk: KafkaZkClient, mode: str, bounces: int = 1) -> FaultReport:
    """One scenario on a running 3-broker cluster; raises AssertionError (with the brokers' log tails) on failure."""
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r}: one of {', '.join(MODES)}")
    started = time.monotonic()
    admin_topics.create_topic(zk, TOPIC, PARTITIONS, 3, None, TOPIC_CONFIG, rng=JavaRandom(7))
    wait_partitions(zk, TOPIC, PARTITIONS, isr_size=3)
    hard = mode.startswith("hard")
    victim = leader_of(zk, TOPIC, 0)
    acked: list[Rec] = []
    failed: list[object] = []
    try:
        producer = Background(_producer_loop(all_bootstraps(local), acked, failed))
        try:
            _wait(lambda: len(acked) >= 300, 30, "300 acks before the failure")
            for _ in range(bounces if mode.endswith("bounce") else 1):
                victim = leader_of(zk, TOPIC, 0)
                before = len(acked)
                local.stop_broker(victim, hard=hard)
                wait_partitions(zk, TOPIC, PARTITIONS, condition=lambda s, v=victim: s.leader != v, timeout_s=30)
                if mode.endswith("bounce"):
                    local.start_broker(victim)
                _wait(
                    lambda b=before: sum(1 for r in acked[b:] if r.partition == 0) >= 100,
                    45,
                    f"100 acks on partition 0 after broker {victim} went away ({mode})",
                )
        finally:
            producer.stop()
        assert not failed, f"{len(failed)} sends failed, e.g. {failed[:3]}"
        if mode.endswith("shutdown"):
            _check_consumed(acked, _consume_all(local), f"broker {victim} down")
            local.start_broker(victim)
        wait_partitions(zk, TOPIC, PARTITIONS, isr_size=3, timeout_s=40)
        consumed = _consume_all(local)
        _check_consumed(acked, consumed, "all brokers up")
        brokers = local.broker_ids()
        for partition in range(PARTITIONS):
            deadline = time.monotonic() + 20
            while (difference := compare_replica_logs(local, TOPIC, partition, brokers)) is not None:
                assert time.monotonic() < deadline, f"replica logs differ after 20 s: {difference}"
                time.sleep(0.25)
    except AssertionError as exc:
        tails = "\n".join(broker_log_tail(local, b, 15) for b in local.broker_ids())
        raise AssertionError(f"{mode} (victim broker {victim}): {exc}\n{tails}") from exc
    return FaultReport(mode, victim, len(acked), len(consumed), time.monotonic() - started)


@pytest.mark.slow
@pytest.mark.parametrize("mode", MODES)
def test_acked_records_survive_a_leader_failure(cluster, zk, mode: str) -> None:
    local = cluster(brokers=3, **BROKER_OVERRIDES)
    report = run_fault(local, zk, mode)
    assert report.acked >= 500


# --- script mode ----------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    from kafkaops.cluster.local.zookeeper import LocalZooKeeper, free_port

    parser = argparse.ArgumentParser(description="Repeat the replication fault scenarios.")
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--mode", choices=MODES, action="append", help="a mode to run (repeatable; default all)")
    parser.add_argument("--bounces", type=int, default=1, help="bounces per bounce run")
    parser.add_argument("--stop-on-failure", action="store_true")
    args = parser.parse_args(argv)
    modes = args.mode or list(MODES)
    root = Path(tempfile.mkdtemp(prefix="kafkaops-faults-"))
    server = LocalZooKeeper(root / "zk", free_port())
    server.start()
    failures = 0
    try:
        for run in range(args.runs):
            for mode in modes:
                local = LocalCluster(root / f"run-{run}-{mode}")
                connect = f"{server.connect_string}/faults-{run}-{mode}"
                try:
                    local.up(brokers=3, zookeeper_connect=connect, broker_overrides={**FAST, **BROKER_OVERRIDES})
                    with KafkaZkClient(connect) as zk:
                        report = run_fault(local, zk, mode, args.bounces)
                    print(
                        f"run {run:3d} {mode:15s} ok    {report.acked:6d} acked {report.consumed:6d} consumed "
                        f"victim {report.victim} {report.seconds:5.1f} s",
                        flush=True,
                    )
                except AssertionError as exc:
                    failures += 1
                    print(f"run {run:3d} {mode:15s} FAIL  {exc}", flush=True)
                    if args.stop_on_failure:
                        return 1
                finally:
                    if local.config_file.exists():
                        for broker_id in local.broker_ids():
                            local.stop_broker(broker_id, hard=True)
                    shutil.rmtree(local.state_dir, ignore_errors=True)
    finally:
        server.stop()
        shutil.rmtree(root, ignore_errors=True)
    print(f"{failures} of {args.runs * len(modes)} runs failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
