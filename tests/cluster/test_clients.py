"""The proof with real clients: kcat, confluent-kafka and kafka-python produce to and consume from our brokers.

Every test runs its own 3-broker cluster (broker processes on the session's ZooKeeper) and talks to it
only through the clients' public interfaces, as a user would (kafka-protocol.md §15):

* each producer (kcat, confluent-kafka acks=all, kafka-python's default idempotent acks=all producer and
  kafka-python acks=1) with each consumer (kcat -C -e, confluent-kafka assign(), kafka-python assign +
  seek_to_beginning): offsets, keys, values and headers come back in order;
* compression codecs, checked on the leader's disk as well (a client may silently send uncompressed);
* a leader killed under a running producer: metadata refresh, and every acknowledged record is read back;
* min.insync.replicas=2 with two brokers of three down: acks=all refused with NOT_ENOUGH_REPLICAS, acks=1 works;
* consumers stop at the high watermark, even when the leader holds more;
* ListOffsets: earliest, latest and by timestamp.
"""

from __future__ import annotations

import re
import subprocess
import time

import pytest

from bench.chaos_runner.workload import close_kafka_python_producer
from kafkaops.admin import topics as admin_topics
from kafkaops.admin.assignment import JavaRandom
from kafkaops.cluster.protocol.records import Compression
from kafkaops.cluster.protocol.schemas import SUPPORTED_VERSIONS, ApiKey
from tests.cluster.clients_util import (
    CONSUMERS,
    KCAT,
    PER_RECORD_HEADERS,
    PRODUCERS,
    Background,
    Rec,
    all_bootstraps,
    assert_consumed_exactly,
    bootstrap_of,
    confluent_consume,
    confluent_produce,
    kafka_python_consume,
    kafka_python_produce,
    kcat_consume,
    kcat_query_offset,
    leader_of,
    log_batches,
    make_records,
    partition_states,
    wait_partitions,
)

pytestmark = pytest.mark.skipif(KCAT is None, reason="kcat is not installed (apt-get install kcat)")


def create(zk, topic: str, partitions: int, replication_factor: int, min_isr: int = 2) -> None:  # type: ignore[no-untyped-def]
    admin_topics.create_topic(
        zk, topic, partitions, replication_factor, None, {"min.insync.replicas": str(min_isr)}, rng=JavaRandom(1)
    )
    wait_partitions(zk, topic, partitions, isr_size=replication_factor)


def endpoint(local, broker_id: int) -> str:  # type: ignore[no-untyped-def]
    found = next(b for b in local.status().brokers if b.broker_id == broker_id)
    return found.endpoint.removeprefix("PLAINTEXT://")


# --- every producer with every consumer -----------------------------------------------------------------


@pytest.mark.parametrize("consumer", sorted(CONSUMERS))
@pytest.mark.parametrize("producer", sorted(PRODUCERS))
def test_produce_and_consume_back(cluster, zk, producer: str, consumer: str) -> None:
    local = cluster(brokers=3)
    create(zk, "t", 2, 3)
    bootstrap = bootstrap_of(local)
    headers = None if PER_RECORD_HEADERS[producer] else (("src", producer.encode()), ("empty", b""))
    records = make_records(0, 120, producer, headers) + make_records(1, 80, producer, headers)
    acked = PRODUCERS[producer](bootstrap, "t", records).raise_errors(producer)
    if producer != "kcat":
        assert [r.offset for r in acked if r.partition == 0] == list(range(120))
        assert [r.offset for r in acked if r.partition == 1] == list(range(80))
    consumed = CONSUMERS[consumer](bootstrap, "t", [0, 1], expect={0: 120, 1: 80})
    assert_consumed_exactly(acked, consumed, who=consumer)


@pytest.mark.parametrize("consumer", ["confluent", "kafka-python"])
@pytest.mark.parametrize("producer", ["confluent", "kafka-python"])
def test_null_empty_and_binary_records(cluster, zk, producer: str, consumer: str) -> None:
    """Null key, null value (a tombstone), empty key and value, every byte value, a null-free header with an
    empty value. (kcat's text and JSON output cannot carry null or binary payloads, so it sits this one out.)"""
    local = cluster(brokers=3)
    create(zk, "odd", 1, 3)
    bootstrap = bootstrap_of(local)
    records = [
        Rec(0, None, b"null key"),
        Rec(0, b"tombstone", None),
        Rec(0, b"", b""),
        Rec(0, bytes(range(256)), bytes(range(255, -1, -1)) * 4, (("bin", bytes(range(256))), ("e", b""))),
    ]  # no record with both null: kafka-python refuses to send one
    acked = PRODUCERS[producer](bootstrap, "odd", records).raise_errors(producer)
    assert_consumed_exactly(acked, CONSUMERS[consumer](bootstrap, "odd", [0], expect={0: 4}), who=consumer)


