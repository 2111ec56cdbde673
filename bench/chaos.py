"""Chaos runner (issue 8): acknowledged records survive faults, replicas agree, intents complete.

    .venv/bin/python bench/chaos.py --seed 1 --duration 1800 [--brokers 3..5] [--state-dir DIR]

A 3-node ZooKeeper ensemble on loopback ports, a cluster of `--brokers` broker processes on it
(kafkaops.cluster.local), topics with replication factor 3, min.insync.replicas=2 and unclean leader
election off. For `--duration` seconds an idempotent kafka-python producer per topic sends with
acks=all at a steady rate (values unique: `<topic>/<sequence>`), recording every acknowledged
(topic, partition, offset, value) and when it was acknowledged; a confluent-kafka consumer reads every
partition from the beginning (explicit assignment); and a seeded schedule injects faults:

    <mode>:<target>    mode clean_shutdown (SIGTERM, down for a while), hard_shutdown (SIGKILL, down for
                       a while), clean_bounce / hard_bounce (stopped and started again, 1-3 times, as
                       Kafka's replication_test); target the leader of a partition, the controller, or
                       a random broker
    zk_node_kill       SIGKILL of one ZooKeeper node (the ensemble's leader half of the time), restarted later
    session_expire     a broker's ZooKeeper session ended from outside (resumed with its id and password,
                       then closed): its registration vanishes while the process runs on
    zombie_freeze      the leader of a partition frozen (SIGSTOP) for longer than the session timeout,
                       then resumed: the zombie leader
    reassignment       `kafkaops reassign-partitions --execute` with a plan generated at that moment
    preferred_election `kafkaops preferred-replica-election` (all partitions)
    topic_deletion     `kafkaops topics --delete` of a topic written to until just before

The schedule (kinds, times, hold times, bounce counts, and the numbers that pick a partition, broker or
node among those found at that moment) is a pure function of the seed and the options: the same seed
replays the same schedule; which broker it hits depends on the cluster's state then. Kinds are drawn
from a shuffled deck, so a long run hits each kind about equally often. Each fault runs as an episode
on its own thread (inject, hold, recover, wait until the broker is back in every ISR, as ZooKeeper
says, written after its new registration), so a slow one does not hold up the schedule. At most
`--max-impaired` brokers are held by episodes at once (down, frozen, expired, or not yet back in
every ISR) and at most one ZooKeeper node is down; a fault that would exceed that waits, and is
counted skipped if it cannot start within 30 s. A broker whose old session still holds its
registration refuses to start (Kafka's "node already exists"); the runner starts it again, as an
operator would.

At the end everything is healed (stopped brokers and nodes started, frozen ones resumed), the runner
waits for the intents to complete and the ISRs to be full, stops the producers, reads every partition
of the surviving topics to its end and checks:

* every acknowledged record is in the log exactly once, at the offset it was acknowledged with (lost:
  not there; moved: there at another offset); no value appears twice (a broker-side duplicate: the
  producer never resends a value itself);
* every record the live consumer read is still in the log at the same offset (a consumer saw it, so
  it was committed);
* every replica holds the same records (each broker's copy fetched with `KafkaClient.fetch_from_broker`),
  and `kafkaops replica-verification --once` agrees;
* every intent completed or was reported failed: each reassignment is settled with
  `kafkaops reassign-partitions --verify` once its znode is gone (a partition left on other replicas
  counts as reported failed only if a controller logged "Failed reassignment through zk" for it, as
  Kafka does when a target broker is not alive), `/admin/preferred_replica_election` gone, deleted
  topics gone;
* no broker process died without being told to, every broker whose session was ended or that was
  frozen registered again, every restarted broker got back into its ISRs, every partition took acks
  again once healed, and the producers and the consumer ran to the end.

Reported without failing the run: clean stops slower than 20 s (with `--clean-stop-timeout` the
broker then gets a SIGKILL), and a broker answering Metadata with only some of a topic's partitions
(kafka-python then refuses to send to the missing ones; each broker is asked which it lists).

The state-change logs of all brokers are merged into one timeline (`kafkaops state-change-log-merger`),
and a summary table is printed: faults injected by kind, records acked / consumed / lost / duplicated,
the longest gap between successful acks per partition (max unavailability), the checks and the verdict.

Outputs, in the state dir (a new temporary directory unless `--state-dir`): `chaos-events.log` (every
action with wall-clock times comparable with the state-change logs), `chaos-report.json`,
`state-change-timeline.log`, `timeline-<topic>-<partition>.log` for partitions that lost data, and the
cluster's own directories (`brokers/<id>/logs/`; partition data removed after a passing run unless
`--keep-data`).

Exit codes: 0 all checks passed; 1 acknowledged data lost, moved or duplicated, or replicas differ;
2 no data problem but another check failed (an intent did not complete, a broker died on its own or
did not come back, the cluster could not be healed); 3 the run could not be carried out (setup failed);
130 interrupted. Every process the runner started is stopped at the end, on error and on Ctrl-C too.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from datetime import datetime
from functools import partial
from pathlib import Path
from types import FrameType
from typing import Any, TextIO

from kafkaops.cluster.local.cluster import LocalCluster
from kafkaops.cluster.local.zookeeper import ZooKeeperEnsemble, expire_session
from kafkaops.cluster.zk import znodes
from kafkaops.cluster.zk.client import KafkaZkClient
from kafkaops.cluster.zk.values import TopicPartition

MODES = ("clean_shutdown", "hard_shutdown", "clean_bounce", "hard_bounce")
TARGETS = ("leader", "controller", "random")
BROKER_KINDS = tuple(f"{mode}:{target}" for mode in MODES for target in TARGETS)
OTHER_FAULT_KINDS = ("zk_node_kill", "session_expire", "zombie_freeze")
FAULT_KINDS = BROKER_KINDS + OTHER_FAULT_KINDS
ADMIN_KINDS = ("reassignment", "preferred_election", "topic_deletion")
ALL_KINDS = FAULT_KINDS + ADMIN_KINDS
ADMIN_FRACTIONS = {"reassignment": 0.3, "preferred_election": 0.45, "topic_deletion": 0.6}
"""Where in each admin round (a slice of the run) each admin action starts: in the middle of the faults."""

REPLICATION_FACTOR = 3
TOPIC_CONFIG = {"min.insync.replicas": "2", "unclean.leader.election.enable": "false"}
LIVE_STALL_LIMIT_S = 120.0
"""The live consumer may read nothing new for this long while the producers get acks (the longest
unavailability of a partition is about 20 s); longer fails the check "live consumer kept up"."""
SURVIVING_PREFIX = "chaos-"
DOOMED_PREFIX = "doomed-"

EXIT_PASS, EXIT_DATA, EXIT_CHECKS, EXIT_SETUP, EXIT_INTERRUPTED = 0, 1, 2, 3, 130


# --- configuration and schedule (pure) -------------------------------------------------------------------


@dataclass(frozen=True)
class ChaosConfig:
    seed: int
    duration_s: float
    brokers: int = 3
    topics: int = 2
    partitions: int = 3
    rate: float = 100.0
    """Records per second per topic."""
    session_timeout_ms: int = 6000
    fault_interval_s: float = 20.0
    """Mean time between two fault starts (each gap drawn from 0.5x to 1.5x)."""
    hold_s: float = 20.0
    """Mean time a shut-down broker stays down (drawn from 0.5x to 1.5x); ZooKeeper nodes half of it."""
    kinds: tuple[str, ...] = ALL_KINDS
    admin_every_s: float = 600.0
    """One round of admin actions (reassignment, preferred election, deletion) per this many seconds."""
    max_impaired: int = 1
    """Brokers down or frozen at once, at most."""
    heal_timeout_s: float = 240.0
    clean_stop_timeout_s: float = 60.0
    """After a SIGTERM, how long a broker may take to exit before it gets a SIGKILL."""
    """Per phase of the end: healing, intents, full ISRs, reading, replica comparison."""
    warmup_s: float = 8.0


@dataclass(frozen=True)
class PlannedAction:
    """One scheduled action: `at_s` seconds after the chaos phase starts. `pick` and `pick2` (in [0, 1))
    choose among the candidates found when it runs (a partition, a broker, a node, a target kind)."""

    at_s: float
    kind: str
    hold_s: float = 0.0
    bounces: int = 1
    pick: float = 0.0
    pick2: float = 0.0


def expand_kinds(spec: str) -> tuple[str, ...]:
    """`--faults` text → kinds: names from ALL_KINDS, a mode (all its targets), `broker`, `admin`, `all`.

    Raises ValueError naming an unknown entry."""
    kinds: list[str] = []
    for entry in (e.strip() for e in spec.split(",")):
        if not entry:
            continue
        if entry == "all":
            found: Sequence[str] = ALL_KINDS
        elif entry == "broker":
            found = BROKER_KINDS
        elif entry == "admin":
            found = ADMIN_KINDS
        elif entry in MODES:
            found = [f"{entry}:{t}" for t in TARGETS]
        elif entry in TARGETS:
            found = [f"{m}:{entry}" for m in MODES]
        elif entry in ALL_KINDS:
            found = [entry]
        else:
            raise ValueError(
                f"unknown fault kind {entry!r}: one of {', '.join(ALL_KINDS)}, a mode, a target, broker, admin, all"
            )
        kinds.extend(k for k in found if k not in kinds)
    return tuple(kinds)


def plan_schedule(config: ChaosConfig) -> list[PlannedAction]:
    """The run's actions in time order; a pure function of the config (its seed included)."""
    rng = random.Random(config.seed)
    duration = config.duration_s
    session_s = config.session_timeout_ms / 1000
    actions: list[PlannedAction] = []
    fault_kinds = [k for k in config.kinds if k in FAULT_KINDS]
    deck: list[str] = []
    at = min(config.warmup_s, duration * 0.15)
    last_start = duration - max(3.0, min(config.fault_interval_s, duration * 0.1))
    first = True
    while fault_kinds:
        if not first:
            at += rng.uniform(0.5, 1.5) * config.fault_interval_s
        first = False
        if at > last_start:
            break
        if not deck:
            deck = list(fault_kinds)
            rng.shuffle(deck)
        kind = deck.pop()
        mode = kind.split(":")[0]
        hold = 0.0
        bounces = 1
        if mode.endswith("_shutdown"):
            hold = rng.uniform(0.5, 1.5) * config.hold_s
        elif mode.endswith("_bounce"):
            bounces = rng.randint(1, 3)
        elif kind == "zk_node_kill":
            hold = rng.uniform(0.25, 0.75) * config.hold_s
        elif kind == "zombie_freeze":
            hold = session_s * 1.5 + rng.uniform(1.0, 4.0)
        actions.append(PlannedAction(round(at, 3), kind, round(hold, 3), bounces, rng.random(), rng.random()))
    admin_kinds = [k for k in ADMIN_KINDS if k in config.kinds]
    if admin_kinds:
        rounds = max(1, round(duration / config.admin_every_s))
        width = duration / rounds
        for index in range(rounds):
            for kind in admin_kinds:
                at = index * width + (ADMIN_FRACTIONS[kind] + rng.uniform(-0.05, 0.05)) * width
                actions.append(PlannedAction(round(at, 3), kind, 0.0, 1, rng.random(), rng.random()))
    return sorted(actions, key=lambda a: a.at_s)


def admin_rounds(schedule: Sequence[PlannedAction]) -> int:
    return sum(1 for a in schedule if a.kind == "topic_deletion")


