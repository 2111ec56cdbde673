"""Which part of a request is served and how the rest is refused (request_authorization.py), as Kafka
2.8's KafkaApis splits CreateTopics, DeleteTopics, configs and the offsets APIs."""

from __future__ import annotations

from kafkaops.cluster.broker import request_authorization as ra
from kafkaops.cluster.common.acl import AclOperation, ResourceType

Op, Resource = AclOperation, ResourceType


def only(*grants: tuple[AclOperation, ResourceType, str]) -> ra.Allowed:
    return lambda op, rtype, name: (op, rtype, name) in grants


def test_create_topics_with_create_on_the_cluster_serves_all() -> None:
    body = {"topics": [{"name": "a"}, {"name": "b"}], "timeout_ms": 1}
    split = ra.split_create_topics(body, only((Op.CREATE, Resource.CLUSTER, "kafka-cluster")))
    assert split.body == body and split.denied == []


def test_create_topics_per_topic() -> None:
    body = {"topics": [{"name": "a"}, {"name": "b"}], "timeout_ms": 1}
    split = ra.split_create_topics(body, only((Op.CREATE, Resource.TOPIC, "a")))
    assert split.body == {"topics": [{"name": "a"}], "timeout_ms": 1}
    assert [(d["name"], d["error_code"]) for d in split.denied] == [("b", 29)]
    nothing = ra.split_create_topics(body, only())
    assert nothing.body is None
    assert [t["name"] for t in nothing.merge(dict(nothing.empty))["topics"]] == ["a", "b"]


def test_created_topic_configs_hidden_without_describe_configs() -> None:
    response = {
        "topics": [
            {
                "name": "a",
                "topic_config_error_code": 0,
                "configs": [{"name": "x"}],
                "num_partitions": 3,
                "replication_factor": 2,
            }
        ]
    }
    body = {"topics": [{"name": "a"}]}
    hidden = ra.hide_configs(response, body, only())["topics"][0]
    assert hidden == {
        "name": "a",
        "topic_config_error_code": 29,
        "configs": [],
        "num_partitions": -1,
        "replication_factor": -1,
    }
    shown = ra.hide_configs(
        {"topics": [{"name": "a", "configs": [1]}]}, body, only((Op.DESCRIBE_CONFIGS, Resource.TOPIC, "a"))
    )
    assert shown["topics"][0]["configs"] == [1]


def test_delete_topics_by_name_and_by_id() -> None:
    body = {
        "topic_names": [],
        "topics": [{"name": "a"}, {"name": "b"}, {"name": None, "topic_id": "id"}],
        "timeout_ms": 1,
    }
    split = ra.split_delete_topics(body, only((Op.DELETE, Resource.TOPIC, "a")))
    assert split.body is not None and split.body["topics"] == [{"name": "a"}, {"name": None, "topic_id": "id"}]
    assert [(d["name"], d["error_code"]) for d in split.denied] == [("b", 29)]


def test_create_partitions_needs_alter() -> None:
    split = ra.split_create_partitions({"topics": [{"name": "a"}]}, only((Op.DESCRIBE, Resource.TOPIC, "a")))
    assert split.body is None
    assert split.denied == [{"name": "a", "error_code": 29, "error_message": "The topic authorization is failed."}]


def test_config_resources() -> None:
    body = {"resources": [{"resource_type": 2, "resource_name": "a"}, {"resource_type": 4, "resource_name": "0"}]}
    split = ra.split_config_resources(
        body, only((Op.DESCRIBE_CONFIGS, Resource.TOPIC, "a")), Op.DESCRIBE_CONFIGS, "results"
    )
    assert split.body == {"resources": [{"resource_type": 2, "resource_name": "a"}]}
    assert split.denied == [
        {
            "error_code": 31,
            "error_message": "Cluster authorization failed.",
            "resource_type": 4,
            "resource_name": "0",
            "configs": [],
        }
    ]
    alter = ra.split_config_resources(
        body, only((Op.ALTER_CONFIGS, Resource.CLUSTER, "kafka-cluster")), Op.ALTER_CONFIGS, "responses"
    )
    assert alter.denied == [
        {"error_code": 29, "error_message": "Topic authorization failed.", "resource_type": 2, "resource_name": "a"}
    ]