@pytest.mark.parametrize("consumer", sorted(CONSUMERS))
def test_megabytes_span_many_fetches(cluster, zk, consumer: str) -> None:
    """5 MB in one partition: more than one fetch's 1 MiB partition limit, many producer batches."""
    local = cluster(brokers=3)
    create(zk, "big", 1, 3)
    bootstrap = bootstrap_of(local)
    acked = confluent_produce(bootstrap, "big", make_records(0, 5000, "big", value_bytes=1000)).raise_errors(
        "confluent"
    )
    assert acked[-1].offset == 4999
    assert_consumed_exactly(acked, CONSUMERS[consumer](bootstrap, "big", [0], expect={0: 5000}, timeout_s=60))


# --- compression ----------------------------------------------------------------------------------------


def _kafka_python_has(codec: str) -> bool:
    import kafka.codec

    return bool(getattr(kafka.codec, f"has_{codec}")())


def _kcat_librdkafka_version() -> tuple[int, ...]:
    """The librdkafka kcat runs on, from `kcat -V` ("... librdkafka 2.0.2 builtin.features=...")."""
    assert KCAT is not None
    banner = subprocess.run([KCAT, "-V"], capture_output=True, check=False, text=True).stdout
    found = re.search(r"librdkafka (\d+)\.(\d+)\.(\d+)", banner)
    assert found is not None, f"no librdkafka version in `kcat -V`: {banner!r}"
    return tuple(int(part) for part in found.groups())


def _stored_codec(client: str, codec: str) -> Compression:
    """The codec the batches arrive with.

    librdkafka before 2.8 decides whether the broker "supports" gzip, snappy and lz4 by asking whether it
    supports Produce v0 (librdkafka issue #4956, found with Kafka 4.0, which dropped Produce v0-v2). We
    advertise Produce from v3 (kafka-protocol.md §1), so kcat's librdkafka 2.0.2 logs "Broker does not
    support compression type gzip: not compressing batch" and sends those three codecs uncompressed; zstd
    is checked against Produce v7 and works. confluent-kafka's newer librdkafka compresses all four."""
    produce_min = SUPPORTED_VERSIONS[ApiKey.PRODUCE][0]
    if client == "kcat" and codec != "zstd" and produce_min > 0 and _kcat_librdkafka_version() < (2, 8, 0):
        return Compression.NONE
    return Compression[codec.upper()]


CODEC_CASES = [
    pytest.param(client, codec, id=f"{client}-{codec}")
    for client in ("kcat", "confluent", "kafka-python")
    for codec in ("gzip", "snappy", "lz4", "zstd")
]


@pytest.mark.parametrize(("client", "codec"), CODEC_CASES)
def test_compressed_batches(cluster, zk, client: str, codec: str) -> None:
    if client == "kafka-python" and not _kafka_python_has(codec):
        pytest.skip(f"kafka-python has no {codec} codec here (its Python library is not installed)")
    local = cluster(brokers=3)
    create(zk, "z", 1, 3)
    bootstrap = bootstrap_of(local)
    headers = None if PER_RECORD_HEADERS[client] else (("codec", codec.encode()),)
    records = make_records(0, 300, codec, headers, value_bytes=400)
    acked = PRODUCERS[client](bootstrap, "z", records, codec=codec).raise_errors(f"{client} {codec}")
    # the leader stored what the client sent: compressed batches of that codec
    leader = leader_of(zk, "z", 0)
    codecs = {batch.header.compression for batch in log_batches(local, leader, "z", 0)}
    assert codecs == {_stored_codec(client, codec)}, f"{client} {codec}: batches stored with codecs {codecs}"
    assert_consumed_exactly(acked, confluent_consume(bootstrap, "z", [0], expect={0: 300}), who="confluent")
    assert_consumed_exactly(acked, kcat_consume(bootstrap, "z", [0], expect={0: 300}), who="kcat")
    if _kafka_python_has(codec):
        assert_consumed_exactly(acked, kafka_python_consume(bootstrap, "z", [0], expect={0: 300}), who="kafka-python")


