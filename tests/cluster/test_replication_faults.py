"""Kafka's replication system test in small (kafkatest `tests/core/replication_test.py`).

Three brokers, a topic of 3 partitions with replication factor 3, min.insync.replicas=2 and unclean
leader election off. kafka-python's default producer (idempotent, acks=all) runs on a thread and records
every acknowledged (partition, offset, value), values numbered and unique, while the test hits one broker
with one failure. The broker (Kafka's `broker_type`) is either the leader of partition 0 that is not the
controller, or the controller, which then also leads partition 0; it follows in the two other partitions.

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
    cd /work/main && .venv/bin/python -m tests.cluster.test_replication_faults --runs 20 --mode hard_bounce \
        --victim controller --bounces 3 --stop-on-failure --keep

(--keep leaves every run's broker directories, server.out and state-change.log included, and prints where.)
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

from bench.chaos_runner.workload import close_kafka_python_producer
from kafkaops.admin import topics as admin_topics
from kafkaops.cluster.local.cluster import LocalCluster
from kafkaops.cluster.zk.client import KafkaZkClient
from kafkaops.cluster.zk.values import LeaderAndIsr
from tests.cluster.clients_util import (
    Background,
    Rec,
    all_bootstraps,
    broker_log_tail,
    compare_replica_logs,
    confluent_consume,
    leader_of,
    partition_states,
    wait_partitions,
)
from tests.cluster.conftest import FAST

MODES = ("clean_shutdown", "hard_shutdown", "clean_bounce", "hard_bounce")
VICTIMS = ("leader", "controller")
CLEAN_STOP_S = 15.0
"""A SIGTERM'd broker leading one partition and following two must be gone within this (Kafka: well under 1 s)."""
ACKS_RESUME_S = 15.0
"""After the new leaders are in ZooKeeper, acks=all must flow again on every partition within this: kafka-python
retries after 100 ms and refreshes metadata on NOT_LEADER; Kafka's controller has taken the dead broker out
of every ISR by then. (A dead follower left in an ISR would hold acks=all for replica.lag.time.max.ms, 30 s.)"""
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
    phases: tuple[tuple[str, float], ...] = ()
    """(what, seconds since the start) at the end of each phase, for finding where the time goes."""

    def timeline(self) -> str:
        return ", ".join(f"{what} {at:.1f}" for what, at in self.phases)


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


def _place_topic(zk: KafkaZkClient, brokers: list[int], victim: int) -> None:
    """RF 3 over the 3 brokers; `victim` leads partition 0 and follows in the two others."""
    a, b = [x for x in brokers if x != victim]
    assignment = {0: [victim, a, b], 1: [a, victim, b], 2: [b, a, victim]}
    admin_topics.create_topic(zk, TOPIC, None, None, assignment, TOPIC_CONFIG)


def _pick_victim(zk: KafkaZkClient, brokers: list[int], kind: str) -> int:
    controller = zk.get_controller_id()
    assert controller is not None, "no controller"
    if kind == "controller":
        return controller
    return leader_of(zk, TOPIC, 0) if zk.exists(f"/brokers/topics/{TOPIC}") else min(set(brokers) - {controller})


