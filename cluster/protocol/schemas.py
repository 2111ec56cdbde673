"""Request and response bodies of every Kafka 2.8 API, loaded from Kafka 2.8's message JSON files.

The files in `message/` (apache/kafka 2.8.2, `clients/src/main/resources/common/message/`) are the one
source of truth for the layouts, version ranges and flexible versions; `message_specs.py` compiles them
into `Message`s at import time. `REQUESTS[key]` and `RESPONSES[key]` span Kafka 2.8's whole range of
each API; `SUPPORTED_VERSIONS` says which versions we speak (serve, and send). Values are plain dicts
keyed by Kafka's JSON field names in snake_case, the same keys at every version (schema.py).

What the files do not give is here: `ApiKey` (Kafka's `ApiKeys`, checked against the files by a test),
the few defaults our code relies on where a file declares none, ElectionType, and the helpers for the
controller APIs' two shapes.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from enum import IntEnum
from typing import Any

from .message_specs import load_specs
from .schema import Message


class ApiKey(IntEnum):
    """Every API key of Kafka 2.8, with Kafka's names (`ApiKeys`; the files' `apiKey` and name)."""

    PRODUCE = 0
    FETCH = 1
    LIST_OFFSETS = 2
    METADATA = 3
    LEADER_AND_ISR = 4
    STOP_REPLICA = 5
    UPDATE_METADATA = 6
    CONTROLLED_SHUTDOWN = 7
    OFFSET_COMMIT = 8
    OFFSET_FETCH = 9
    FIND_COORDINATOR = 10
    JOIN_GROUP = 11
    HEARTBEAT = 12
    LEAVE_GROUP = 13
    SYNC_GROUP = 14
    DESCRIBE_GROUPS = 15
    LIST_GROUPS = 16
    SASL_HANDSHAKE = 17
    API_VERSIONS = 18
    CREATE_TOPICS = 19
    DELETE_TOPICS = 20
    DELETE_RECORDS = 21
    INIT_PRODUCER_ID = 22
    OFFSET_FOR_LEADER_EPOCH = 23
    ADD_PARTITIONS_TO_TXN = 24
    ADD_OFFSETS_TO_TXN = 25
    END_TXN = 26
    WRITE_TXN_MARKERS = 27
    TXN_OFFSET_COMMIT = 28
    DESCRIBE_ACLS = 29
    CREATE_ACLS = 30
    DELETE_ACLS = 31
    DESCRIBE_CONFIGS = 32
    ALTER_CONFIGS = 33
    ALTER_REPLICA_LOG_DIRS = 34
    DESCRIBE_LOG_DIRS = 35
    SASL_AUTHENTICATE = 36
    CREATE_PARTITIONS = 37
    CREATE_DELEGATION_TOKEN = 38
    RENEW_DELEGATION_TOKEN = 39
    EXPIRE_DELEGATION_TOKEN = 40
    DESCRIBE_DELEGATION_TOKEN = 41
    DELETE_GROUPS = 42
    ELECT_LEADERS = 43
    INCREMENTAL_ALTER_CONFIGS = 44
    ALTER_PARTITION_REASSIGNMENTS = 45
    LIST_PARTITION_REASSIGNMENTS = 46
    OFFSET_DELETE = 47
    DESCRIBE_CLIENT_QUOTAS = 48
    ALTER_CLIENT_QUOTAS = 49
    DESCRIBE_USER_SCRAM_CREDENTIALS = 50
    ALTER_USER_SCRAM_CREDENTIALS = 51
    VOTE = 52
    BEGIN_QUORUM_EPOCH = 53
    END_QUORUM_EPOCH = 54
    DESCRIBE_QUORUM = 55
    ALTER_ISR = 56
    UPDATE_FEATURES = 57
    ENVELOPE = 58
    FETCH_SNAPSHOT = 59
    DESCRIBE_CLUSTER = 60
    DESCRIBE_PRODUCERS = 61
    BROKER_REGISTRATION = 62
    BROKER_HEARTBEAT = 63
    UNREGISTER_BROKER = 64


NO_AUTHORIZED_OPERATIONS = -(1 << 31)
"""Metadata v8's "authorized operations not provided" (INT32 minimum)."""