# --- a leader dies under a running producer -------------------------------------------------------------


def _confluent_loop(bootstrap: str, topic: str, acked: list[Rec], failed: list[object]):  # type: ignore[no-untyped-def]
    from confluent_kafka import Producer

    def run(stop) -> None:  # type: ignore[no-untyped-def]
        producer = Producer(
            {"bootstrap.servers": bootstrap, "acks": "all", "linger.ms": 5, "message.timeout.ms": 60000}
        )
        i = 0
        while not stop.is_set():
            value = f"m-{i:06d}".encode()

            def delivered(err, msg, value=value) -> None:  # type: ignore[no-untyped-def]
                if err is not None:
                    failed.append((value, err))
                else:
                    acked.append(Rec(msg.partition(), msg.key(), value, (), msg.offset()))

            producer.produce(topic, value=value, key=b"k", partition=0, on_delivery=delivered)
            producer.poll(0)
            i += 1
            time.sleep(0.005)
        left = producer.flush(60)
        if left:
            failed.append((b"", f"{left} undelivered"))

    return run


def _kafka_python_loop(bootstrap: str, topic: str, acked: list[Rec], failed: list[object]):  # type: ignore[no-untyped-def]
    from kafka import KafkaProducer

    def run(stop) -> None:  # type: ignore[no-untyped-def]
        producer = KafkaProducer(bootstrap_servers=bootstrap)  # idempotent, acks=all
        try:
            i = 0
            while not stop.is_set():
                value = f"m-{i:06d}".encode()
                future = producer.send(topic, key=b"k", value=value, partition=0)
                future.add_callback(lambda md, value=value: acked.append(Rec(md.partition, b"k", value, (), md.offset)))
                future.add_errback(lambda exc, value=value: failed.append((value, exc)))
                i += 1
                time.sleep(0.005)
            producer.flush(60)
        finally:
            close_kafka_python_producer(producer)

    return run


def _wait_count(items: list, count: int, timeout_s: float, what: str) -> None:  # type: ignore[type-arg]
    deadline = time.monotonic() + timeout_s
    while len(items) < count:
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: {len(items)} of {count} within {timeout_s}s")
        time.sleep(0.05)


@pytest.mark.parametrize("client", ["confluent", "kafka-python"])
def test_producer_follows_the_new_leader(cluster, zk, client: str) -> None:
    """Kill the leader (SIGKILL) while producing: the client finds the new leader through Metadata and
    every record it had acknowledged is in the log, at the offset it was acknowledged with."""
    local = cluster(brokers=3)
    create(zk, "moves", 1, 3)
    old_leader = leader_of(zk, "moves", 0)
    acked: list[Rec] = []
    failed: list[object] = []
    loop = (_confluent_loop if client == "confluent" else _kafka_python_loop)(
        all_bootstraps(local), "moves", acked, failed
    )
    producer = Background(loop)
    try:
        _wait_count(acked, 100, 30, "acks before the kill")
        local.stop_broker(old_leader, hard=True)
        before = len(acked)
        states = wait_partitions(zk, "moves", 1, condition=lambda s: s.leader != old_leader, timeout_s=30)
        _wait_count(acked, before + 200, 45, f"acks after the new leader {states[0].leader} was elected")
    finally:
        producer.stop()
    assert not failed, f"{client}: failed deliveries {failed[:5]}"
    survivor = next(b for b in local.broker_ids() if b != old_leader)
    consumed = confluent_consume(endpoint(local, survivor), "moves", [0])
    assert [r.offset for r in consumed] == list(range(len(consumed))), "gaps in the log"
    at = {r.offset: r.value for r in consumed}
    wrong = [(r.offset, r.value, at.get(r.offset)) for r in acked if at.get(r.offset) != r.value]
    assert not wrong, f"{len(wrong)} acked records not at their offsets (offset, acked, found): {wrong[:5]}"
    if client == "kafka-python":  # idempotent: a retried batch must not be appended twice
        values = [r.value for r in consumed]
        assert len(values) == len(set(values)), "duplicate values from the idempotent producer"


