"""kafka-replica-verification's comparison, orders, one-pass bookkeeping and texts, without a broker."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from dataclasses import dataclass, field

import pytest
from typer.testing import CliRunner

from kafkaops.admin import replica_verification as rv
from kafkaops.admin.kafka_client import BrokerNode, ClusterMetadata, PartitionInfo, TopicInfo
from kafkaops.admin.replica_verification import (
    FAILED_FETCH,
    BatchInfo,
    ChecksumMismatch,
    MaxLag,
    OffsetMismatch,
    ReplicaData,
    VerificationState,
    verify_partition,
)
from kafkaops.cli import replica_verification as cli
from kafkaops.cli.app import app
from kafkaops.cluster.common.errors import BrokerNotAvailableError, InvalidArgumentError, KafkaOpsError, UsageError
from kafkaops.cluster.protocol.records import Record, build_batch, patch_batch
from kafkaops.cluster.zk.values import TopicPartition

T0 = TopicPartition("t", 0)
T1 = TopicPartition("t", 1)
T2 = TopicPartition("t", 2)


def batches(*spans: tuple[int, int], crc: int = 7) -> tuple[BatchInfo, ...]:
    """Batches ending at the given last offsets (the first element of each span is only documentation)."""
    return tuple(BatchInfo(last, crc) for _, last in spans)


def replica(hw: int, *infos: BatchInfo) -> ReplicaData:
    return ReplicaData(tuple(infos), hw)


# --- one partition ------------------------------------------------------------------------------------------


def test_matching_replicas_are_verified_up_to_the_high_watermark() -> None:
    data = replica(10, BatchInfo(4, 11), BatchInfo(9, 12))
    result = verify_partition(T0, 0, [(1, data), (2, data), (3, data)])
    assert result.verified_offset == 10
    assert (result.checksum_mismatches, result.offset_mismatch) == ((), None)
    assert result.lag == 0


def test_a_batch_at_or_past_a_replicas_high_watermark_is_not_verified() -> None:
    leader = replica(10, BatchInfo(4, 11), BatchInfo(9, 12))
    follower = replica(5, BatchInfo(4, 11))  # a debug fetch stops at the replica's own high watermark
    result = verify_partition(T0, 0, [(1, leader), (2, follower)])
    assert result.verified_offset == 5
    assert result.lag == 10 - 5
    assert result.max_high_watermark == 10


def test_offset_mismatch_stops_the_partition_where_it_is() -> None:
    one = replica(10, BatchInfo(4, 11), BatchInfo(9, 12))
    two = replica(10, BatchInfo(4, 11), BatchInfo(7, 13), BatchInfo(9, 14))
    result = verify_partition(T0, 0, [(1, one), (2, two)])
    assert result.offset_mismatch == OffsetMismatch(T0, 1, 9, 2, 7)
    assert result.verified_offset == 5  # the first batch matched; nothing after it is verified


def test_checksum_mismatch_is_recorded_and_verification_goes_on() -> None:
    one = replica(10, BatchInfo(4, 11), BatchInfo(9, 12))
    two = replica(10, BatchInfo(4, 99), BatchInfo(9, 12))
    three = replica(10, BatchInfo(4, 11), BatchInfo(9, 12))
    result = verify_partition(T0, 0, [(1, one), (2, two), (3, three)])
    assert result.checksum_mismatches == (ChecksumMismatch(T0, 4, 1, 11, 2, 99),)
    assert result.offset_mismatch is None
    assert result.verified_offset == 10


def test_the_step_that_ends_the_walk_still_compares_the_other_replicas() -> None:
    """Kafka flags the end of the walk but goes on comparing the step's remaining replicas."""
    one = replica(10, BatchInfo(4, 11), BatchInfo(9, 12))
    two = replica(5, BatchInfo(4, 11))  # out of batches at the second step
    three = replica(10, BatchInfo(4, 11), BatchInfo(9, 66))
    result = verify_partition(T0, 0, [(1, one), (2, two), (3, three)])
    assert result.checksum_mismatches == (ChecksumMismatch(T0, 9, 1, 12, 3, 66),)
    assert result.verified_offset == 5


