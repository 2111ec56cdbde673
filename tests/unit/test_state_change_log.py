"""state-change.log texts against kafka-reference.md §4.1 – §4.4, and the hourly rolling file."""

from __future__ import annotations

import os
import threading
from datetime import UTC, datetime
from pathlib import Path

import pytest

from kafkaops.cluster.common.jvm_text import scala_immutable_set, scala_mutable_hash_order, scala_mutable_hash_set
from kafkaops.cluster.state_change_log import (
    BrokerLog,
    ControllerLog,
    ErrorTrace,
    LeaderAndIsrPartitionState,
    Level,
    StateChangeEntry,
    StateChangeLogFile,
    StopReplicaPartitionState,
    UpdateMetadataPartitionState,
    node_string,
)
from kafkaops.cluster.zk.values import LeaderAndIsr, LeaderIsrAndControllerEpoch, ReplicaAssignment, TopicPartition

FOO0 = TopicPartition("foo", 0)
CONTROLLER = ControllerLog(controller_id=0, epoch=1)
BROKER = BrokerLog(broker_id=1)


def at(text: str) -> datetime:
    """A log4j `%d` timestamp as a datetime."""
    return datetime.strptime(text, "%Y-%m-%d %H:%M:%S,%f")


def line(entry: StateChangeEntry, stamp: str) -> str:
    return entry.format(at(stamp)).rstrip("\n")


# --- the reference's example lines, literally --------------------------------------------------------


def test_controller_example_lines_2_8() -> None:
    # §4.3 "Example 2.8 lines"
    assert (
        line(CONTROLLER.new_partition(FOO0, "NonExistentPartition", [0, 1]), "2021-05-01 12:00:00,001")
        == "[2021-05-01 12:00:00,001] INFO [Controller id=0 epoch=1] Changed partition foo-0 state from "
        "NonExistentPartition to NewPartition with assigned replicas 0,1 (state.change.logger)"
    )
    assert (
        line(
            CONTROLLER.partition_online(FOO0, "NewPartition", LeaderAndIsr(0, 0, (0, 1), 0)),
            "2021-05-01 12:00:00,050",
        )
        == "[2021-05-01 12:00:00,050] INFO [Controller id=0 epoch=1] Changed partition foo-0 from NewPartition to "
        "OnlinePartition with state LeaderAndIsr(leader=0, leaderEpoch=0, isr=List(0, 1), zkVersion=0) "
        "(state.change.logger)"
    )
    assert (
        line(CONTROLLER.sending_leader_and_isr(0, 1, 0), "2021-05-01 12:00:00,060")
        == "[2021-05-01 12:00:00,060] INFO [Controller id=0 epoch=1] Sending LeaderAndIsr request to broker 0 with "
        "1 become-leader and 0 become-follower partitions (state.change.logger)"
    )


def test_broker_example_lines_2_x() -> None:
    # §4.4 example lines (the 1.0+ forms)
    state = LeaderAndIsrPartitionState.of(
        FOO0,
        LeaderIsrAndControllerEpoch(LeaderAndIsr(0, 0, (0, 1), 0), 1),
        ReplicaAssignment((0, 1)),
        is_new=True,
    )
    assert (
        line(BROKER.received_leader_and_isr(state, 5, 0, 1), "2019-12-01 10:00:00,130")
        == "[2019-12-01 10:00:00,130] TRACE [Broker id=1] Received LeaderAndIsr request "
        "LeaderAndIsrPartitionState(topicName='foo', partitionIndex=0, controllerEpoch=1, leader=0, leaderEpoch=0, "
        "isr=[0, 1], zkVersion=0, replicas=[0, 1], addingReplicas=[], removingReplicas=[], isNew=true) "
        "correlation id 5 from controller 0 epoch 1 (state.change.logger)"
    )
    assert (
        line(BROKER.starting_become_follower(5, 0, 1, FOO0, 0), "2019-12-01 10:00:00,140")
        == "[2019-12-01 10:00:00,140] TRACE [Broker id=1] Handling LeaderAndIsr request correlationId 5 from "
        "controller 0 epoch 1 starting the become-follower transition for partition foo-0 with leader 0 "
        "(state.change.logger)"
    )