# Defaults our code relies on (it leaves these fields out) where Kafka's file declares none, which would
# make them required (message_specs.py): Kafka's own code sets them explicitly or relies on the same.
_OUR_DEFAULTS: Mapping[str, Any] = {
    "FetchRequest.replica_id": -1,  # a consumer
    # Empty records are length 0, never null (kafka-protocol.md §6): Kafka's clients expect bytes.
    "FetchResponse.responses.partition_responses.record_set": b"",
    "UpdateMetadataRequest.topic_states.partition_states.offline_replicas": [],
    "UpdateMetadataRequest.live_brokers.endpoints.security_protocol": 0,  # PLAINTEXT
    "UpdateMetadataRequest.live_brokers.rack": None,  # v0-1 carry no rack: none, not ""
    "FindCoordinatorResponse.error_message": None,
    "InitProducerIdResponse.throttle_time_ms": 0,
    "InitProducerIdResponse.producer_epoch": -1,
    "ElectLeadersResponse.throttle_time_ms": 0,
    "ElectLeadersResponse.replica_election_results.partition_result.error_message": None,
}

_SPECS = load_specs(_OUR_DEFAULTS)

REQUESTS: Mapping[ApiKey, Message] = {ApiKey(s.api_key): s.message for s in _SPECS if s.type == "request"}
RESPONSES: Mapping[ApiKey, Message] = {ApiKey(s.api_key): s.message for s in _SPECS if s.type == "response"}

FIRST_FLEXIBLE_VERSION: Mapping[ApiKey, int] = {
    key: first for key, message in REQUESTS.items() if (first := message.first_flexible_version) is not None
}
"""Kafka's `flexibleVersions` start per API (absent: never flexible). It decides the header versions
(messages.py), even for versions we do not speak, because an ApiVersions request above ours must still
have its header read."""

# What we speak below Kafka 2.8's range. The data-plane APIs stop at the first version of record batch v2
# (Produce v3, Fetch v4): older clients need message format v0/v1 conversion, which we do not do, and
# ListOffsets v0 (a list of offsets per partition) is left out with them. The controller APIs are at what our
# controller sends (LeaderAndIsr v3, StopReplica v1; UpdateMetadata is at Kafka 2.8's whole range, v7 with
# topic ids; ControlledShutdown v0 has request header v0).
_OUR_RANGES: Mapping[ApiKey, tuple[int, int]] = {
    ApiKey.PRODUCE: (3, 9),
    ApiKey.FETCH: (4, 12),
    ApiKey.LIST_OFFSETS: (1, 6),
    ApiKey.LEADER_AND_ISR: (0, 3),
    ApiKey.STOP_REPLICA: (0, 1),
    ApiKey.CONTROLLED_SHUTDOWN: (1, 2),
}

SUPPORTED_VERSIONS: Mapping[ApiKey, tuple[int, int]] = {
    key: _OUR_RANGES.get(key, (message.versions.start, message.versions.stop - 1)) for key, message in REQUESTS.items()
}
"""The versions we speak per API: Kafka 2.8's range, except where `_OUR_RANGES` says less. A broker
advertises these in ApiVersions for the APIs it serves; our clients pick min(ours, the broker's)."""