def test_the_first_replica_with_a_batch_below_its_high_watermark_is_the_reference() -> None:
    lagging = replica(0, BatchInfo(4, 1))  # high watermark 0: its batch is not verified
    two = replica(10, BatchInfo(4, 2))
    three = replica(10, BatchInfo(4, 3))
    result = verify_partition(T0, 0, [(1, lagging), (2, two), (3, three)])
    assert result.checksum_mismatches == (ChecksumMismatch(T0, 4, 2, 2, 3, 3),)
    assert result.verified_offset == 0


def test_a_failed_fetch_holds_the_partition_back() -> None:
    good = replica(10, BatchInfo(9, 1))
    result = verify_partition(T0, 3, [(1, good), (2, FAILED_FETCH)])
    assert result.verified_offset == 3
    assert result.lag == 7


def test_batch_infos_read_last_offsets_and_stored_crcs_and_skip_a_truncated_tail() -> None:
    first = bytearray(build_batch([Record(0, 1000, b"k", b"v"), Record(1, 1000, None, b"w")]))
    patch_batch(first, 0, base_offset=10, partition_leader_epoch=3)
    second = bytearray(build_batch([Record(0, 1000, None, b"x")]))
    patch_batch(second, 0, base_offset=12, partition_leader_epoch=3)
    infos = rv.batch_infos(bytes(first + second + second[:20]))
    crc = int.from_bytes(first[17:21], "big"), int.from_bytes(second[17:21], "big")
    assert infos == (BatchInfo(11, crc[0]), BatchInfo(12, crc[1]))
    # a CRC that does not match the bytes is still what is compared (Kafka reads `batch.checksum`)
    first[-1] ^= 0xFF
    assert rv.batch_infos(bytes(first))[0].checksum == crc[0]


# --- rounds over many partitions -------------------------------------------------------------------------


def test_kafka_iterates_one_topics_partitions_by_hash_bucket() -> None:
    # TopicPartition("t", p).hashCode = 1077 + 31p: buckets 5, 4, 3 of a table of 16
    assert rv.kafka_partition_order([T0, T1, T2]) == [T2, T1, T0]


def test_concurrent_hash_map_order_matches_java() -> None:
    """Pinned from OpenJDK 17: `new ConcurrentHashMap<TopicPartition, _>()` filled in this order."""
    filled = [TopicPartition(t, p) for t in ("orders", "payments") for p in range(3)]
    filled += [TopicPartition("__consumer_offsets", 0), TopicPartition("__consumer_offsets", 1)]
    java = "__consumer_offsets-0 payments-0 payments-2 payments-1 orders-0 orders-1 orders-2 __consumer_offsets-1"
    assert " ".join(map(str, rv._concurrent_hash_map_order(filled))) == java


def test_replicas_are_walked_by_hash_bucket_then_id() -> None:
    assert rv.kafka_replica_order([3, 1, 2]) == [1, 2, 3]
    assert rv.kafka_replica_order([17, 1, 16]) == [16, 1, 17]  # 16 is bucket 0; 1 and 17 share bucket 1


def test_a_round_advances_every_partition_and_finds_the_max_lag() -> None:
    state = VerificationState({T0: [1, 2], T1: [2, 1]}, {T0: 0, T1: 0})
    data0 = replica(5, BatchInfo(4, 1))
    data1_leader = replica(8, BatchInfo(4, 1), BatchInfo(7, 2))
    data1_follower = replica(5, BatchInfo(4, 1))
    result = state.verify({T0: {1: data0, 2: data0}, T1: {1: data1_leader, 2: data1_follower}})
    assert state.offsets == {T0: 5, T1: 5}
    assert result.max_lag == MaxLag(3, T1, 5)
    assert list(state.fetch_offsets(1).items()) == [(T1, 5), (T0, 5)]  # Kafka's order: t-1 before t-0


