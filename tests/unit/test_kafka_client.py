"""The blocking Kafka client's pure parts, its retry loop against an in-process fake broker, and the console
tools' command-line checks and perf-test output shapes (the console library itself: test_console.py)."""

from __future__ import annotations

import os
import random
import socket
import struct
import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from typer.testing import CliRunner

from kafkaops.admin.kafka_client import (
    BatchSender,
    KafkaClient,
    OffsetResetPolicy,
    PartitionConsumer,
    PerfStats,
    PerfWindow,
    StickyPartitioner,
    ThroughputThrottler,
    TimestampType,
    decode_records,
    murmur2,
    parse_acks,
    parse_bootstrap_servers,
    partition_for_key,
    perf_payload,
)
from kafkaops.cli.app import app
from kafkaops.cli.console import (
    perf_producer_props,
    perf_total_line,
    perf_window_line,
)
from kafkaops.cluster.common.errors import (
    CorruptMessageError,
    InvalidArgumentError,
    LeaderNotAvailableError,
    MessageTooLargeError,
    NotLeaderOrFollowerError,
    OffsetOutOfRangeError,
    RecordListTooLargeError,
    UnknownTopicOrPartitionError,
    UsageError,
    from_code,
)
from kafkaops.cluster.protocol.framing import frame, read_frame_blocking
from kafkaops.cluster.protocol.messages import decode_request, encode_response
from kafkaops.cluster.protocol.records import (
    Compression,
    ControlType,
    Record,
    build_batch,
    build_control_batch,
    iter_batches,
    iter_records,
    patch_batch,
    set_log_append_time,
)
from kafkaops.cluster.protocol.schemas import SUPPORTED_VERSIONS, ApiKey
from kafkaops.cluster.zk.values import TopicPartition

# --- decode_records ---------------------------------------------------------------------------------------


def batch_at(base: int, values: list[bytes], timestamp: int = 1000, **kwargs: Any) -> bytes:
    data = bytearray(build_batch([Record(i, timestamp + i, None, v) for i, v in enumerate(values)], **kwargs))
    patch_batch(data, 0, base_offset=base, partition_leader_epoch=3)
    return bytes(data)


def test_records_before_the_fetch_offset_are_skipped() -> None:
    data = batch_at(10, [b"a", b"b", b"c"]) + batch_at(13, [b"d", b"e"])
    records, next_offset = decode_records("t", 2, data, 12)
    assert [(r.offset, r.value) for r in records] == [(12, b"c"), (13, b"d"), (14, b"e")]
    assert next_offset == 15
    first = records[0]
    assert (first.topic, first.partition, first.timestamp, first.timestamp_type, first.leader_epoch) == (
        "t",
        2,
        1002,
        TimestampType.CREATE_TIME,
        3,
    )


def test_a_whole_batch_below_the_offset_is_skipped() -> None:
    data = batch_at(0, [b"a", b"b"]) + batch_at(2, [b"c"])
    records, next_offset = decode_records("t", 0, data, 2)
    assert [r.value for r in records] == [b"c"] and next_offset == 3


def test_a_truncated_trailing_batch_is_ignored() -> None:
    data = batch_at(0, [b"a", b"b"]) + batch_at(2, [b"c" * 100])[:-7]
    records, next_offset = decode_records("t", 0, data, 0)
    assert [r.value for r in records] == [b"a", b"b"]
    assert next_offset == 2  # the next fetch starts at the cut batch


def test_only_a_partial_batch_means_the_fetch_size_is_too_small() -> None:
    with pytest.raises(MessageTooLargeError, match=r"\{t-0=5\}"):
        decode_records("t", 0, batch_at(5, [b"x" * 500])[:100], 5)


def test_empty_records() -> None:
    assert decode_records("t", 0, b"", 7) == ([], 7)


