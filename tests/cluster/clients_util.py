"""Real Kafka clients driven the same way from every test: kcat (a subprocess), confluent-kafka and kafka-python.

Each producer takes a list of `Rec` (partition, key, value, headers) and returns them as acknowledged, with
the offsets the broker gave (kcat does not report offsets: -1). Each consumer reads a topic's partitions
from a start offset up to the end it finds (the high watermark) and returns the records in the order it
got them, per partition. Nothing here retries around a broker error: an error is returned or raised
with what the client said, so a test shows the broker's answer.

Also here: waiting for partitions in ZooKeeper, and reading a replica's log straight from its segment
files (`<broker dir>/data/<topic>-<partition>/*.log`), to compare replicas byte for byte and to see the
compression codec a batch was stored with.
"""

from __future__ import annotations

import contextlib
import json
import logging
import shutil
import subprocess
import threading
import time
from collections import defaultdict, deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from bench.chaos_runner.workload import close_kafka_python_producer
from kafkaops.admin.kafka_client.client import KafkaClient
from kafkaops.cluster.local.cluster import LocalCluster
from kafkaops.cluster.local.waiting import wait_for
from kafkaops.cluster.protocol.records import Batch, iter_batches
from kafkaops.cluster.protocol.schemas import ApiKey
from kafkaops.cluster.zk.client import KafkaZkClient
from kafkaops.cluster.zk.values import LeaderAndIsr, TopicPartition

KCAT = shutil.which("kcat")
CLIENT_TIMEOUT_S = 60.0

Headers = tuple[tuple[str, bytes], ...]


@dataclass(frozen=True)
class Rec:
    """One record as produced or consumed; offset -1 until a broker gave one."""

    partition: int
    key: bytes | None
    value: bytes | None
    headers: Headers = ()
    offset: int = -1
    timestamp: int | None = None
    """CreateTime to produce with (ms); None lets the client stamp it. Consumers leave it None."""


