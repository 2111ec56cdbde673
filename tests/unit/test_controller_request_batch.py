"""`ControllerBrokerRequestBatch.send_requests_to_brokers`: what reaches the send threads, and when."""

from __future__ import annotations

from kafkaops.cluster.controller.channel import ControllerBrokerRequestBatch
from kafkaops.cluster.protocol.messages import RequestHeader, encode_request
from kafkaops.cluster.protocol.schemas import ApiKey
from kafkaops.cluster.state_change_log import ControllerLog
from kafkaops.cluster.zk.values import LeaderAndIsr, LeaderIsrAndControllerEpoch, ReplicaAssignment, TopicPartition
from tests.unit.controller_fakes import RecordingRequestChannel, RecordingSink, broker

A, B = TopicPartition("a", 0), TopicPartition("b", 1)


def send(
    batch: ControllerBrokerRequestBatch, state: LeaderIsrAndControllerEpoch
) -> tuple[RecordingSink, RecordingRequestChannel]:
    """The batch sent to brokers 1 and 2 (epochs 10 and 20), every partition led as `state` says."""
    sink = RecordingSink()
    channel = RecordingRequestChannel(sink)
    batch.send_requests_to_brokers(
        9,
        channel,  # type: ignore[arg-type]
        {1: broker(1), 2: broker(2)},
        {1: 10, 2: 20},
        lambda tp: state,
        lambda tp: (1, 2),
        lambda tp: False,
        ControllerLog(5, 9),
        sink,
    )
    return sink, channel


def test_requests_are_queued_once_all_are_built_each_broker_in_kafkas_order() -> None:
    """Encoding holds the GIL: the event thread encodes each request once all are built, LeaderAndIsr
    first, and a send thread only writes it. Each broker gets LeaderAndIsr, then UpdateMetadata, then
    StopReplica; the bytes are those the send thread would have encoded."""
    state = LeaderIsrAndControllerEpoch(LeaderAndIsr(1, 3, (1, 2), 4), 9)
    batch = ControllerBrokerRequestBatch(5)
    for tp in (A, B):
        batch.add_leader_and_isr([1, 2], tp, state, ReplicaAssignment((1, 2)))
    batch.add_update_metadata([1, 2], [A, B])
    batch.add_stop_replica([2], A, delete=False)
    sink, channel = send(batch, state)
    written = len(sink.entries)
    assert all(q.entries_written == written for q in channel.queued)  # nothing queued before the last was built
    assert [q.api_key for q in channel.queued][:2] == [ApiKey.LEADER_AND_ISR, ApiKey.LEADER_AND_ISR]
    # what the send thread writes, against encoding the body there as it used to
    for q in channel.queued:
        header = RequestHeader(q.api_key, q.version, 7, "controller-5")
        assert encode_request(header, q.body, q.encoded) == encode_request(header, q.body)
    by_broker = {b: [q.api_key for q in channel.queued if q.broker_id == b] for b in (1, 2)}
    assert by_broker == {
        1: [ApiKey.LEADER_AND_ISR, ApiKey.UPDATE_METADATA],
        2: [ApiKey.LEADER_AND_ISR, ApiKey.UPDATE_METADATA, ApiKey.STOP_REPLICA],
    }
    assert batch.is_empty()


def test_a_partitions_state_is_built_and_encoded_once_for_the_brokers_that_get_the_same_entry() -> None:
    """One entry added for a partition's replicas is one wire state (a SharedStruct, encoded once) in every
    broker's LeaderAndIsr; entries of two steps for different brokers (a later epoch for broker 2 only)
    stay apart. The bytes are those of plain dicts."""
    first = LeaderIsrAndControllerEpoch(LeaderAndIsr(1, 3, (1, 2), 4), 9)
    later = LeaderIsrAndControllerEpoch(LeaderAndIsr(2, 4, (2,), 5), 9)
    batch = ControllerBrokerRequestBatch(5)
    batch.add_leader_and_isr([1, 2], A, first, ReplicaAssignment((1, 2)))
    batch.add_leader_and_isr([1, 2], B, first, ReplicaAssignment((1, 2)))
    batch.add_leader_and_isr([2], B, later, ReplicaAssignment((1, 2)))
    _, channel = send(batch, first)
    requests = {q.broker_id: q for q in channel.queued if q.api_key == ApiKey.LEADER_AND_ISR}
    states = {
        b: {(t["topic_name"], s["partition_index"]): s for t in q.body["topic_states"] for s in t["partition_states"]}
        for b, q in requests.items()
    }
    assert states[1][("a", 0)] is states[2][("a", 0)]
    assert states[1][("b", 1)]["leader_epoch"] == 3 and states[2][("b", 1)]["leader_epoch"] == 4
    for q in requests.values():
        plain = {
            **q.body,
            "topic_states": [
                {**t, "partition_states": [dict(s) for s in t["partition_states"]]} for t in q.body["topic_states"]
            ],
        }
        header = RequestHeader(q.api_key, q.version, 7, "controller-5")
        assert encode_request(header, q.body, q.encoded) == encode_request(header, plain)