def test_control_batches_are_moved_past_but_not_returned() -> None:
    marker = bytearray(build_control_batch(ControlType.COMMIT, offset=0, timestamp=5, producer_id=1, producer_epoch=0))
    patch_batch(marker, 0, base_offset=4, partition_leader_epoch=0)
    records, next_offset = decode_records("t", 0, batch_at(2, [b"a", b"b"]) + bytes(marker), 2)
    assert [r.value for r in records] == [b"a", b"b"] and next_offset == 5
    assert decode_records("t", 0, bytes(marker), 4) == ([], 5)


def test_log_append_time_and_headers_and_null_key() -> None:
    data = bytearray(build_batch([Record(0, 7, None, b"v", (("h", b"1"), ("n", None)))]))
    set_log_append_time(data, 0, 99)  # what a LogAppendTime topic's leader does
    (record,), _ = decode_records("t", 0, bytes(data), 0)
    assert (record.timestamp, record.timestamp_type, str(record.timestamp_type)) == (
        99,
        TimestampType.LOG_APPEND_TIME,
        "LogAppendTime",
    )
    assert record.key is None and record.headers == (("h", b"1"), ("n", None))


def test_gzip_batches_are_read() -> None:
    records, _ = decode_records("t", 0, batch_at(0, [b"a", b"b"], compression=Compression.GZIP), 0)
    assert [r.value for r in records] == [b"a", b"b"]


def test_a_bad_crc_is_corrupt() -> None:
    data = bytearray(batch_at(0, [b"abc"]))
    data[-2] ^= 0xFF
    with pytest.raises(CorruptMessageError):
        decode_records("t", 0, bytes(data), 0)


# --- small parsers and the partitioner -------------------------------------------------------------------


def test_bootstrap_servers() -> None:
    assert parse_bootstrap_servers("a:1, b:2") == [("a", 1), ("b", 2)]
    assert parse_bootstrap_servers(["[::1]:9092"]) == [("::1", 9092)]
    for bad in ("a", "a:", ":9", "a:x", "a:70000"):
        with pytest.raises(InvalidArgumentError, match=f"^Invalid url in bootstrap.servers: {bad}$"):
            parse_bootstrap_servers(bad)
    with pytest.raises(InvalidArgumentError, match="No resolvable bootstrap urls"):
        parse_bootstrap_servers(" , ")


def test_acks() -> None:
    assert [parse_acks(v) for v in ("all", "ALL", "-1", "0", "1", 1)] == [-1, -1, -1, 0, 1, 1]
    with pytest.raises(InvalidArgumentError, match="Invalid value 2 for configuration acks: String must be one of"):
        parse_acks("2")


@pytest.mark.parametrize(
    ("key", "partition"),
    # Kafka's DefaultPartitioner over 1000 partitions (the answers kafka-python's tests pin)
    [(b"", 681), (b"a", 524), (b"ab", 434), (b"abc", 107), (b"123456789", 566), (b"\x00 ", 742)],
)
def test_partition_for_key_matches_kafka(key: bytes, partition: int) -> None:
    assert partition_for_key(key, 1000) == partition


def test_murmur2_is_signed_32_bit() -> None:
    assert murmur2(b"a") == -1563381124  # Kafka's Utils.murmur2 returns a Java int
    assert all(-(2**31) <= murmur2(os.urandom(n)) < 2**31 for n in range(20))


def test_sticky_partitioner_changes_partition_per_batch() -> None:
    sticky = StickyPartitioner(random.Random(4))
    chosen = [sticky.new_batch("t", 3) for _ in range(50)]
    assert all(a != b for a, b in zip(chosen, chosen[1:], strict=False))
    assert set(chosen) == {0, 1, 2}
    assert StickyPartitioner(random.Random(4)).new_batch("t", 1) == 0


class _Partitions:
    def __init__(self, count: int) -> None:
        self.count = count

    def partitions_for(self, topic: str) -> list[int]:
        return list(range(self.count))