def test_sending_become_leader_and_follower() -> None:
    # §4.3 the 2.4+ TRACE form
    state = LeaderAndIsrPartitionState("foo", 0, 1, 1, 0, (1, 2), 0, (1, 2), is_new=True)
    leader = CONTROLLER.sending_leader_and_isr_partition(1, state)
    assert leader.level is Level.TRACE
    assert leader.message == (
        "[Controller id=0 epoch=1] Sending become-leader LeaderAndIsr request "
        "LeaderAndIsrPartitionState(topicName='foo', partitionIndex=0, controllerEpoch=1, leader=1, leaderEpoch=0, "
        "isr=[1, 2], zkVersion=0, replicas=[1, 2], addingReplicas=[], removingReplicas=[], isNew=true) to broker 1 "
        "for partition foo-0"
    )
    follower = CONTROLLER.sending_leader_and_isr_partition(2, state)
    assert follower.message.startswith("[Controller id=0 epoch=1] Sending become-follower LeaderAndIsr request ")
    assert follower.message.endswith(" to broker 2 for partition foo-0")


def test_leader_and_isr_partition_state_carries_reassignment() -> None:
    state = LeaderAndIsrPartitionState.of(
        TopicPartition("bar", 3),
        LeaderIsrAndControllerEpoch(LeaderAndIsr(4, 7, (1, 4), 9), 2),
        ReplicaAssignment((4, 1, 2), adding_replicas=(4,), removing_replicas=(2,)),
        is_new=False,
    )
    assert str(state) == (
        "LeaderAndIsrPartitionState(topicName='bar', partitionIndex=3, controllerEpoch=2, leader=4, leaderEpoch=7, "
        "isr=[1, 4], zkVersion=9, replicas=[4, 1, 2], addingReplicas=[4], removingReplicas=[2], isNew=false)"
    )
    assert state.partition == TopicPartition("bar", 3)


def test_election_failure_with_its_exception() -> None:
    # §4.3: ERROR line, then the StateChangeFailedException on the next line
    entry = CONTROLLER.partition_state_change_failed(
        FOO0,
        "OfflinePartition",
        "OnlinePartition",
        ErrorTrace.state_change_failed(
            "Failed to elect leader for partition foo-0 under strategy OfflinePartitionLeaderElectionStrategy(false)"
        ),
    )
    assert entry.format(at("2021-05-01 12:00:01,000")) == (
        "[2021-05-01 12:00:01,000] ERROR [Controller id=0 epoch=1] Controller 0 epoch 1 failed to change state for "
        "partition foo-0 from OfflinePartition to OnlinePartition (state.change.logger)\n"
        "kafka.common.StateChangeFailedException: Failed to elect leader for partition foo-0 under strategy "
        "OfflinePartitionLeaderElectionStrategy(false)\n"
    )


def test_invalid_transitions_log_illegal_state() -> None:
    entry = CONTROLLER.replica_state_change_failed(
        1, FOO0, "OnlineReplica", "ReplicaDeletionStarted", ErrorTrace.illegal_state("Replica ... state")
    )
    assert entry.message == (
        "[Controller id=0 epoch=1] Controller 0 epoch 1 initiated state change of replica 1 for partition foo-0 "
        "from OnlineReplica to ReplicaDeletionStarted failed"
    )
    assert entry.error is not None
    assert entry.error.lines() == ["java.lang.IllegalStateException: Replica ... state"]


def test_keeper_error_and_python_traceback() -> None:
    assert ErrorTrace.keeper("NodeExists").lines() == [
        "org.apache.zookeeper.KeeperException$NodeExistsException: KeeperErrorCode = NodeExists"
    ]

    def fail() -> None:
        try:
            raise KeyError("inner")
        except KeyError as error:
            raise RuntimeError("outer") from error

    with pytest.raises(RuntimeError) as info:
        fail()
    lines = ErrorTrace.from_exception(info.value).lines()
    assert lines[0] == "builtins.RuntimeError: outer"
    assert lines[1].startswith("\tat test_state_change_log.") and "test_state_change_log.py:" in lines[1]
    caused = [i for i, text in enumerate(lines) if text.startswith("Caused by: ")]
    assert [lines[i] for i in caused] == ["Caused by: builtins.KeyError: 'inner'"]
    assert lines[caused[0] + 1].startswith("\tat ")


