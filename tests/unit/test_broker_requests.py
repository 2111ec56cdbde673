"""The wire-to-typed border of the broker's requests: every version's shape gives the same typed value,
and duplicates and order survive (responses are built from them in the request's order)."""

from __future__ import annotations

from typing import Any

from kafkaops.cluster.broker.metadata_cache import CachedBroker
from kafkaops.cluster.broker.requests import (
    FetchPartition,
    FetchRequest,
    MetadataRequest,
    ProduceRequest,
    StopReplicaRequest,
    UpdateMetadataRequest,
)
from kafkaops.cluster.protocol.messages import RequestHeader, decode_request, encode_request
from kafkaops.cluster.protocol.schemas import ApiKey, partition_state_fields, stop_replica_partition_fields
from kafkaops.cluster.state_change_log import UpdateMetadataPartitionState
from kafkaops.cluster.zk.values import EndPoint, TopicPartition


def _decoded(key: ApiKey, version: int, body: dict[str, Any]) -> dict[str, Any]:
    return decode_request(encode_request(RequestHeader(key, version, 1, "test"), body)).body


def test_stop_replica_lists_its_partitions_in_order_at_either_version():
    partitions = [("b", 1), ("a", 0), ("b", 0)]
    body = {
        "controller_id": 1,
        "controller_epoch": 2,
        "delete_partitions": True,
        **stop_replica_partition_fields(partitions),
    }
    v0 = StopReplicaRequest.from_wire(_decoded(ApiKey.STOP_REPLICA, 0, body))
    v1 = StopReplicaRequest.from_wire(_decoded(ApiKey.STOP_REPLICA, 1, {**body, "broker_epoch": 5}))
    assert v0.partitions == (TopicPartition("b", 1), TopicPartition("a", 0), TopicPartition("b", 0))
    assert v1.partitions == (TopicPartition("b", 1), TopicPartition("b", 0), TopicPartition("a", 0))  # grouped
    assert (v0.broker_epoch, v1.broker_epoch, v1.delete_partitions) == (-1, 5, True)


def test_update_metadata_takes_v0_host_and_port_and_later_endpoints():
    state = {
        "topic_name": "t",
        "partition_index": 3,
        "controller_epoch": 1,
        "leader": 0,
        "leader_epoch": 4,
        "isr": [0, 1],
        "zk_version": 2,
        "replicas": [0, 1],
        "offline_replicas": [1],
    }
    common = {"controller_id": 1, "controller_epoch": 1, **partition_state_fields([state])}
    v0 = UpdateMetadataRequest.from_wire(
        _decoded(ApiKey.UPDATE_METADATA, 0, {**common, "live_brokers": [{"id": 0, "v0_host": "h", "v0_port": 1}]})
    )
    v5 = UpdateMetadataRequest.from_wire(
        _decoded(
            ApiKey.UPDATE_METADATA,
            5,
            {
                **common,
                "broker_epoch": 7,
                "live_brokers": [{"id": 0, "endpoints": [{"port": 1, "host": "h", "listener": "P"}], "rack": "r"}],
            },
        )
    )
    assert v0.live_brokers == (CachedBroker(0, "h", 1, None, (EndPoint("PLAINTEXT", "h", 1),)),)
    assert v5.live_brokers == (CachedBroker(0, "h", 1, "r", (EndPoint("P", "h", 1),)),)
    assert v0.partition_states == (UpdateMetadataPartitionState("t", 3, 1, 0, 4, (0, 1), 2, (0, 1), ()),)
    assert v5.partition_states == (UpdateMetadataPartitionState("t", 3, 1, 0, 4, (0, 1), 2, (0, 1), (1,)),)


def test_fetch_and_produce_keep_every_partition_as_named():
    fetch = FetchRequest.from_wire(
        _decoded(
            ApiKey.FETCH,
            11,
            {
                "replica_id": 2,
                "max_wait_ms": 500,
                "min_bytes": 1,
                "topics": [
                    {
                        "topic": "t",
                        "partitions": [
                            {"partition": 1, "current_leader_epoch": 3, "fetch_offset": 10, "partition_max_bytes": 99}
                        ]
                        * 2,
                    }
                ],
                "forgotten_topics_data": [{"topic": "u", "partitions": [0, 4]}],
            },
        )
    )
    assert fetch.is_from_follower and fetch.session_epoch == -1
    assert fetch.partitions == (FetchPartition(TopicPartition("t", 1), 10, 3, -1, 99),) * 2
    assert fetch.forgotten == (TopicPartition("u", 0), TopicPartition("u", 4))
    produce = ProduceRequest.from_wire(
        _decoded(
            ApiKey.PRODUCE,
            3,
            {
                "acks": -1,
                "timeout_ms": 5,
                "topic_data": [
                    {"name": "t", "partition_data": [{"index": 0, "records": b"x"}, {"index": 0, "records": None}]}
                ],
            },
        ),
        3,
    )
    assert [(p.tp, p.records) for p in produce.partitions] == [
        (TopicPartition("t", 0), b"x"),
        (TopicPartition("t", 0), None),
    ]
    assert (produce.version, produce.transactional_id) == (3, None)


def test_metadata_v0_asks_for_every_topic_with_an_empty_list():
    assert MetadataRequest.from_wire(_decoded(ApiKey.METADATA, 0, {"topics": []}), 0).topics is None
    assert MetadataRequest.from_wire(_decoded(ApiKey.METADATA, 1, {"topics": []}), 1).topics == ()
    assert MetadataRequest.from_wire(_decoded(ApiKey.METADATA, 8, {"topics": None}), 8).topics is None
