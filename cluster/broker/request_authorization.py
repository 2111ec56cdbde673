"""Which part of a request the principal may have served, as Kafka 2.8's KafkaApis decides per handler
(`filterByAuthorized` then a response merging the refusals): pure functions over the decoded request and an
`Allowed` question (`AuthHelper.authorize` bound to the request's context). Each `split_*` returns the
request to hand to the handler (None: nothing left to do), the response to use when there is none, and the
response entries of what was refused, which `Split.merge` adds to the handler's answer.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from kafkaops.cluster.common import errors
from kafkaops.cluster.common.acl import AclOperation, ResourceType
from kafkaops.cluster.protocol.types import ZERO_UUID

Body = Mapping[str, Any]
Response = dict[str, Any]
Allowed = Callable[[AclOperation, ResourceType, str], bool]
"""May the request's principal do this operation on this (literal) resource?"""

TOPIC_AUTHORIZATION_FAILED = errors.TopicAuthorizationFailedError.code
GROUP_AUTHORIZATION_FAILED = errors.GroupAuthorizationFailedError.code
CLUSTER_AUTHORIZATION_FAILED = errors.ClusterAuthorizationFailedError.code
RESOURCE_TOPIC, RESOURCE_BROKER, RESOURCE_BROKER_LOGGER = 2, 4, 8
"""ConfigResource types (DescribeConfigs, AlterConfigs, IncrementalAlterConfigs)."""
Op, Resource = AclOperation, ResourceType


@dataclass
class Split:
    body: Body | None
    """What the handler is to serve; None when nothing is left (then `empty` is the answer)."""
    key: str
    """The response's list the refusals go into."""
    denied: list[dict[str, Any]] = field(default_factory=list)
    empty: Response = field(default_factory=dict)

    def merge(self, response: Response) -> Response:
        response.setdefault(self.key, []).extend(self.denied)
        return response


def _topics(allowed: Allowed, operation: AclOperation, names: list[str]) -> set[str]:
    return {name for name in set(names) if allowed(operation, Resource.TOPIC, name)}


# --- topics (the Admin API) ----------------------------------------------------------------------------


def split_create_topics(body: Body, allowed: Allowed) -> Split:
    """Create on the cluster, else on each topic (TOPIC_AUTHORIZATION_FAILED, the code alone)."""
    names = [t["name"] for t in body["topics"]]
    if allowed(Op.CREATE, Resource.CLUSTER, "kafka-cluster"):
        return Split(body, "topics")
    authorized = _topics(allowed, Op.CREATE, names)
    denied = [
        {
            "name": name,
            "error_code": TOPIC_AUTHORIZATION_FAILED,
            "error_message": None,
            "topic_id": ZERO_UUID,
            "topic_config_error_code": TOPIC_AUTHORIZATION_FAILED,
            "num_partitions": -1,
            "replication_factor": -1,
            "configs": [],
        }
        for name in names
        if name not in authorized
    ]
    kept = [t for t in body["topics"] if t["name"] in authorized]
    return Split({**body, "topics": kept} if kept else None, "topics", denied, {"throttle_time_ms": 0, "topics": []})


def hide_configs(response: Response, body: Body, allowed: Allowed) -> Response:
    """CreateTopics v5+: a topic the principal may not DescribeConfigs gets TOPIC_AUTHORIZATION_FAILED as its
    `topic_config_error_code`, and no configs, partition count or replication factor."""
    described = _topics(allowed, Op.DESCRIBE_CONFIGS, [t["name"] for t in body["topics"]])
    for entry in response["topics"]:
        if entry["name"] not in described:
            entry.update(
                topic_config_error_code=TOPIC_AUTHORIZATION_FAILED, configs=[], num_partitions=-1, replication_factor=-1
            )
    return response


def split_delete_topics(body: Body, allowed: Allowed) -> Split:
    """Delete on each topic named (v6 also names topics by id: those are left to the handler)."""
    by_name = list(body.get("topic_names") or [])
    states = list(body.get("topics") or [])
    named = by_name + [t["name"] for t in states if t.get("name")]
    authorized = _topics(allowed, Op.DELETE, named)
    denied = [
        {"name": n, "topic_id": ZERO_UUID, "error_code": TOPIC_AUTHORIZATION_FAILED, "error_message": None}
        for n in dict.fromkeys(named)
        if n not in authorized
    ]
    if not denied:
        return Split(body, "responses")
    kept_names = [n for n in by_name if n in authorized]
    kept_states = [t for t in states if not t.get("name") or t["name"] in authorized]
    kept = {**body, "topic_names": kept_names, "topics": kept_states} if kept_names or kept_states else None
    return Split(kept, "responses", denied, {"throttle_time_ms": 0, "responses": []})