def test_partition_and_replica_state_texts() -> None:
    assert CONTROLLER.partition_state_changed(FOO0, "OnlinePartition", "OfflinePartition").message == (
        "[Controller id=0 epoch=1] Changed partition foo-0 state from OnlinePartition to OfflinePartition"
    )
    assert CONTROLLER.replica_state_changed(1, FOO0, "NewReplica", "OnlineReplica").message == (
        "[Controller id=0 epoch=1] Changed state of replica 1 for partition foo-0 from NewReplica to OnlineReplica"
    )
    removed = CONTROLLER.replica_removed_from_isr(FOO0, LeaderIsrAndControllerEpoch(LeaderAndIsr(2, 3, (2,), 4), 1), 1)
    assert removed.level is Level.INFO
    assert removed.message == (
        "[Controller id=0 epoch=1] Partition foo-0 state changed to (Leader:2,ISR:2,LeaderEpoch:3,ControllerEpoch:1) "
        "after removing replica 1 from the ISR as part of transition to OfflineReplica"
    )


def test_update_metadata_and_stop_replica_texts() -> None:
    assert CONTROLLER.sending_update_metadata([2, 1], 3).message == (
        "[Controller id=0 epoch=1] Sending UpdateMetadata request to brokers HashSet(1, 2) for 3 partitions"
    )
    assert CONTROLLER.sending_update_metadata([], 0).message.endswith("brokers HashSet() for 0 partitions")
    state = StopReplicaPartitionState(0, 5, True)
    assert CONTROLLER.sending_stop_replica_partition(2, FOO0, state).message == (
        "[Controller id=0 epoch=1] Sending StopReplica request StopReplicaPartitionState(partitionIndex=0, "
        "leaderEpoch=5, deletePartition=true) to broker 2 for partition foo-0"
    )
    assert CONTROLLER.sending_stop_replica(2, 4).message == (
        "[Controller id=0 epoch=1] Sending StopReplica request for 4 replicas to broker 2"
    )
    assert BROKER.received_stop_replica(state, FOO0, 7, 0, 1).message == (
        "[Broker id=1] Received StopReplica request StopReplicaPartitionState(partitionIndex=0, leaderEpoch=5, "
        "deletePartition=true) correlation id 7 from controller 0 epoch 1 for partition foo-0"
    )
    metadata = UpdateMetadataPartitionState("foo", 0, 1, 0, 0, (0, 1), 0, (0, 1, 2), offline_replicas=(2,))
    assert BROKER.cached_leader_info(metadata, 0, 1, 6).message == (
        "[Broker id=1] Cached leader info UpdateMetadataPartitionState(topicName='foo', partitionIndex=0, "
        "controllerEpoch=1, leader=0, leaderEpoch=0, isr=[0, 1], zkVersion=0, replicas=[0, 1, 2], "
        "offlineReplicas=[2]) for partition foo-0 in response to UpdateMetadata request sent by controller 0 "
        "epoch 1 with correlation id 6"
    )


def test_controller_logger_without_epoch() -> None:
    # KafkaController's own stateChangeLogger has no epoch in its prefix
    assert CONTROLLER.leader_and_isr_response_error("LeaderAndIsrResponseData(errorCode=11)", 2).message == (
        "[Controller id=0] Received error in LeaderAndIsr response LeaderAndIsrResponseData(errorCode=11) from broker 2"
    )
    assert CONTROLLER.mark_replicas_offline([FOO0, TopicPartition("foo", 1)], 2).message == (
        "[Controller id=0] Mark replicas foo-0,foo-1 on broker 2 as offline"
    )
    assert ControllerLog(3).prefix == "[Controller id=3] "


def test_received_response_and_node() -> None:
    entry = CONTROLLER.received_response(
        "UpdateMetadataResponseData(errorCode=0)", "UPDATE_METADATA", 4, node_string(1, "127.0.0.1", 9093)
    )
    assert entry.message == (
        "[Controller id=0 epoch=1] Received response UpdateMetadataResponseData(errorCode=0) for request "
        "UPDATE_METADATA with correlation id 4 sent to broker 127.0.0.1:9093 (id: 1 rack: null)"
    )


