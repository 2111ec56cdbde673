"""The traffic a run keeps up while faults hit the cluster, reused by the cluster tests: a producer per topic
that records every acknowledgement, and a consumer reading from the beginning that records what it read.

The client libraries (kafka-python, confluent-kafka) are test dependencies, imported by the threads that
use them. Every client is closed explicitly with a bounded timeout: a kafka-python producer left open with
sends pending prints `KafkaTimeoutError` tracebacks from its `__del__` when the interpreter exits.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import logging
import threading
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

CONSUMER_GROUP = "kafkaops-chaos"
"""The live consumer's group.id: assign() only, so no group membership and no commits."""


def _login(properties: Mapping[str, str]) -> tuple[str, str, str] | None:
    """(mechanism, user, password) of the properties' SASL login, or None without SASL."""
    if not properties.get("security.protocol", "PLAINTEXT").upper().startswith("SASL_"):
        return None
    from kafkaops.cluster.common.sasl import client_login

    login = client_login(properties["sasl.mechanism"], properties.get("sasl.jaas.config"))
    return login.mechanism, login.username, login.password


def librdkafka_settings(properties: Mapping[str, str]) -> dict[str, Any]:
    """Kafka client properties (a cluster's `client.properties`: security.protocol, sasl.*, the PEM trust
    store) in confluent-kafka's names; nothing for PLAINTEXT."""
    protocol = properties.get("security.protocol", "PLAINTEXT").upper()
    if protocol == "PLAINTEXT":
        return {}
    settings: dict[str, Any] = {"security.protocol": protocol}
    if "ssl.truststore.location" in properties:
        settings["ssl.ca.location"] = properties["ssl.truststore.location"]
    if (login := _login(properties)) is not None:
        settings.update(dict(zip(("sasl.mechanism", "sasl.username", "sasl.password"), login, strict=True)))
    return settings


def kafka_python_settings(properties: Mapping[str, str]) -> dict[str, Any]:
    """The same for kafka-python's keyword arguments."""
    protocol = properties.get("security.protocol", "PLAINTEXT").upper()
    if protocol == "PLAINTEXT":
        return {}
    settings: dict[str, Any] = {"security_protocol": protocol}
    if "ssl.truststore.location" in properties:
        settings["ssl_cafile"] = properties["ssl.truststore.location"]
    if (login := _login(properties)) is not None:
        keys = ("sasl_mechanism", "sasl_plain_username", "sasl_plain_password")
        settings.update(dict(zip(keys, login, strict=True)))
    return settings


@dataclass(frozen=True, slots=True)
class Ack:
    topic: str
    partition: int
    offset: int
    value: bytes
    at: float
    """When it was acknowledged, on the producer's clock (the chaos runner's: seconds since its chaos phase
    began)."""


def close_kafka_python_producer(producer: Any, timeout_s: float = 10.0) -> None:
    """Close a kafka-python producer within about twice `timeout_s`, whatever is pending.

    close() flushes first; with sends still pending at its timeout it raises KafkaTimeoutError and leaves the
    producer open, and its `__del__` tries again at exit and prints that error. Then the pending sends are
    failed (the sender's force_close: kafka-python has no public way to abort them) and it is closed again.
    Raises KafkaTimeoutError only if even that does not finish."""
    from kafka.errors import KafkaTimeoutError

    try:
        producer.close(timeout=timeout_s)
    except KafkaTimeoutError:
        producer._sender.force_close()
        producer.close(timeout=timeout_s)