def as_text(output: str | bytes | None) -> str:
    if output is None:
        return ""
    return output.decode(errors="replace") if isinstance(output, bytes) else output


def signal_name(hard: bool) -> str:
    return "SIGKILL" if hard else "SIGTERM"


def last_line(output: str) -> str:
    lines = output.strip().splitlines()
    return lines[-1] if lines else ""


def pick_from(items: Sequence[Any], pick: float) -> Any:
    return items[min(int(pick * len(items)), len(items) - 1)]


# --- records and checks (pure) ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Ack:
    topic: str
    partition: int
    offset: int
    value: bytes
    at: float
    """Seconds since the chaos phase started (monotonic)."""


@dataclass
class DataVerdict:
    acked: int = 0
    consumed: int = 0
    lost: list[tuple[str, int, int, str, str | None]] = field(default_factory=list)
    """(topic, partition, acked offset, value, what the log holds there)."""
    moved: list[tuple[str, int, int, int, str]] = field(default_factory=list)
    """(topic, partition, acked offset, offset found at, value)."""
    duplicated: list[tuple[str, list[tuple[int, int]]]] = field(default_factory=list)
    """(value, [(partition, offset), ...])."""
    gaps: list[tuple[str, int, str]] = field(default_factory=list)
    """(topic, partition, what is wrong with its offsets)."""
    unacked_present: int = 0
    live_read: int = 0
    live_conflicts: list[tuple[str, int, int, str, str | None]] = field(default_factory=list)
    """(topic, partition, offset, value the live consumer read, what the log holds there now)."""

    @property
    def ok(self) -> bool:
        return not (self.lost or self.moved or self.duplicated or self.gaps or self.live_conflicts)


def check_records(
    acked: Iterable[Ack],
    final: dict[tuple[str, int], dict[int, bytes]],
    live: dict[tuple[str, int, int], bytes],
    topics: Iterable[str],
) -> DataVerdict:
    """Compare what was acknowledged and what the live consumer read with the logs read at the end.

    `final[(topic, partition)]` maps offset → value for every record read from the beginning to the high
    watermark. Only `topics` are checked (a deleted topic's records are gone by design)."""
    wanted = set(topics)
    verdict = DataVerdict()
    where: dict[bytes, list[tuple[str, int, int]]] = defaultdict(list)
    for (topic, partition), records in final.items():
        if topic not in wanted:
            continue
        offsets = sorted(records)
        verdict.consumed += len(offsets)
        if offsets and offsets != list(range(offsets[0], offsets[0] + len(offsets))):
            verdict.gaps.append((topic, partition, f"offsets {offsets[0]}..{offsets[-1]} with {len(offsets)} records"))
        elif offsets and offsets[0] != 0:
            verdict.gaps.append((topic, partition, f"log starts at offset {offsets[0]}, not 0"))
        for offset, value in records.items():
            where[value].append((topic, partition, offset))
    acked_values: set[bytes] = set()
    for ack in acked:
        if ack.topic not in wanted:
            continue
        verdict.acked += 1
        acked_values.add(ack.value)
        found = final.get((ack.topic, ack.partition), {}).get(ack.offset)
        if found == ack.value:
            continue
        elsewhere = [w for w in where.get(ack.value, []) if w[:2] == (ack.topic, ack.partition)]
        if elsewhere:
            verdict.moved.append((ack.topic, ack.partition, ack.offset, elsewhere[0][2], ack.value.decode()))
        else:
            verdict.lost.append(
                (
                    ack.topic,
                    ack.partition,
                    ack.offset,
                    ack.value.decode(),
                    found.decode() if found is not None else None,
                )
            )
    for value, places in where.items():
        if len(places) > 1:
            verdict.duplicated.append((value.decode(), [(p, o) for _, p, o in places]))
        if value not in acked_values:
            verdict.unacked_present += 1
    for (topic, partition, offset), value in live.items():
        if topic not in wanted:
            continue
        verdict.live_read += 1
        found = final.get((topic, partition), {}).get(offset)
        if found != value:
            verdict.live_conflicts.append(
                (topic, partition, offset, value.decode(), found.decode() if found is not None else None)
            )
    return verdict


def max_gaps(
    acks: Iterable[Ack], partitions: Iterable[tuple[str, int]], start: float, end: float
) -> dict[tuple[str, int], tuple[float, float]]:
    """Per partition, the longest time without a successful ack between `start` and `end` (seconds since
    the chaos phase began): (gap seconds, when the gap began)."""
    times: dict[tuple[str, int], list[float]] = {tp: [] for tp in partitions}
    for ack in acks:
        if (ack.topic, ack.partition) in times:
            times[(ack.topic, ack.partition)].append(ack.at)
    result = {}
    for tp, moments in times.items():
        points = [start, *sorted(moments), end]
        best = (0.0, start)
        for before, after in zip(points, points[1:], strict=False):
            if after - before > best[0]:
                best = (after - before, before)
        result[tp] = best
    return result


# --- event log -------------------------------------------------------------------------------------------


def wall_clock_text(at: float | None = None) -> str:
    """log4j's `yyyy-MM-dd HH:mm:ss,SSS`, as in the state-change logs, to line the two up."""
    moment = datetime.fromtimestamp(time.time() if at is None else at)
    return moment.strftime("%Y-%m-%d %H:%M:%S") + f",{moment.microsecond // 1000:03d}"


class EventLog:
    """Every action, with wall-clock time and seconds since the chaos phase began, to a file and stdout."""

    def __init__(self, path: Path, echo: TextIO | None) -> None:
        self.path = path
        self._file = open(path, "a", buffering=1)  # noqa: SIM115 - closed by close()
        self._echo = echo
        self.origin = time.monotonic()
        self._lock = threading.Lock()

    def now(self) -> float:
        return time.monotonic() - self.origin

    def __call__(self, message: str) -> None:
        line = f"[{wall_clock_text()}] +{self.now():8.1f}s {message}"
        with self._lock:
            self._file.write(line + "\n")
            if self._echo is not None:
                self._echo.write(line + "\n")
                self._echo.flush()

    def close(self) -> None:
        self._file.close()


# --- clients ---------------------------------------------------------------------------------------------


class ProducerWorker:
    """An idempotent kafka-python producer (acks=all) sending `<topic>/<n>` at `rate` per second,
    round-robin over the partitions, on its own thread; acknowledgements are recorded with their time.

    The values are never resent by this code: kafka-python retries a batch itself (same producer id and
    sequence), so a value twice in a log is the broker's duplicate."""

    def __init__(
        self,
        topic: str,
        partitions: int,
        bootstrap: str,
        rate: float,
        clock: Callable[[], float],
        on_refused: Callable[[str, BaseException], None] | None = None,
    ) -> None:
        self.topic = topic
        self.on_refused = on_refused
        """Called (on the producer's thread, at most every 10 s) when send() refuses a record."""
        self.partitions = partitions
        self.bootstrap = bootstrap
        self.rate = rate
        self.clock = clock
        self.acked: list[Ack] = []
        self.failed: Counter[str] = Counter()
        self.sent = 0
        self.not_sent: Counter[str] = Counter()
        """Records send() refused (never handed to the client), by error."""
        self.unflushed = False
        self.error: BaseException | None = None
        self.started_at = clock()
        self.stopped_at: float | None = None
        self._stop = threading.Event()
        self._flush_timeout_s = 90.0
        self._thread = threading.Thread(target=self._run, name=f"producer-{topic}", daemon=True)
        self._thread.start()

    def _acked(self, value: bytes, metadata: Any) -> None:
        self.acked.append(Ack(self.topic, metadata.partition, metadata.offset, value, self.clock()))

    def _failed(self, _value: bytes, error: BaseException) -> None:
        self.failed[type(error).__name__] += 1

    def _run(self) -> None:
        from kafka import KafkaProducer
        from kafka.errors import KafkaTimeoutError

        try:
            producer = KafkaProducer(
                bootstrap_servers=self.bootstrap,
                acks="all",
                enable_idempotence=True,
                linger_ms=5,
                request_timeout_ms=15000,
                delivery_timeout_ms=120000,
                max_block_ms=10000,
                retry_backoff_ms=100,
                reconnect_backoff_max_ms=1000,
                metadata_max_age_ms=10000,
            )
        except BaseException as error:  # noqa: BLE001 - reported by stop()
            self.error = error
            return
        try:
            interval = 1.0 / self.rate
            due = time.monotonic()
            last_report = -1e9
            sequence = 0
            while not self._stop.is_set():
                value = f"{self.topic}/{sequence:09d}".encode()
                partition = sequence % self.partitions
                sequence += 1
                try:
                    future = producer.send(self.topic, value=value, partition=partition)
                except (KafkaTimeoutError, ValueError, AssertionError) as refused:
                    # ValueError: the client's metadata lacks the partition (a broker answered Metadata
                    # without it); the value is never sent, the loop goes on
                    self.not_sent[type(refused).__name__] += 1
                    now = time.monotonic()
                    if self.on_refused is not None and now - last_report > 10:
                        last_report = now
                        self.on_refused(self.topic, refused)
                    self._stop.wait(0.1)
                    continue
                self.sent += 1
                future.add_callback(self._acked, value)
                future.add_errback(self._failed, value)
                due += interval
                delay = due - time.monotonic()
                if delay > 0:
                    self._stop.wait(delay)
                elif delay < -1.0:
                    due = time.monotonic()  # blocked in send(): no burst to catch up
            try:
                producer.flush(timeout=self._flush_timeout_s)
            except KafkaTimeoutError:
                self.unflushed = True
        except BaseException as error:  # noqa: BLE001 - reported by stop()
            self.error = error
        finally:
            try:
                producer.close(timeout=min(5.0, self._flush_timeout_s))
            except Exception:  # noqa: BLE001 - pending sends that never finish: force it (and its atexit hook)
                with contextlib.suppress(Exception):
                    producer.close(timeout=0)
            self.stopped_at = self.clock()

    def stop(self, flush_timeout_s: float = 90.0) -> None:
        self._flush_timeout_s = flush_timeout_s
        self._stop.set()
        self._thread.join(flush_timeout_s + 30)
        if self.stopped_at is None:
            self.stopped_at = self.clock()


def _confluent_settings(bootstrap: str, **extra: Any) -> dict[str, Any]:
    return {
        "bootstrap.servers": bootstrap,
        "group.id": "kafkaops-chaos",  # assign() only: no group membership, no commits
        "enable.auto.commit": False,
        "auto.offset.reset": "earliest",
        "topic.metadata.refresh.interval.ms": 5000,
        "log_level": 2,
        **extra,
    }