def test_find_coordinator_needs_describe_on_the_group() -> None:
    refused = ra.find_coordinator_refusal({"key": "g", "key_type": 0}, only())
    assert refused is not None and (refused["error_code"], refused["error_message"]) == (
        30,
        "Group authorization failed.",
    )
    assert ra.find_coordinator_refusal({"key": "g", "key_type": 0}, only((Op.DESCRIBE, Resource.GROUP, "g"))) is None
    assert ra.find_coordinator_refusal({"key": "tx", "key_type": 1}, only())["error_code"] == 53  # type: ignore[index]


COMMIT = {
    "group_id": "g",
    "topics": [
        {"name": "a", "partitions": [{"partition_index": 0}]},
        {"name": "b", "partitions": [{"partition_index": 1}]},
    ],
}


def test_offset_commit_needs_read_on_group_then_topics() -> None:
    group_refused = ra.split_offset_commit(COMMIT, only())
    assert group_refused.body is None
    assert [p["error_code"] for t in group_refused.denied for p in t["partitions"]] == [30, 30]
    split = ra.split_offset_commit(COMMIT, only((Op.READ, Resource.GROUP, "g"), (Op.READ, Resource.TOPIC, "a")))
    assert split.body is not None and [t["name"] for t in split.body["topics"]] == ["a"]
    assert split.denied == [{"name": "b", "partitions": [{"partition_index": 1, "error_code": 29}]}]


def test_offset_delete_needs_delete_on_group() -> None:
    refused = ra.split_offset_delete(COMMIT, only((Op.READ, Resource.GROUP, "g")))
    assert refused.body is None and refused.merge(dict(refused.empty))["error_code"] == 30


def test_offset_fetch() -> None:
    body = {
        "group_id": "g",
        "topics": [{"name": "a", "partition_indexes": [0]}, {"name": "b", "partition_indexes": [0, 1]}],
    }
    refused_v1 = ra.split_offset_fetch(body, only(), 1)
    assert refused_v1.body is None and refused_v1.empty["error_code"] == 30
    assert [p["error_code"] for t in refused_v1.denied for p in t["partitions"]] == [30, 30, 30]
    assert ra.split_offset_fetch(body, only(), 2).denied == []
    allowed = only((Op.DESCRIBE, Resource.GROUP, "g"), (Op.DESCRIBE, Resource.TOPIC, "a"))
    split = ra.split_offset_fetch(body, allowed, 5)
    assert split.body is not None and split.body["topics"] == [{"name": "a", "partition_indexes": [0]}]
    assert [(p["partition_index"], p["committed_offset"], p["error_code"]) for p in split.denied[0]["partitions"]] == [
        (0, -1, 29),
        (1, -1, 29),
    ]
    every = {"group_id": "g", "topics": None}
    assert ra.split_offset_fetch(every, allowed, 5).body == every
    filtered = ra.filter_offset_fetch({"topics": [{"name": "a"}, {"name": "b"}]}, every, allowed)
    assert filtered["topics"] == [{"name": "a"}]


def test_group_membership_needs_read_on_the_group() -> None:
    body = {"group_id": "g", "member_id": "m"}
    assert ra.group_membership_refusal("join", body, only((Op.READ, Resource.GROUP, "g"))) is None
    refused = ra.group_membership_refusal("join", body, only((Op.DESCRIBE, Resource.GROUP, "g")))
    assert refused is not None
    assert (refused["error_code"], refused["member_id"], refused["generation_id"]) == (30, "", -1)
    assert ra.group_membership_refusal("heartbeat", body, only()) == {"throttle_time_ms": 0, "error_code": 30}


def test_describe_delete_and_list_groups() -> None:
    allowed = only((Op.DESCRIBE, Resource.GROUP, "a"), (Op.DELETE, Resource.GROUP, "b"))
    described = ra.split_describe_groups({"groups": ["a", "b"]}, allowed)
    assert described.body == {"groups": ["a"]} and [(g["group_id"], g["error_code"]) for g in described.denied] == [
        ("b", 30)
    ]
    deleted = ra.split_delete_groups({"groups_names": ["a", "b"]}, allowed)
    assert deleted.body == {"groups_names": ["b"]} and deleted.denied == [{"group_id": "a", "error_code": 30}]
    listed = ra.filter_list_groups({"groups": [{"group_id": "a"}, {"group_id": "b"}]}, allowed)
    assert listed["groups"] == [{"group_id": "a"}]
    everything = only((Op.DESCRIBE, Resource.CLUSTER, "kafka-cluster"))
    assert len(ra.filter_list_groups({"groups": [{"group_id": "a"}, {"group_id": "b"}]}, everything)["groups"]) == 2