def test_reassignment_texts() -> None:
    state = LeaderIsrAndControllerEpoch(LeaderAndIsr(1, 4, (1, 2, 3), 5), 1)
    assignment = ReplicaAssignment((4, 5, 6, 1, 2, 3), (4, 5, 6), (1, 2, 3))
    assert CONTROLLER.reassignment_request_sent(FOO0, state, assignment).message == (
        "[Controller id=0 epoch=1] Sent LeaderAndIsr request (Leader:1,ISR:1,2,3,LeaderEpoch:4,ControllerEpoch:1) "
        "with new replica assignment ReplicaAssignment(replicas=4,5,6,1,2,3, addingReplicas=4,5,6, "
        "removingReplicas=1,2,3) to leader 1 for partition being reassigned foo-0"
    )
    failed = CONTROLLER.reassignment_request_failed(FOO0, assignment)
    assert failed.level is Level.ERROR
    assert failed.message.startswith("[Controller id=0 epoch=1] Failed to send LeaderAndIsr request with new replica")


def test_broker_leadership_texts() -> None:
    assert BROKER.handling_leader_and_isr(5, 0, 3).message == (
        "[Broker id=1] Handling LeaderAndIsr request correlationId 5 from controller 0 for 3 partitions"
    )
    assert BROKER.finished_leader_and_isr(12, 5, 0, 3).message == (
        "[Broker id=1] Finished LeaderAndIsr request in 12ms correlationId 5 from controller 0 for 3 partitions"
    )
    assert BROKER.leader_starts(FOO0, 1, 10, 8, [1, 2], [], [], 0).message == (
        "[Broker id=1] Leader foo-0 starts at leader epoch 1 from offset 10 with high watermark 8 ISR [1,2] "
        "addingReplicas [] removingReplicas []. Previous leader epoch was 0."
    )
    assert BROKER.follower_starts(FOO0, 2, 10, 8, 1).message == (
        "[Broker id=1] Follower foo-0 starts at leader epoch 2 from offset 10 with high watermark 8. "
        "Previous leader epoch was 1."
    )
    assert BROKER.ignoring_leader_and_isr_stale_controller(0, 5, 1, 2).message == (
        "[Broker id=1] Ignoring LeaderAndIsr request from controller 0 with correlation id 5 since its controller "
        "epoch 1 is old. Latest known controller epoch is 2"
    )
    assert BROKER.ignoring_leader_and_isr_stale_leader_epoch(0, 5, 1, FOO0, 2, 3).message == (
        "[Broker id=1] Ignoring LeaderAndIsr request from controller 0 with correlation id 5 epoch 1 for partition "
        "foo-0 since its associated leader epoch 2 is smaller than the current leader epoch 3"
    )
    assert BROKER.ignoring_leader_and_isr_not_a_replica(0, 5, 1, FOO0, [2, 3]).message.endswith(
        "for partition foo-0 as itself is not in assigned replica list 2,3"
    )
    assert BROKER.stopped_fetchers_become_follower(0, 1, 5, 2).message == (
        "[Broker id=1] Stopped fetchers as part of become-follower request from controller 0 epoch 1 with "
        "correlation id 5 for 2 partitions"
    )


def test_timestamp_truncates_to_milliseconds() -> None:
    entry = StateChangeEntry(Level.WARN, "[Broker id=1] x")
    assert entry.format(datetime(2024, 1, 2, 3, 4, 5, 999999)) == (
        "[2024-01-02 03:04:05,999] WARN [Broker id=1] x (state.change.logger)\n"
    )


# --- Scala collection printing (reference §0.2 rule 4) -------------------------------------------------


@pytest.mark.parametrize(
    ("ids", "text"),
    [
        (range(6), "HashSet(0, 5, 1, 2, 3, 4)"),
        (range(10), "HashSet(0, 5, 1, 6, 9, 2, 7, 3, 8, 4)"),
        (range(12), "HashSet(0, 5, 10, 1, 6, 9, 2, 7, 3, 11, 8, 4)"),
        (range(1001, 1006), "HashSet(1005, 1001, 1002, 1003, 1004)"),
        ([3], "Set(3)"),
        ([2, 1, 3], "Set(2, 1, 3)"),
        ([], "Set()"),
    ],
)
def test_scala_immutable_set(ids: range | list[int], text: str) -> None:
    assert scala_immutable_set(list(ids)) == text


