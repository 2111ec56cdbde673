"""Issue 5's reassignment tests that mirror Kafka's own system tests (`reassign_partitions_test.py`,
`throttling_test.py`), run with the real `kafkaops` executable against real broker processes.

* Under load: 4 brokers, 20 partitions, RF 3, `min.insync.replicas=3`, 4 MB of records, then a plan that
  shuffles the replica sets between the partitions, with an idempotent acks=all producer and a consumer
  running throughout. Variants: brokers 0 and 2 bounced with SIGTERM while the move runs (Kafka's test
  bounces every other broker), the controller killed with SIGKILL and restarted at once while the move
  runs (both with `--throttle`, which keeps the move running while they are bounced), and the log start
  offset above 0 (old records deleted by retention before the move, as Kafka's test does). Pass: `--verify
  --wait` exits 0 with every partition complete, every acknowledged value is consumed exactly once at the
  offset it was acknowledged at, and `replica-verification --once --time -2` finds lag 0.
* Throttle: a move of B bytes at `--throttle R` takes at least 0.9 × B / R.
* Cancel: the original replicas come back and the adding replicas' directories leave the new brokers.
"""

from __future__ import annotations

import contextlib
import json
import logging
import random
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from bench.chaos_runner import workload
from kafkaops.admin import topics as admin_topics
from kafkaops.admin.assignment import JavaRandom
from kafkaops.admin.kafka_client import KafkaClient, RawFetchResult
from kafkaops.cluster.local.cluster import LocalCluster
from kafkaops.cluster.local.waiting import wait_for
from kafkaops.cluster.protocol.schemas import ApiKey
from kafkaops.cluster.zk import znodes
from kafkaops.cluster.zk.client import KafkaZkClient
from kafkaops.cluster.zk.values import ReplicaAssignment, TopicPartition
from tests.cluster.clients_util import (
    LogLines,
    Rec,
    all_bootstraps,
    broker_log_tail,
    kafka_python_consume,
    kafka_python_produce,
    log_dir,
    make_records,
    wait_partitions,
)

KAFKAOPS = str(Path(sys.executable).parent / "kafkaops")
TOPIC = "moving"
PARTITIONS = 20
RETENTION_CHECK = {"log.retention.check.interval.ms": 1000}


# --- the executable -------------------------------------------------------------------------------------