def make_records(
    partition: int, count: int, tag: str = "r", headers: Headers | None = None, value_bytes: int = 0
) -> list[Rec]:
    """`count` records for `partition`, keys and values numbered; headers per record unless given.

    `value_bytes` pads each value (with a compressible filler) to at least that size."""
    records = []
    for i in range(count):
        value = f"{tag}-p{partition}-v{i:06d}".encode()
        if len(value) < value_bytes:
            value = (value + b"." + b"abcdefgh" * (value_bytes // 8 + 1))[:value_bytes]
        record_headers = headers if headers is not None else (("n", str(i).encode()), ("tag", tag.encode()))
        records.append(Rec(partition, f"{tag}-k{i:06d}".encode(), value, record_headers))
    return records


def bootstrap_of(local: LocalCluster) -> str:
    return local.status().brokers[0].endpoint.removeprefix("PLAINTEXT://")  # type: ignore[union-attr]


def all_bootstraps(local: LocalCluster) -> str:
    return ",".join(b.endpoint.removeprefix("PLAINTEXT://") for b in local.status().brokers if b.endpoint)


# --- ZooKeeper ------------------------------------------------------------------------------------------


def partition_states(zk: KafkaZkClient, topic: str, partitions: int) -> dict[int, LeaderAndIsr | None]:
    found = zk.get_partition_states(TopicPartition(topic, p) for p in range(partitions))
    return {tp.partition: (s.leader_and_isr if s is not None else None) for tp, s in found.items()}


def wait_partitions(
    zk: KafkaZkClient,
    topic: str,
    partitions: int,
    isr_size: int | None = None,
    timeout_s: float = 30.0,
    condition: Callable[[LeaderAndIsr], bool] | None = None,
) -> dict[int, LeaderAndIsr]:
    """Wait until every partition has a leader (and `isr_size` in-sync replicas, and `condition`)."""
    deadline = time.monotonic() + timeout_s
    while True:
        states = partition_states(zk, topic, partitions)
        if all(
            s is not None
            and s.leader >= 0
            and (isr_size is None or len(s.isr) == isr_size)
            and (condition is None or condition(s))
            for s in states.values()
        ):
            return states  # type: ignore[return-value]
        if time.monotonic() > deadline:
            raise AssertionError(f"partitions of {topic} not there within {timeout_s}s: {states}")
        time.sleep(0.1)


def wait_metadata_everywhere(local: LocalCluster, topic: str, partitions: int, timeout_s: float = 30.0) -> None:
    """Wait until every broker's metadata cache answers `topic` with a leader for each partition: ZooKeeper
    has it first, and a client asking a broker the controller's UpdateMetadata has not reached yet sees no
    topic (a group's leader then assigns it nothing, and nothing makes it look again for minutes)."""
    body = {"topics": [{"name": topic}], "allow_auto_topic_creation": False}

    def known_everywhere() -> bool:
        with KafkaClient(all_bootstraps(local), request_timeout_ms=5000) as client:
            for broker in local.broker_ids():
                _, answer = client.broker_request(broker, ApiKey.METADATA, body)
                (found,) = answer["topics"]
                ready = [p for p in found["partitions"] if p["error_code"] == 0 and p["leader_id"] >= 0]
                if found["error_code"] != 0 or len(ready) != partitions:
                    return False
        return True

    wait_for(known_everywhere, timeout_s=timeout_s, what=f"{topic} in every broker's metadata")


class LogLines(logging.Handler):
    """The messages a logger writes (the last `keep` of them if given), at every level of the logger."""

    def __init__(self, keep: int | None = None) -> None:
        super().__init__()
        self.lines: deque[str] = deque(maxlen=keep)

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


def leader_of(zk: KafkaZkClient, topic: str, partition: int) -> int:
    state = partition_states(zk, topic, partition + 1)[partition]
    assert state is not None, f"{topic}-{partition} has no state znode"
    return state.leader


# --- producers ------------------------------------------------------------------------------------------


@dataclass
class ProduceOutcome:
    """Per record (in the order given): the record with its offset, or the client's error."""

    acked: list[Rec] = field(default_factory=list)
    errors: list[tuple[Rec, Any]] = field(default_factory=list)

    def raise_errors(self, client: str) -> list[Rec]:
        if self.errors:
            shown = "; ".join(f"{r.partition}/{r.value!r}: {e}" for r, e in self.errors[:5])
            raise AssertionError(
                f"{client}: {len(self.errors)} of {len(self.errors) + len(self.acked)} failed: {shown}"
            )
        return self.acked


def kcat_produce(
    bootstrap: str,
    topic: str,
    records: Sequence[Rec],
    codec: str | None = None,
    acks: str = "all",
    extra: Sequence[str] = (),
) -> ProduceOutcome:
    """`kcat -P -b B -t T -p N -K :` per partition, records on stdin as `key:value` lines.

    kcat sets the same headers (-H) on every message of a run, so the records of one partition must share
    theirs. Offsets are not reported (-1). Raises AssertionError with kcat's stderr if it fails."""
    assert KCAT is not None, "kcat is not installed"
    by_partition: dict[int, list[Rec]] = defaultdict(list)
    for record in records:
        by_partition[record.partition].append(record)
    outcome = ProduceOutcome()
    for partition, group in by_partition.items():
        headers = group[0].headers
        assert all(r.headers == headers for r in group), "kcat sets one header set per run"
        command = [KCAT, "-P", "-b", bootstrap, "-t", topic, "-p", str(partition), "-K", ":"]
        command += ["-X", f"acks={acks}", "-X", "message.timeout.ms=30000", *extra]
        for name, value in headers:
            command += ["-H", f"{name}={value.decode()}"]
        if codec is not None:
            command += ["-z", codec]
        lines = b"".join((r.key or b"") + b":" + (r.value or b"") + b"\n" for r in group)
        done = subprocess.run(command, check=False, input=lines, capture_output=True, timeout=CLIENT_TIMEOUT_S)
        if done.returncode != 0 or b"fail" in done.stderr.lower():
            raise AssertionError(f"kcat -P exited {done.returncode}: {done.stderr.decode(errors='replace')}")
        outcome.acked.extend(group)
    return outcome


def confluent_produce(
    bootstrap: str, topic: str, records: Sequence[Rec], codec: str | None = None, **config: Any
) -> ProduceOutcome:
    """confluent-kafka Producer (acks=all unless `config` says otherwise), one produce() per record."""
    from confluent_kafka import Producer

    settings = {
        "bootstrap.servers": bootstrap,
        "acks": "all",
        "linger.ms": 5,
        "message.timeout.ms": 30000,
        "compression.type": codec or "none",
    }
    settings.update({k.replace("_", "."): v for k, v in config.items()})
    producer = Producer(settings)
    results: list[Any] = [None] * len(records)

    def report(index: int) -> Callable[[Any, Any], None]:
        def delivered(err: Any, msg: Any) -> None:
            results[index] = err if err is not None else msg.offset()

        return delivered

    for index, record in enumerate(records):
        options: dict[str, Any] = {"headers": list(record.headers) or None, "on_delivery": report(index)}
        if record.timestamp is not None:
            options["timestamp"] = record.timestamp
        while True:
            try:
                producer.produce(topic, value=record.value, key=record.key, partition=record.partition, **options)
                break
            except BufferError:
                producer.poll(0.05)
        producer.poll(0)
    left = producer.flush(CLIENT_TIMEOUT_S)
    assert left == 0, f"confluent-kafka: {left} messages still undelivered after {CLIENT_TIMEOUT_S}s"
    outcome = ProduceOutcome()
    for record, result in zip(records, results, strict=True):
        if isinstance(result, int):
            outcome.acked.append(replace(record, offset=result))
        else:
            outcome.errors.append((record, result))
    return outcome


def kafka_python_produce(
    bootstrap: str, topic: str, records: Sequence[Rec], codec: str | None = None, **config: Any
) -> ProduceOutcome:
    """kafka-python KafkaProducer; with no `config` its defaults: idempotent, acks=all."""
    from kafka import KafkaProducer
    from kafka.errors import KafkaTimeoutError

    producer = KafkaProducer(bootstrap_servers=bootstrap, compression_type=codec, request_timeout_ms=30000, **config)
    try:
        futures = [
            producer.send(
                topic,
                key=r.key,
                value=r.value,
                partition=r.partition,
                headers=list(r.headers) or None,
                timestamp_ms=r.timestamp,
            )
            for r in records
        ]
        with contextlib.suppress(KafkaTimeoutError):  # the futures still pending say so below
            producer.flush(CLIENT_TIMEOUT_S)
        outcome = ProduceOutcome()
        for record, future in zip(records, futures, strict=True):
            try:
                outcome.acked.append(replace(record, offset=future.get(timeout=0.1).offset))
            except Exception as exc:  # noqa: BLE001 - the client's own error is the result
                outcome.errors.append((record, exc))
        return outcome
    finally:
        close_kafka_python_producer(producer)


PRODUCERS: dict[str, Callable[..., ProduceOutcome]] = {
    "kcat": kcat_produce,
    "confluent": confluent_produce,
    "kafka-python": kafka_python_produce,  # idempotent, acks=all
    "kafka-python-acks1": lambda b, t, r, codec=None: kafka_python_produce(b, t, r, codec, acks=1),
}
PER_RECORD_HEADERS = {"kcat": False, "confluent": True, "kafka-python": True, "kafka-python-acks1": True}


# --- consumers ------------------------------------------------------------------------------------------
# Each reads `partitions` from `start` (an offset per partition, default the beginning) until it has seen
# the end of every partition and at least `expect[p]` records of it, or `timeout_s` passes; it returns what
# it got (the test compares), in arrival order.


def _headers(raw: Iterable[tuple[str, bytes | None]] | None) -> Headers:
    return tuple((name, value if value is not None else b"") for name, value in raw or ())


def kcat_consume(
    bootstrap: str,
    topic: str,
    partitions: Iterable[int],
    start: dict[int, int] | None = None,
    expect: dict[int, int] | None = None,
    timeout_s: float = 30.0,
    extra: Sequence[str] = (),
) -> list[Rec]:
    """`kcat -C -b B -t T -p N -o beginning|<offset> -e -J` per partition; rerun until `expect` is met.
    `extra`: more kcat options (`-X security.protocol=SSL`, ...)."""
    assert KCAT is not None, "kcat is not installed"
    got: list[Rec] = []
    deadline = time.monotonic() + timeout_s
    for partition in partitions:
        offset = "beginning" if start is None or partition not in start else str(start[partition])
        while True:
            command = [KCAT, "-C", "-b", bootstrap, "-t", topic, "-p", str(partition), "-o", offset, "-e", "-J", "-q"]
            command += extra
            done = subprocess.run(command, check=False, capture_output=True, timeout=CLIENT_TIMEOUT_S)
            if done.returncode != 0:
                raise AssertionError(f"kcat -C exited {done.returncode}: {done.stderr.decode(errors='replace')}")
            records = []
            for line in done.stdout.decode().splitlines():
                if not line.strip():
                    continue
                message = json.loads(line)
                flat = message.get("headers") or []
                headers = tuple((flat[i], flat[i + 1].encode()) for i in range(0, len(flat), 2))
                records.append(
                    Rec(
                        message["partition"],
                        message["key"].encode() if message["key"] is not None else None,
                        message["payload"].encode() if message["payload"] is not None else None,
                        headers,
                        message["offset"],
                    )
                )
            if len(records) >= (expect or {}).get(partition, 0) or time.monotonic() > deadline:
                got.extend(records)
                break
            time.sleep(0.3)
    return got


def confluent_consume(
    bootstrap: str,
    topic: str,
    partitions: Iterable[int],
    start: dict[int, int] | None = None,
    expect: dict[int, int] | None = None,
    timeout_s: float = 30.0,
    **config: Any,
) -> list[Rec]:
    """confluent-kafka Consumer with a group.id but assign() only, no commits; ends on PARTITION_EOF."""
    from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError, TopicPartition

    partitions = list(partitions)
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": "kafkaops-test",
            "enable.auto.commit": False,
            "enable.partition.eof": True,
            "auto.offset.reset": "earliest",
            **{k.replace("_", "."): v for k, v in config.items()},
        }
    )
    try:
        consumer.assign([TopicPartition(topic, p, (start or {}).get(p, OFFSET_BEGINNING)) for p in partitions])
        got: list[Rec] = []
        counts: dict[int, int] = defaultdict(int)
        at_end: set[int] = set()
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if all(p in at_end and counts[p] >= (expect or {}).get(p, 0) for p in partitions):
                break
            message = consumer.poll(0.2)
            if message is None:
                continue
            error = message.error()
            partition = message.partition()
            if error is not None:
                if error.code() == KafkaError._PARTITION_EOF and partition is not None:
                    at_end.add(partition)
                    continue
                if error.fatal() or message.topic() == topic:
                    raise AssertionError(f"confluent-kafka consumer error: {error}")
                continue  # e.g. about the group coordinator, which assign() does not need
            offset = message.offset()
            assert partition is not None and offset is not None, f"a record without partition or offset: {message}"
            at_end.discard(partition)
            counts[partition] += 1
            headers = message.headers()
            got.append(Rec(partition, message.key(), message.value(), _headers(headers), offset))  # type: ignore[arg-type]
        return got
    finally:
        consumer.close()


