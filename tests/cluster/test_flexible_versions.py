"""Kafka 2.8's version ranges on real broker processes, with real clients at their newest versions.

* ApiVersions v3 (KIP-511) answers with exactly what the broker serves, at Kafka 2.8's ranges; a version
  above ours is refused in a v0 body, an invalid client software name is INVALID_REQUEST; our own client
  negotiates v3.
* librdkafka 2.16 (confluent-kafka) negotiates ApiVersions v3 and flexible Metadata, Produce and Fetch: its
  protocol debug log names the versions it sent, and the records come back; kcat (librdkafka 2.0.2 in
  Debian) opens with ApiVersions v3 and produces, consumes, lists and queries offsets.
* kafka-python 3.0.12: produce, consume, metadata and list offsets at the versions it picks.
"""

from __future__ import annotations

import logging
import re
import socket
import subprocess
import uuid
from collections.abc import Iterable

import pytest

from kafkaops.admin import topics as admin_topics
from kafkaops.admin.assignment import JavaRandom
from kafkaops.admin.kafka_client.connection import BrokerConnection
from kafkaops.cluster.protocol.framing import frame, read_frame_blocking
from kafkaops.cluster.protocol.messages import RequestHeader, decode_response, encode_request
from kafkaops.cluster.protocol.schemas import SUPPORTED_VERSIONS, ApiKey
from tests.cluster.clients_util import KCAT, LogLines, bootstrap_of, wait_partitions

SERVED = {
    ApiKey.PRODUCE: (3, 9),
    ApiKey.FETCH: (4, 12),
    ApiKey.LIST_OFFSETS: (1, 6),
    ApiKey.METADATA: (0, 11),
    ApiKey.OFFSET_FOR_LEADER_EPOCH: (0, 4),
    ApiKey.INIT_PRODUCER_ID: (0, 4),
    ApiKey.FIND_COORDINATOR: (0, 3),
    ApiKey.API_VERSIONS: (0, 3),
    ApiKey.ELECT_LEADERS: (0, 2),
}


def _create(zk, topic: str) -> None:  # type: ignore[no-untyped-def]
    admin_topics.create_topic(zk, topic, 1, 1, None, {}, rng=JavaRandom(1))
    wait_partitions(zk, topic, 1, isr_size=1)


def _raw(host: str, port: int, version: int, body: dict) -> dict:  # type: ignore[type-arg]
    with socket.create_connection((host, port), timeout=10) as sock:
        sock.sendall(frame(encode_request(RequestHeader(ApiKey.API_VERSIONS, version, 5, "t"), body)))
        correlation_id, answer = decode_response(ApiKey.API_VERSIONS, version, read_frame_blocking(sock))
    assert correlation_id == 5
    return answer


def test_api_versions_v3_is_what_the_broker_serves(cluster) -> None:  # type: ignore[no-untyped-def]
    local = cluster(brokers=1)
    host, port = bootstrap_of(local).split(":")
    software = {"client_software_name": "kafkaops-test", "client_software_version": "1.0"}
    answer = _raw(host, int(port), 3, software)
    assert answer["error_code"] == 0
    advertised = {ApiKey(k["api_key"]): (k["min_version"], k["max_version"]) for k in answer["api_keys"]}
    for key, versions in SERVED.items():
        assert advertised[key] == versions == SUPPORTED_VERSIONS[key]
    assert all(SUPPORTED_VERSIONS[k] == v for k, v in advertised.items())

    bad = _raw(host, int(port), 3, {"client_software_name": "-bad name", "client_software_version": "1"})
    assert (bad["error_code"], bad["api_keys"]) == (42, [])  # INVALID_REQUEST (KIP-511)

    connection = BrokerConnection(host, int(port), "kafkaops-test", 10.0, "0")
    connection.connect()
    try:
        assert connection.versions[ApiKey.API_VERSIONS] == (0, 3)
        assert connection.version(ApiKey.METADATA) == 11 and connection.version(ApiKey.FETCH) == 12
        metadata = connection.request(ApiKey.METADATA, 11, {"topics": None}, 10.0)
        assert len(metadata["brokers"]) == 1 and metadata["topics"] == []
    finally:
        connection.close()