# --- min.insync.replicas --------------------------------------------------------------------------------


def test_acks_all_needs_min_insync_replicas(cluster, zk) -> None:
    from confluent_kafka import KafkaError, Producer
    from kafka.errors import NotEnoughReplicasError

    local = cluster(brokers=3)
    create(zk, "nr", 1, 3, min_isr=2)
    leader = leader_of(zk, "nr", 0)
    for broker_id in local.broker_ids():
        if broker_id != leader:
            assert local.stop_broker(broker_id)  # controlled shutdown: out of the ISR at once
    wait_partitions(zk, "nr", 1, condition=lambda s: s.leader == leader and s.isr == (leader,))
    bootstrap = endpoint(local, leader)

    def isr_in_metadata() -> list[int]:
        metadata = Producer({"bootstrap.servers": bootstrap}).list_topics("nr", timeout=10)
        return list(metadata.topics["nr"].partitions[0].isrs)

    deadline = time.monotonic() + 15
    while isr_in_metadata() != [leader]:
        assert time.monotonic() < deadline, "the leader never learnt its shrunk ISR"
        time.sleep(0.2)

    refused = confluent_produce(bootstrap, "nr", [Rec(0, b"k", b"refused-1")], acks="all", retries=0)
    assert not refused.acked
    assert refused.errors[0][1].code() == KafkaError.NOT_ENOUGH_REPLICAS, refused.errors[0][1]
    refused = kafka_python_produce(
        bootstrap, "nr", [Rec(0, b"k", b"refused-2")], acks="all", retries=0, enable_idempotence=False
    )
    assert not refused.acked
    assert isinstance(refused.errors[0][1], NotEnoughReplicasError), repr(refused.errors[0][1])

    one = confluent_produce(bootstrap, "nr", [Rec(0, b"k", b"one-1")], acks="1").raise_errors("confluent acks=1")
    two = kafka_python_produce(bootstrap, "nr", [Rec(0, b"k", b"one-2")], acks=1).raise_errors("kafka-python acks=1")
    assert [r.offset for r in one + two] == [0, 1], "a refused record took an offset"
    assert_consumed_exactly(one + two, confluent_consume(bootstrap, "nr", [0], expect={0: 2}))


# --- the high watermark ---------------------------------------------------------------------------------


def test_consumers_stop_at_the_high_watermark(cluster, zk) -> None:
    """The follower is killed but stays in the ISR for a while (30 s sessions, 60 s lag time): acks=1
    records reach the leader's log above the high watermark, and no consumer sees them, nor does ListOffsets
    report them, until the high watermark moves (the follower's session expires and the controller shrinks
    the ISR, or the restarted follower fetches them).

    (Killed, not frozen with SIGSTOP: a frozen broker accepts connections and never answers, and
    kafka-python then spends its whole request timeout on a metadata request it happened to send there.)"""
    local = cluster(brokers=3, **{"zookeeper.session.timeout.ms": 30000, "replica.lag.time.max.ms": 60000})
    controller = zk.get_controller_id()
    follower = next(b for b in local.broker_ids() if b != controller)
    leader = next(b for b in local.broker_ids() if b != follower)
    admin_topics.create_topic(zk, "hw", None, None, {0: [leader, follower]}, {"min.insync.replicas": "1"})
    wait_partitions(zk, "hw", 1, isr_size=2)
    bootstrap = endpoint(local, leader)
    committed = confluent_produce(bootstrap, "hw", make_records(0, 10, "c")).raise_errors("acks=all")
    local.stop_broker(follower, hard=True)
    pending = confluent_produce(bootstrap, "hw", make_records(0, 5, "p"), acks="1").raise_errors("acks=1")
    assert [r.offset for r in pending] == list(range(10, 15))
    for name, consume in CONSUMERS.items():
        assert_consumed_exactly(committed, consume(bootstrap, "hw", [0], timeout_s=10), who=name)
    for name, consume in (("confluent", confluent_consume), ("kafka-python", kafka_python_consume)):
        past = consume(bootstrap, "hw", [0], start={0: 10}, expect={0: 1}, timeout_s=2.5)
        assert past == [], f"{name} read past the high watermark: {past}"
    assert kcat_consume(bootstrap, "hw", [0], start={0: 10}) == []
    assert _latest_offsets(bootstrap, "hw", 0) == {"confluent": 10, "kafka-python": 10, "kcat": 10}
    still = partition_states(zk, "hw", 1)[0]
    assert still is not None and follower in still.isr, "the checks outlasted the follower's session: too slow"

    local.start_broker(follower, wait=False)
    everything = committed + pending
    for name, consume in CONSUMERS.items():
        assert_consumed_exactly(everything, consume(bootstrap, "hw", [0], expect={0: 15}, timeout_s=60), who=name)
    assert _latest_offsets(bootstrap, "hw", 0) == {"confluent": 15, "kafka-python": 15, "kcat": 15}