def split_create_partitions(body: Body, allowed: Allowed) -> Split:
    """Alter on each topic."""
    authorized = _topics(allowed, Op.ALTER, [t["name"] for t in body["topics"]])
    denied = [
        {"name": n, "error_code": TOPIC_AUTHORIZATION_FAILED, "error_message": "The topic authorization is failed."}
        for n in dict.fromkeys(t["name"] for t in body["topics"])
        if n not in authorized
    ]
    kept = [t for t in body["topics"] if t["name"] in authorized]
    return Split({**body, "topics": kept} if kept else None, "results", denied, {"throttle_time_ms": 0, "results": []})


# --- configs ---------------------------------------------------------------------------------------------


def split_config_resources(body: Body, allowed: Allowed, operation: AclOperation, key: str) -> Split:
    """DescribeConfigs / AlterConfigs / IncrementalAlterConfigs: a broker (or broker logger) needs the
    operation on the cluster, a topic on the topic (Kafka's `configsAuthorizationApiError` for the others);
    other resource types are left to the handler to refuse."""
    kept, denied = [], []
    for resource in body["resources"]:
        rtype, name = resource["resource_type"], resource["resource_name"]
        if rtype == RESOURCE_TOPIC:
            ok, code, text = allowed(operation, Resource.TOPIC, name), TOPIC_AUTHORIZATION_FAILED, "Topic"
        elif rtype in (RESOURCE_BROKER, RESOURCE_BROKER_LOGGER):
            ok = allowed(operation, Resource.CLUSTER, "kafka-cluster")
            code, text = CLUSTER_AUTHORIZATION_FAILED, "Cluster"
        else:
            ok, code, text = True, 0, ""
        if ok:
            kept.append(resource)
            continue
        entry = {"error_code": code, "error_message": f"{text} authorization failed.", "resource_type": rtype}
        denied.append({**entry, "resource_name": name, **({"configs": []} if key == "results" else {})})
    return Split({**body, "resources": kept}, key, denied)


# --- groups and offsets ----------------------------------------------------------------------------------


def find_coordinator_refusal(body: Body, allowed: Allowed) -> Response | None:
    """Describe on the group (key type 0) or the transactional id (1); None when allowed."""
    key, key_type = body.get("key", ""), body.get("key_type", 0)
    if key_type == 0 and not allowed(Op.DESCRIBE, Resource.GROUP, key):
        code, message = GROUP_AUTHORIZATION_FAILED, "Group authorization failed."
    elif key_type == 1 and not allowed(Op.DESCRIBE, Resource.TRANSACTIONAL_ID, key):
        code, message = errors.TransactionalIdAuthorizationFailedError.code, "Transactional Id authorization failed."
    else:
        return None
    return {"throttle_time_ms": 0, "error_code": code, "error_message": message, "node_id": -1, "host": "", "port": -1}


def _partition_errors(topics: list[Body], code: int, field_name: str = "partitions") -> list[dict[str, Any]]:
    return [
        {
            "name": t["name"],
            "partitions": [{"partition_index": p["partition_index"], "error_code": code} for p in t[field_name]],
        }
        for t in topics
    ]


def split_offset_commit(body: Body, allowed: Allowed) -> Split:
    """Read on the group (GROUP_AUTHORIZATION_FAILED for every partition), then Read on each topic."""
    topics = list(body["topics"])
    if not allowed(Op.READ, Resource.GROUP, body["group_id"]):
        return Split(None, "topics", _partition_errors(topics, GROUP_AUTHORIZATION_FAILED), {"throttle_time_ms": 0})
    authorized = _topics(allowed, Op.READ, [t["name"] for t in topics])
    denied = _partition_errors([t for t in topics if t["name"] not in authorized], TOPIC_AUTHORIZATION_FAILED)
    kept = [t for t in topics if t["name"] in authorized]
    return Split({**body, "topics": kept} if kept or not denied else None, "topics", denied, {"throttle_time_ms": 0})


def split_offset_delete(body: Body, allowed: Allowed) -> Split:
    """Delete on the group (the whole request GROUP_AUTHORIZATION_FAILED), then Read on each topic."""
    topics = list(body["topics"])
    if not allowed(Op.DELETE, Resource.GROUP, body["group_id"]):
        refused = {"throttle_time_ms": 0, "error_code": GROUP_AUTHORIZATION_FAILED, "topics": []}
        return Split(None, "topics", [], refused)
    authorized = _topics(allowed, Op.READ, [t["name"] for t in topics])
    denied = _partition_errors([t for t in topics if t["name"] not in authorized], TOPIC_AUTHORIZATION_FAILED)
    kept = [t for t in topics if t["name"] in authorized]
    empty = {"throttle_time_ms": 0, "error_code": 0, "topics": []}
    return Split({**body, "topics": kept} if kept or not denied else None, "topics", denied, empty)