class ProducerWorker:
    """An idempotent kafka-python producer (acks=all) sending `<topic>/<n>` at `rate` per second,
    round-robin over the partitions, on its own thread; acknowledgements are recorded with their time.

    The values are never resent by this code: kafka-python retries a batch itself (same producer id and
    sequence), so a value twice in a log is the broker's duplicate. A record send() refuses (no metadata for
    its partition within max.block.ms, or a broker's Metadata answer without it) is counted in `not_sent` and
    the loop goes on."""

    def __init__(
        self,
        topic: str,
        partitions: int,
        bootstrap: str,
        rate: float,
        clock: Callable[[], float] = time.monotonic,
        on_refused: Callable[[str, BaseException], None] | None = None,
        metadata_max_age_ms: int = 10000,
        settings: Mapping[str, Any] | None = None,
    ) -> None:
        self.topic = topic
        self.settings = dict(settings or {})
        """kafka-python settings on top of the worker's (security: `kafka_python_settings`)."""
        self.on_refused = on_refused
        """Called (on the producer's thread, at most every 10 s) when send() refuses a record."""
        self.partitions = partitions
        self.bootstrap = bootstrap
        self.rate = rate
        self.clock = clock
        self.metadata_max_age_ms = metadata_max_age_ms
        self.acked: list[Ack] = []
        """Appended by kafka-python's sender thread: read it whole once the worker has stopped."""
        self.failed: Counter[str] = Counter()
        self.sent = 0
        self.not_sent: Counter[str] = Counter()
        """Records send() refused (never handed to the client), by error."""
        self.unflushed = False
        self.error: BaseException | None = None
        self._producer: Any = None
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
                metadata_max_age_ms=self.metadata_max_age_ms,
                **self.settings,
            )
        except BaseException as error:  # noqa: BLE001 - reported by stop()
            self.error = error
            return
        self._producer = producer
        try:
            self._send_until_stopped(producer)
        except BaseException as error:  # noqa: BLE001 - reported by stop()
            self.error = error
        finally:
            # pending sends that never finish: forced (the close must not be left to __del__ at exit)
            with contextlib.suppress(Exception):
                close_kafka_python_producer(producer, timeout_s=min(5.0, self._flush_timeout_s))

    def _send_until_stopped(self, producer: Any) -> None:
        from kafka.errors import KafkaTimeoutError

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

    def client_state(self, partitions: Sequence[int]) -> str:
        """What the producer's client believes (read from kafka-python 3.0's internals, for a diagnosis only):
        each of `partitions`' cached leader and epoch, its metadata refresh loop, and each connection (a
        refresh waits on the connection it was sent on; one that never finishes connecting holds every later
        refresh back)."""
        producer = self._producer
        if producer is None:
            return "no producer"
        try:
            from kafka.structs import TopicPartition

            cluster = producer._metadata
            leaders = [
                f"{p}: leader {cluster.leader_for_partition(TopicPartition(self.topic, p))} epoch "
                f"{cluster.leader_epoch_for_partition(TopicPartition(self.topic, p))}"
                for p in partitions
            ]
            loop = cluster._refresh_loop_future
            if loop is None:
                loop_state = "not started"
            elif loop.is_done:
                loop_state = f"ENDED ({loop.exception!r})"
            else:
                loop_state = "running"
            now_ms = time.monotonic() * 1000
            refresh = (
                f"refresh loop {loop_state}, refresh in flight {cluster.metadata_refresh_in_progress}, "
                f"update wanted {cluster.need_update}, last refresh {now_ms - cluster._last_refresh_ms:.0f} ms ago, "
                f"last successful {now_ms - cluster._last_successful_refresh_ms:.0f} ms ago"
            )
            conns = [
                f"{conn} in flight {len(conn.in_flight_requests)} buffered {len(conn._request_buffer)}"
                for conn in list(cluster._manager._conns.values())
            ]
            return "; ".join(leaders) + f"; {refresh}; connections: " + ", ".join(conns)
        except Exception as error:  # noqa: BLE001 - internals of another version: say so, go on
            return f"client state unreadable: {error!r}"

    def abort(self, flush_timeout_s: float) -> None:
        """Tell the worker to stop, giving pending sends at most `flush_timeout_s`; does not wait (`join`)."""
        self._flush_timeout_s = min(self._flush_timeout_s, flush_timeout_s)
        self._stop.set()

    def join(self, timeout_s: float) -> bool:
        """Wait up to `timeout_s` for the worker's thread (its producer closed); whether it has ended."""
        self._thread.join(timeout_s)
        return not self._thread.is_alive()

    def stop(self, flush_timeout_s: float = 90.0) -> None:
        """Stop sending, flush for up to `flush_timeout_s`, close the producer, and wait for all that."""
        self._flush_timeout_s = flush_timeout_s
        self._stop.set()
        self._thread.join(flush_timeout_s + 30)