def test_kafka_python_api_versions_v4_gets_our_range_and_retries(cluster) -> None:  # type: ignore[no-untyped-def]
    metadata = pytest.importorskip("kafka.protocol.metadata")
    local = cluster(brokers=1)
    host, port = bootstrap_of(local).split(":")
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sent = metadata.ApiVersionsRequest[4](client_software_name="kafka-python", client_software_version="3.0.12")
        sent.with_header(correlation_id=11, client_id="kp")
        sock.sendall(sent.encode(header=True, framed=True))
        refusal = metadata.ApiVersionsResponse.decode(read_frame_blocking(sock), version=4, header=True)
        assert refusal.error_code == 35
        assert [(k.api_key, k.min_version, k.max_version) for k in refusal.api_keys] == [(18, 0, 3)]
        again = metadata.ApiVersionsRequest[3](client_software_name="kafka-python", client_software_version="3.0.12")
        again.with_header(correlation_id=12, client_id="kp")
        sock.sendall(again.encode(header=True, framed=True))
        answer = metadata.ApiVersionsResponse.decode(read_frame_blocking(sock), version=3, header=True)
    assert answer.error_code == 0
    assert {k.api_key: k.max_version for k in answer.api_keys}[ApiKey.FETCH] == 12


def _sent_versions(lines: Iterable[str]) -> dict[str, set[int]]:
    """librdkafka's protocol debug lines: 'Sent ProduceRequest (v9, ...)'."""
    found: dict[str, set[int]] = {}
    for line in lines:
        for name, version in re.findall(r"Sent (\w+)Request \(v(\d+)", line):
            found.setdefault(name, set()).add(int(version))
    return found


def test_confluent_kafka_negotiates_flexible_versions(cluster, zk) -> None:  # type: ignore[no-untyped-def]
    confluent_kafka = pytest.importorskip("confluent_kafka")
    local = cluster(brokers=1)
    _create(zk, "flex")
    bootstrap = bootstrap_of(local)
    handler = LogLines()
    logger = logging.getLogger(f"rdkafka-{uuid.uuid4()}")
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    common = {"bootstrap.servers": bootstrap, "debug": "protocol", "logger": logger}
    producer = confluent_kafka.Producer({**common, "acks": "all"})
    for i in range(10):
        producer.produce("flex", key=f"k{i}".encode(), value=f"v{i}".encode(), partition=0)
    assert producer.flush(30) == 0
    consumer = confluent_kafka.Consumer({**common, "group.id": "g", "enable.auto.commit": False})
    try:
        consumer.assign([confluent_kafka.TopicPartition("flex", 0, 0)])
        got = []
        while len(got) < 10:
            message = consumer.poll(10)
            assert message is not None, "no record within 10 s"
            assert message.error() is None, message.error()
            got.append((message.offset(), message.key(), message.value()))
        low, high = consumer.get_watermark_offsets(confluent_kafka.TopicPartition("flex", 0), timeout=10)
    finally:
        consumer.close()
    assert got == [(i, f"k{i}".encode(), f"v{i}".encode()) for i in range(10)]
    assert (low, high) == (0, 10)
    sent = _sent_versions(handler.lines)
    assert 3 in sent["ApiVersion"]
    assert max(sent["Produce"]) == 9 and max(sent["Fetch"]) == 12 and max(sent["Metadata"]) >= 9


@pytest.mark.skipif(KCAT is None, reason="kcat is not installed")
def test_kcat_produces_consumes_lists_and_queries_with_its_newest_versions(cluster, zk) -> None:  # type: ignore[no-untyped-def]
    local = cluster(brokers=1)
    _create(zk, "kc")
    bootstrap = bootstrap_of(local)
    assert KCAT is not None
    produced = subprocess.run(
        [KCAT, "-b", bootstrap, "-P", "-t", "kc", "-p", "0", "-d", "protocol"],
        input=b"one\ntwo\nthree\n",
        capture_output=True,
        timeout=60,
        check=True,
    )
    consumed = subprocess.run(
        [KCAT, "-b", bootstrap, "-C", "-t", "kc", "-p", "0", "-o", "beginning", "-e", "-d", "protocol"],
        capture_output=True,
        timeout=60,
        check=True,
    )
    assert consumed.stdout.split() == [b"one", b"two", b"three"]
    listed = subprocess.run([KCAT, "-b", bootstrap, "-L", "-t", "kc"], capture_output=True, timeout=60, check=True)
    assert b'topic "kc" with 1 partitions' in listed.stdout
    queried = subprocess.run(
        [KCAT, "-b", bootstrap, "-Q", "-t", "kc:0:-1", "-d", "protocol"], capture_output=True, timeout=60, check=True
    )
    assert b"kc [0] offset 3" in queried.stdout
    lines = (produced.stderr + consumed.stderr + queried.stderr).decode(errors="replace").splitlines()
    sent = _sent_versions(lines)
    assert 3 in sent["ApiVersion"]
    # Debian's kcat carries librdkafka 2.0.2: ApiVersions v3 (flexible) first, then its own newest versions of
    # the rest (Produce v7, Fetch v11, Metadata v4, ListOffsets v2), all within ours
    assert sent["ApiVersion"] == {3}
    for name, key in (("Produce", ApiKey.PRODUCE), ("Fetch", ApiKey.FETCH), ("Metadata", ApiKey.METADATA)):
        low, high = SUPPORTED_VERSIONS[key]
        assert all(low <= v <= high for v in sent[name]), (name, sent[name])