def test_batch_sender_groups_keyed_records_by_hash_and_the_rest_on_one_partition() -> None:
    sender = BatchSender(_Partitions(1000), "t", rng=random.Random(1))  # type: ignore[arg-type]
    groups = sender.assign([(b"a", b"1", None), (None, b"2", None), (b"abc", b"3", None), (None, b"4", None)])
    keyless = [p for p, records in groups.items() if any(r[0] is None for r in records)]
    assert len(keyless) == 1 and [r[1] for r in groups[keyless[0]]] == [b"2", b"4"]
    assert groups[524] == [(b"a", b"1", None)] and groups[107] == [(b"abc", b"3", None)]
    fixed = BatchSender(_Partitions(3), "t", partition=2)  # type: ignore[arg-type]
    assert fixed.assign([(b"a", b"1", None)]) == {2: [(b"a", b"1", None)]}


def test_kafka_texts_for_codes() -> None:
    assert str(from_code(5)) == (
        "LEADER_NOT_AVAILABLE: There is no leader for this topic-partition as we are in the middle of a leadership "
        "election."
    )
    assert str(from_code(3, "own text")) == "UNKNOWN_TOPIC_OR_PARTITION: own text"


# --- kafka-producer-perf-test's arithmetic ----------------------------------------------------------------


def test_perf_stats_windows_and_percentiles() -> None:
    windows: list[PerfWindow] = []
    stats = PerfStats(10, start_ms=0, reporting_interval_ms=5000, on_window=windows.append)
    for i in range(10):
        stats.record(i, latency_ms=i + 1, size=100, now_ms=1000 * (i + 1))
    assert [w.count for w in windows] == [5, 5]
    assert windows[0] == PerfWindow(5, 1.0, 100 * 5 / 5 / 1024 / 1024, 3.0, 5.0)
    total = stats.total(now_ms=10000)
    assert (total.count, total.avg_latency_ms, total.max_latency_ms) == (10, 5.5, 10.0)
    assert (total.p50_ms, total.p95_ms, total.p99_ms, total.p999_ms) == (6, 10, 10, 10)
    assert perf_total_line(total) == (
        "10 records sent, 1.000000 records/sec (0.00 MB/sec), 5.50 ms avg latency, 10.00 ms max latency, "
        "6 ms 50th, 10 ms 95th, 10 ms 99th, 10 ms 99.9th."
    )
    assert perf_window_line(windows[0]) == (
        "5 records sent, 1.0 records/sec (0.00 MB/sec), 3.0 ms avg latency, 5.0 ms max latency."
    )


def test_perf_stats_sample_large_runs() -> None:
    stats = PerfStats(2_000_000, start_ms=0)
    assert stats.sampling == 4


def test_throttler() -> None:
    slept: list[float] = []
    throttler = ThroughputThrottler(100, start_ms=0, sleep=slept.append)
    assert not throttler.should_throttle(50, send_start_ms=1000)
    assert throttler.should_throttle(150, send_start_ms=1000)
    throttler.throttle()
    assert slept == [0.01]
    assert not ThroughputThrottler(-1, 0).should_throttle(10**9, 1)


def test_perf_payload_is_uppercase_letters() -> None:
    payload = perf_payload(100)
    assert len(payload) == 100 and set(payload) <= set(range(65, 91)) and payload == perf_payload(100)


# --- producer-perf-test: properties -----------------------------------------------------------------------


def test_perf_props(tmp_path: Any) -> None:
    config = tmp_path / "p.properties"
    config.write_text("# comment\nbootstrap.servers = a:1\nacks:0\nclient.id x\n")
    assert perf_producer_props(["acks=1"], config) == {"bootstrap.servers": "a:1", "acks": "1", "client.id": "x"}
    with pytest.raises(UsageError, match="^Either --producer-props or --producer.config must be specified.$"):
        perf_producer_props([], None)
    with pytest.raises(InvalidArgumentError, match="^Invalid property: a=b=c$"):
        perf_producer_props(["a=b=c"], None)
    with pytest.raises(InvalidArgumentError, match='Missing required configuration "bootstrap.servers"'):
        perf_producer_props(["acks=1"], None)


# --- the commands' bad input: a clear error, exit 1, no traceback ------------------------------------------

runner = CliRunner()