def confluent_settings(
    bootstrap: str, extra: Mapping[str, Any] | None = None, group_id: str = CONSUMER_GROUP
) -> dict[str, Any]:
    """A confluent-kafka consumer's settings for reading by assignment, with `extra` on top."""
    return {
        "bootstrap.servers": bootstrap,
        "group.id": group_id,  # assign() only: no group membership, no commits
        "enable.auto.commit": False,
        "auto.offset.reset": "earliest",
        "topic.metadata.refresh.interval.ms": 5000,
        "log_level": 2,
        **(extra or {}),
    }


KAFKA_PYTHON_LOG = "kafka-python.log"
"""Under the state dir: what the producers' kafka-python clients warned about."""


def file_logger(name: str, path: Path, level: int, fmt: str) -> logging.Logger:
    """The logger `name` writing to `path` alone (not propagated to the root's stderr)."""
    logger = logging.getLogger(name)
    logger.propagate = False
    logger.setLevel(level)
    handler = logging.FileHandler(path)
    handler.setFormatter(logging.Formatter(fmt))
    logger.addHandler(handler)
    return logger


def kafka_python_log(path: Path) -> None:
    """kafka-python's warnings (a produce error it retries, a batch it drops) go to `path`, not to stderr: the
    story of a partition whose acks stopped."""
    file_logger("kafka", path, logging.WARNING, "[%(asctime)s] %(threadName)s %(name)s %(levelname)s %(message)s")


def librdkafka_debug(path: Path, contexts: str) -> dict[str, Any]:
    """confluent-kafka settings that write librdkafka's `debug=<contexts>` lines to `path`."""
    logger = file_logger(f"kafkaops.chaos.librdkafka.{path.stem}", path, logging.DEBUG, "[%(asctime)s] %(message)s")
    return {"debug": contexts, "log_level": 7, "logger": logger}


class ConsumerThread:
    """How the runner stops a consumer that reads on its own thread (`_thread`, told by `_stop`)."""

    _stop: threading.Event
    _thread: threading.Thread

    def abort(self) -> None:
        """Tell the consumer to stop; does not wait (`join`)."""
        self._stop.set()

    def join(self, timeout_s: float) -> bool:
        """Wait up to `timeout_s` for the consumer's thread (the consumer closed); whether it has ended."""
        self._thread.join(timeout_s)
        return not self._thread.is_alive()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(30)


STATISTICS_INTERVAL_MS = 1000
"""How often librdkafka's main thread hands the live consumer its statistics."""

WEDGED_AFTER_S = 15.0
"""No statistics for this long while the live consumer polls: librdkafka's main thread is stuck (below)."""