def test_kafka_python_produces_consumes_and_lists_offsets(cluster, zk) -> None:  # type: ignore[no-untyped-def]
    kafka = pytest.importorskip("kafka")
    from kafka.structs import TopicPartition

    local = cluster(brokers=1)
    _create(zk, "kp")
    bootstrap = bootstrap_of(local)
    producer = kafka.KafkaProducer(bootstrap_servers=bootstrap, acks="all")
    try:
        for i in range(5):
            producer.send("kp", key=b"k", value=f"v{i}".encode(), partition=0).get(timeout=30)
    finally:
        producer.close(5)
    consumer = kafka.KafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False, consumer_timeout_ms=10_000)
    try:
        tp = TopicPartition("kp", 0)
        consumer.assign([tp])
        consumer.seek_to_beginning(tp)
        values = [m.value for _, m in zip(range(5), consumer, strict=False)]
        assert values == [f"v{i}".encode() for i in range(5)]
        assert consumer.end_offsets([tp]) == {tp: 5} and consumer.beginning_offsets([tp]) == {tp: 0}
        assert consumer.partitions_for_topic("kp") == {0}
    finally:
        consumer.close()


@pytest.mark.skipif(KCAT is None, reason="kcat is not installed")
def test_fetch_v12_answers_a_diverging_last_fetched_epoch(cluster, zk) -> None:  # type: ignore[no-untyped-def]
    """Kafka 2.8's Partition.readRecords: a fetch whose last fetched epoch the leader's log does not end at
    the fetch offset gets no records, and the epoch and end offset where the logs diverge (KIP-595)."""
    local = cluster(brokers=1)
    _create(zk, "div")
    bootstrap = bootstrap_of(local)
    assert KCAT is not None
    subprocess.run([KCAT, "-b", bootstrap, "-P", "-t", "div", "-p", "0"], input=b"a\nb\nc\n", timeout=60, check=True)
    host, port = bootstrap.split(":")
    connection = BrokerConnection(host, int(port), "kafkaops-test", 10.0, "0")

    def fetch(offset: int, last_fetched_epoch: int) -> dict:  # type: ignore[type-arg]
        partition = {"partition": 0, "fetch_offset": offset, "partition_max_bytes": 1 << 20}
        body = {
            "max_wait_ms": 0,
            "min_bytes": 0,
            "topics": [{"topic": "div", "partitions": [{**partition, "last_fetched_epoch": last_fetched_epoch}]}],
        }
        answer = connection.request(ApiKey.FETCH, 12, body, 10.0)
        return answer["responses"][0]["partition_responses"][0]  # type: ignore[no-any-return]

    try:
        connection.connect()
        diverging = fetch(5, 0)  # the leader's epoch 0 ends at offset 3, below the fetch offset
        assert (diverging["error_code"], diverging["record_set"]) == (0, b"")
        assert diverging["diverging_epoch"] == {"epoch": 0, "end_offset": 3}
        assert fetch(3, 0)["diverging_epoch"] == {"epoch": -1, "end_offset": -1}  # none: the default
        # an epoch the leader never had, above its latest: the cache's "undefined" (-1, -1), which is the
        # field's default, so the tag is not written, as in Kafka; no records either
        unknown = fetch(3, 7)
        assert (unknown["error_code"], unknown["record_set"]) == (0, b"")
        records = fetch(0, -1)
        assert records["record_set"] and records["high_watermark"] == 3
    finally:
        connection.close()