@pytest.mark.parametrize(
    ("args", "first_line"),
    [
        (["console-producer", "--bootstrap-server", "h:1"], 'Missing required argument "[topic]"'),
        (["console-producer", "--topic", "t"], "Missing required option(s) [bootstrap-server]"),
        (["console-producer", "--topic", "t", "--bootstrap-server", "nohostport"], "Invalid url in bootstrap.servers"),
        (
            ["console-producer", "--topic", "t", "--bootstrap-server", "h:1", "--acks", "2"],
            "Invalid value 2 for configuration acks",
        ),
        (
            ["console-producer", "--topic", "t", "--bootstrap-server", "h:1", "--compression-codec", "brotli"],
            "Invalid value brotli for configuration compression.type",
        ),
        (["console-consumer", "--topic", "t"], 'Missing required argument "[bootstrap-server]"'),
        (
            ["console-consumer", "--bootstrap-server", "h:1", "--topic", "t", "--offset", "1"],
            "The partition is required",
        ),
        (
            [
                "console-consumer",
                "--bootstrap-server",
                "h:1",
                "--topic",
                "t",
                "--group",
                "g",
                "--consumer-property",
                "group.id=h",
            ],
            "The group ids provided in different places",
        ),
        (
            ["console-consumer", "--bootstrap-server", "h:1", "--topic", "t", "print.key"],
            "Found non-option argument 'print.key'",
        ),
        (["producer-perf-test", "--num-records", "1"], "argument --topic is required"),
        (
            ["producer-perf-test", "--topic", "t", "--num-records", "1", "--throughput", "-1"],
            "one of the arguments --record-size --payload-file is required",
        ),
        (
            ["producer-perf-test", "--topic", "t", "--num-records", "1", "--throughput", "-1", "--record-size", "1"],
            "Either --producer-props or --producer.config must be specified.",
        ),
        (
            [
                "producer-perf-test",
                "--topic",
                "t",
                "--num-records",
                "1",
                "--throughput",
                "-1",
                "--record-size",
                "1",
                "--producer-props",
                "acks=1",
                "bootstrap.servers",
            ],
            "Found non-option argument 'bootstrap.servers'",
        ),
    ],
)
def test_bad_input_exits_1_without_a_traceback(args: list[str], first_line: str) -> None:
    result = runner.invoke(app, args)
    assert result.exit_code == 1, result.output
    assert result.stderr.splitlines()[0].startswith(first_line)
    assert "Traceback" not in result.stderr
    assert isinstance(result.exception, SystemExit)


def test_unreachable_broker_is_a_one_line_error() -> None:
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
    result = runner.invoke(
        app,
        ["console-consumer", "--bootstrap-server", f"127.0.0.1:{port}", "--topic", "t"],
    )
    assert result.exit_code == 1
    assert result.stderr.startswith("NETWORK_EXCEPTION: No broker answered a Metadata request: Connection to node -1")


# --- the client's retries against a fake broker -----------------------------------------------------------


class FakeBroker:
    """A broker in a thread that answers each request with `handler(api_key, version, body)`; enough of the
    protocol for the client's metadata refresh and retry paths, with no cluster."""

    def __init__(self, handler: Callable[[ApiKey, int, dict[str, Any]], dict[str, Any]]) -> None:
        self.handler = handler
        self.requests: list[tuple[ApiKey, dict[str, Any]]] = []
        self._server = socket.create_server(("127.0.0.1", 0))
        self.port = self._server.getsockname()[1]
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self._server.accept()
            except OSError:
                return
            threading.Thread(target=self._connection, args=(conn,), daemon=True).start()

    def _connection(self, conn: socket.socket) -> None:
        with conn:
            while True:
                try:
                    request = decode_request(read_frame_blocking(conn))
                except OSError:
                    return
                key, version = request.header.api_key, request.header.api_version
                self.requests.append((key, request.body))
                if key is ApiKey.API_VERSIONS:
                    body: dict[str, Any] = {
                        "error_code": 0,
                        "api_keys": [
                            {"api_key": int(k), "min_version": lo, "max_version": hi}
                            for k, (lo, hi) in SUPPORTED_VERSIONS.items()
                        ],
                    }
                else:
                    body = self.handler(key, version, request.body)
                conn.sendall(frame(encode_response(key, version, request.header.correlation_id, body)))

    def close(self) -> None:
        self._server.close()