def kafkaops(env: dict[str, str], *args: str, timeout_s: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run([KAFKAOPS, *args], env=env, capture_output=True, text=True, timeout=timeout_s, check=False)


def write_plan(path: Path, topic: str, plan: dict[int, list[int]]) -> Path:
    document = {
        "version": 1,
        "partitions": [{"topic": topic, "partition": p, "replicas": r} for p, r in sorted(plan.items())],
    }
    path.write_text(json.dumps(document))
    return path


def execute(env: dict[str, str], plan: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    done = kafkaops(env, "reassign-partitions", "--execute", "--reassignment-json-file", str(plan), *extra)
    assert done.returncode == 0, f"--execute exited {done.returncode}: {done.stderr}{done.stdout}"
    return done


def verify_wait(env: dict[str, str], plan: Path, timeout_ms: int) -> subprocess.CompletedProcess[str]:
    return kafkaops(
        env,
        "reassign-partitions",
        "--verify",
        "--wait",
        "--timeout",
        str(timeout_ms),
        "--reassignment-json-file",
        str(plan),
        timeout_s=timeout_ms / 1000 + 30,
    )


# --- ZooKeeper and brokers ------------------------------------------------------------------------------


def assignment(zk: KafkaZkClient, topic: str) -> dict[int, ReplicaAssignment]:
    return zk.get_topic_assignments([topic])[topic].partitions


def all_started(zk: KafkaZkClient, topic: str, plan: dict[int, list[int]]) -> bool:
    """Every partition of the plan is moving (adding/removing replicas in its topic znode) or has moved."""
    return all(a.is_being_reassigned or list(a.replicas) == plan[p] for p, a in assignment(zk, topic).items())


def reassignment_active(zk: KafkaZkClient, topic: str) -> bool:
    return bool(zk.exists(znodes.ReassignPartitionsZNode.path())) or any(
        a.is_being_reassigned for a in assignment(zk, topic).values()
    )


def endpoint(local: LocalCluster, broker_id: int) -> str:
    found = next(b.endpoint for b in local.status().brokers if b.broker_id == broker_id)
    assert found is not None, f"broker {broker_id} is not registered"
    return found.removeprefix("PLAINTEXT://")


def replica_high_watermarks(
    local: LocalCluster, topic: str, replicas: dict[int, tuple[int, ...]], start: dict[int, int]
) -> dict[tuple[int, int], int]:
    """(partition, broker) → that replica's own high watermark (a debug fetch at `start[partition]` sent to
    the broker itself); -1 where the broker answered with an error."""
    found: dict[tuple[int, int], int] = {}
    with KafkaClient(all_bootstraps(local), request_timeout_ms=5000) as client:
        for broker_id in sorted({b for r in replicas.values() for b in r}):
            mine = {TopicPartition(topic, p): start[p] for p, r in replicas.items() if broker_id in r}
            for tp, result in client.fetch_raw_from_broker(broker_id, mine).items():
                found[(tp.partition, broker_id)] = result.high_watermark if isinstance(result, RawFetchResult) else -1
    return found


def segment_base_offsets(local: LocalCluster, broker_id: int, topic: str, partition: int) -> list[int]:
    return sorted(int(s.stem) for s in log_dir(local, broker_id, topic, partition).glob("*.log"))


def log_bytes(local: LocalCluster, broker_id: int, topic: str, partition: int) -> int:
    return sum(s.stat().st_size for s in log_dir(local, broker_id, topic, partition).glob("*.log"))


def earliest_and_latest(bootstrap: str, topic: str, partitions: int) -> tuple[dict[int, int], dict[int, int]]:
    """ListOffsets -2 and -1 of every partition, from its leader (kafka-python).

    kafka-python 3.0.12 retries a partition whose leader answers NOT_LEADER_OR_FOLLOWER at the same broker
    without refreshing its metadata (the Java client's KAFKA-9159, fixed there in 2.5), so a leader moved
    after its first metadata (the controller's preferred-leader check runs every second in these tests, and
    moves leaders right after a reassignment) makes it time out. A new consumer, with new metadata, then
    asks again; after three, the error names what each broker answers."""
    from kafka import KafkaConsumer
    from kafka.errors import KafkaTimeoutError
    from kafka.structs import TopicPartition as KTopicPartition

    tps = [KTopicPartition(topic, p) for p in range(partitions)]
    fetcher_log = logging.getLogger("kafka.consumer.fetcher")
    client_log = LogLines(keep=40)
    level, propagate = fetcher_log.level, fetcher_log.propagate
    fetcher_log.addHandler(client_log)
    fetcher_log.setLevel(logging.DEBUG)  # its retries are debug lines; kept here, not sent to pytest
    fetcher_log.propagate = False
    try:
        for attempt in range(3):
            consumer = KafkaConsumer(bootstrap_servers=bootstrap, group_id=None, request_timeout_ms=15000)
            try:
                earliest = consumer.beginning_offsets(tps, timeout_ms=5000)
                latest = consumer.end_offsets(tps, timeout_ms=5000)
                return {tp.partition: o for tp, o in earliest.items()}, {tp.partition: o for tp, o in latest.items()}
            except KafkaTimeoutError as timeout:
                if attempt == 2:
                    last_lines = "\n".join(client_log.lines)
                    raise AssertionError(
                        f"{timeout} (three consumers)\nkafka-python's last lines:\n{last_lines}\n"
                        f"{list_offsets_everywhere(bootstrap, topic)}"
                    ) from timeout
            finally:
                consumer.close()
        raise AssertionError("unreachable")
    finally:
        fetcher_log.removeHandler(client_log)
        fetcher_log.setLevel(level)
        fetcher_log.propagate = propagate


def list_offsets_everywhere(bootstrap: str, topic: str) -> str:
    """Each broker's view of `topic`: the leader and epoch its metadata names per partition, and its own
    answer to ListOffsets -2 (an error code where it refuses), for diagnosing a client that got no offset."""
    metadata = {"topics": [{"name": topic}], "allow_auto_topic_creation": False}
    lines = []
    with KafkaClient(bootstrap, request_timeout_ms=5000) as client:
        for broker in sorted(client.metadata([]).brokers):
            try:
                _, answer = client.broker_request(broker, ApiKey.METADATA, metadata)
                leaders = {
                    p["partition_index"]: (p["error_code"], p["leader_id"], p.get("leader_epoch"))
                    for t in answer["topics"]
                    for p in t["partitions"]
                }
                _, listed = client.broker_request(
                    broker,
                    ApiKey.LIST_OFFSETS,
                    {
                        "replica_id": -1,
                        "isolation_level": 0,
                        "topics": [
                            {
                                "name": topic,
                                "partitions": [
                                    {"partition_index": p, "current_leader_epoch": -1, "timestamp": -2}
                                    for p in sorted(leaders)
                                ],
                            }
                        ],
                    },
                )
                offsets = {
                    p["partition_index"]: (p["error_code"], p["offset"]) for p in listed["topics"][0]["partitions"]
                }
            except Exception as error:  # noqa: BLE001 - a diagnosis: show what went wrong and go on
                lines.append(f"broker {broker}: {error!r}")
                continue
            lines.append(
                f"broker {broker}: partition → (metadata error, leader, epoch; ListOffsets error, offset) "
                + ", ".join(f"{p}: {leaders[p]}; {offsets.get(p)}" for p in sorted(leaders))
            )
    return "\n".join(lines)


def cluster_logs(local: LocalCluster, lines: int = 25) -> str:
    return "\n".join(broker_log_tail(local, b, lines) for b in local.broker_ids())


# --- clients running throughout -------------------------------------------------------------------------


@dataclass(frozen=True)
class Ack:
    partition: int
    offset: int


class LiveConsumer:
    """The chaos runner's live consumer (`bench.chaos_runner.workload.LiveConsumer`) on one topic: every
    partition read from the beginning (assign, no group) for the whole test, the value at each (partition,
    offset) remembered; a different value read again at an offset is a conflict (the log changed under an
    offset a consumer had read)."""

    def __init__(self, bootstrap: str, topic: str, partitions: int) -> None:
        self._reader = workload.LiveConsumer(
            bootstrap, [(topic, p) for p in range(partitions)], group_id="reassignment-load"
        )

    @property
    def restarts(self) -> int:
        return self._reader.restarts

    @property
    def seen(self) -> dict[tuple[int, int], bytes]:
        return {(p, o): value for (_, p, o), value in self._reader.read().items()}

    @property
    def conflicts(self) -> list[tuple[int, int, bytes, bytes]]:
        return [(p, o, before, value) for _, p, o, before, value in self._reader.reread_conflicts]

    def behind(self, ends: dict[int, int]) -> dict[int, tuple[int, int]]:
        """Partitions not read up to their end: partition → (highest offset read, end)."""
        top: dict[int, int] = {}
        for partition, offset in self.seen:
            top[partition] = max(top.get(partition, -1), offset)
        return {p: (top.get(p, -1), end) for p, end in ends.items() if top.get(p, -1) < end - 1}

    def finish(self, ends: dict[int, int], timeout_s: float = 40) -> None:
        """Read on until every partition's `ends` (high watermarks after the producer stopped), then stop."""
        reader = self._reader
        try:
            with contextlib.suppress(TimeoutError):
                wait_for(lambda: not self.behind(ends) or reader.error is not None, timeout_s=timeout_s)
        finally:
            self.close()
        if reader.error is not None:
            raise reader.error
        behind = self.behind(ends)
        assert not behind, (
            f"the consumer did not read to the end within {timeout_s:.0f} s: partition → (last offset read, end) "
            f"{behind}; its errors: {dict(reader.errors)} {reader.last_errors}; librdkafka's view: "
            f"{reader.partition_states()}"
        )

    def close(self) -> None:
        self._reader.stop()


def load_producer(bootstrap: str, topic: str, partitions: int, rate: float) -> workload.ProducerWorker:
    """The chaos runner's producer (`bench.chaos_runner.workload.ProducerWorker`): kafka-python's idempotent
    producer, acks=all, sending unique values round-robin over the partitions at `rate` per second on its own
    thread. A value is never resent by this code (the client retries a batch itself, with its sequence
    numbers), so a value twice in a log is a duplicate the brokers made."""
    return workload.ProducerWorker(topic, partitions, bootstrap, rate, metadata_max_age_ms=5000)


def acks_per_partition(producer: workload.ProducerWorker) -> Counter[int]:
    return Counter(a.partition for a in list(producer.acked))


def stop_load(producer: workload.ProducerWorker) -> None:
    """Stop the producer (its sends flushed for up to 90 s); raises what ended it early, if anything did."""
    producer.stop(flush_timeout_s=90)
    assert producer.join(0), "the producer did not stop within 120 s"
    if producer.error is not None:
        raise producer.error
    assert not producer.not_sent, f"send() refused records: {dict(producer.not_sent)}"


def check_exactly_once(acked: dict[bytes, Ack], consumer: LiveConsumer, skip_prefix: bytes) -> None:
    """Every acknowledged value consumed once, at the offset it was acknowledged at; no value twice."""
    assert not consumer.conflicts, f"values changed under read offsets: {consumer.conflicts[:5]}"
    values = Counter(v for v in consumer.seen.values() if not v.startswith(skip_prefix))
    twice = [v for v, n in values.items() if n > 1]
    assert not twice, f"{len(twice)} values consumed at more than one offset, e.g. {twice[:5]}"
    where = {v: key for key, v in consumer.seen.items()}
    missing = [v for v in acked if v not in values]
    assert not missing, (
        f"{len(missing)} of {len(acked)} acknowledged values never consumed, e.g. "
        f"{[(v[:40], acked[v]) for v in missing[:5]]}"
    )
    moved = [(v[:40], a, where[v]) for v, a in acked.items() if where[v] != (a.partition, a.offset)]
    assert not moved, f"{len(moved)} values consumed elsewhere than acknowledged, e.g. {moved[:5]}"


# --- the plan -------------------------------------------------------------------------------------------


def shuffled_plan(current: dict[int, ReplicaAssignment], seed: int) -> dict[int, list[int]]:
    """Kafka's `reassign_partitions_test`: the partitions' replica lists dealt out again in random order."""
    partitions = sorted(current)
    order = list(partitions)
    random.Random(seed).shuffle(order)
    return {p: list(current[q].replicas) for p, q in zip(partitions, order, strict=True)}


# --- 1. reassignment under load -------------------------------------------------------------------------

VARIANTS = ("steady", "clean-bounce", "hard-bounce", "log-start")
PLAN_SEED = 5
PREFILL = 40  # records per partition, acks=all, before the move: data for the new replicas to copy
PREFILL_BYTES = 5000
BOUNCE_THROTTLE = 100_000
"""`--throttle` (bytes/s per broker) in the bounce variants: copying the prefill (200 kB per new replica) then
takes seconds, so the brokers go down while the move runs; unthrottled it can be over before the first one is
stopped. Far above the load producer's bytes per second into the moving partitions, so the move still ends."""
SEED_RECORDS = 10  # per partition, stamped 1970: retention deletes them before the move
OLD = b"old/"


def seed_old_records(local: LocalCluster) -> int:
    """Kafka's `move_start_offset`: records so old that retention (`retention.ms`, 7 days) deletes them,
    then wait until every leader's log start offset is past them. Returns the log start offset."""
    records = [
        Rec(p, None, OLD + f"{p}/{i}".encode(), (), timestamp=1000)
        for p in range(PARTITIONS)
        for i in range(SEED_RECORDS)
    ]
    outcome = kafka_python_produce(all_bootstraps(local), TOPIC, records)
    assert not outcome.errors, outcome.errors[:3]

    def start_offsets_moved() -> bool:
        earliest, latest = earliest_and_latest(all_bootstraps(local), TOPIC, PARTITIONS)
        return all(earliest[p] == latest[p] == SEED_RECORDS for p in range(PARTITIONS))

    wait_for(start_offsets_moved, timeout_s=30, interval_s=0.5)
    return SEED_RECORDS


@pytest.mark.parametrize("variant", VARIANTS)
def test_reassignment_under_load(cluster, zk, cli_env, tmp_path, variant: str) -> None:
    started = time.monotonic()
    phases: list[str] = []

    def phase(what: str) -> None:
        phases.append(f"{what} {time.monotonic() - started:.1f}")

    local = cluster(brokers=4, **RETENTION_CHECK)
    try:
        summary = run_under_load(local, zk, cli_env, tmp_path, variant, phase)
    except (AssertionError, TimeoutError) as failure:
        raise AssertionError(f"{failure}\nphases: {', '.join(phases)}\n{cluster_logs(local)}") from failure
    print(f"{variant}: {summary}; {', '.join(phases)}")


def run_under_load(
    local: LocalCluster,
    zk: KafkaZkClient,
    cli_env: dict[str, str],
    tmp_path: Path,
    variant: str,
    phase: Callable[[str], None],
) -> str:
    """One run of the scenario; returns a summary line (raises AssertionError on a failed check)."""
    admin_topics.create_topic(zk, TOPIC, PARTITIONS, 3, None, {"min.insync.replicas": "3"}, rng=JavaRandom(3))
    wait_partitions(zk, TOPIC, PARTITIONS, isr_size=3)
    before = assignment(zk, TOPIC)
    plan = shuffled_plan(before, PLAN_SEED)
    changed = [p for p in plan if set(plan[p]) != set(before[p].replicas)]
    assert len(changed) >= PARTITIONS // 2, f"the shuffle moves replicas of only {changed}"
    plan_file = write_plan(tmp_path / "plan.json", TOPIC, plan)
    phase("topic online")

    log_start = seed_old_records(local) if variant == "log-start" else 0
    if log_start:
        phase("log start offset moved")

    bounced: list[int] = []
    consumer = LiveConsumer(all_bootstraps(local), TOPIC, PARTITIONS)
    try:
        records = [r for p in range(PARTITIONS) for r in make_records(p, PREFILL, "pre", value_bytes=PREFILL_BYTES)]
        prefilled = kafka_python_produce(all_bootstraps(local), TOPIC, records)
        assert not prefilled.errors, prefilled.errors[:3]
        acked = {r.value: Ack(r.partition, r.offset) for r in prefilled.acked if r.value is not None}
        phase("prefilled")
        producer = load_producer(all_bootstraps(local), TOPIC, PARTITIONS, rate=150)
        try:
            wait_for(lambda: len(producer.acked) >= 300, timeout_s=30)
            phase("300 acks")
            bounced = execute_and_bounce(local, zk, cli_env, plan_file, plan, variant, phase)

            verified = verify_wait(cli_env, plan_file, timeout_ms=90_000)
            phase("verify --wait done")
            assert verified.returncode == 0, (
                f"--verify --wait exited {verified.returncode}: {verified.stderr}\n{verified.stdout[-3000:]}"
            )
            for p in range(PARTITIONS):
                assert f"Reassignment of partition {TOPIC}-{p} is complete." in verified.stdout
            # still acknowledging acks=all on every partition once the move is over
            after = acks_per_partition(producer)
            wait_for(
                lambda: all(acks_per_partition(producer)[p] >= after[p] + 5 for p in range(PARTITIONS)),
                timeout_s=30,
            )
        finally:
            stop_load(producer)
        phase("producer stopped")
        assert not producer.unflushed, f"records still unacknowledged after 90 s of flush; failed {producer.failed}"

        final = assignment(zk, TOPIC)
        assert {p: list(a.replicas) for p, a in final.items()} == plan
        assert not any(a.is_being_reassigned for a in final.values())
        assert not zk.exists(znodes.ReassignPartitionsZNode.path())
        states = wait_partitions(zk, TOPIC, PARTITIONS, isr_size=3, timeout_s=40)
        assert all(set(states[p].isr) == set(plan[p]) for p in range(PARTITIONS)), states

        earliest, latest = earliest_and_latest(all_bootstraps(local), TOPIC, PARTITIONS)
        consumer.finish(latest)
        phase("consumed")
    finally:
        consumer.close()
    acked.update({a.value: Ack(a.partition, a.offset) for a in producer.acked})
    check_exactly_once(acked, consumer, OLD)

    stray = check_replicas_after_move(local, cli_env, before, plan, bounced, (earliest, latest), log_start, phase)
    return (
        f"{len(producer.acked)} acks while moving (+{PARTITIONS * PREFILL} before), failed {dict(producer.failed)}, "
        f"bounced {bounced}, stray logs {stray}, consumers replaced {consumer.restarts}"
    )


def execute_and_bounce(
    local: LocalCluster,
    zk: KafkaZkClient,
    cli_env: dict[str, str],
    plan_file: Path,
    plan: dict[int, list[int]],
    variant: str,
    phase: Callable[[str], None],
) -> list[int]:
    """`--execute` the plan; in the bounce variants, bounce brokers once every partition is moving. Returns the
    brokers bounced."""
    bounced: list[int] = []
    bounce = variant.endswith("bounce")
    throttle = ["--throttle", str(BOUNCE_THROTTLE)] if bounce else []
    # --execute as a process of its own: the bounces start as soon as the move does, not when the
    # command has exited (on a loaded machine its exit can come after a short move's end)
    execution = subprocess.Popen(
        [KAFKAOPS, "reassign-partitions", "--execute", "--reassignment-json-file", str(plan_file), *throttle],
        env=cli_env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        # Every partition moving (adding/removing replicas in its topic znode) or moved before a
        # broker goes: a new controller refuses the entries of /admin/reassign_partitions not started
        # yet whose new replicas are on a broker not alive at its failover (Kafka 2.8's
        # validateReassignment), so a bounced controller could drop them, as Kafka's does.
        wait_for(lambda: all_started(zk, TOPIC, plan) or execution.poll() not in (None, 0), timeout_s=60)
        if execution.poll() not in (None, 0):
            out, err = execution.communicate()
            raise AssertionError(f"--execute exited {execution.returncode}: {err}{out}")
        phase("every partition moving")
        if bounce:
            assert reassignment_active(zk, TOPIC), "the move was over before the first broker was stopped"
            hard = variant == "hard-bounce"
            controller = local.status().controller_id
            assert controller is not None
            # Kafka's test bounces every other broker (SIGTERM); SIGKILL goes to the controller
            bounced = [controller] if hard else [0, 2]
            for victim in bounced:
                local.stop_broker(victim, hard=hard)
                phase(f"broker {victim} stopped")
                local.start_broker(victim)
                phase(f"broker {victim} started")
        out, err = execution.communicate(timeout=60)
    finally:
        if execution.poll() is None:
            execution.kill()
            execution.communicate()
    assert execution.returncode == 0, f"--execute exited {execution.returncode}: {err}{out}"
    assert "Successfully started partition reassignments for " in out
    return bounced


def check_replicas_after_move(
    local: LocalCluster,
    cli_env: dict[str, str],
    before: dict[int, ReplicaAssignment],
    plan: dict[int, list[int]],
    bounced: list[int],
    offsets: tuple[dict[int, int], dict[int, int]],
    log_start: int,
    phase: Callable[[str], None],
) -> list[tuple[int, int]]:
    """The replicas once the move is over and everything consumed: removed ones deleted, every target's high
    watermark at the log end (`offsets`: earliest and latest per partition), added ones starting at the log
    start offset, and `replica-verification --once` finding lag 0. Returns the removed replicas left on disk."""
    earliest, latest = offsets
    changed = [p for p in plan if set(plan[p]) != set(before[p].replicas)]
    # The removed replicas' logs are deleted (StopReplica delete=true). Not asserted when brokers were
    # bounced: as in Kafka 2.8, the controller sends that StopReplica once, marks the replica NonExistent
    # without waiting for the answer, and nobody sends it again, so a removed replica stays on disk (a
    # stray log) when its broker was down as its partition completed, or when the controller resigned (a
    # bounced controller) with the StopReplica still queued for the broker.
    removed = {(b, p) for p in changed for b in set(before[p].replicas) - set(plan[p])}

    def removed_left() -> list[tuple[int, int]]:
        return sorted((b, p) for b, p in removed if log_dir(local, b, TOPIC, p).exists())

    with contextlib.suppress(TimeoutError):
        wait_for(lambda: not removed_left(), timeout_s=5 if bounced else 20, interval_s=0.3)
    stray = removed_left()
    assert bounced or not stray, f"(broker, partition) of removed replicas still on disk: {stray}"

    # every replica's own high watermark reaches the log end (the precondition of a lag-0 verification)
    targets = {p: tuple(r) for p, r in plan.items()}

    def behind() -> dict[tuple[int, int], int]:
        found = replica_high_watermarks(local, TOPIC, targets, earliest)
        return {key: hw for key, hw in found.items() if hw != latest[key[0]]}

    with contextlib.suppress(TimeoutError):
        wait_for(lambda: not behind(), timeout_s=20, interval_s=0.3)
    assert not behind(), f"(partition, broker) high watermarks below the log ends {latest}: {behind()}"
    if log_start:
        # the replicas the move added started at the leader's log start offset, not at 0
        assert earliest == dict.fromkeys(range(PARTITIONS), log_start)
        for p in changed:
            for added in set(plan[p]) - set(before[p].replicas):
                assert segment_base_offsets(local, added, TOPIC, p)[0] >= log_start, (p, added)

    checked = kafkaops(
        cli_env,
        "replica-verification",
        "--broker-list",
        all_bootstraps(local),
        "--topic-white-list",
        TOPIC,
        "--time",
        "-2",
        "--once",
        "--output",
        "json",
    )
    phase("replicas verified")
    assert checked.returncode == 0, f"replica-verification exited {checked.returncode}: {checked.stderr}"
    verification = json.loads(checked.stdout)
    assert verification["in_sync"] is True and verification["max_lag"]["lag"] == 0, verification
    rows = {row["partition"]: row for row in verification["partitions"]}
    assert sorted(rows) == list(range(PARTITIONS))
    for p, row in rows.items():
        assert (row["start_offset"], row["verified_offset"], row["lag"]) == (earliest[p], latest[p], 0), row
    return stray


# --- 2. throttle ----------------------------------------------------------------------------------------

THROTTLE = 400_000  # bytes/s
FILL = 6_000_000  # bytes on disk in the partition moved
FETCH_MAX = 16384
"""`replica.fetch.max.bytes`: a throttled replica still gets one fetch's worth before the meter says
over, and the meter's window starts at the whole second of the first byte; the 0.9 bound holds when
0.1·B ≥ one fetch + one second of R (Kafka's own test moves 180 MB at 6 MB/s)."""


def test_throttled_move_takes_at_least_the_bytes_over_the_rate(cluster, zk, cli_env, tmp_path) -> None:
    local = cluster(brokers=2, **{"replica.fetch.max.bytes": FETCH_MAX})
    admin_topics.create_topic(zk, "throttled", None, None, {0: [0]}, {})
    wait_partitions(zk, "throttled", 1)
    value_bytes = 8000
    records = make_records(0, FILL // value_bytes + 20, "t", value_bytes=value_bytes)
    produced = kafka_python_produce(endpoint(local, 0), "throttled", records, acks=1)
    assert not produced.errors, produced.errors[:3]
    size = log_bytes(local, 0, "throttled", 0)
    assert size >= FILL, size
    plan = write_plan(tmp_path / "plan.json", "throttled", {0: [1]})

    start = time.monotonic()
    executed = execute(cli_env, plan, "--throttle", str(THROTTLE))
    assert f"The inter-broker throttle limit was set to {THROTTLE} B/s" in executed.stdout
    intent = zk.get(znodes.ReassignPartitionsZNode.path())
    assert intent is not None, "the move was over before --execute returned"
    verified = verify_wait(cli_env, plan, timeout_ms=120_000)
    took = time.monotonic() - start
    assert verified.returncode == 0, f"--verify --wait exited {verified.returncode}: {verified.stderr}"
    assert "Reassignment of partition throttled-0 is complete." in verified.stdout
    assert "Clearing broker-level throttles on brokers 0,1" in verified.stdout
    # the move itself, on ZooKeeper's clock: from the intent --execute wrote to the controller's last write
    # of the topic znode (the final replica set), without the two processes' start-up times
    completed = zk.get(znodes.TopicZNode.path("throttled"))
    assert completed is not None
    moved_s = (completed[1].mtime - intent[1].ctime) / 1000

    bound = 0.9 * size / THROTTLE
    print(
        f"moved {size} bytes at --throttle {THROTTLE}: {moved_s:.1f} s, {took:.1f} s from --execute to --verify "
        f"--wait's end (at least {bound:.1f} s)"
    )
    assert moved_s >= bound, f"{size} bytes moved in {moved_s:.1f} s at {THROTTLE} B/s: faster than {bound:.1f} s"
    assert log_bytes(local, 1, "throttled", 0) == size
    wait_for(lambda: not log_dir(local, 0, "throttled", 0).exists())
    configs = zk.get_entity_configs(znodes.ConfigType.TOPIC, ["throttled"])["throttled"]
    assert not {k for k in configs if "throttled" in k}, configs


# --- 3. cancel ------------------------------------------------------------------------------------------


def test_cancel_brings_the_original_replicas_back_and_deletes_the_adding_ones(cluster, zk, cli_env, tmp_path) -> None:
    local = cluster(brokers=4, **{"replica.fetch.max.bytes": FETCH_MAX})
    original = {0: [0, 1], 1: [1, 0]}
    admin_topics.create_topic(zk, "cancelled", None, None, original, {})
    wait_partitions(zk, "cancelled", 2, isr_size=2)
    records = [r for p in (0, 1) for r in make_records(p, 120, "c", value_bytes=4000)]
    produced = kafka_python_produce(all_bootstraps(local), "cancelled", records)
    assert not produced.errors, produced.errors[:3]
    plan = write_plan(tmp_path / "plan.json", "cancelled", {0: [2, 3], 1: [3, 2]})

    # throttled to a trickle (and small fetches, or the first one would bring everything): the new
    # replicas start fetching and stay behind
    execute(cli_env, plan, "--throttle", "20000")
    adding = {(b, p) for p in (0, 1) for b in (2, 3)}
    wait_for(lambda: all(log_bytes(local, b, "cancelled", p) > 0 for b, p in adding), timeout_s=20)
    moving = assignment(zk, "cancelled")
    assert moving[0] == ReplicaAssignment((2, 3, 0, 1), (2, 3), (0, 1)), moving
    assert reassignment_active(zk, "cancelled")

    cancelled = kafkaops(cli_env, "reassign-partitions", "--cancel", "--reassignment-json-file", str(plan))
    assert cancelled.returncode == 0, cancelled.stderr
    assert cancelled.stdout.startswith(
        "Successfully cancelled partition reassignments for: cancelled-0,cancelled-1\n"
    ), cancelled.stdout

    wait_for(lambda: not reassignment_active(zk, "cancelled"), timeout_s=20)
    assert {p: list(a.replicas) for p, a in assignment(zk, "cancelled").items()} == original
    wait_partitions(zk, "cancelled", 2, isr_size=2, condition=lambda s: set(s.isr) == {0, 1})

    # the adding replicas were stopped and deleted (StopReplica delete=true)
    def adding_left() -> list[tuple[int, int]]:
        return sorted((b, p) for b, p in adding if log_dir(local, b, "cancelled", p).exists())

    with contextlib.suppress(TimeoutError):
        wait_for(lambda: not adding_left(), timeout_s=20)
    assert not adding_left(), f"(broker, partition) of cancelled adding replicas still on disk: {adding_left()}"
    configs = zk.get_entity_configs(znodes.ConfigType.TOPIC, ["cancelled"])["cancelled"]
    assert not {k for k in configs if "throttled" in k}, configs

    listed = kafkaops(cli_env, "reassign-partitions", "--list")
    assert (listed.returncode, listed.stdout) == (0, "No partition reassignments found.\n")
    consumed = kafka_python_consume(endpoint(local, 0), "cancelled", (0, 1), expect={0: 120, 1: 120})
    assert sorted((r.partition, r.value) for r in consumed) == sorted((r.partition, r.value) for r in records)