def test_scala_mutable_hash_order() -> None:
    assert scala_mutable_hash_order([3, 1, 2]) == [1, 2, 3]
    # 16 buckets: 1001 & 15 = 9, 1008 & 15 = 0
    assert scala_mutable_hash_order([1001, 1008, 1002]) == [1008, 1001, 1002]
    # 12 entries grow the table to 32 buckets: 17 no longer shares bucket 1 with 1
    assert scala_mutable_hash_order([*range(11), 17]) == [*range(11), 17]
    assert scala_mutable_hash_set([1001]) == "HashSet(1001)"


# --- the rolling file ----------------------------------------------------------------------------------


class Clock:
    def __init__(self, text: str) -> None:
        self.now = datetime.strptime(text, "%Y-%m-%d %H:%M:%S").replace(tzinfo=UTC).timestamp()

    def __call__(self) -> float:
        return self.now


def info(text: str) -> StateChangeEntry:
    return StateChangeEntry(Level.INFO, f"[Broker id=1] {text}")


def test_file_rolls_every_hour(tmp_path: Path) -> None:
    clock = Clock("2020-05-01 12:59:59")
    with StateChangeLogFile(tmp_path, clock=clock, tz=UTC) as log:
        log.write(info("a"))
        clock.now += 0.5
        log.write(info("b"))
        clock.now += 0.5  # 13:00:00,000: the next write rolls the 12 o'clock lines away
        log.write(info("c"))
        clock.now += 3600 * 2  # a silent hour: no file for it
        log.write(info("d"))
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "state-change.log",
        "state-change.log.2020-05-01-12",
        "state-change.log.2020-05-01-13",
    ]
    assert (tmp_path / "state-change.log.2020-05-01-12").read_text() == (
        "[2020-05-01 12:59:59,000] INFO [Broker id=1] a (state.change.logger)\n"
        "[2020-05-01 12:59:59,500] INFO [Broker id=1] b (state.change.logger)\n"
    )
    assert (tmp_path / "state-change.log.2020-05-01-13").read_text() == (
        "[2020-05-01 13:00:00,000] INFO [Broker id=1] c (state.change.logger)\n"
    )
    assert (tmp_path / "state-change.log").read_text() == (
        "[2020-05-01 15:00:00,000] INFO [Broker id=1] d (state.change.logger)\n"
    )


def test_file_left_from_an_earlier_hour_is_rolled_on_restart(tmp_path: Path) -> None:
    old = tmp_path / "state-change.log"
    old.write_text("[2020-05-01 09:10:00,000] INFO [Broker id=1] old (state.change.logger)\n")
    stamp = datetime(2020, 5, 1, 9, 10, tzinfo=UTC).timestamp()
    os.utime(old, (stamp, stamp))
    with StateChangeLogFile(tmp_path, clock=Clock("2020-05-01 11:00:00"), tz=UTC) as log:
        log.write(info("new"))
    assert "old" in (tmp_path / "state-change.log.2020-05-01-09").read_text()
    assert "old" not in old.read_text() and "new" in old.read_text()


def test_same_hour_restart_appends(tmp_path: Path) -> None:
    clock = Clock("2020-05-01 12:00:00")
    with StateChangeLogFile(tmp_path, clock=clock, tz=UTC) as log:
        log.write(info("a"))
    stamp = clock.now
    os.utime(tmp_path / "state-change.log", (stamp, stamp))
    clock.now += 60
    with StateChangeLogFile(tmp_path, clock=clock, tz=UTC) as log:
        log.write(info("b"))
    assert [p.name for p in tmp_path.iterdir()] == ["state-change.log"]
    assert (tmp_path / "state-change.log").read_text().count("(state.change.logger)") == 2


def test_existing_rolled_file_is_not_clobbered(tmp_path: Path) -> None:
    (tmp_path / "state-change.log.2020-05-01-12").write_text("kept\n")
    clock = Clock("2020-05-01 12:30:00")
    with StateChangeLogFile(tmp_path, clock=clock, tz=UTC) as log:
        log.write(info("a"))
        clock.now += 3600
        log.write(info("b"))
    rolled = (tmp_path / "state-change.log.2020-05-01-12").read_text()
    assert rolled.startswith("kept\n") and "] INFO [Broker id=1] a " in rolled