def metadata_body(leaders: dict[int, int], ports: dict[int, int], topic_error: int = 0) -> dict[str, Any]:
    return {
        "brokers": [{"node_id": b, "host": "127.0.0.1", "port": p, "rack": None} for b, p in ports.items()],
        "cluster_id": "c",
        "controller_id": 0,
        "topics": [
            {
                "error_code": topic_error,
                "name": "t",
                "is_internal": False,
                "partitions": [
                    {
                        "error_code": 0,
                        "partition_index": p,
                        "leader_id": leader,
                        "leader_epoch": 0,
                        "replica_nodes": sorted(ports),
                        "isr_nodes": sorted(ports),
                        "offline_replicas": [],
                    }
                    for p, leader in leaders.items()
                ]
                if not topic_error
                else [],
            }
        ],
    }


def produce_answer(error: int, base_offset: int = -1) -> dict[str, Any]:
    return {
        "responses": [
            {
                "name": "t",
                "partition_responses": [
                    {"index": 0, "error_code": error, "base_offset": base_offset, "record_errors": []}
                ],
            }
        ]
    }


@pytest.fixture
def two_brokers() -> Iterator[tuple[FakeBroker, FakeBroker, dict[str, Any]]]:
    """Broker 0 led partition t-0 and answers NOT_LEADER_OR_FOLLOWER; broker 1 leads it once asked again."""
    state: dict[str, Any] = {"leader": 0, "metadata_calls": 0, "ports": {}}

    def metadata(key: ApiKey, version: int, body: dict[str, Any]) -> dict[str, Any]:
        state["metadata_calls"] += 1
        return metadata_body({0: state["leader"]}, state["ports"])

    def old_leader(key: ApiKey, version: int, body: dict[str, Any]) -> dict[str, Any]:
        if key is ApiKey.METADATA:
            answer = metadata(key, version, body)
            state["leader"] = 1  # the election happens right after the first answer
            return answer
        return produce_answer(NotLeaderOrFollowerError.code)

    def new_leader(key: ApiKey, version: int, body: dict[str, Any]) -> dict[str, Any]:
        if key is ApiKey.METADATA:
            return metadata(key, version, body)
        (batch,) = iter_batches(body["topic_data"][0]["partition_data"][0]["records"])
        assert [r.value for r in iter_records(batch)] == [b"x", b"y"]
        return produce_answer(0, base_offset=41)

    b0, b1 = FakeBroker(old_leader), FakeBroker(new_leader)
    state["ports"] = {0: b0.port, 1: b1.port}
    try:
        yield b0, b1, state
    finally:
        b0.close()
        b1.close()


def test_produce_retries_on_not_leader_after_refreshing_metadata(two_brokers: Any) -> None:
    b0, b1, state = two_brokers
    slept: list[float] = []
    with KafkaClient(f"127.0.0.1:{b0.port}", retries=3, sleep=slept.append) as client:
        assert client.produce("t", 0, [(None, b"x", None), (b"k", b"y", [("h", None)])], acks=-1) == 41
    # the refresh asks the known brokers in order: broker 0 answers it, and names broker 1 the leader
    assert [k for k, _ in b0.requests] == [ApiKey.API_VERSIONS, ApiKey.METADATA, ApiKey.PRODUCE, ApiKey.METADATA]
    assert [k for k, _ in b1.requests] == [ApiKey.API_VERSIONS, ApiKey.PRODUCE]
    assert slept == [0.1]