class LiveConsumer:
    """A confluent-kafka consumer reading the surviving topics from the beginning throughout the run
    (explicit assignment), remembering the value it read at every (topic, partition, offset)."""

    def __init__(self, bootstrap: str, partitions: Sequence[tuple[str, int]], debug_log: Path | None = None) -> None:
        self.debug_log = debug_log
        """Where librdkafka's `debug=metadata,topic,fetch` lines go, if anywhere."""
        self.seen: dict[tuple[str, int, int], bytes] = {}
        self.reread_conflicts: list[tuple[str, int, int, bytes, bytes]] = []
        self.errors: Counter[str] = Counter()
        """Errors the consumer reported (by name); its client retries them itself."""
        self.last_error = ""
        self.error: BaseException | None = None
        self.stats: dict[str, Any] = {}
        """librdkafka's latest statistics (every 10 s): each partition's fetch state, leader, offsets."""
        self._bootstrap = bootstrap
        self._partitions = list(partitions)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="live-consumer", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        from confluent_kafka import OFFSET_BEGINNING, Consumer
        from confluent_kafka import TopicPartition as CTopicPartition

        def keep_stats(document: str) -> None:
            with contextlib.suppress(ValueError):
                self.stats = json.loads(document)

        extra: dict[str, Any] = {"statistics.interval.ms": 10000, "stats_cb": keep_stats}
        if self.debug_log is not None:
            logger = logging.getLogger("kafkaops.chaos.librdkafka")
            logger.propagate = False
            logger.setLevel(logging.DEBUG)
            handler = logging.FileHandler(self.debug_log)
            handler.setFormatter(logging.Formatter("[%(asctime)s] %(message)s"))
            logger.addHandler(handler)
            extra.update({"debug": "metadata,topic,fetch", "log_level": 7, "logger": logger})
        try:
            consumer = Consumer(_confluent_settings(self._bootstrap, **extra))
        except BaseException as error:  # noqa: BLE001 - reported by stop()
            self.error = error
            return
        try:
            consumer.assign([CTopicPartition(t, p, OFFSET_BEGINNING) for t, p in self._partitions])
            while not self._stop.is_set():
                for message in consumer.consume(num_messages=500, timeout=0.2):
                    problem = message.error()
                    if problem is not None:
                        self.errors[problem.name()] += 1
                        self.last_error = f"{message.topic()}-{message.partition()}: {problem.str()}"
                        continue
                    key = (str(message.topic()), int(message.partition() or 0), int(message.offset() or 0))
                    value = message.value() or b""
                    before = self.seen.get(key)
                    if before is not None and before != value:
                        self.reread_conflicts.append((*key, before, value))
                    self.seen[key] = value
        except BaseException as error:  # noqa: BLE001 - reported by stop()
            self.error = error
        finally:
            with contextlib.suppress(Exception):
                consumer.close()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(30)

    def partition_states(self) -> str:
        """Each assigned partition as librdkafka last described it: fetch state, leader, next offset, the
        high watermark it knows (for diagnosing a consumer that stopped making progress)."""
        shown = []
        for topic, partitions in sorted((self.stats.get("topics") or {}).items()):
            for partition, info in sorted(partitions.get("partitions", {}).items(), key=lambda kv: int(kv[0])):
                if int(partition) < 0:
                    continue
                shown.append(
                    f"{topic}-{partition}: {info.get('fetch_state')} leader {info.get('leader')} "
                    f"next {info.get('next_offset')} hw {info.get('hi_offset')} epoch {info.get('leader_epoch')}"
                )
        return "; ".join(shown) or "no statistics yet"


def read_to_end(
    bootstrap: str, partitions: Sequence[tuple[str, int]], timeout_s: float
) -> tuple[dict[tuple[str, int], dict[int, bytes]], dict[tuple[str, int], int], int]:
    """Every record of `partitions` from the beginning to the high watermark found first (a fresh
    confluent-kafka consumer). Returns (records by partition: offset → value, high watermarks, records
    read twice at one offset by this reader). Raises TimeoutError naming the partitions not read to the end."""
    from confluent_kafka import OFFSET_BEGINNING, Consumer
    from confluent_kafka import TopicPartition as CTopicPartition

    consumer = Consumer(_confluent_settings(bootstrap, **{"enable.partition.eof": False}))
    try:
        ends: dict[tuple[str, int], int] = {}
        deadline = time.monotonic() + timeout_s
        for tp in partitions:
            while True:
                try:
                    ends[tp] = int(consumer.get_watermark_offsets(CTopicPartition(*tp), timeout=10)[1])
                    break
                except Exception:  # noqa: BLE001 - KafkaException while metadata settles: retried
                    if time.monotonic() > deadline:
                        raise TimeoutError(f"no high watermark for {tp[0]}-{tp[1]} within {timeout_s:.0f}s") from None
                    time.sleep(0.5)
        records: dict[tuple[str, int], dict[int, bytes]] = {tp: {} for tp in partitions}
        reread = 0
        wanted = [tp for tp in partitions if ends[tp] > 0]
        consumer.assign([CTopicPartition(t, p, OFFSET_BEGINNING) for t, p in wanted])
        remaining = set(wanted)
        while remaining:
            if time.monotonic() > deadline:
                shown = ", ".join(f"{t}-{p} ({len(records[(t, p)])} of {ends[(t, p)]})" for t, p in sorted(remaining))
                raise TimeoutError(f"not read to the end within {timeout_s:.0f}s: {shown}")
            message = consumer.poll(0.5)
            if message is None or message.error() is not None:
                continue
            tp = (str(message.topic()), int(message.partition() or 0))
            offset = int(message.offset() or 0)
            if offset in records[tp]:
                reread += 1
            records[tp][offset] = message.value() or b""
            if tp in remaining and offset >= ends[tp] - 1:
                remaining.discard(tp)
        return records, ends, reread
    finally:
        consumer.close()


def fetch_replica(
    client: Any, broker_id: int, topic: str, partition: int
) -> tuple[list[tuple[int, bytes | None]], int]:
    """A replica's records (offset, value) from the start up to its high watermark, and that watermark,
    fetched from the broker itself as Kafka's debugging consumer."""
    records: list[tuple[int, bytes | None]] = []
    offset = 0
    high_watermark = 0
    while True:
        result = client.fetch_from_broker(broker_id, topic, partition, offset, max_bytes=1 << 20)
        high_watermark = result.high_watermark
        records.extend((r.offset, r.value) for r in result.records)
        if result.next_offset <= offset or result.next_offset >= high_watermark:
            return [r for r in records if r[0] < high_watermark], high_watermark
        offset = result.next_offset


# --- the run ---------------------------------------------------------------------------------------------


class Interrupted(Exception):
    pass


@dataclass
class Intent:
    kind: str
    at: float
    detail: str
    target: dict[str, Any] = field(default_factory=dict)
    exit_code: int | None = None
    output: str = ""
    status: str = "started"
    """started → completed | failed (a controller refused it and said why, as Kafka does) | refused (the CLI
    said no; no intent was written) | not completed."""
    reason: str = ""