class LiveConsumer(ConsumerThread):
    """A confluent-kafka consumer reading `partitions` from the beginning for as long as it runs (explicit
    assignment), remembering the value it read at every (topic, partition, offset); a different value read
    again at an offset is a conflict (the log changed under an offset a consumer had read).

    librdkafka 2.16 can deadlock its main thread when a broker leaves the cluster's metadata while an
    OffsetForLeaderEpoch request to it is in flight (confluentinc/librdkafka#5476: the request fails with
    "Broker handle destroyed", and the main thread and the decommissioned broker's thread take the handle's
    lock and the partition's lock in opposite orders), as when a broker is bounced under a consumer.
    Fetches already delegated go on; metadata, offset validation and statistics stop for good, so
    partitions whose leader moves are never read again. The statistics show it: when none come for
    `WEDGED_AFTER_S` while it polls, the consumer is left behind (never closed nor freed: that waits
    forever on the same lock) and a new one reads on from the next offset of every partition
    (`restarts`)."""

    def __init__(
        self,
        bootstrap: str,
        partitions: Sequence[tuple[str, int]],
        debug_log: Path | None = None,
        group_id: str = CONSUMER_GROUP,
        settings: Mapping[str, Any] | None = None,
    ) -> None:
        self.debug_log = debug_log
        """Where librdkafka's `debug=metadata,topic,fetch` lines go, if anywhere."""
        self.settings = dict(settings or {})
        """confluent-kafka settings on top of the consumer's (security: `librdkafka_settings`)."""
        self.seen: dict[tuple[str, int, int], bytes] = {}
        """Written by the consumer's thread: `read()` copies it while it runs."""
        self.reread_conflicts: list[tuple[str, int, int, bytes, bytes]] = []
        self.errors: Counter[str] = Counter()
        """Errors the consumer reported (by name); its client retries them itself."""
        self.last_errors: list[str] = []
        """The last five of them, `<topic>-<partition>: <text>`."""
        self.error: BaseException | None = None
        self.stats: dict[str, Any] = {}
        """librdkafka's latest statistics: each partition's fetch state, leader, offsets."""
        self.restarts = 0
        """Consumers left behind with a stuck librdkafka main thread and replaced (see above)."""
        self._stats_at = time.monotonic()
        self._bootstrap = bootstrap
        self._group_id = group_id
        self._partitions = list(partitions)
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="live-consumer", daemon=True)
        self._thread.start()

    @property
    def last_error(self) -> str:
        return self.last_errors[-1] if self.last_errors else ""

    def read(self) -> dict[tuple[str, int, int], bytes]:
        """What it has read so far: (topic, partition, offset) → value."""
        with self._lock:
            return dict(self.seen)

    def _settings(self) -> dict[str, Any]:
        def keep_stats(document: str) -> None:
            self._stats_at = time.monotonic()
            with contextlib.suppress(ValueError):
                self.stats = json.loads(document)

        extra: dict[str, Any] = {
            **self.settings,
            "statistics.interval.ms": STATISTICS_INTERVAL_MS,
            "stats_cb": keep_stats,
        }
        if self.debug_log is not None:
            extra.update(librdkafka_debug(self.debug_log, "metadata,topic,fetch"))
        return confluent_settings(self._bootstrap, extra, self._group_id)

    def _run(self) -> None:
        from confluent_kafka import Consumer

        while not self._stop.is_set():
            try:
                consumer = Consumer(self._settings())
            except BaseException as error:  # noqa: BLE001 - reported by stop()
                self.error = error
                return
            wedged = False
            try:
                consumer.assign(self._assignment())
                wedged = self._read(consumer)
            except BaseException as error:  # noqa: BLE001 - reported by stop()
                self.error = error
                return
            finally:
                if wedged:
                    _leave_behind(consumer)
                else:
                    with contextlib.suppress(Exception):
                        consumer.close()

    def _assignment(self) -> list[Any]:
        """Every partition at the offset after the last one read, from the beginning where none was."""
        from confluent_kafka import OFFSET_BEGINNING
        from confluent_kafka import TopicPartition as CTopicPartition

        last: dict[tuple[str, int], int] = {}
        for topic, partition, offset in self.read():
            last[(topic, partition)] = max(offset, last.get((topic, partition), -1))
        return [
            CTopicPartition(t, p, last[(t, p)] + 1 if (t, p) in last else OFFSET_BEGINNING) for t, p in self._partitions
        ]

    def _read(self, consumer: Any) -> bool:
        """Read until told to stop (False) or until librdkafka's main thread is stuck (True)."""
        self._stats_at = time.monotonic()
        while not self._stop.is_set():
            if time.monotonic() - self._stats_at > WEDGED_AFTER_S:
                self.restarts += 1
                self.last_errors = [
                    *self.last_errors[-4:],
                    f"no statistics for {WEDGED_AFTER_S:.0f} s: librdkafka's main thread is stuck; a new consumer "
                    "reads on",
                ]
                return True
            for message in consumer.consume(num_messages=500, timeout=0.2):
                problem = message.error()
                if problem is not None:
                    self.errors[problem.name()] += 1
                    self.last_errors = [
                        *self.last_errors[-4:],
                        f"{message.topic()}-{message.partition()}: {problem.str()}",
                    ]
                    continue
                key = (str(message.topic()), int(message.partition() or 0), int(message.offset() or 0))
                value = message.value() or b""
                with self._lock:
                    before = self.seen.get(key)
                    if before is not None and before != value:
                        self.reread_conflicts.append((*key, before, value))
                    self.seen[key] = value
        return False

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