def test_produce_gives_up_after_the_retry_budget() -> None:
    ports: dict[int, int] = {}

    def always_not_leader(key: ApiKey, version: int, body: dict[str, Any]) -> dict[str, Any]:
        if key is ApiKey.METADATA:
            return metadata_body({0: 0}, ports)
        return produce_answer(NotLeaderOrFollowerError.code)

    broker = FakeBroker(always_not_leader)
    ports[0] = broker.port
    try:
        with (
            KafkaClient(f"127.0.0.1:{broker.port}", retries=2, sleep=lambda s: None) as client,
            pytest.raises(NotLeaderOrFollowerError, match="is not the current leader"),
        ):
            client.produce("t", 0, [(None, b"x", None)])
        assert [k for k, _ in broker.requests].count(ApiKey.PRODUCE) == 3
    finally:
        broker.close()


def test_non_retriable_errors_are_raised_at_once_with_kafka_text() -> None:
    ports: dict[int, int] = {}

    def too_large(key: ApiKey, version: int, body: dict[str, Any]) -> dict[str, Any]:
        if key is ApiKey.METADATA:
            return metadata_body({0: 0}, ports)
        return produce_answer(RecordListTooLargeError.code)

    broker = FakeBroker(too_large)
    ports[0] = broker.port
    try:
        with KafkaClient(f"127.0.0.1:{broker.port}") as client, pytest.raises(RecordListTooLargeError) as raised:
            client.produce("t", 0, [(None, b"x", None)])
        assert raised.value.code == 18
        assert str(raised.value).endswith("larger than the configured segment size on the server.")
        assert [k for k, _ in broker.requests].count(ApiKey.PRODUCE) == 1
    finally:
        broker.close()


def test_an_unknown_topic_is_reported_after_the_retries() -> None:
    ports: dict[int, int] = {}

    def unknown(key: ApiKey, version: int, body: dict[str, Any]) -> dict[str, Any]:
        return metadata_body({}, ports, topic_error=UnknownTopicOrPartitionError.code)

    broker = FakeBroker(unknown)
    ports[0] = broker.port
    try:
        with KafkaClient(f"127.0.0.1:{broker.port}", retries=1, sleep=lambda s: None) as client:
            with pytest.raises(UnknownTopicOrPartitionError):
                client.produce("t", 0, [(None, b"x", None)])
            with pytest.raises(UnknownTopicOrPartitionError, match="^UNKNOWN_TOPIC_OR_PARTITION: Topic t not present"):
                client.partitions_for("t")
    finally:
        broker.close()


def test_a_partition_without_leader_waits_until_the_delivery_timeout() -> None:
    ports: dict[int, int] = {}

    def leaderless(key: ApiKey, version: int, body: dict[str, Any]) -> dict[str, Any]:
        return metadata_body({0: -1}, ports)

    broker = FakeBroker(leaderless)
    ports[0] = broker.port
    now = [0.0]

    def sleep(seconds: float) -> None:
        now[0] += seconds

    try:
        with (
            KafkaClient(
                f"127.0.0.1:{broker.port}", retries=0, delivery_timeout_ms=1000, clock=lambda: now[0], sleep=sleep
            ) as client,
            pytest.raises(LeaderNotAvailableError),
        ):
            client.produce("t", 0, [(None, b"x", None)])
        assert 0.9 <= now[0] <= 1.0  # retries=0, yet it kept asking: nothing was ever sent
    finally:
        broker.close()


def test_fetch_request_shape() -> None:
    ports: dict[int, int] = {}
    data = batch_at(3, [b"a", b"b"])

    def fetch(key: ApiKey, version: int, body: dict[str, Any]) -> dict[str, Any]:
        if key is ApiKey.METADATA:
            return metadata_body({0: 0}, ports)
        assert (version, body["replica_id"], body["isolation_level"], body["max_wait_ms"]) == (12, -2, 0, 0)
        assert body["topics"][0]["partitions"][0]["fetch_offset"] == 4
        partition = {
            "partition": 0,
            "error_code": 0,
            "high_watermark": 5,
            "last_stable_offset": 5,
            "log_start_offset": 1,
            "aborted_transactions": [],
            "record_set": data,
        }
        return {"responses": [{"topic": "t", "partition_responses": [partition]}]}

    broker = FakeBroker(fetch)
    ports[0] = broker.port
    try:
        with KafkaClient(f"127.0.0.1:{broker.port}") as client:
            result = client.fetch_from_broker(0, "t", 0, 4)
        assert [(r.offset, r.value) for r in result.records] == [(4, b"b")]
        assert (result.high_watermark, result.log_start_offset, result.next_offset) == (5, 1, 5)
    finally:
        broker.close()