class ChaosRun:
    def __init__(self, config: ChaosConfig, state_dir: Path, echo: TextIO | None) -> None:
        self.config = config
        self.state_dir = state_dir
        self.schedule = plan_schedule(config)
        self.log = EventLog(state_dir / "chaos-events.log", echo)
        self.ensemble = ZooKeeperEnsemble(state_dir)
        self.local = LocalCluster(state_dir / "cluster")
        self.zk: KafkaZkClient | None = None
        self.zk_lock = threading.Lock()
        rounds = admin_rounds(self.schedule)
        self.surviving = [f"{SURVIVING_PREFIX}{i}" for i in range(config.topics)]
        self.doomed = [f"{DOOMED_PREFIX}{i}" for i in range(rounds)]
        self.deleted: list[str] = []
        self.producers: dict[str, ProducerWorker] = {}
        self.consumer: LiveConsumer | None = None
        self.lock = threading.RLock()
        self.impaired: set[int] = set()
        """Brokers an episode holds: down, frozen, expired or not yet back in every ISR."""
        self.zk_busy = False
        self.episodes: list[threading.Thread] = []
        self.ending = threading.Event()
        """The chaos phase is over: holds are cut short."""
        self.closing = threading.Event()
        """Teardown: episodes stop instead of starting processes."""
        self.slow_stops: list[tuple[int, float]] = []
        self.warnings: list[str] = []
        """Misbehaviour reported but not failing the run (no data or progress at stake): a broker's partial
        Metadata answer."""
        self.injected: Counter[str] = Counter()
        self.skipped: Counter[str] = Counter()
        self.action_errors: list[str] = []
        self.anomalies: list[str] = []
        self.intents: list[Intent] = []
        self.faults: list[dict[str, Any]] = []
        self.checks: dict[str, tuple[bool | None, str]] = {}
        self.verdict_data: DataVerdict | None = None
        self.unavailability: dict[tuple[str, int], tuple[float, float]] = {}
        self.chaos_end = 0.0
        self.producer_stop: float | None = None
        self.consumed_per_topic: dict[str, int] = {}
        self.unacked_per_topic: dict[str, int] = {}
        self.consumer_debug = False
        self.consumer_stalls: list[tuple[float, float]] = []
        """(start, seconds) of each stretch in which the live consumer read nothing while acks went on."""
        self.cli_env = {**os.environ, "KAFKAOPS_STATE_DIR": str(state_dir / "cli-state")}
        self.cli_env.pop("KAFKAOPS_CONFIG", None)
        self.cli_env.pop("KAFKAOPS_ZOOKEEPER", None)

    # -- helpers --

    @property
    def connect(self) -> str:
        return self.ensemble.connect_string

    def zk_call(self, what: Callable[[KafkaZkClient], Any], timeout_s: float = 60.0) -> Any:
        """A ZooKeeper read, retried while the ensemble re-forms (a node just killed)."""
        deadline = time.monotonic() + timeout_s
        while True:
            client = None
            try:
                with self.zk_lock:
                    if self.zk is None:
                        self.zk = KafkaZkClient(self.connect, session_timeout_ms=30000, connection_timeout_ms=10000)
                    client = self.zk
                return what(client)
            except Exception as error:  # noqa: BLE001 - ConnectionLoss, SessionExpired, unreachable: retried
                if time.monotonic() > deadline:
                    raise
                if "Expired" in type(error).__name__ or "Unreachable" in type(error).__name__:
                    with self.zk_lock:
                        if self.zk is client and client is not None:
                            with contextlib.suppress(Exception):
                                client.close()
                            self.zk = None
                time.sleep(0.5)

    def exists(self, path: str) -> bool:
        return bool(self.zk_call(lambda zk: zk.exists(path)))

    def surviving_partitions(self) -> list[tuple[str, int]]:
        return [(t, p) for t in self.surviving for p in range(self.config.partitions)]

    def endpoints(self) -> dict[int, str]:
        """Each broker's host:port (fixed in its broker.yaml, so the same across restarts)."""
        found = {}
        for broker_id in self.local.broker_ids():
            config = (self.local.broker_dir(broker_id) / "broker.yaml").read_text()
            for line in config.splitlines():
                if line.startswith("listeners:"):
                    found[broker_id] = line.split("//", 1)[1].strip()
        return found

    def bootstrap(self) -> str:
        return ",".join(self.endpoints().values())

    def partition_states(self, partitions: Sequence[tuple[str, int]]) -> dict[tuple[str, int], Any]:
        found = self.zk_call(lambda zk: zk.get_partition_states(TopicPartition(t, p) for t, p in partitions))
        return {(tp.topic, tp.partition): (s.leader_and_isr if s is not None else None) for tp, s in found.items()}

    def assignments(self, topics: Sequence[str]) -> dict[tuple[str, int], list[int]]:
        found = self.zk_call(lambda zk: zk.get_topic_assignments(topics))
        return {(t, p): replicas for t, a in found.items() for p, replicas in a.replicas.items()}

    def registration_owner(self, broker_id: int) -> int | None:
        entry = self.zk_call(lambda zk: zk.get(znodes.BrokerIdZNode.path(broker_id)))
        return None if entry is None else int(entry[1].ephemeralOwner)

    def cli(self, *args: str, timeout_s: float = 120.0) -> tuple[int, str]:
        command = [sys.executable, "-m", "kafkaops.cli", *args]
        try:
            done = subprocess.run(
                command, capture_output=True, text=True, timeout=timeout_s, env=self.cli_env, check=False
            )
        except subprocess.TimeoutExpired as error:
            return 124, f"timed out after {timeout_s:.0f}s: {as_text(error.stdout)}{as_text(error.stderr)}"
        return done.returncode, (done.stdout + done.stderr).strip()

    def server_tail(self, broker_id: int, lines: int = 15) -> str:
        out = []
        for name in ("server.out", "server.log"):
            path = self.local.broker_dir(broker_id) / "logs" / name
            if path.exists():
                out += path.read_text(errors="replace").splitlines()[-lines:]
        return "\n    ".join(out)

    # -- setup --

    def setup(self) -> None:
        config = self.config
        self.log(
            f"seed {config.seed}, duration {config.duration_s:.0f}s, {config.brokers} brokers, "
            f"state dir {self.state_dir}"
        )
        self.ensemble.start(timeout_s=90)
        self.log(f"ZooKeeper ensemble {self.connect} serving: {self.ensemble.modes()}")
        overrides = {
            "zookeeper.session.timeout.ms": config.session_timeout_ms,
            "controlled.shutdown.retry.backoff.ms": 500,
            "leader.imbalance.check.interval.seconds": 30,
            "unclean.leader.election.enable": False,
            "auto.create.topics.enable": False,
            "min.insync.replicas": 2,
            "default.replication.factor": REPLICATION_FACTOR,
            "replica.lag.time.max.ms": 10000,
        }
        self.local.up(brokers=config.brokers, zookeeper_connect=self.connect, broker_overrides=overrides, timeout_s=120)
        status = self.local.status()
        self.log(f"cluster up: brokers {[b.broker_id for b in status.brokers]}, controller {status.controller_id}")
        for topic in self.surviving + self.doomed:
            code, output = self.cli(
                "topics", "--zookeeper", self.connect, "--create", "--topic", topic,
                "--partitions", str(config.partitions), "--replication-factor", str(REPLICATION_FACTOR),
                *[arg for name, value in TOPIC_CONFIG.items() for arg in ("--config", f"{name}={value}")],
            )  # fmt: skip
            if code != 0:
                raise RuntimeError(f"creating {topic} failed ({code}): {output}")
        every = [(t, p) for t in self.surviving + self.doomed for p in range(config.partitions)]
        self.wait_for(lambda: self.isrs_full(every), 120, "every new partition led with a full ISR")
        self.log(f"topics {', '.join(self.surviving + self.doomed)} online (RF {REPLICATION_FACTOR}, {TOPIC_CONFIG})")

    def isrs_full(self, partitions: Sequence[tuple[str, int]]) -> bool:
        topics = sorted({t for t, _ in partitions})
        replicas = self.assignments(topics)
        states = self.partition_states(partitions)
        return all(
            (s := states.get(tp)) is not None and s.leader >= 0 and set(s.isr) == set(replicas.get(tp, ()))
            for tp in partitions
        )

    def wait_for(self, condition: Callable[[], Any], timeout_s: float, what: str) -> Any:
        deadline = time.monotonic() + timeout_s
        while True:
            value = condition()
            if value:
                return value
            if time.monotonic() > deadline:
                raise TimeoutError(f"not within {timeout_s:.0f}s: {what}")
            time.sleep(0.25)

    # -- the chaos phase --

    def run_chaos(self) -> None:
        bootstrap = self.bootstrap()
        self.log.origin = time.monotonic()
        self.log(
            f"chaos phase starts: producers at {self.config.rate:.0f}/s per topic, live consumer, "
            f"{len(self.schedule)} actions planned"
        )
        for topic in self.surviving + self.doomed:
            self.producers[topic] = ProducerWorker(
                topic, self.config.partitions, bootstrap, self.config.rate, self.log.now, self.send_refused
            )
        self.consumer = LiveConsumer(
            bootstrap,
            self.surviving_partitions(),
            self.state_dir / "live-consumer-debug.log" if self.consumer_debug else None,
        )
        queue = list(self.schedule)
        deferred_since: dict[int, float] = {}
        next_health_check = 0.0
        next_progress = 30.0
        last_read = -1
        last_acked = 0
        stall_since: float | None = None
        next_probe = 0.0
        end = self.config.duration_s
        while (now := self.log.now()) < end:
            for action in [a for a in queue if a.at_s <= now]:
                if self.can_start(action):
                    queue.remove(action)
                    self.launch(action)
                    continue
                first = deferred_since.setdefault(id(action), now)
                if now - first > max(30.0, self.config.fault_interval_s):
                    queue.remove(action)
                    self.skip(action.kind, f"its preconditions did not hold for {now - first:.0f}s")
            if now >= next_health_check:
                self.check_health()
                self.settle_intents()
                next_health_check = now + 2.0
            if now >= next_progress:
                acked = sum(len(w.acked) for w in self.producers.values())
                read = len(self.consumer.seen) if self.consumer is not None else 0
                errors = dict(self.consumer.errors) if self.consumer is not None else {}
                with self.lock:
                    held = sorted(self.impaired)
                self.log(
                    f"progress: {acked} acked, {read} read live (consumer errors {errors or 'none'}), "
                    f"brokers held by faults {held}"
                )
                if self.consumer is not None and read == last_read and acked > last_acked and now > 60:
                    self.log(f"  the live consumer made no progress for 30 s: {self.consumer.partition_states()}")
                    if stall_since is None:
                        stall_since = now - 30.0
                    if now >= next_probe:
                        self.probe_leaders("the live consumer is stalled")
                        next_probe = now + 300.0
                elif stall_since is not None:
                    self.consumer_stalls.append((stall_since, now - stall_since))
                    self.log(f"  the live consumer progresses again after {now - stall_since:.0f}s")
                    stall_since = None
                last_read = read
                last_acked = acked
                next_progress = now + 30.0
            time.sleep(0.1)
        for action in queue:
            self.skip(action.kind, f"planned at +{action.at_s:.0f}s, the chaos phase is over")
        self.chaos_end = self.log.now()
        if stall_since is not None:
            self.consumer_stalls.append((stall_since, self.chaos_end - stall_since))
        running = [t.name for t in self.episodes if t.is_alive()]
        self.log(f"chaos phase over; episodes still running (their holds cut short): {running or 'none'}")
        self.ending.set()
        deadline = time.monotonic() + self.config.heal_timeout_s
        for thread in self.episodes:
            thread.join(max(0.0, deadline - time.monotonic()))
        stuck = [t.name for t in self.episodes if t.is_alive()]
        if stuck:
            self.anomalies.append(f"episodes still running {self.config.heal_timeout_s:.0f}s after the end: {stuck}")
            self.log(f"ANOMALY episodes still running: {stuck}")

    def send_refused(self, topic: str, error: BaseException) -> None:
        """The producer's send() refused a record: log it, and if its metadata lacked a partition, ask each
        broker which partitions of the topic its Metadata answer lists (a broker's partial cache)."""
        self.log(f"producer of {topic}: send() refused: {type(error).__name__}: {error}")
        if not isinstance(error, ValueError):
            return
        from kafkaops.admin.kafka_client import KafkaClient

        for broker, endpoint in self.endpoints().items():
            try:
                with KafkaClient(endpoint, client_id="chaos-metadata-probe", request_timeout_ms=5000, retries=0) as c:
                    info = c.metadata([topic]).topics.get(topic)
            except Exception as problem:  # noqa: BLE001 - a broker down or frozen: said so
                self.log(f"  metadata probe of broker {broker}: {type(problem).__name__}: {problem}")
                continue
            listed = sorted(p.partition for p in info.partitions) if info is not None else None
            expected = list(range(self.config.partitions))
            self.log(f"  broker {broker} lists {topic} partitions {listed} (error {info.error_code if info else '-'})")
            if info is not None and info.error_code == 0 and listed != expected:
                message = (
                    f"broker {broker} answered Metadata for {topic} with partitions {listed}, not {expected}, "
                    f"at +{self.log.now():.1f}s"
                )
                with self.lock:
                    self.warnings.append(message)
                self.log(f"WARNING {message}")

    def probe_leaders(self, why: str) -> None:
        """Log the leader of every surviving partition as each broker's Metadata answer and ZooKeeper say
        (a client stuck on a leader no broker names is then told apart from a broker serving stale leaders)."""
        from kafkaops.admin.kafka_client import KafkaClient

        partitions = self.surviving_partitions()
        self.log(
            f"  leaders ({why}), ZooKeeper: "
            + ", ".join(
                f"{t}-{p}: {s.leader if s is not None else '?'}"
                for (t, p), s in sorted(self.partition_states(partitions).items())
            )
        )
        for broker, endpoint in self.endpoints().items():
            try:
                with KafkaClient(endpoint, client_id="chaos-leader-probe", request_timeout_ms=5000, retries=0) as c:
                    topics = c.metadata(list(self.surviving)).topics
            except Exception as problem:  # noqa: BLE001 - a broker down or frozen: said so
                self.log(f"  leaders, broker {broker}'s Metadata: {type(problem).__name__}: {problem}")
                continue
            shown = [
                f"{topic}-{p.partition}: {p.leader}" + (f" (error {p.error_code})" if p.error_code else "")
                for topic in self.surviving
                if (info := topics.get(topic)) is not None
                for p in sorted(info.partitions, key=lambda p: p.partition)
            ]
            self.log(f"  leaders, broker {broker}'s Metadata: {', '.join(shown) or 'none'}")

    def skip(self, kind: str, why: str) -> None:
        with self.lock:
            self.skipped[kind] += 1
        self.log(f"skip {kind}: {why}")

    def can_start(self, action: PlannedAction) -> bool:
        kind = action.kind
        if kind in BROKER_KINDS or kind in ("zombie_freeze", "session_expire"):
            return len(self.impaired) < self.config.max_impaired
        if kind == "zk_node_kill":
            return not self.zk_busy
        if kind == "reassignment":
            self.settle_intents()
            registered = self.zk_call(lambda zk: zk.get_sorted_broker_ids())
            return len(registered) >= REPLICATION_FACTOR and not self.exists(znodes.ReassignPartitionsZNode.path())
        if kind == "preferred_election":
            return not self.exists(znodes.PreferredReplicaElectionZNode.path())
        return True

    def launch(self, action: PlannedAction) -> None:
        """Prepare `action` on this thread (pick and reserve its target), then run its episode on its own."""
        prepare: Callable[[PlannedAction], Callable[[], None] | None] = (
            self.broker_fault if action.kind in BROKER_KINDS else getattr(self, action.kind)
        )
        try:
            body = prepare(action)
        except (Interrupted, KeyboardInterrupt):
            raise
        except Exception as error:  # noqa: BLE001 - one action failing must not end the run
            self.action_error(action.kind, error)
            return
        if body is not None:
            self.spawn(f"{action.kind}@{self.log.now():.0f}", body)

    def spawn(self, name: str, body: Callable[[], None]) -> None:
        thread = threading.Thread(target=self.attempt, args=(name, body), name=name, daemon=True)
        self.episodes.append(thread)
        thread.start()

    def attempt(self, what: str, run: Callable[[], None]) -> None:
        try:
            run()
        except Interrupted:
            self.log(f"{what}: stopped (the run is ending)")
        except Exception as error:  # noqa: BLE001 - one action failing must not end the run
            self.action_error(what, error)

    def action_error(self, what: str, error: BaseException) -> None:
        message = f"{what} failed: {type(error).__name__}: {error}"
        with self.lock:
            self.action_errors.append(message)
        self.log(f"ERROR {message}")

    def anomaly(self, message: str) -> None:
        with self.lock:
            self.anomalies.append(message)
        self.log(f"ANOMALY {message}")

    def record(self, kind: str, **detail: Any) -> dict[str, Any]:
        fault = {"kind": kind, "at": round(self.log.now(), 2), **detail}
        with self.lock:
            self.injected[kind] += 1
            self.faults.append(fault)
        return fault

    def reserve(self, broker: int) -> bool:
        with self.lock:
            if broker in self.impaired:
                return False
            self.impaired.add(broker)
            return True

    def release(self, broker: int) -> None:
        with self.lock:
            self.impaired.discard(broker)

    def hold(self, seconds: float) -> None:
        """Wait out a fault's hold time; cut short when the chaos phase ends."""
        self.ending.wait(seconds)
        if self.closing.is_set():
            raise Interrupted("closing")

    def resolve_broker(self, target: str, pick: float, mine: int | None = None) -> tuple[int | None, str]:
        """The broker a fault hits: among those no other episode holds (`mine` is the caller's own)."""
        with self.lock:
            free = [b for b in self.local.broker_ids() if b not in self.impaired or b == mine]
        candidates = [b for b in free if self.local.broker_pid(b) is not None]
        if not candidates:
            return None, "no free broker"
        if target == "controller":
            controller = self.zk_call(lambda zk: zk.get_controller_id())
            if controller in candidates:
                return controller, "controller"
            return None, f"controller {controller} is busy or not running"
        if target == "leader":
            partitions = self.surviving_partitions()
            states = self.partition_states(partitions)
            start = int(pick * len(partitions))
            for index in range(len(partitions)):
                tp = partitions[(start + index) % len(partitions)]
                state = states.get(tp)
                if state is not None and state.leader in candidates:
                    return state.leader, f"leader of {tp[0]}-{tp[1]}"
            return None, "no partition led by a free broker"
        return pick_from(candidates, pick), "random"

    def broker_fault(self, action: PlannedAction) -> Callable[[], None] | None:
        mode, target = action.kind.split(":")
        broker, why = self.resolve_broker(target, action.pick)
        if broker is None or not self.reserve(broker):
            self.skip(action.kind, why)
            return None
        hard = mode.startswith("hard")
        fault = self.record(action.kind, broker=broker, target=why, hold_s=action.hold_s, bounces=action.bounces)

        def shutdown() -> None:
            try:
                self.log(f"{action.kind}: {signal_name(hard)} broker {broker} ({why}), down for {action.hold_s:.0f}s")
                self.stop_broker(broker, hard)
                self.hold(action.hold_s)
                self.restart_broker(broker)
                self.wait_rejoined(broker)
            finally:
                self.release(broker)

        def bounce() -> None:
            victim, reason = broker, why
            try:
                for number in range(1, action.bounces + 1):
                    if number > 1 and self.ending.is_set():
                        self.log(f"{action.kind}: no bounce {number} (the chaos phase is over)")
                        return
                    if number > 1:
                        # Kafka's replication_test bounces the current leader / controller again
                        again, reason = self.resolve_broker(target, action.pick, mine=victim)
                        if again is None or (again != victim and not self.reserve(again)):
                            self.log(f"{action.kind}: no bounce {number} ({reason})")
                            return
                        if again != victim:
                            self.release(victim)
                            victim = again
                    if number > 1:
                        # each later bounce is a fault of its own in the unavailability table
                        with self.lock:
                            fault.setdefault("later_bounces", []).append(
                                {"at": round(self.log.now(), 2), "broker": victim}
                            )
                    self.log(
                        f"{action.kind}: {signal_name(hard)} broker {victim} ({reason}), bounce {number} of "
                        f"{action.bounces}"
                    )
                    self.stop_broker(victim, hard)
                    self.restart_broker(victim)
                    self.wait_rejoined(victim)
            finally:
                self.release(victim)

        return shutdown if mode.endswith("_shutdown") else bounce

    def stop_broker(self, broker: int, hard: bool) -> None:
        """SIGKILL, or SIGTERM and up to `clean_stop_timeout_s` for the controlled shutdown before a SIGKILL
        (as a service manager would; Kafka's system tests wait 60 s)."""
        started = time.monotonic()
        timeout_s = self.config.clean_stop_timeout_s
        self.local.stop_broker(broker, hard=hard, timeout_s=timeout_s)
        took = time.monotonic() - started
        killed = not hard and took >= timeout_s
        self.log(
            f"broker {broker} stopped after {took:.1f}s" + (" (SIGKILL: SIGTERM did not end it)" if killed else "")
        )
        if not hard and took > min(20.0, timeout_s - 1):
            with self.lock:
                self.slow_stops.append((broker, round(took, 1)))

    def restart_broker(self, broker: int, attempts: int = 5) -> None:
        """Start `broker` again and wait for its new registration.

        A broker refuses to start while its old registration is still held by a session that has not
        expired yet (Kafka's "node already exists and owner ... does not match current session"): after a
        SIGKILL, ZooKeeper expires the old session one session timeout later, or later still if the
        ensemble elected a new leader meanwhile (the new leader restarts every session's timer). Like an
        operator, the runner starts it again then. Raises TimeoutError or RuntimeError (it exited)."""
        started = time.monotonic()
        path = znodes.BrokerIdZNode.path(broker)
        timeout_s = self.config.session_timeout_ms / 1000 + 60
        for attempt in range(1, attempts + 1):
            if self.closing.is_set():
                raise Interrupted("closing")
            entry = self.zk_call(lambda zk: zk.get(path))
            stale = entry[1].czxid if entry is not None else None
            self.local.start_broker(broker, wait=False)
            deadline = time.monotonic() + timeout_s
            while True:
                entry = self.zk_call(lambda zk: zk.get(path))
                if entry is not None and entry[1].czxid != stale:
                    self.log(f"broker {broker} registered again after {time.monotonic() - started:.1f}s")
                    return
                if self.local.broker_pid(broker) is None:
                    break
                if time.monotonic() > deadline:
                    self.anomaly(f"broker {broker} runs but did not register within {timeout_s:.0f}s of starting")
                    raise TimeoutError(f"broker {broker} runs but did not register within {timeout_s:.0f}s")
                time.sleep(0.2)
            last = last_line(self.server_tail(broker, 3))
            self.log(f"broker {broker} exited during start-up (attempt {attempt}): {last}")
            if "already exists" not in last or attempt == attempts:
                self.anomaly(f"broker {broker} exited during start-up: {last}")
                raise RuntimeError(f"broker {broker} exited during start-up: {last}")
            time.sleep(2.0)

    def wait_rejoined(self, broker: int, timeout_s: float | None = None) -> bool:
        """Wait until `broker` is in the ISR of every surviving partition it replicates (so a fault that
        follows finds the replication factor whole again)."""
        partitions = self.surviving_partitions()
        timeout_s = timeout_s if timeout_s is not None else self.config.heal_timeout_s

        started = time.monotonic()

        def rejoined() -> bool:
            """In every ISR, as written after the broker's current registration: an ISR that still names
            it from before its restart (the controller has not caught up) does not count, for 5 s."""
            if self.closing.is_set():
                raise Interrupted("closing")
            replicas = self.assignments(self.surviving)
            mine = [tp for tp in partitions if broker in replicas.get(tp, ())]
            paths = {tp: znodes.TopicPartitionStateZNode.path(*tp) for tp in mine}
            registration = znodes.BrokerIdZNode.path(broker)
            found = self.zk_call(lambda zk: zk.get_many([registration, *paths.values()]))
            if found[registration] is None:
                return False
            epoch = found[registration][1].czxid
            patient = time.monotonic() - started < 5
            for tp, path in paths.items():
                entry = found[path]
                if entry is None:
                    return False
                state = znodes.TopicPartitionStateZNode.decode(tp[0], tp[1], entry[0], entry[1].version)
                if broker not in state.leader_and_isr.isr or (patient and entry[1].mzxid < epoch):
                    return False
            return True

        try:
            self.wait_for(rejoined, timeout_s, f"broker {broker} back in every ISR")
        except TimeoutError:
            message = f"broker {broker} not back in every ISR within {timeout_s:.0f}s of starting again"
            with self.lock:
                self.anomalies.append(message)
            self.log(f"ANOMALY {message}: {self.partition_states(partitions)}")
            return False
        self.log(f"broker {broker} back in every ISR after {time.monotonic() - started:.1f}s")
        return True

    def zk_node_kill(self, action: PlannedAction) -> Callable[[], None] | None:
        modes = self.ensemble.modes()
        serving = [n for n, mode in modes.items() if mode in ("leader", "follower")]
        if len(serving) < len(modes) or "leader" not in modes.values():
            self.skip(action.kind, f"ensemble not whole ({modes})")
            return None
        leader = next(n for n, mode in modes.items() if mode == "leader")
        followers = [n for n in serving if n != leader]
        node = leader if action.pick < 0.5 else pick_from(followers, action.pick2)
        role = modes[node]
        self.zk_busy = True
        self.record(action.kind, node=node, role=role, hold_s=action.hold_s)

        def episode() -> None:
            try:
                self.log(f"zk_node_kill: SIGKILL ZooKeeper node {node} ({role}), down for {action.hold_s:.0f}s")
                self.ensemble.stop_node(node, hard=True)
                self.hold(action.hold_s)
                started = time.monotonic()
                self.ensemble.start_node(node, timeout_s=120)
                self.log(
                    f"ZooKeeper node {node} back as {self.ensemble.modes()[node]} after "
                    f"{time.monotonic() - started:.1f}s"
                )
            finally:
                self.zk_busy = False

        return episode

    def session_expire(self, action: PlannedAction) -> Callable[[], None] | None:
        target = pick_from(TARGETS, action.pick2)
        broker, why = self.resolve_broker(target, action.pick)
        owner = self.registration_owner(broker) if broker is not None else None
        if broker is None or owner is None or not self.reserve(broker):
            self.skip(action.kind, why if broker is None else f"broker {broker} not registered or busy")
            return None
        session = f"0x{owner & 0xFFFFFFFFFFFFFFFF:x}"
        self.record(action.kind, broker=broker, target=why, session=session)

        def episode() -> None:
            try:
                self.log(f"session_expire: ending broker {broker}'s ZooKeeper session {session} ({why})")
                closes = expire_session(self.connect, owner)
                if closes > 1:
                    self.log(f"session {session} needed {closes} closes (broker {broker}'s client took it back)")
                if self.expect_reregistration(broker, owner, "its session was ended"):
                    self.wait_rejoined(broker)
            finally:
                self.release(broker)

        return episode

    def expect_reregistration(self, broker: int, old_owner: int, why: str, may_survive: bool = False) -> bool:
        """Wait until `broker` is registered under a new session (it lost the old one); an anomaly if not.

        `may_survive`: a frozen broker's session can outlive the freeze, legitimately: when the ensemble
        elects a new leader meanwhile, the new leader restarts every session's timer. Then the old
        registration is still held by the old session one session timeout after the broker resumed (an
        expired session's ephemeral node would be gone by then), and that is accepted."""
        started = time.monotonic()
        timeout_s = self.config.session_timeout_ms / 1000 + 60
        grace_s = self.config.session_timeout_ms / 1000 + 3
        outcome = ""

        def settled() -> bool:
            nonlocal outcome
            if self.closing.is_set():
                raise Interrupted("closing")
            owner = self.registration_owner(broker)
            if owner is not None and owner != old_owner:
                outcome = "new"
                return True
            if may_survive and owner == old_owner and time.monotonic() - started > grace_s:
                outcome = "survived"
                return True
            return False

        try:
            self.wait_for(settled, timeout_s, "re-registration")
        except TimeoutError:
            self.anomaly(
                f"broker {broker} did not register again within {timeout_s:.0f}s after {why}\n    "
                + self.server_tail(broker)
            )
            return False
        if outcome == "survived":
            session = f"0x{old_owner & 0xFFFFFFFFFFFFFFFF:x}"
            self.log(f"broker {broker} kept its session {session} (a ZooKeeper leader change restarts session timers)")
            return True
        self.log(f"broker {broker} registered again with a new session after {time.monotonic() - started:.1f}s")
        return True

    def zombie_freeze(self, action: PlannedAction) -> Callable[[], None] | None:
        broker, why = self.resolve_broker("leader", action.pick)
        pid = self.local.broker_pid(broker) if broker is not None else None
        if broker is None or pid is None or not self.reserve(broker):
            self.skip(action.kind, why)
            return None
        owner = self.registration_owner(broker)
        controller = self.zk_call(lambda zk: zk.get_controller_id())
        role = why + (", controller" if controller == broker else "")
        self.record(action.kind, broker=broker, target=role, hold_s=action.hold_s)

        def episode() -> None:
            try:
                self.log(
                    f"zombie_freeze: SIGSTOP broker {broker} ({role}) for {action.hold_s:.1f}s "
                    f"(session timeout {self.config.session_timeout_ms / 1000:.0f}s)"
                )
                os.kill(pid, signal.SIGSTOP)
                try:
                    self.hold(action.hold_s)
                finally:
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(pid, signal.SIGCONT)
                    self.log(f"zombie_freeze: SIGCONT broker {broker}")
                if owner is not None and self.expect_reregistration(
                    broker, owner, "it was frozen past its session timeout", may_survive=True
                ):
                    self.wait_rejoined(broker)
            finally:
                self.release(broker)

        return episode

    def reassignment(self, action: PlannedAction) -> Callable[[], None] | None:
        topic = pick_from(self.surviving, action.pick)
        brokers = self.zk_call(lambda zk: zk.get_sorted_broker_ids())
        current = self.assignments([topic])
        rng = random.Random(int(action.pick2 * 2**32))
        plan = []
        for (t, partition), replicas in sorted(current.items()):
            target = rng.sample(brokers, REPLICATION_FACTOR)
            if target == replicas:
                target = target[1:] + target[:1]
            plan.append({"topic": t, "partition": partition, "replicas": target})
        path = self.state_dir / f"reassignment-{len(self.intents)}.json"
        path.write_text(json.dumps({"version": 1, "partitions": plan}))
        intent = Intent(
            "reassignment",
            self.log.now(),
            f"{topic} → {[p['replicas'] for p in plan]}",
            {"plan": plan, "file": str(path)},
        )
        self.intents.append(intent)
        self.record(action.kind, topic=topic, plan=[p["replicas"] for p in plan], registered=brokers)

        def episode() -> None:
            self.log(f"reassignment of {topic}: {list(current.values())} → {[p['replicas'] for p in plan]}")
            intent.exit_code, intent.output = self.cli(
                "reassign-partitions", "--zookeeper", self.connect, "--reassignment-json-file", str(path), "--execute"
            )
            self.log(f"reassign-partitions --execute exited {intent.exit_code}: {last_line(intent.output)}")
            if intent.exit_code != 0:
                intent.status = "refused"

        return episode

    def preferred_election(self, action: PlannedAction) -> Callable[[], None] | None:
        intent = Intent("preferred_election", self.log.now(), "all partitions")
        self.intents.append(intent)
        self.record(action.kind)

        def episode() -> None:
            self.log("preferred-replica-election for all partitions")
            intent.exit_code, intent.output = self.cli("preferred-replica-election", "--zookeeper", self.connect)
            self.log(f"preferred-replica-election exited {intent.exit_code}: {last_line(intent.output)}")
            if intent.exit_code != 0:
                intent.status = "refused"

        return episode

    def topic_deletion(self, action: PlannedAction) -> Callable[[], None] | None:
        remaining = [t for t in self.doomed if t not in self.deleted]
        if not remaining:
            self.skip(action.kind, "no topic left to delete")
            return None
        topic = remaining[0]
        intent = Intent("topic_deletion", self.log.now(), topic, {"topic": topic})
        self.intents.append(intent)
        self.deleted.append(topic)
        self.record(action.kind, topic=topic)

        def episode() -> None:
            producer = self.producers.get(topic)
            if producer is not None:
                producer.stop(flush_timeout_s=20)
                self.log(f"producer of {topic} stopped ({len(producer.acked)} acked) before deleting it")
            self.log(f"topics --delete --topic {topic}")
            intent.exit_code, intent.output = self.cli(
                "topics", "--zookeeper", self.connect, "--delete", "--topic", topic
            )
            self.log(f"topics --delete exited {intent.exit_code}: {last_line(intent.output)}")
            if intent.exit_code != 0:
                intent.status = "refused"

        return episode

    def check_health(self) -> None:
        """A broker process that died without being told to is an anomaly: noted, then started again."""
        for broker in self.local.broker_ids():
            with self.lock:
                if broker in self.impaired:
                    continue
            if self.local.broker_pid(broker) is not None or not self.reserve(broker):
                continue
            message = f"broker {broker} exited on its own"
            with self.lock:
                self.anomalies.append(message)
            self.log(f"ANOMALY {message}; its last lines:\n    {self.server_tail(broker, 25)}")

            def restart(b: int = broker) -> None:
                try:
                    self.restart_broker(b)
                    self.wait_rejoined(b)
                finally:
                    self.release(b)

            self.spawn(f"restart-crashed-{broker}", restart)

    # -- the end --

    def heal(self) -> None:
        self.log("healing: every ZooKeeper node and broker running, none frozen")
        for node_id in self.ensemble.nodes:
            if self.ensemble.nodes[node_id].pid() is None:
                self.log(f"ZooKeeper node {node_id} not running: starting it")
                self.ensemble.start_node(node_id, timeout_s=120)
        self.ensemble.wait_serving(list(self.ensemble.nodes), 120)
        for broker in self.local.broker_ids():
            pid = self.local.broker_pid(broker)
            if pid is not None:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGCONT)
                continue
            self.log(f"broker {broker} not running: starting it")
            self.attempt(f"restart broker {broker}", partial(self.restart_broker, broker))
        ids = self.local.broker_ids()
        self.wait_for(
            lambda: set(self.zk_call(lambda zk: zk.get_sorted_broker_ids())) >= set(ids),
            self.config.heal_timeout_s,
            f"brokers {ids} registered",
        )
        self.log(f"healed: ensemble {self.ensemble.modes()}, brokers {ids} registered")

    def wait_intents(self) -> None:
        deadline = time.monotonic() + self.config.heal_timeout_s

        def outstanding() -> list[str]:
            left = []
            paths = [znodes.ReassignPartitionsZNode.path(), znodes.PreferredReplicaElectionZNode.path()]
            for topic in self.deleted:
                paths += [znodes.TopicZNode.path(topic), znodes.DeleteTopicsTopicZNode.path(topic)]
            for path in paths:
                if self.exists(path):
                    left.append(path)
            return left

        started = time.monotonic()
        left = outstanding()
        while left and time.monotonic() < deadline:
            time.sleep(0.5)
            left = outstanding()
        self.log(
            f"intents: {'all done' if not left else 'still there: ' + ', '.join(left)} "
            f"after {time.monotonic() - started:.1f}s"
        )
        for intent in self.intents:
            if intent.status not in ("started",):
                continue
            if intent.kind == "reassignment":
                if znodes.ReassignPartitionsZNode.path() in left:
                    intent.status = "not completed"
                    intent.output += f"\n{znodes.ReassignPartitionsZNode.path()} still there"
                else:
                    self.settle_reassignment(intent)
            elif intent.kind == "preferred_election":
                intent.status = "not completed" if znodes.PreferredReplicaElectionZNode.path() in left else "completed"
            elif intent.kind == "topic_deletion":
                topic = intent.target["topic"]
                gone = (
                    znodes.TopicZNode.path(topic) not in left and znodes.DeleteTopicsTopicZNode.path(topic) not in left
                )
                intent.status = "completed" if gone else "not completed"
        stuck = [i for i in self.intents if i.status in ("not completed", "started")]
        refused = [i for i in self.intents if i.status == "refused"]
        failed = [i for i in self.intents if i.status == "failed"]
        self.checks["intents"] = (
            not stuck,
            f"{sum(i.status == 'completed' for i in self.intents)} completed, {len(failed)} reported failed"
            + (f" ({'; '.join(i.kind + ': ' + i.reason for i in failed)})" if failed else "")
            + f", {len(refused)} refused by the CLI, {len(stuck)} not completed"
            + (f" ({', '.join(i.kind + ': ' + i.detail for i in stuck)})" if stuck else ""),
        )

    def settle_reassignment(self, intent: Intent) -> None:
        """A reassignment whose znode is gone: `reassign-partitions --verify` says, per partition, complete or
        failed ("There is no active reassignment of partition ..., but replica set is ... rather than ...");
        a failed partition must have been reported by a controller ("Failed reassignment through zk")."""
        code, output = self.cli(
            "reassign-partitions", "--zookeeper", self.connect, "--reassignment-json-file", intent.target["file"],
            "--verify", "--preserve-throttles",
        )  # fmt: skip
        lines = output.splitlines()
        intent.output += "\n--verify: " + " / ".join(lines[-8:])
        if any("still in progress" in line for line in lines) or code not in (0, 1):
            return
        failed = [line for line in lines if line.startswith("There is no active reassignment")]
        if not failed:
            intent.status = "completed"
            self.log(f"reassignment at +{intent.at:.0f}s: complete")
            return
        reports = [
            line.strip()
            for broker in self.local.broker_ids()
            for line in (self.local.broker_dir(broker) / "logs" / "server.out").read_text(errors="replace").splitlines()
            if "Failed reassignment through zk" in line
        ]
        partitions = [line.split("partition ", 1)[1].split(",", 1)[0] for line in failed]
        unexplained = [p for p in partitions if not any(f"{p} ->" in report for report in reports)]
        intent.reason = "; ".join(failed) + (
            " — the controller logged: " + " | ".join(r[r.find("Failed") :][:200] for r in reports[-2:])
            if reports
            else ""
        )
        intent.status = "not completed" if unexplained else "failed"
        self.log(f"reassignment at +{intent.at:.0f}s: {intent.status}: {intent.reason}")

    def settle_intents(self) -> None:
        """Settle reassignments whose znode has gone, before another one changes the same assignments."""
        open_ones = [i for i in self.intents if i.kind == "reassignment" and i.status == "started" and i.exit_code == 0]
        if open_ones and not self.exists(znodes.ReassignPartitionsZNode.path()):
            for intent in open_ones:
                self.settle_reassignment(intent)

    def finish_traffic(self) -> None:
        partitions = self.surviving_partitions()
        started = time.monotonic()
        try:
            self.wait_for(lambda: self.isrs_full(partitions), self.config.heal_timeout_s, "full ISRs")
            self.log(f"every ISR full after {time.monotonic() - started:.1f}s")
        except TimeoutError:
            states = self.partition_states(partitions)
            self.log(f"ISRs not full within {self.config.heal_timeout_s:.0f}s: {states}")
            self.checks["full ISRs"] = (False, f"not full within {self.config.heal_timeout_s:.0f}s: {states}")
        # the healed cluster must take writes again on every partition
        marks = {t: len(self.producers[t].acked) for t in self.surviving}

        def every_partition_acked() -> bool:
            return all(
                len({a.partition for a in self.producers[t].acked[marks[t] :]}) == self.config.partitions
                for t in self.surviving
            )

        started = time.monotonic()
        try:
            self.wait_for(every_partition_acked, 60, "an ack on every partition after healing")
            self.checks["acks after healing"] = (True, f"every partition within {time.monotonic() - started:.1f}s")
        except TimeoutError:
            acked_since = {
                t: sorted({a.partition for a in self.producers[t].acked[marks[t] :]}) for t in self.surviving
            }
            self.checks["acks after healing"] = (False, f"partitions acked within 60 s, per topic: {acked_since}")
        self.log(f"acks after healing: {self.checks['acks after healing'][1]}")
        self.producer_stop = self.log.now()
        for worker in self.producers.values():
            worker.stop(flush_timeout_s=60)
        if self.consumer is not None:
            self.consumer.stop()
        problems = [f"producer of {t}: {w.error!r}" for t, w in self.producers.items() if w.error is not None]
        problems += [f"producer of {t}: flush timed out" for t, w in self.producers.items() if w.unflushed]
        if self.consumer is not None and self.consumer.error is not None:
            problems.append(f"live consumer: {self.consumer.error!r}")
        self.checks["workload ran throughout"] = (
            not problems,
            "; ".join(problems) or "producers and the live consumer ran to the end",
        )
        longest = max(self.consumer_stalls, key=lambda s: s[1], default=None)
        self.checks["live consumer kept up"] = (
            longest is None or longest[1] <= LIVE_STALL_LIMIT_S,
            "never read nothing for 30 s while acks went on"
            if longest is None
            else f"{len(self.consumer_stalls)} stall(s) while acks went on, longest {longest[1]:.0f}s from "
            f"+{longest[0]:.0f}s (limit {LIVE_STALL_LIMIT_S:.0f}s)",
        )
        self.log("producers flushed, live consumer stopped")
        if "full ISRs" not in self.checks:
            try:
                self.wait_for(lambda: self.isrs_full(partitions), self.config.heal_timeout_s, "full ISRs")
                self.checks["full ISRs"] = (True, "every surviving partition's ISR is its replica set")
            except TimeoutError:
                self.checks["full ISRs"] = (
                    False,
                    f"not full after the producers stopped: {self.partition_states(partitions)}",
                )

    def verify(self) -> None:
        partitions = self.surviving_partitions()
        bootstrap = self.bootstrap()
        acked = [a for t in self.surviving for a in self.producers[t].acked]
        live = dict(self.consumer.seen) if self.consumer is not None else {}
        final, ends, reread = read_to_end(bootstrap, partitions, self.config.heal_timeout_s)
        self.log(f"read {sum(len(r) for r in final.values())} records to the high watermarks {ends}")
        verdict = check_records(acked, final, live, self.surviving)
        self.verdict_data = verdict
        self.consumed_per_topic, self.unacked_per_topic = count_per_topic(final, acked)
        end = self.producer_stop if self.producer_stop is not None else self.chaos_end
        self.unavailability = max_gaps(acked, partitions, 0.0, end)
        self.checks["no acked record lost"] = (
            not verdict.lost and not verdict.moved,
            f"{len(verdict.lost)} lost, {len(verdict.moved)} at another offset",
        )
        self.checks["no duplicate"] = (not verdict.duplicated, f"{len(verdict.duplicated)} values twice")
        self.checks["offsets contiguous"] = (
            not verdict.gaps,
            "; ".join(f"{t}-{p}: {w}" for t, p, w in verdict.gaps) or "0..HW-1",
        )
        conflicts = len(verdict.live_conflicts) + (len(self.consumer.reread_conflicts) if self.consumer else 0)
        self.checks["read records stay"] = (
            not conflicts,
            f"{verdict.live_read} read live, {conflicts} changed or gone since",
        )
        self.compare_replicas(partitions, final)
        self.run_replica_verification()

    def compare_replicas(
        self, partitions: Sequence[tuple[str, int]], final: dict[tuple[str, int], dict[int, bytes]]
    ) -> None:
        from kafkaops.admin.kafka_client import KafkaClient

        replicas = self.assignments(self.surviving)
        deadline = time.monotonic() + self.config.heal_timeout_s
        differences: dict[tuple[str, int], str] = {}
        with KafkaClient(self.bootstrap(), client_id="chaos-replica-compare", request_timeout_ms=15000) as client:
            pending = list(partitions)
            while pending:
                differences.clear()
                for tp in pending:
                    reference = sorted(final[tp].items())
                    for broker in replicas[tp]:
                        try:
                            copy, high_watermark = fetch_replica(client, broker, *tp)
                        except Exception as error:  # noqa: BLE001 - a broker not answering yet: compared again
                            differences[tp] = f"broker {broker}: {type(error).__name__}: {error}"
                            break
                        if copy != reference:
                            first = next(
                                (i for i, (a, b) in enumerate(zip(copy, reference, strict=False)) if a != b),
                                min(len(copy), len(reference)),
                            )
                            differences[tp] = (
                                f"broker {broker} holds {len(copy)} records (HW {high_watermark}), the log read holds "
                                f"{len(reference)}; first difference at index {first}"
                            )
                            break
                pending = [tp for tp in pending if tp in differences]
                if not pending or time.monotonic() > deadline:
                    break
                time.sleep(1.0)
        total = sum(len(replicas[tp]) for tp in partitions)
        self.checks["replicas identical"] = (
            not differences,
            f"{total} replicas of {len(partitions)} partitions fetched from their brokers"
            + ("" if not differences else ": " + "; ".join(f"{t}-{p}: {d}" for (t, p), d in differences.items())),
        )
        self.log(f"replica comparison: {self.checks['replicas identical'][1]}")

    def run_replica_verification(self) -> None:
        code, output = self.cli("replica-verification", "--help", timeout_s=60)
        if code != 0:
            self.checks["replica-verification --once"] = (None, "command not available")
            return
        pattern = "|".join(self.surviving)
        code, output = self.cli(
            "replica-verification", "--broker-list", self.bootstrap(), "--topic-white-list", pattern,
            "--once", "--time", "-2", timeout_s=self.config.heal_timeout_s,
        )  # fmt: skip
        last = output.strip().splitlines()[-1] if output.strip() else ""
        self.checks["replica-verification --once"] = (code == 0, f"exit {code}: {last}")
        (self.state_dir / "replica-verification.out").write_text(output + "\n")
        self.log(f"replica-verification --once exited {code}: {last}")

    def merge_state_change_logs(self) -> None:
        files = sorted(str(p) for p in (self.state_dir / "cluster" / "brokers").glob("*/logs/state-change.log*"))
        if not files:
            self.checks["timeline"] = (None, "no state-change logs")
            return
        target = self.state_dir / "state-change-timeline.log"
        code, output = self.cli(
            "state-change-log-merger", "--logs", ",".join(files), "--output-path", str(target), timeout_s=300
        )
        lines = len(target.read_text(errors="replace").splitlines()) if target.exists() else 0
        self.checks["timeline"] = (
            None,
            f"{target} ({lines} lines from {len(files)} files)"
            if code == 0
            else f"merger exit {code}: {output[-300:]}",
        )
        verdict = self.verdict_data
        if verdict is None:
            return
        broken = sorted(
            {(t, p) for t, p, *_ in verdict.lost}
            | {(t, p) for t, p, *_ in verdict.moved}
            | {(t, p) for t, p, *_ in verdict.live_conflicts}
        )
        for topic, partition in broken:
            path = self.state_dir / f"timeline-{topic}-{partition}.log"
            self.cli(
                "state-change-log-merger", "--logs", ",".join(files), "--topic", topic, "--partitions", str(partition),
                "--output-path", str(path), timeout_s=300,
            )  # fmt: skip
            self.log(f"timeline of {topic}-{partition}: {path}")

    # -- report --

    def verdict(self) -> int:
        data = self.verdict_data
        data_bad = data is None or not data.ok or self.checks.get("replicas identical", (True, ""))[0] is False
        if self.checks.get("replica-verification --once", (None, ""))[0] is False:
            data_bad = True
        other_bad = bool(self.anomalies) or any(ok is False for name, (ok, _) in self.checks.items())
        if data_bad:
            return EXIT_DATA
        return EXIT_CHECKS if other_bad else EXIT_PASS

    def report(self, code: int, console_file: TextIO) -> None:
        from rich.console import Console
        from rich.table import Table

        console = Console(file=console_file, width=None if console_file.isatty() else 130, highlight=False)
        faults = Table(title=f"Faults injected (seed {self.config.seed}, {self.chaos_end:.0f} s of chaos)")
        for column in ("kind", "injected", "skipped"):
            faults.add_column(column, justify="left" if column == "kind" else "right")
        for kind in self.config.kinds:
            faults.add_row(kind, str(self.injected[kind]), str(self.skipped[kind]))
        faults.add_row("total", str(sum(self.injected.values())), str(sum(self.skipped.values())), style="bold")
        console.print(faults)

        records = Table(title="Records")
        for column in (
            "topic",
            "sent",
            "acked",
            "failed",
            "consumed",
            "lost",
            "moved",
            "duplicated",
            "unacked in log",
            "read live",
        ):
            records.add_column(column, justify="left" if column == "topic" else "right")
        data = self.verdict_data
        for topic in self.surviving + self.doomed:
            worker = self.producers.get(topic)
            if worker is None:
                continue
            if topic in self.surviving and data is not None:
                lost = sum(1 for t, *_ in data.lost if t == topic)
                moved = sum(1 for t, *_ in data.moved if t == topic)
                duplicated = sum(1 for v, _ in data.duplicated if v.startswith(topic + "/"))
                consumed = self.consumed_per_topic.get(topic, 0)
                live = sum(1 for (t, _, _) in (self.consumer.seen if self.consumer else {}) if t == topic)
                row = [
                    str(consumed),
                    str(lost),
                    str(moved),
                    str(duplicated),
                    str(self.unacked_per_topic.get(topic, 0)),
                    str(live),
                ]
            else:
                row = ["deleted" if topic in self.deleted else "-", "-", "-", "-", "-", "-"]
            failed = sum(worker.failed.values()) + sum(worker.not_sent.values())
            records.add_row(topic, str(worker.sent), str(len(worker.acked)), str(failed), *row)
        console.print(records)

        gaps = Table(title="Max unavailability per partition (longest time without an ack)")
        for column in ("partition", "max gap s", "from +s", "faults active then"):
            gaps.add_column(column, justify="left" if column in ("partition", "faults active then") else "right")
        for (topic, partition), (gap, since) in sorted(self.unavailability.items()):
            active = self.faults_around(since, since + gap)
            gaps.add_row(f"{topic}-{partition}", f"{gap:.2f}", f"{since:.1f}", active)
        console.print(gaps)

        checks = Table(title="Checks")
        checks.add_column("check")
        checks.add_column("result")
        checks.add_column("detail", overflow="fold")
        for name, (ok, detail) in self.checks.items():
            checks.add_row(name, {True: "ok", False: "FAILED", None: "-"}[ok], detail)
        checks.add_row(
            "clean stops",
            "-" if not self.slow_stops else "slow",
            "every SIGTERM stop under 20 s"
            if not self.slow_stops
            else "took over 20 s (broker, s): " + ", ".join(f"({b}, {t})" for b, t in self.slow_stops),
        )
        checks.add_row(
            "client-visible metadata",
            "-" if not self.warnings else "WARN",
            "; ".join(self.warnings[:4]) + (f" (+{len(self.warnings) - 4})" if len(self.warnings) > 4 else "")
            or "no send refused for lack of a partition",
        )
        checks.add_row(
            "brokers behaved",
            "ok" if not self.anomalies else "FAILED",
            "; ".join(self.anomalies) or "no unexpected exit, every expired session re-registered",
        )
        checks.add_row(
            "action errors",
            "-",
            "; ".join(self.action_errors[:5])
            + (f" (+{len(self.action_errors) - 5})" if len(self.action_errors) > 5 else "")
            or "none",
        )
        console.print(checks)
        text = {
            EXIT_PASS: "PASS",
            EXIT_DATA: "FAIL: data",
            EXIT_CHECKS: "FAIL: checks",
            EXIT_SETUP: "FAIL: setup",
            EXIT_INTERRUPTED: "INTERRUPTED",
        }[code]
        console.print(f"verdict: [bold]{text}[/bold] (exit {code}); state dir {self.state_dir}")
        if data is not None and not data.ok:
            for t, p, o, v, found in data.lost[:10]:
                console.print(f"  lost: {t}-{p} offset {o} acked {v}, log holds {found}")
            for t, p, o, at, v in data.moved[:10]:
                console.print(f"  moved: {t}-{p} {v} acked at offset {o}, found at {at}")
            for v, places in data.duplicated[:10]:
                console.print(f"  duplicated: {v} at {places}")
            for t, p, o, v, found in data.live_conflicts[:10]:
                console.print(f"  read then gone: {t}-{p} offset {o} read {v}, log holds {found}")

    def faults_around(self, start: float, end: float) -> str:
        shown = []
        for fault in self.faults:
            who = fault.get("broker", fault.get("node", fault.get("topic", "")))
            hits = [(fault["at"], who)] + [(b["at"], b["broker"]) for b in fault.get("later_bounces", ())]
            for at, hit in hits:
                until = at + float(fault.get("hold_s") or 0) + 10
                if at <= end and until >= start - 5:
                    shown.append((at, f"{fault['kind']}({hit})@{at:.0f}"))
        return ", ".join(text for _, text in sorted(shown)[-4:])

    def write_report(self, code: int) -> None:
        data = self.verdict_data
        document = {
            "seed": self.config.seed,
            "config": {k: (list(v) if isinstance(v, tuple) else v) for k, v in asdict(self.config).items()},
            "exit_code": code,
            "schedule": [asdict(a) for a in self.schedule],
            "faults": self.faults,
            "injected": dict(self.injected),
            "skipped": dict(self.skipped),
            "intents": [asdict(i) for i in self.intents],
            "checks": {name: {"ok": ok, "detail": detail} for name, (ok, detail) in self.checks.items()},
            "anomalies": self.anomalies,
            "slow_clean_stops": self.slow_stops,
            "warnings": self.warnings,
            "live_consumer": None
            if self.consumer is None
            else {
                "read": len(self.consumer.seen),
                "errors": dict(self.consumer.errors),
                "last_error": self.consumer.last_error,
                "error": repr(self.consumer.error) if self.consumer.error else None,
                "partitions_at_the_end": self.consumer.partition_states(),
            },
            "action_errors": self.action_errors,
            "records": {
                topic: {
                    "sent": w.sent,
                    "acked": len(w.acked),
                    "failed": dict(w.failed),
                    "not_sent": dict(w.not_sent),
                    "unflushed": w.unflushed,
                }
                for topic, w in self.producers.items()
            },
            "data": None
            if data is None
            else {
                "acked": data.acked,
                "consumed": data.consumed,
                "lost": data.lost[:1000],
                "moved": data.moved[:1000],
                "duplicated": data.duplicated[:1000],
                "gaps": data.gaps,
                "unacked_present": data.unacked_present,
                "live_read": data.live_read,
                "live_conflicts": data.live_conflicts[:1000],
            },
            "max_unavailability_s": {
                f"{t}-{p}": {"gap_s": round(g, 3), "from_s": round(s, 2)}
                for (t, p), (g, s) in self.unavailability.items()
            },
        }
        (self.state_dir / "chaos-report.json").write_text(json.dumps(document, indent=2, default=str) + "\n")

    # -- teardown --

    def teardown(self) -> None:
        """Stop every process this run started, whatever state it is in (frozen ones are resumed first).

        Episodes are told to stop first (they start no process once `closing` is set); the brokers are
        swept twice, in case one was being started as the flag went up."""
        self.closing.set()
        self.ending.set()
        for worker in self.producers.values():
            worker._flush_timeout_s = min(worker._flush_timeout_s, 2.0)
            worker._stop.set()
        if self.consumer is not None:
            self.consumer._stop.set()
        deadline = time.monotonic() + 10
        for thread in self.episodes:
            thread.join(max(0.1, deadline - time.monotonic()))
        for sweep in range(2):
            if sweep:
                time.sleep(1.0)
            if self.local.config_file.exists():
                for broker in self.local.broker_ids():
                    pid = self.local.broker_pid(broker)
                    if pid is not None:
                        with contextlib.suppress(ProcessLookupError):
                            os.kill(pid, signal.SIGCONT)
                    with contextlib.suppress(Exception):
                        self.local.stop_broker(broker, hard=True, timeout_s=10)
            with contextlib.suppress(Exception):
                self.ensemble.stop(hard=True)
        if self.zk is not None:
            with contextlib.suppress(Exception):
                self.zk.close()
        for worker in self.producers.values():
            worker._thread.join(5)
        self.log.close()