def test_a_tie_for_the_max_lag_goes_to_the_first_partition_in_kafka_order() -> None:
    state = VerificationState({T0: [1], T1: [1], T2: [1]}, {T0: 0, T1: 0, T2: 0})
    same = {1: replica(6, BatchInfo(4, 1))}  # every partition: verified to 5, lag 1
    result = state.verify({T0: same, T1: same, T2: same})
    assert result.max_lag == MaxLag(1, T2, 5)  # Kafka walks t-2, t-1, t-0 and keeps the first of equals


def test_an_offset_mismatch_ends_the_round() -> None:
    state = VerificationState({T0: [1, 2], T1: [1, 2], T2: [1, 2]}, {T0: 0, T1: 0, T2: 0})
    good = replica(5, BatchInfo(4, 1))
    bad = replica(5, BatchInfo(3, 1))
    result = state.verify({T2: {1: good, 2: good}, T1: {1: good, 2: bad}, T0: {1: good, 2: good}})
    assert result.offset_mismatch == OffsetMismatch(T1, 1, 4, 2, 3)
    assert [p.topic_partition for p in result.partitions] == [T2, T1]
    assert state.offsets == {T2: 5, T1: 0, T0: 0}


def test_a_replica_missing_from_the_answers_counts_as_a_failed_fetch() -> None:
    state = VerificationState({T0: [1, 2]}, {T0: 0})
    result = state.verify({T0: {1: replica(5, BatchInfo(4, 1))}})
    assert state.offsets[T0] == 0
    assert result.max_lag == MaxLag(5, T0, 0)


def test_no_lag_above_minus_one_reports_no_partition() -> None:
    state = VerificationState({T0: [1]}, {T0: 0})
    result = state.verify({})
    assert result.max_lag == MaxLag(-1, None, -1)


def test_the_report_is_due_strictly_after_the_interval() -> None:
    assert not rv.report_due(1030, 1000, 30)
    assert rv.report_due(1031, 1000, 30)


# --- one pass -------------------------------------------------------------------------------------------


def test_a_pass_is_done_when_every_partition_reaches_the_smallest_high_watermark_seen_first() -> None:
    state = VerificationState({T0: [1, 2]}, {T0: 0})
    tracker = rv.OncePass(state)
    tracker.observe(state.verify({T0: {1: replica(10, BatchInfo(4, 1)), 2: replica(5, BatchInfo(4, 1))}}))
    assert tracker.targets == {T0: 5}
    assert tracker.done
    summary = tracker.summary()
    assert summary.in_sync
    assert summary.partitions[0].verified_offset == 5
    assert summary.max_lag == MaxLag(5, T0, 5)


def test_a_pass_collects_checksum_mismatches() -> None:
    state = VerificationState({T0: [1, 2]}, {T0: 0})
    tracker = rv.OncePass(state)
    tracker.observe(state.verify({T0: {1: replica(5, BatchInfo(4, 1)), 2: replica(5, BatchInfo(4, 2))}}))
    assert tracker.done
    assert not tracker.summary().in_sync
    assert tracker.summary().checksum_mismatches == (ChecksumMismatch(T0, 4, 1, 1, 2, 2),)


def test_a_pass_without_progress_below_its_target_stalls() -> None:
    state = VerificationState({T0: [1, 2]}, {T0: 0})
    tracker = rv.OncePass(state, max_stalled_rounds=2)
    stuck = {T0: {1: replica(5), 2: replica(5)}}  # high watermark 5, but no batch came back
    tracker.observe(state.verify(stuck))
    assert not tracker.done and not tracker.stalled()
    tracker.observe(state.verify(stuck))
    assert [p.topic_partition for p in tracker.stalled()] == [T0]


# --- options and selection ------------------------------------------------------------------------------


@pytest.mark.parametrize("good", ["localhost:9092", "a:1,b:2", "[::1]:9092", ":9092", "a:1,"])
def test_broker_lists_kafka_accepts(good: str) -> None:
    rv.validate_broker_list(good)