def test_record_batch_header_is_what_we_send() -> None:
    # produce() puts one batch with offsets 0..n-1 and one timestamp, producer id -1 (not idempotent)
    ports: dict[int, int] = {}
    seen: list[bytes] = []

    def capture(key: ApiKey, version: int, body: dict[str, Any]) -> dict[str, Any]:
        if key is ApiKey.METADATA:
            return metadata_body({0: 0}, ports)
        seen.append(body["topic_data"][0]["partition_data"][0]["records"])
        return produce_answer(0, 0)

    broker = FakeBroker(capture)
    ports[0] = broker.port
    try:
        with KafkaClient(f"127.0.0.1:{broker.port}", wall_clock_ms=lambda: 1_700_000_000_000) as client:
            client.produce("t", 0, [(None, b"hi", None)])
        assert seen == [build_batch([Record(0, 1_700_000_000_000, None, b"hi")])]
        assert struct.unpack_from(">q", seen[0], 43)[0] == -1
    finally:
        broker.close()


def test_partition_consumer_resets_an_offset_out_of_range() -> None:
    ports: dict[int, int] = {}
    data = batch_at(3, [b"a", b"b"])
    fetched: list[int] = []

    def log_from_3_to_5(key: ApiKey, version: int, body: dict[str, Any]) -> dict[str, Any]:
        if key is ApiKey.METADATA:
            return metadata_body({0: 0}, ports)
        if key is ApiKey.LIST_OFFSETS:
            (partition,) = body["topics"][0]["partitions"]
            offset = {-2: 3, -1: 5}[partition["timestamp"]]
            return {
                "topics": [
                    {
                        "name": "t",
                        "partitions": [{"partition_index": 0, "error_code": 0, "timestamp": -1, "offset": offset}],
                    }
                ]
            }
        offset = body["topics"][0]["partitions"][0]["fetch_offset"]
        fetched.append(offset)
        out_of_range = not 3 <= offset <= 5
        partition = {
            "partition": 0,
            "error_code": OffsetOutOfRangeError.code if out_of_range else 0,
            "high_watermark": -1 if out_of_range else 5,
            "last_stable_offset": -1 if out_of_range else 5,
            "log_start_offset": -1 if out_of_range else 3,
            "aborted_transactions": [],
            "record_set": b"" if out_of_range or offset == 5 else data,
        }
        return {"responses": [{"topic": "t", "partition_responses": [partition]}]}

    broker = FakeBroker(log_from_3_to_5)
    ports[0] = broker.port
    try:
        with KafkaClient(f"127.0.0.1:{broker.port}") as client:
            consumer = PartitionConsumer(client, "t", [0], start=100, reset=OffsetResetPolicy.EARLIEST, max_wait_ms=0)
            assert consumer.poll(0) == []  # out of range: reset to the earliest offset
            assert [r.value for r in consumer.poll(1000)] == [b"a", b"b"]
            assert consumer.positions == {TopicPartition("t", 0): 5}
            assert fetched == [100, 3]
            latest = PartitionConsumer(client, "t", None, start=-1, max_wait_ms=0)
            assert latest.positions == {TopicPartition("t", 0): 5}
            strict = PartitionConsumer(client, "t", [0], start=0, reset=OffsetResetPolicy.NONE, max_wait_ms=0)
            with pytest.raises(OffsetOutOfRangeError, match=r"no configured reset policy for partitions: \{t-0=0\}"):
                strict.poll(0)
            with pytest.raises(UnknownTopicOrPartitionError, match="t-7"):
                PartitionConsumer(client, "t", [7])
    finally:
        broker.close()