def count_per_topic(
    final: dict[tuple[str, int], dict[int, bytes]], acked: Iterable[Ack]
) -> tuple[dict[str, int], dict[str, int]]:
    consumed: Counter[str] = Counter()
    acked_values = {a.value for a in acked}
    unacked: Counter[str] = Counter()
    for (topic, _), records in final.items():
        consumed[topic] += len(records)
        unacked[topic] += sum(1 for v in records.values() if v not in acked_values)
    return dict(consumed), dict(unacked)


# --- main ------------------------------------------------------------------------------------------------


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="Chaos runner: faults against a local cluster, then data checks.")
    parser.add_argument("--seed", type=int, required=True)
    parser.add_argument("--duration", type=float, default=300.0, help="seconds of chaos (default 300)")
    parser.add_argument("--brokers", type=int, default=3, choices=range(3, 6), metavar="3..5")
    parser.add_argument("--topics", type=int, default=2, help="surviving topics (default 2)")
    parser.add_argument("--partitions", type=int, default=3)
    parser.add_argument("--rate", type=float, default=100.0, help="records/s per topic (default 100)")
    parser.add_argument("--session-timeout-ms", type=int, default=6000, help="brokers' zookeeper.session.timeout.ms")
    parser.add_argument("--fault-interval", type=float, default=20.0, help="mean seconds between fault starts")
    parser.add_argument("--hold", type=float, default=20.0, help="mean seconds a shut-down broker stays down")
    parser.add_argument("--admin-every", type=float, default=600.0, help="seconds per round of admin actions")
    parser.add_argument(
        "--max-impaired",
        type=int,
        default=None,
        help="brokers down or frozen at once (default: 1 for 3 brokers, 2 above)",
    )
    parser.add_argument(
        "--faults",
        default="all",
        help=f"comma list of kinds (default all): {', '.join(ALL_KINDS)}; or a mode, a target, broker, admin",
    )
    parser.add_argument("--heal-timeout", type=float, default=240.0)
    parser.add_argument(
        "--clean-stop-timeout", type=float, default=60.0, help="seconds after SIGTERM before SIGKILL (default 60)"
    )
    parser.add_argument("--state-dir", type=Path, default=None, help="default: a new temporary directory (kept)")
    parser.add_argument("--keep-data", action="store_true", help="keep the partition logs after a passing run")
    parser.add_argument("--print-schedule", action="store_true", help="print the planned actions and exit")
    parser.add_argument(
        "--consumer-debug", action="store_true", help="librdkafka debug lines of the live consumer to a file"
    )
    parser.add_argument(
        "--quiet", action="store_true", help="only the summary on stdout (events still go to the log file)"
    )
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        kinds = expand_kinds(args.faults)
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_SETUP
    config = ChaosConfig(
        seed=args.seed,
        duration_s=args.duration,
        brokers=args.brokers,
        topics=args.topics,
        partitions=args.partitions,
        rate=args.rate,
        session_timeout_ms=args.session_timeout_ms,
        fault_interval_s=args.fault_interval,
        hold_s=args.hold,
        kinds=kinds,
        admin_every_s=args.admin_every,
        max_impaired=args.max_impaired if args.max_impaired is not None else (1 if args.brokers <= 3 else 2),
        heal_timeout_s=args.heal_timeout,
        clean_stop_timeout_s=args.clean_stop_timeout,
    )
    if args.print_schedule:
        for action in plan_schedule(config):
            print(
                f"+{action.at_s:8.1f}s {action.kind:28s} hold {action.hold_s:5.1f}s bounces {action.bounces} "
                f"pick {action.pick:.3f}/{action.pick2:.3f}"
            )
        return EXIT_PASS
    state_dir = args.state_dir or Path(tempfile.mkdtemp(prefix=f"kafkaops-chaos-{args.seed}-"))
    state_dir.mkdir(parents=True, exist_ok=True)
    run = ChaosRun(config, state_dir, None if args.quiet else sys.stdout)
    run.consumer_debug = args.consumer_debug

    def interrupted(signum: int, _frame: FrameType | None) -> None:
        raise Interrupted(f"signal {signum}")

    previous = {sig: signal.signal(sig, interrupted) for sig in (signal.SIGTERM, signal.SIGHUP)}
    code = EXIT_SETUP
    try:
        try:
            run.setup()
        except (Interrupted, KeyboardInterrupt):
            raise
        except Exception as error:  # noqa: BLE001 - reported, then everything is stopped
            run.log(f"setup failed: {type(error).__name__}: {error}\n{traceback.format_exc()}")
            run.action_errors.append(f"setup: {error}")
            return EXIT_SETUP
        try:
            run.run_chaos()
            run.heal()
            run.wait_intents()
            run.finish_traffic()
            run.verify()
        except (Interrupted, KeyboardInterrupt):
            raise
        except Exception as error:  # noqa: BLE001 - reported as a failed check, after what could be checked
            run.log(f"the run broke off: {type(error).__name__}: {error}\n{traceback.format_exc()}")
            run.checks["run completed"] = (False, f"{type(error).__name__}: {error}")
        run.merge_state_change_logs()
        code = run.verdict()
        run.write_report(code)
        run.report(code, sys.stdout)
        return code
    except (Interrupted, KeyboardInterrupt) as error:
        code = EXIT_INTERRUPTED
        with contextlib.suppress(Exception):
            run.log(f"interrupted ({error or 'Ctrl-C'}): stopping everything")
        return EXIT_INTERRUPTED
    finally:
        with contextlib.suppress(Exception):
            run.log(f"stopping every process (exit {code})")
        run.teardown()
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        if code == EXIT_PASS and not args.keep_data:
            for data in (state_dir / "cluster" / "brokers").glob("*/data"):
                shutil.rmtree(data, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