@pytest.mark.parametrize("bad", ["localhost", "a:1,b", "a:x", ",a:1", ""])
def test_broker_lists_kafka_refuses(bad: str) -> None:
    with pytest.raises(UsageError) as error:
        rv.validate_broker_list(bad)
    assert str(error.value) == "Please provide valid host:port like host1:9091,host2:9092\n "


def _metadata(*topics: tuple[str, dict[int, tuple[int, ...]]], brokers: tuple[int, ...] = (1, 2, 3)) -> ClusterMetadata:
    return ClusterMetadata(
        {b: BrokerNode(b, "localhost", 9090 + b) for b in brokers},
        1,
        "cluster",
        {
            name: TopicInfo(
                name,
                0,
                name.startswith("__"),
                tuple(PartitionInfo(name, p, r[0], 0, r, r) for p, r in parts.items()),
            )
            for name, parts in topics
        },
    )


def test_the_white_list_is_a_whole_name_java_regex_with_internal_topics() -> None:
    metadata = _metadata(("orders", {0: (1, 2)}), ("payments", {0: (2, 3)}), ("__consumer_offsets", {0: (3, 1)}))
    assert set(rv.select_replicas(metadata, ".*")) == {
        TopicPartition("orders", 0),
        TopicPartition("payments", 0),
        TopicPartition("__consumer_offsets", 0),
    }
    assert set(rv.select_replicas(metadata, "orders, payments")) == {
        TopicPartition("orders", 0),
        TopicPartition("payments", 0),
    }
    with pytest.raises(InvalidArgumentError) as error:
        rv.select_replicas(metadata, "order")  # the whole name must match
    assert str(error.value) == (
        "No topics found. [topic-white-list] if specified, is either filtering out all topics or there is no topic."
    )
    with pytest.raises(InvalidArgumentError, match=r"^\( is an invalid regex\.$"):
        rv.select_replicas(metadata, "(")


def test_every_replicas_broker_must_be_up_at_the_start() -> None:
    metadata = _metadata(("orders", {0: (1, 4), 1: (4, 1)}))
    with pytest.raises(BrokerNotAvailableError, match=r"broker 4 \(replicas of orders-0, orders-1\)"):
        rv.check_brokers_available(rv.select_replicas(metadata, ".*"), metadata.brokers)


def test_time_is_latest_earliest_or_a_timestamp() -> None:
    for ok in (-1, -2, 0, 1_700_000_000_000):
        rv.validate_time(ok)
    with pytest.raises(InvalidArgumentError, match="-3"):
        rv.validate_time(-3)


# --- the loops over a fake verifier ------------------------------------------------------------------------


@dataclass
class FakeVerifier:
    """`start()` and `fetch_round()` as ReplicaVerifier has them, answers scripted per round."""

    replicas: dict[TopicPartition, list[int]]
    rounds: list[rv.FetchRound]
    fetch_size: int = 1048576
    state: VerificationState | None = None
    served: int = field(default=0)

    def start(self) -> VerificationState:
        self.state = VerificationState(self.replicas, dict.fromkeys(self.replicas, 0))
        return self.state

    def fetch_round(self) -> rv.FetchRound:
        answer = self.rounds[min(self.served, len(self.rounds) - 1)]
        self.served += 1
        return answer


def clock(*times: int) -> Iterator[int]:
    yield from times
    while True:
        yield times[-1]


def test_periodic_mode_reports_after_each_interval_and_ends_on_an_offset_mismatch() -> None:
    same = replica(5, BatchInfo(4, 1))
    rounds = [
        rv.FetchRound({T0: {1: same, 2: same}}),
        rv.FetchRound({T0: {1: replica(10, BatchInfo(9, 1)), 2: replica(10, BatchInfo(8, 1))}}),
    ]
    fake = FakeVerifier({T0: [1, 2]}, rounds)
    ticks = clock(1000, 1001, 1500, 1500)
    events = list(rv.run_periodic(fake, 100, lambda: next(ticks)))  # type: ignore[arg-type]
    assert [e.body for e in events] == [
        rv.Started(1, (1, 2)),
        rv.MaxLagReport(MaxLag(0, T0, 5), 1),
        OffsetMismatch(T0, 1, 9, 2, 8),
    ]
    assert events[1].time_ms == 1500