UNAUTHORIZED_PARTITION = {
    "committed_offset": -1,
    "committed_leader_epoch": -1,
    "metadata": "",
    "error_code": TOPIC_AUTHORIZATION_FAILED,
}
"""`OffsetFetchResponse.UNAUTHORIZED_PARTITION`."""


def split_offset_fetch(body: Body, allowed: Allowed, version: int) -> Split:
    """Describe on the group (below v2 the error goes to every partition asked for), then Describe on each
    topic: a partition of another topic is UNAUTHORIZED_PARTITION (all partitions asked: left out, see
    `filter_offset_fetch`)."""
    topics = body["topics"]
    if not allowed(Op.DESCRIBE, Resource.GROUP, body["group_id"]):
        asked = [] if version >= 2 or topics is None else topics
        per_partition = [
            {
                "name": t["name"],
                "partitions": [
                    {**UNAUTHORIZED_PARTITION, "partition_index": i, "error_code": GROUP_AUTHORIZATION_FAILED}
                    for i in t["partition_indexes"]
                ],
            }
            for t in asked
        ]
        return Split(None, "topics", per_partition, {"throttle_time_ms": 0, "error_code": GROUP_AUTHORIZATION_FAILED})
    if topics is None:
        return Split(body, "topics")
    authorized = _topics(allowed, Op.DESCRIBE, [t["name"] for t in topics])
    denied = [
        {
            "name": t["name"],
            "partitions": [{**UNAUTHORIZED_PARTITION, "partition_index": i} for i in t["partition_indexes"]],
        }
        for t in topics
        if t["name"] not in authorized
    ]
    return Split({**body, "topics": [t for t in topics if t["name"] in authorized]}, "topics", denied)


def filter_offset_fetch(response: Response, body: Body, allowed: Allowed) -> Response:
    """All partitions asked (a null topic list): the offsets of topics the principal may not Describe are
    left out."""
    if body["topics"] is None:
        response["topics"] = [t for t in response["topics"] if allowed(Op.DESCRIBE, Resource.TOPIC, t["name"])]
    return response


# --- group membership (the group coordinator's APIs) -----------------------------------------------------

_GROUP_REFUSALS: dict[str, dict[str, Any]] = {
    "join": {
        "generation_id": -1,
        "protocol_type": None,
        "protocol_name": None,
        "leader": "",
        "member_id": "",
        "members": [],
    },
    "sync": {"protocol_type": None, "protocol_name": None, "assignment": b""},
    "heartbeat": {},
    "leave": {"members": []},
}


def group_membership_refusal(api: str, body: Body, allowed: Allowed) -> Response | None:
    """JoinGroup, SyncGroup, Heartbeat and LeaveGroup (`api`: join, sync, heartbeat, leave) need Read on the
    group: the whole request GROUP_AUTHORIZATION_FAILED otherwise (JoinGroup with an unknown member id and
    generation, as Kafka's `JoinGroupResult(UNKNOWN_MEMBER_ID, GROUP_AUTHORIZATION_FAILED)`). None: allowed."""
    if allowed(Op.READ, Resource.GROUP, body["group_id"]):
        return None
    return {"throttle_time_ms": 0, "error_code": GROUP_AUTHORIZATION_FAILED, **_GROUP_REFUSALS[api]}


def split_describe_groups(body: Body, allowed: Allowed) -> Split:
    """Describe on each group (`DescribeGroupsResponse.forError` for the others)."""
    groups = list(body["groups"])
    kept = [g for g in groups if allowed(Op.DESCRIBE, Resource.GROUP, g)]
    denied = [
        {
            "error_code": GROUP_AUTHORIZATION_FAILED,
            "group_id": g,
            "group_state": "",
            "protocol_type": "",
            "protocol_data": "",
            "members": [],
            "authorized_operations": -(1 << 31),
        }
        for g in groups
        if g not in kept
    ]
    return Split({**body, "groups": kept} if kept else None, "groups", denied, {"throttle_time_ms": 0, "groups": []})


def split_delete_groups(body: Body, allowed: Allowed) -> Split:
    """Delete on each group."""
    names = list(body["groups_names"])
    kept = [g for g in names if allowed(Op.DELETE, Resource.GROUP, g)]
    denied = [{"group_id": g, "error_code": GROUP_AUTHORIZATION_FAILED} for g in names if g not in kept]
    empty = {"throttle_time_ms": 0, "results": []}
    return Split({**body, "groups_names": kept} if kept else None, "results", denied, empty)


def filter_list_groups(response: Response, allowed: Allowed) -> Response:
    """ListGroups: every group with Describe on the cluster, else those the principal may Describe."""
    if not allowed(Op.DESCRIBE, Resource.CLUSTER, "kafka-cluster"):
        response["groups"] = [g for g in response["groups"] if allowed(Op.DESCRIBE, Resource.GROUP, g["group_id"])]
    return response