def test_threshold_and_error_lines(tmp_path: Path) -> None:
    clock = Clock("2020-05-01 12:00:00")
    with StateChangeLogFile(tmp_path, clock=clock, tz=UTC) as log:
        assert not log.enabled(Level.TRACE) and log.enabled(Level.INFO)  # Kafka 2.8's log4j.properties
        log.write(StateChangeEntry(Level.TRACE, "[Broker id=1] dropped"))
        log.write(StateChangeEntry(Level.ERROR, "[Broker id=1] boom", ErrorTrace.illegal_state("why")))
    assert (tmp_path / "state-change.log").read_text() == (
        "[2020-05-01 12:00:00,000] ERROR [Broker id=1] boom (state.change.logger)\n"
        "java.lang.IllegalStateException: why\n"
    )
    with StateChangeLogFile(tmp_path, clock=clock, tz=UTC, threshold=Level.TRACE) as log:
        log.write(StateChangeEntry(Level.TRACE, "[Broker id=1] kept"))
    assert "TRACE [Broker id=1] kept" in (tmp_path / "state-change.log").read_text()


def test_concurrent_writers_across_a_roll(tmp_path: Path) -> None:
    lock = threading.Lock()
    ticks = iter(range(10**6))
    start = datetime(2020, 5, 1, 12, 59, 59, tzinfo=UTC).timestamp()

    def clock() -> float:
        with lock:  # 1 ms per reading: the writers cross 13:00 part-way through
            return start + next(ticks) / 1000

    with StateChangeLogFile(tmp_path, clock=clock, tz=UTC) as log:

        def writer(n: int) -> None:
            for i in range(250):
                log.write(info(f"w{n} {i}"))

        threads = [threading.Thread(target=writer, args=(n,)) for n in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    lines = [
        text
        for name in ("state-change.log.2020-05-01-12", "state-change.log")
        for text in (tmp_path / name).read_text().splitlines()
    ]
    assert len(lines) == 2000
    assert all(text.endswith(" (state.change.logger)") for text in lines)
    assert lines == sorted(lines)  # each file in time order, the rolled hour first
    assert (tmp_path / "state-change.log.2020-05-01-12").read_text().count("\n") == 1000


# --- the statechange parser reads these lines ------------------------------------------------------------


def test_lines_parse_with_the_statechange_parser() -> None:
    # The parser is another room's work in progress: use its line-level functions, skip if they moved.
    parse = pytest.importorskip("kafkaops.statechange.parse")
    if not all(hasattr(parse, name) for name in ("parse_first_line", "parse_actor", "partitions_in")):
        pytest.skip("statechange.parse has no line-level parse functions")
    state = LeaderAndIsrPartitionState("foo", 0, 1, 0, 0, (0, 1), 0, (0, 1), is_new=True)
    failure = ErrorTrace.state_change_failed("Failed to elect leader for partition baz-7 under strategy x")
    cases = [
        (
            CONTROLLER.new_partition(TopicPartition("bar", 2), "NonExistentPartition", [0, 1]),
            "controller",
            0,
            1,
            "bar-2",
        ),
        (CONTROLLER.sending_leader_and_isr_partition(0, state), "controller", 0, 1, "foo-0"),
        (
            CONTROLLER.partition_state_change_failed(TopicPartition("baz", 7), "A", "B", failure),
            "controller",
            0,
            1,
            "baz-7",
        ),
        (CONTROLLER.mark_replicas_offline([TopicPartition("qux", 3)], 2), "controller", 0, None, "qux-3"),
        (BROKER.received_leader_and_isr(state, 5, 0, 1), "broker", 1, 1, "foo-0"),
        (BROKER.starting_become_follower(5, 0, 3, FOO0, 0), "broker", 1, 3, "foo-0"),
        (BROKER.leader_starts(TopicPartition("a.b_c-d", 11), 1, 0, 0, [1], [], [], 0), "broker", 1, None, "a.b_c-d-11"),
    ]
    for entry, actor, actor_id, epoch, partition in cases:
        first, *rest = entry.format(at("2021-05-01 12:00:00,001")).splitlines()
        timestamp, level, message = parse.parse_first_line(first)
        assert (timestamp, level) == ("2021-05-01 12:00:00,001", entry.level.name)
        assert message == entry.message
        assert parse.parse_actor(message) == (actor, actor_id, epoch)
        assert str(parse.partitions_in(message)[0]) == partition
        assert rest == (entry.error.lines() if entry.error else [])