def test_periodic_mode_notes_a_broker_outage_once_and_its_end() -> None:
    same = replica(5)
    error = KafkaOpsError("down")
    rounds = [
        rv.FetchRound({T0: {1: same}}, {(2, None): error}),
        rv.FetchRound({T0: {1: same}}, {(2, None): error}),
        rv.FetchRound({T0: {1: same, 2: same}}),
    ]
    fake = FakeVerifier({T0: [1, 2]}, rounds)
    events = rv.run_periodic(fake, 10**9, lambda: 0)  # type: ignore[arg-type]
    bodies = [next(events).body for _ in range(3)]
    assert bodies == [rv.Started(1, (1, 2)), rv.FetchFailed(2, (), error), rv.FetchRecovered(2, ())]


def test_outages_are_noted_per_broker_and_error_recoveries_first() -> None:
    outages = rv._Outages()
    down, unknown = KafkaOpsError("down"), KafkaOpsError("unknown")
    assert outages.update(rv.FetchRound(failures={(2, None): down})) == [rv.FetchFailed(2, (), down)]
    assert outages.update(rv.FetchRound(failures={(2, T1): unknown, (2, T0): unknown, (3, T0): down})) == [
        rv.FetchRecovered(2, ()),
        rv.FetchFailed(2, (T0, T1), unknown),
        rv.FetchFailed(3, (T0,), down),
    ]
    assert outages.update(rv.FetchRound(failures={(2, T1): unknown})) == [
        rv.FetchRecovered(2, (T0,)),
        rv.FetchRecovered(3, (T0,)),
    ]
    assert outages.update(rv.FetchRound()) == [rv.FetchRecovered(2, (T1,))]


def test_once_mode_ends_with_the_max_lag_and_a_summary() -> None:
    one = replica(10, BatchInfo(4, 1), BatchInfo(9, 2))
    two = replica(10, BatchInfo(4, 1), BatchInfo(9, 3))
    fake = FakeVerifier({T0: [1, 2]}, [rv.FetchRound({T0: {1: one, 2: two}})])
    bodies = [e.body for e in rv.run_once(fake, lambda: 0)]  # type: ignore[arg-type]
    summary = bodies[-1]
    assert isinstance(summary, rv.OnceSummary)
    assert bodies[:-1] == [
        rv.Started(1, (1, 2)),
        ChecksumMismatch(T0, 9, 1, 2, 2, 3),
        rv.MaxLagReport(MaxLag(0, T0, 10), 1),
    ]
    assert not summary.in_sync
    assert summary.partitions[0].target_offset == 10


def test_once_mode_raises_a_failed_fetch_with_its_broker() -> None:
    fake = FakeVerifier({T0: [1, 2]}, [rv.FetchRound({T0: {1: replica(5)}}, {(2, T0): KafkaOpsError("gone")})])
    with pytest.raises(KafkaOpsError, match="^Fetching t-0 from broker 2 failed: gone$"):
        list(rv.run_once(fake, lambda: 0))  # type: ignore[arg-type]


def test_once_mode_gives_up_when_no_progress_is_made() -> None:
    fake = FakeVerifier({T0: [1, 2]}, [rv.FetchRound({T0: {1: replica(5), 2: replica(5)}})])
    with pytest.raises(KafkaOpsError, match="no progress in 2 rounds: t-0 at offset 0 \\(target 5"):
        list(rv.run_once(fake, lambda: 0, max_stalled_rounds=2))  # type: ignore[arg-type]


# --- Kafka's texts --------------------------------------------------------------------------------------


@pytest.fixture
def utc() -> Iterator[None]:
    previous = os.environ.get("TZ")
    os.environ["TZ"] = "UTC"
    time.tzset()
    try:
        yield
    finally:
        if previous is None:
            del os.environ["TZ"]
        else:
            os.environ["TZ"] = previous
        time.tzset()