# The names the hand-written schemas had, for the APIs served before the files took over.
PRODUCE_REQUEST, PRODUCE_RESPONSE = REQUESTS[ApiKey.PRODUCE], RESPONSES[ApiKey.PRODUCE]
FETCH_REQUEST, FETCH_RESPONSE = REQUESTS[ApiKey.FETCH], RESPONSES[ApiKey.FETCH]
LIST_OFFSETS_REQUEST, LIST_OFFSETS_RESPONSE = REQUESTS[ApiKey.LIST_OFFSETS], RESPONSES[ApiKey.LIST_OFFSETS]
METADATA_REQUEST, METADATA_RESPONSE = REQUESTS[ApiKey.METADATA], RESPONSES[ApiKey.METADATA]
LEADER_AND_ISR_REQUEST, LEADER_AND_ISR_RESPONSE = REQUESTS[ApiKey.LEADER_AND_ISR], RESPONSES[ApiKey.LEADER_AND_ISR]
STOP_REPLICA_REQUEST, STOP_REPLICA_RESPONSE = REQUESTS[ApiKey.STOP_REPLICA], RESPONSES[ApiKey.STOP_REPLICA]
UPDATE_METADATA_REQUEST = REQUESTS[ApiKey.UPDATE_METADATA]
UPDATE_METADATA_RESPONSE = RESPONSES[ApiKey.UPDATE_METADATA]
CONTROLLED_SHUTDOWN_REQUEST = REQUESTS[ApiKey.CONTROLLED_SHUTDOWN]
CONTROLLED_SHUTDOWN_RESPONSE = RESPONSES[ApiKey.CONTROLLED_SHUTDOWN]
FIND_COORDINATOR_REQUEST = REQUESTS[ApiKey.FIND_COORDINATOR]
FIND_COORDINATOR_RESPONSE = RESPONSES[ApiKey.FIND_COORDINATOR]
API_VERSIONS_REQUEST, API_VERSIONS_RESPONSE = REQUESTS[ApiKey.API_VERSIONS], RESPONSES[ApiKey.API_VERSIONS]
INIT_PRODUCER_ID_REQUEST = REQUESTS[ApiKey.INIT_PRODUCER_ID]
INIT_PRODUCER_ID_RESPONSE = RESPONSES[ApiKey.INIT_PRODUCER_ID]
OFFSET_FOR_LEADER_EPOCH_REQUEST = REQUESTS[ApiKey.OFFSET_FOR_LEADER_EPOCH]
OFFSET_FOR_LEADER_EPOCH_RESPONSE = RESPONSES[ApiKey.OFFSET_FOR_LEADER_EPOCH]
ELECT_LEADERS_REQUEST, ELECT_LEADERS_RESPONSE = REQUESTS[ApiKey.ELECT_LEADERS], RESPONSES[ApiKey.ELECT_LEADERS]


class ElectionType(IntEnum):
    """`org.apache.kafka.common.ElectionType`: its value is ElectLeaders' `election_type` byte, its text
    Kafka's enum name (what `kafka-leader-election` prints)."""

    PREFERRED = 0
    UNCLEAN = 1

    def __str__(self) -> str:
        return self.name


# --- the controller APIs' two shapes ------------------------------------------------------------------------
# LeaderAndIsr < v2, UpdateMetadata < v5 and StopReplica v0 list partitions one by one with their topic;
# later versions group them by topic. Receivers flatten whatever came; senders pass both forms and the
# encoder writes the one that exists at the version sent (it ignores keys the version lacks).


def iter_partition_states(body: Mapping[str, Any]) -> Iterator[tuple[str, Mapping[str, Any]]]:
    """(topic, state) for every partition state of a LeaderAndIsr or UpdateMetadata request, at any
    version: listed one by one with their topic (old versions) or grouped by topic. The states are not
    copied (a LeaderAndIsr of 100,000 partitions is decoded on the broker's event loop)."""
    for state in body["ungrouped_partition_states"]:
        yield state["topic_name"], state
    for topic in body["topic_states"]:
        name = topic["topic_name"]
        for state in topic["partition_states"]:
            yield name, state


def partition_state_fields(states: Iterable[Mapping[str, Any]]) -> dict[str, list[Any]]:
    """Both forms of LeaderAndIsr / UpdateMetadata partition states (each carrying its topic_name), to
    merge into a request body of any version; topics keep the order of their first partition."""
    states = list(states)
    grouped: dict[str, list[Mapping[str, Any]]] = {}
    for state in states:
        grouped.setdefault(state["topic_name"], []).append(state)
    return {
        "ungrouped_partition_states": states,
        "topic_states": [{"topic_name": topic, "partition_states": group} for topic, group in grouped.items()],
    }


def flatten_stop_replica_partitions(body: Mapping[str, Any]) -> list[tuple[str, int]]:
    """Every (topic, partition) of a StopReplica request, at either version."""
    partitions = [(p["topic_name"], p["partition_index"]) for p in body["ungrouped_partitions"]]
    partitions.extend((t["name"], index) for t in body["topics"] for index in t["partition_indexes"])
    return partitions


def stop_replica_partition_fields(partitions: Iterable[tuple[str, int]]) -> dict[str, list[dict[str, Any]]]:
    """Both StopReplica forms of `partitions`, to merge into a request body of any version."""
    partitions = list(partitions)
    grouped: dict[str, list[int]] = {}
    for topic, index in partitions:
        grouped.setdefault(topic, []).append(index)
    return {
        "ungrouped_partitions": [{"topic_name": t, "partition_index": i} for t, i in partitions],
        "topics": [{"name": t, "partition_indexes": indexes} for t, indexes in grouped.items()],
    }