def kafka_python_consume(
    bootstrap: str,
    topic: str,
    partitions: Iterable[int],
    start: dict[int, int] | None = None,
    expect: dict[int, int] | None = None,
    timeout_s: float = 30.0,
    **config: Any,
) -> list[Rec]:
    """kafka-python KafkaConsumer(group_id=None) + assign + seek_to_beginning (or seek); the end is end_offsets()."""
    from kafka import KafkaConsumer
    from kafka.structs import TopicPartition as KTopicPartition

    partitions = list(partitions)
    consumer = KafkaConsumer(
        bootstrap_servers=bootstrap,
        group_id=None,
        enable_auto_commit=False,
        auto_offset_reset="earliest",
        request_timeout_ms=30000,
        **config,
    )
    try:
        tps = [KTopicPartition(topic, p) for p in partitions]
        consumer.assign(tps)
        for tp in tps:
            if start is not None and tp.partition in start:
                consumer.seek(tp, start[tp.partition])
            else:
                consumer.seek_to_beginning(tp)
        got: list[Rec] = []
        counts: dict[int, int] = defaultdict(int)
        deadline = time.monotonic() + timeout_s
        ends = consumer.end_offsets(tps)
        while time.monotonic() < deadline:
            if all(
                consumer.position(tp) >= ends[tp] and counts[tp.partition] >= (expect or {}).get(tp.partition, 0)
                for tp in tps
            ):
                break
            for tp, messages in consumer.poll(timeout_ms=200).items():
                for m in messages:
                    counts[tp.partition] += 1
                    got.append(Rec(tp.partition, m.key, m.value, _headers(m.headers), m.offset))
            if any(counts[tp.partition] < (expect or {}).get(tp.partition, 0) for tp in tps):
                ends = consumer.end_offsets(tps)
        return got
    finally:
        consumer.close()