def _leave_behind(consumer: Any) -> None:
    """Keep a consumer whose librdkafka is stuck from ever being freed: freeing it calls `rd_kafka_destroy`,
    which waits forever for the lock the stuck threads hold, and would hang whoever dropped the last
    reference (at the latest the interpreter at exit). Its threads stay, idle but for reconnecting."""
    ctypes.pythonapi.Py_IncRef(ctypes.py_object(consumer))


COMMIT_GROUP = "kafkaops-chaos-commits"
"""The group consumer's group.id: a member of a real group, committing after every batch it read."""


class ReadTracker:
    """What a group member read of each partition, and how its reading moved (pure; the caller locks):
    every offset read, each commit the coordinator acknowledged, and every place where the reading of a
    partition jumped forward (a record skipped: `skips`) or back to before the last acknowledged commit
    (`rewinds`: a commit the coordinator lost). Going back to the last commit or after it is the
    at-least-once re-read a rebalance or a coordinator failover may cause (`rereads`)."""

    def __init__(self) -> None:
        self.read_offsets: dict[tuple[str, int], set[int]] = {}
        self.committed: dict[tuple[str, int], int] = {}
        """The last offset per partition whose commit the coordinator acknowledged."""
        self.rereads = 0
        self.rewinds: list[tuple[str, int, int, int]] = []
        """(topic, partition, offset read again, the last acknowledged commit then)."""
        self.skips: list[tuple[str, int, int, int]] = []
        """(topic, partition, offset expected next, offset read instead)."""
        self._next: dict[tuple[str, int], int] = {}
        self._resumed: dict[tuple[str, int], int | None] = {}
        """Partitions assigned anew, with where this member was in them (None: never read)."""
        self._committed_when_assigned: dict[tuple[str, int], int] = {}
        """The last acknowledged commit of each partition when it was assigned anew: the group's position the
        new assignment starts from may not be older. A commit acknowledged later (commits are asynchronous)
        may have raced with the new assignment's offset fetch."""

    def note(self, tp: tuple[str, int], offset: int) -> None:
        resumed = tp in self._resumed
        expected = self._resumed.pop(tp) if resumed else self._next.get(tp)
        committed = self._committed_when_assigned.pop(tp) if resumed else self.committed.get(tp, 0)
        if expected is not None and offset != expected:
            if offset > expected:
                self.skips.append((*tp, expected, offset))
            elif offset < committed:
                self.rewinds.append((*tp, offset, committed))
            else:
                self.rereads += 1
        elif resumed and expected is None and offset != committed:
            self.skips.append((*tp, committed, offset))
        self._next[tp] = offset + 1
        self.read_offsets.setdefault(tp, set()).add(offset)

    def assigned(self, partitions: Sequence[tuple[str, int]]) -> None:
        """A new assignment starts each partition at the group's committed offset: the first record read then
        may go back as far as the last acknowledged commit (a re-read), not further (a lost commit), and not
        past where this member was (a skip)."""
        for tp in partitions:
            self._resumed[tp] = self._next.get(tp)
            self._committed_when_assigned[tp] = self.committed.get(tp, 0)

    def commit_acked(self, offsets: Mapping[tuple[str, int], int]) -> None:
        for tp, offset in offsets.items():
            self.committed[tp] = max(self.committed.get(tp, 0), offset)

    def caught_up(self, ends: Mapping[tuple[str, int], int]) -> bool:
        """Whether every partition was read up to `ends` (offset → high watermark)."""
        return all(self._next.get(tp, 0) >= end for tp, end in ends.items() if end > 0)