# --- ListOffsets ----------------------------------------------------------------------------------------


def _latest_offsets(bootstrap: str, topic: str, partition: int) -> dict[str, int]:
    return {name: ends[1] for name, ends in _watermarks(bootstrap, topic, partition).items()}


def _watermarks(bootstrap: str, topic: str, partition: int) -> dict[str, tuple[int, int]]:
    """(earliest, latest) as each client asks for them (ListOffsets -2 and -1)."""
    from confluent_kafka import Consumer, TopicPartition
    from kafka import KafkaConsumer
    from kafka.structs import TopicPartition as KTopicPartition

    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "kafkaops-test", "enable.auto.commit": False})
    try:
        confluent = consumer.get_watermark_offsets(TopicPartition(topic, partition), timeout=10, cached=False)
    finally:
        consumer.close()
    kconsumer = KafkaConsumer(bootstrap_servers=bootstrap, group_id=None, request_timeout_ms=30000)
    try:
        tp = KTopicPartition(topic, partition)
        kafka_python = (kconsumer.beginning_offsets([tp])[tp], kconsumer.end_offsets([tp])[tp])
    finally:
        kconsumer.close()
    kcat = (kcat_query_offset(bootstrap, topic, partition, -2), kcat_query_offset(bootstrap, topic, partition, -1))
    return {"confluent": tuple(confluent), "kafka-python": kafka_python, "kcat": kcat}


def test_list_offsets(cluster, zk) -> None:
    from confluent_kafka import Consumer, TopicPartition
    from kafka import KafkaConsumer
    from kafka.structs import TopicPartition as KTopicPartition

    local = cluster(brokers=3)
    create(zk, "lo", 2, 3)
    bootstrap = bootstrap_of(local)
    for p in (0, 1):
        assert _watermarks(bootstrap, "lo", p) == {"confluent": (0, 0), "kafka-python": (0, 0), "kcat": (0, 0)}

    base = 1_700_000_000_000
    records = [Rec(0, b"k", f"v{i}".encode(), (), -1, base + i * 1000) for i in range(50)]
    records += [Rec(1, b"k", f"w{i}".encode(), (), -1, base + i * 1000) for i in range(20)]
    confluent_produce(bootstrap, "lo", records).raise_errors("confluent")
    assert _watermarks(bootstrap, "lo", 0) == {"confluent": (0, 50), "kafka-python": (0, 50), "kcat": (0, 50)}
    assert _watermarks(bootstrap, "lo", 1) == {"confluent": (0, 20), "kafka-python": (0, 20), "kcat": (0, 20)}

    # by timestamp: the first record at or after it; none after the last one
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "kafkaops-test", "enable.auto.commit": False})
    try:
        found = consumer.offsets_for_times(
            [TopicPartition("lo", 0, base + 10_500), TopicPartition("lo", 1, base + 60_000)], timeout=10
        )
    finally:
        consumer.close()
    assert [(tp.partition, tp.offset) for tp in found] == [(0, 11), (1, -1)]
    kconsumer = KafkaConsumer(bootstrap_servers=bootstrap, group_id=None, request_timeout_ms=30000)
    try:
        t0, t1 = KTopicPartition("lo", 0), KTopicPartition("lo", 1)
        answer = kconsumer.offsets_for_times({t0: base + 10_500, t1: base + 60_000})
    finally:
        kconsumer.close()
    assert (answer[t0].offset, answer[t0].timestamp) == (11, base + 11_000)
    assert answer[t1] is None
    assert kcat_query_offset(bootstrap, "lo", 0, base + 10_500) == 11
    assert kcat_query_offset(bootstrap, "lo", 0, base) == 0