def kcat_query_offset(bootstrap: str, topic: str, partition: int, timestamp: int) -> int:
    """`kcat -Q -t T:P:TS`: ListOffsets for a timestamp (-1 latest, -2 earliest); the offset kcat prints."""
    assert KCAT is not None, "kcat is not installed"
    command = [KCAT, "-Q", "-b", bootstrap, "-t", f"{topic}:{partition}:{timestamp}", "-J"]
    done = subprocess.run(command, check=False, capture_output=True, timeout=CLIENT_TIMEOUT_S)
    if done.returncode != 0:
        raise AssertionError(f"kcat -Q exited {done.returncode}: {done.stderr.decode(errors='replace')}")
    answer = json.loads(done.stdout)[topic][str(partition)]
    assert "error" not in answer, f"kcat -Q: {answer}"
    return int(answer["offset"])


CONSUMERS: dict[str, Callable[..., list[Rec]]] = {
    "kcat": kcat_consume,
    "confluent": confluent_consume,
    "kafka-python": kafka_python_consume,
}


# --- checks ---------------------------------------------------------------------------------------------


def by_partition(records: Iterable[Rec]) -> dict[int, list[Rec]]:
    grouped: dict[int, list[Rec]] = defaultdict(list)
    for record in records:
        grouped[record.partition].append(record)
    return dict(grouped)