AT = 1_700_000_000_007  # 2023-11-14 22:13:20.007 UTC


def test_timestamps_are_simple_date_format_in_the_local_zone(utc: None) -> None:
    assert cli.timestamp_text(AT) == "2023-11-14 22:13:20,007"
    os.environ["TZ"] = "Asia/Kolkata"
    time.tzset()
    assert cli.timestamp_text(AT) == "2023-11-15 03:43:20,007"


def test_kafkas_lines(utc: None) -> None:
    assert cli.started_line(AT) == "2023-11-14 22:13:20,007: verification process is started."
    assert cli.offset_mismatch_line(AT, OffsetMismatch(T1, 1, 9, 2, 8)) == (
        "2023-11-14 22:13:20,007: partition t-1: replica 1's offset 9 doesn't match replica 2's offset 8"
    )
    assert cli.checksum_mismatch_line(AT, ChecksumMismatch(T1, 9, 1, 4294967295, 3, 12)) == (
        "2023-11-14 22:13:20,007: partition t-1 has unmatched checksum at offset 9; replica 1's checksum 4294967295; "
        "replica 3's checksum 12"
    )
    assert cli.max_lag_line(AT, rv.MaxLagReport(MaxLag(3, T2, 17), 6)) == (
        "2023-11-14 22:13:20,007: max lag is 3 for partition t-2 at offset 17 among 6 partitions"
    )
    assert cli.max_lag_line(AT, rv.MaxLagReport(MaxLag(-1, None, -1), 1)) == (
        "2023-11-14 22:13:20,007: max lag is -1 for partition null at offset -1 among 1 partitions"
    )


def test_our_notes_on_stderr_name_at_most_five_partitions(utc: None) -> None:
    many = tuple(TopicPartition("t", p) for p in range(7))
    assert cli.fetch_note(AT, rv.FetchFailed(2, (), KafkaOpsError("down"))) == (
        "2023-11-14 22:13:20,007: fetching from broker 2 failed (down); these replicas are not verified until they "
        "answer"
    )
    assert cli.fetch_note(AT, rv.FetchRecovered(2, many)) == (
        "2023-11-14 22:13:20,007: fetching t-0, t-1, t-2, t-3, t-4 and 2 more from broker 2 works again"
    )


runner = CliRunner()


def invoke(*args: str) -> tuple[int, str, str]:
    result = runner.invoke(app, ["replica-verification", *args])
    return result.exit_code, result.stdout, result.stderr


def test_no_arguments_print_the_description_and_usage() -> None:
    code, out, err = invoke()
    assert (code, out) == (1, "")
    assert err.startswith("Validate that all replicas for a set of topics have the same data.\nUsage: ")


def test_broker_list_is_required_and_validated() -> None:
    code, _, err = invoke("--time", "-2")
    assert code == 1 and err.startswith('Missing required argument "[broker-list]"\nUsage: ')
    code, _, err = invoke("--broker-list", "localhost")
    assert code == 1 and err.startswith("Please provide valid host:port like host1:9091,host2:9092\n \nUsage: ")


def test_json_needs_once_and_bad_input_is_one_line() -> None:
    assert invoke("--broker-list", "localhost:9092", "--output", "json")[0] == 1
    code, out, err = invoke("--broker-list", "localhost:9092", "--topic-white-list", "(")
    assert (code, out, err) == (1, "", "( is an invalid regex.\n")
    code, out, err = invoke("--broker-list", "localhost:9092", "--fetch-size", "0")
    assert (code, out) == (1, "") and "--fetch-size" in err


def test_no_broker_answering_is_one_line_and_exit_1() -> None:
    code, out, err = invoke("--broker-list", "127.0.0.1:1", "--once")
    assert (code, out) == (1, "")
    assert err.startswith(
        "NETWORK_EXCEPTION: No broker answered a Metadata request: Connection to node -1 (127.0.0.1:1)"
    )
    assert err.count("\n") == 1