class GroupCommitConsumer(ConsumerThread, ReadTracker):
    """A confluent-kafka consumer subscribed to `topics` as a member of `group_id`, committing (after each
    batch) the offset after the last record it read of each partition, on its own thread. A commit counts as
    acknowledged when librdkafka's commit callback says so.

    Commits are asynchronous: a synchronous commit() waits for good when the member's session times out
    while it is outstanding (a coordinator SIGKILLed and replaced more slowly than session.timeout.ms): the
    group then waits for the application to take the revocation, which only a consume() call serves, and
    the commit waits for the group. Seen in CI with librdkafka 2.16. One commit is outstanding at a time, as
    with synchronous ones (the offsets read meanwhile go in the next).

    What it read and how its reading moved is its ReadTracker's."""

    def __init__(
        self,
        bootstrap: str,
        topics: Sequence[str],
        group_id: str = COMMIT_GROUP,
        settings: Mapping[str, Any] | None = None,
        debug_log: Path | None = None,
    ) -> None:
        super().__init__()
        self.settings = dict(settings or {})
        self.debug_log = debug_log
        """Where librdkafka's `debug=cgrp` lines go, if anywhere."""
        self._commit_outstanding = False
        self.in_call: tuple[str, float] | None = None
        """The client call the member's thread is in and since when (monotonic): what a stuck member waits on."""
        self.commits = 0
        self.commit_errors: Counter[str] = Counter()
        self.error: BaseException | None = None
        self._bootstrap, self._topics, self._group_id = bootstrap, list(topics), group_id
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="group-consumer", daemon=True)
        self._thread.start()

    def read(self) -> dict[tuple[str, int], set[int]]:
        with self._lock:
            return {tp: set(offsets) for tp, offsets in self.read_offsets.items()}

    def _run(self) -> None:
        from confluent_kafka import Consumer, KafkaException
        from confluent_kafka import TopicPartition as CTopicPartition

        # a frozen (zombie) coordinator answers nothing: without a request timeout shorter than librdkafka's
        # 60 s default the member waits on it for most of a short run instead of finding the next coordinator
        timeouts = {"session.timeout.ms": 10000, "socket.timeout.ms": 10000}
        debug = librdkafka_debug(self.debug_log, "cgrp") if self.debug_log is not None else {}
        callbacks = {"on_commit": self._committed}
        settings = confluent_settings(
            self._bootstrap, {**self.settings, **timeouts, **debug, **callbacks}, self._group_id
        )
        try:
            consumer = Consumer(settings)
            consumer.subscribe(self._topics, on_assign=self._assigned)
        except BaseException as error:  # noqa: BLE001 - reported by stop()
            self.error = error
            return
        pending: dict[tuple[str, int], int] = {}
        try:
            while not self._stop.is_set():
                self.in_call = ("consume", time.monotonic())
                for message in consumer.consume(num_messages=500, timeout=0.2):
                    if message.error() is not None:
                        continue
                    tp = (str(message.topic()), int(message.partition() or 0))
                    with self._lock:
                        self.note(tp, int(message.offset() or 0))
                    pending[tp] = int(message.offset() or 0) + 1
                self.in_call = None
                # one commit at a time, as a synchronous commit would: two outstanding could be applied out of
                # order (the first retried to a new coordinator after the second succeeded), moving the group's
                # offset back behind an acknowledged commit
                if not pending or self._commit_outstanding:
                    continue
                self._commit_outstanding = True
                try:
                    consumer.commit(
                        offsets=[CTopicPartition(t, p, o) for (t, p), o in pending.items()], asynchronous=True
                    )
                except KafkaException as error:
                    self._commit_outstanding = False
                    self.commit_errors[error.args[0].name() if error.args else type(error).__name__] += 1
                pending = {}
        except BaseException as error:  # noqa: BLE001 - reported by stop()
            self.error = error
        finally:
            with contextlib.suppress(Exception):
                consumer.close()

    def _committed(self, error: Any, partitions: list[Any]) -> None:
        """librdkafka's answer to a commit (served by consume() on the member's thread)."""
        self._commit_outstanding = False
        if error is not None:
            self.commit_errors[error.name()] += 1
            return
        acknowledged = {(str(tp.topic), int(tp.partition)): int(tp.offset) for tp in partitions if tp.error is None}
        with self._lock:
            self.commits += 1
            self.commit_acked(acknowledged)

    def _assigned(self, _consumer: Any, partitions: list[Any]) -> None:
        with self._lock:
            self.assigned([(str(tp.topic), int(tp.partition)) for tp in partitions])

    def caught_up(self, ends: Mapping[tuple[str, int], int]) -> bool:
        with self._lock:
            return super().caught_up(ends)