def assert_consumed_exactly(
    produced: Sequence[Rec], consumed: Sequence[Rec], first_offset: int = 0, who: str = "consumer"
) -> None:
    """Per partition: consumed in offset order from `first_offset` with no gap, and the same keys, values,
    headers (and offsets, where the producer reported them) as produced, in order. `who` names the
    consumer in failure messages."""
    want = by_partition(produced)
    got = by_partition(consumed)
    assert set(got) <= set(want), f"records from partitions never produced to: {sorted(set(got) - set(want))}"
    for partition, records in want.items():
        have = got.get(partition, [])
        offsets = [r.offset for r in have]
        expected_offsets = list(range(first_offset, first_offset + len(records)))
        assert offsets == expected_offsets[: len(offsets)], (
            f"{who}, partition {partition}: offsets {_ranges(offsets)}, expected {_ranges(expected_offsets)}"
        )
        assert len(have) == len(records), (
            f"{who}, partition {partition}: consumed {len(have)} of {len(records)} records"
        )
        for sent, read in zip(records, have, strict=True):
            assert (read.key, read.value, read.headers) == (sent.key, sent.value, sent.headers), (
                f"{who}, partition {partition} offset {read.offset}: consumed {read}, produced {sent}"
            )
            assert sent.offset in (-1, read.offset), f"{who}: acked at offset {sent.offset}, consumed at {read.offset}"