def run_fault(
    local: LocalCluster, zk: KafkaZkClient, mode: str, victim_kind: str = "leader", bounces: int = 1
) -> FaultReport:
    """One scenario on a running 3-broker cluster; raises AssertionError (with the brokers' log tails) on failure.

    `victim_kind` "leader": the leader of partition 0, not the controller; "controller": the controller, which
    also leads partition 0 (Kafka's replication test has both broker types)."""
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r}: one of {', '.join(MODES)}")
    if victim_kind not in VICTIMS:
        raise ValueError(f"unknown victim {victim_kind!r}: one of {', '.join(VICTIMS)}")
    started = time.monotonic()
    brokers = local.broker_ids()
    victim = _pick_victim(zk, brokers, victim_kind)
    _place_topic(zk, brokers, victim)
    wait_partitions(zk, TOPIC, PARTITIONS, isr_size=3, condition=lambda s: s.leader == s.isr[0])
    hard = mode.startswith("hard")
    bounce = mode.endswith("bounce")
    acked: list[Rec] = []
    failed: list[object] = []
    phases: list[tuple[str, float]] = []

    def phase(what: str) -> None:
        phases.append((what, time.monotonic() - started))

    def acks_since(before: int) -> dict[int, int]:
        counts = Counter(r.partition for r in acked[before:])
        return {p: counts[p] for p in range(PARTITIONS)}

    phase("topic online")
    try:
        producer = Background(_producer_loop(all_bootstraps(local), acked, failed))
        try:
            _wait(lambda: len(acked) >= 300, 30, "300 acks before the failure")
            phase("300 acks")
            for round_ in range(bounces if bounce else 1):
                if round_ > 0:
                    wait_partitions(zk, TOPIC, PARTITIONS, isr_size=3, timeout_s=30)
                    victim = _pick_victim(zk, brokers, victim_kind)
                before = len(acked)
                stopping = time.monotonic()
                local.stop_broker(victim, hard=hard)
                phase(f"broker {victim} stopped")
                took = time.monotonic() - stopping
                assert took < CLEAN_STOP_S, (
                    f"broker {victim} took {took:.1f} s to exit after SIGTERM (controlled shutdown of 3 partitions)"
                )

                def moved_away(state: LeaderAndIsr, gone: int = victim) -> bool:
                    return state.leader not in (gone, -1)

                wait_partitions(zk, TOPIC, PARTITIONS, condition=moved_away, timeout_s=30)
                phase("new leaders")
                if bounce:
                    local.start_broker(victim)
                    phase(f"broker {victim} registered again")
                resumed = time.monotonic()
                # every partition, not only the victim's: a dead follower left in an ISR stalls acks=all too
                _wait(
                    lambda b=before: min(acks_since(b).values()) >= 50,
                    ACKS_RESUME_S,
                    f"50 acks on every partition within {ACKS_RESUME_S:.0f} s of the new leaders after broker "
                    f"{victim} went away; acks per partition since: {acks_since(before)}; ISRs now "
                    f"{ {p: s.isr if s else None for p, s in partition_states(zk, TOPIC, PARTITIONS).items()} }",
                )
                phase(f"50 acks on every partition ({time.monotonic() - resumed:.1f} s)")
        finally:
            producer.stop()
        phase("producer flushed")
        assert not failed, f"{len(failed)} sends failed, e.g. {failed[:3]}"
        if not bounce:
            _check_consumed(acked, _consume_all(local), f"broker {victim} down")
            phase("consumed with the broker down")
            local.start_broker(victim)
            phase(f"broker {victim} registered again")
        wait_partitions(zk, TOPIC, PARTITIONS, isr_size=3, timeout_s=40)
        phase("ISR full")
        consumed = _consume_all(local)
        _check_consumed(acked, consumed, "all brokers up")
        phase("consumed")
        for partition in range(PARTITIONS):
            deadline = time.monotonic() + 20
            while (difference := compare_replica_logs(local, TOPIC, partition, brokers)) is not None:
                assert time.monotonic() < deadline, f"replica logs differ after 20 s: {difference}"
                time.sleep(0.25)
        phase("replica logs identical")
    except AssertionError as exc:
        tails = "\n".join(broker_log_tail(local, b, 15) for b in local.broker_ids())
        timeline = ", ".join(f"{what} {at:.1f}" for what, at in phases)
        raise AssertionError(f"{mode} (victim broker {victim}): {exc}\ntimeline: {timeline}\n{tails}") from exc
    return FaultReport(mode, victim, len(acked), len(consumed), time.monotonic() - started, tuple(phases))


@pytest.mark.slow
@pytest.mark.parametrize("victim", VICTIMS)
@pytest.mark.parametrize("mode", MODES)
def test_acked_records_survive_a_broker_failure(cluster, zk, mode: str, victim: str) -> None:
    local = cluster(brokers=3, **BROKER_OVERRIDES)
    report = run_fault(local, zk, mode, victim)
    assert report.acked >= 300 + PARTITIONS * 50


# --- script mode ----------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    from kafkaops.cluster.local.zookeeper import LocalZooKeeper, free_port

    parser = argparse.ArgumentParser(description="Repeat the replication fault scenarios.")
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--mode", choices=MODES, action="append", help="a mode to run (repeatable; default all)")
    parser.add_argument("--victim", choices=VICTIMS, action="append", help="which broker fails (default both)")
    parser.add_argument("--bounces", type=int, default=1, help="bounces per bounce run")
    parser.add_argument("--stop-on-failure", action="store_true")
    parser.add_argument("--keep", action="store_true", help="keep the brokers' directories (logs) and print where")
    args = parser.parse_args(argv)
    cases = [(mode, victim) for mode in args.mode or MODES for victim in args.victim or VICTIMS]
    root = Path(tempfile.mkdtemp(prefix="kafkaops-faults-"))
    server = LocalZooKeeper(root / "zk", free_port())
    server.start()
    failures = 0
    try:
        for run in range(args.runs):
            for mode, victim in cases:
                name = f"{mode}-{victim}"
                local = LocalCluster(root / f"run-{run}-{name}")
                connect = f"{server.connect_string}/faults-{run}-{name}"
                try:
                    local.up(brokers=3, zookeeper_connect=connect, broker_overrides={**FAST, **BROKER_OVERRIDES})
                    with KafkaZkClient(connect) as zk:
                        report = run_fault(local, zk, mode, victim, args.bounces)
                    print(
                        f"run {run:3d} {name:26s} ok    {report.acked:6d} acked {report.consumed:6d} consumed "
                        f"victim {report.victim} {report.seconds:5.1f} s ({report.timeline()})",
                        flush=True,
                    )
                except AssertionError as exc:
                    failures += 1
                    print(f"run {run:3d} {name:26s} FAIL  {exc}", flush=True)
                    if args.stop_on_failure:
                        return 1
                finally:
                    if local.config_file.exists():
                        for broker_id in local.broker_ids():
                            local.stop_broker(broker_id, hard=True)
                    if not args.keep:
                        shutil.rmtree(local.state_dir, ignore_errors=True)
    finally:
        server.stop()
        if args.keep:
            print(f"kept {root}")
        else:
            shutil.rmtree(root, ignore_errors=True)
    print(f"{failures} of {args.runs * len(cases)} runs failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