def _ranges(offsets: Sequence[int]) -> str:
    """[0, 1, 2, 5, 6] → '0-2,5-6' (short failure messages)."""
    if not offsets:
        return "none"
    parts, begin, previous = [], offsets[0], offsets[0]
    for offset in [*offsets[1:], None]:
        if offset is not None and offset == previous + 1:
            previous = offset
            continue
        parts.append(f"{begin}-{previous}" if begin != previous else f"{begin}")
        if offset is not None:
            begin = previous = offset
    return ",".join(parts)


# --- replica logs on disk -------------------------------------------------------------------------------


def log_dir(local: LocalCluster, broker_id: int, topic: str, partition: int) -> Path:
    return local.broker_dir(broker_id) / "data" / f"{topic}-{partition}"


def log_batches(local: LocalCluster, broker_id: int, topic: str, partition: int) -> list[Batch]:
    """Every complete batch in a replica's segment files, in order (a torn tail is left out)."""
    directory = log_dir(local, broker_id, topic, partition)
    batches: list[Batch] = []
    for segment in sorted(directory.glob("*.log")):
        batches.extend(iter_batches(segment.read_bytes(), allow_truncated_tail=True))
    return batches


def log_end_offset(batches: Sequence[Batch]) -> int:
    return batches[-1].header.next_offset if batches else 0


def compare_replica_logs(local: LocalCluster, topic: str, partition: int, replicas: Sequence[int]) -> str | None:
    """None if every replica holds the same batches, byte for byte; else what differs first."""
    logs = {b: log_batches(local, b, topic, partition) for b in replicas}
    first, *others = replicas
    reference = logs[first]
    for other in others:
        mine = logs[other]
        for index, (a, b) in enumerate(zip(reference, mine, strict=False)):
            if bytes(a.data) != bytes(b.data):
                return (
                    f"{topic}-{partition}: batch {index} differs between broker {first} "
                    f"(offsets {a.header.base_offset}-{a.header.last_offset}, epoch {a.header.partition_leader_epoch}) "
                    f"and broker {other} (offsets {b.header.base_offset}-{b.header.last_offset}, "
                    f"epoch {b.header.partition_leader_epoch})"
                )
        if len(reference) != len(mine):
            return (
                f"{topic}-{partition}: broker {first} has {len(reference)} batches (end offset "
                f"{log_end_offset(reference)}), broker {other} has {len(mine)} (end offset {log_end_offset(mine)})"
            )
    return None


def wait_replicas_identical(
    local: LocalCluster, topic: str, partition: int, replicas: Sequence[int], timeout_s: float = 20.0
) -> None:
    deadline = time.monotonic() + timeout_s
    while True:
        difference = compare_replica_logs(local, topic, partition, replicas)
        if difference is None:
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"replica logs still differ after {timeout_s}s: {difference}")
        time.sleep(0.25)


def broker_log_tail(local: LocalCluster, broker_id: int, lines: int = 30) -> str:
    """The end of a broker's server output, for failure messages."""
    out = []
    for name in ("server.log", "server.out"):
        path = local.broker_dir(broker_id) / "logs" / name
        if path.exists():
            out.append(f"--- broker {broker_id} {name} ---")
            out.extend(path.read_text(errors="replace").splitlines()[-lines:])
    return "\n".join(out)


class Background:
    """Runs `target(stop_event)` on a thread; `stop()` sets the event and joins, re-raising its exception."""

    def __init__(self, target: Callable[[threading.Event], None]) -> None:
        self.stop_event = threading.Event()
        self.error: BaseException | None = None

        def run() -> None:
            try:
                target(self.stop_event)
            except BaseException as exc:  # noqa: BLE001 - handed to the test thread
                self.error = exc

        self.thread = threading.Thread(target=run, daemon=True)
        self.thread.start()

    def stop(self, timeout_s: float = 90.0) -> None:
        self.stop_event.set()
        self.thread.join(timeout_s)
        if self.thread.is_alive():
            raise AssertionError(f"background client did not stop within {timeout_s}s")
        if self.error is not None:
            raise self.error
