"""Request and response bodies of every API we speak, one declaration per API, compiled per version.

Each declaration follows Kafka's message JSON (apache/kafka `clients/src/main/resources/common/
message/*.json`, checked against kafka-protocol.md) for the non-flexible versions listed in
`SUPPORTED_VERSIONS`, with what each version changed in the comment above it. Values are plain dicts
(see schema.py for the two rules that make their keys the same at every version). Layouts of the
newest version of each, as `name TYPE` lines (nested arrays one level deeper; a test keeps this in
step with the declarations):

ProduceRequest v8 (key 0)
    transactional_id NULLABLE_STRING
    acks INT16
    timeout_ms INT32
    topic_data ARRAY
      name STRING
      partition_data ARRAY
        index INT32
        records RECORDS
ProduceResponse v8 (key 0)
    responses ARRAY
      name STRING
      partition_responses ARRAY
        index INT32
        error_code INT16
        base_offset INT64
        log_append_time_ms INT64
        log_start_offset INT64
        record_errors ARRAY
          batch_index INT32
          batch_index_error_message NULLABLE_STRING
        error_message NULLABLE_STRING
    throttle_time_ms INT32
FetchRequest v11 (key 1)
    replica_id INT32
    max_wait_ms INT32
    min_bytes INT32
    max_bytes INT32
    isolation_level INT8
    session_id INT32
    session_epoch INT32
    topics ARRAY
      topic STRING
      partitions ARRAY
        partition INT32
        current_leader_epoch INT32
        fetch_offset INT64
        log_start_offset INT64
        partition_max_bytes INT32
    forgotten_topics_data ARRAY
      topic STRING
      partitions ARRAY(INT32)
    rack_id STRING
FetchResponse v11 (key 1)
    throttle_time_ms INT32
    error_code INT16
    session_id INT32
    responses ARRAY
      topic STRING
      partitions ARRAY
        partition_index INT32
        error_code INT16
        high_watermark INT64
        last_stable_offset INT64
        log_start_offset INT64
        aborted_transactions NULLABLE_ARRAY
          producer_id INT64
          first_offset INT64
        preferred_read_replica INT32
        records RECORDS
ListOffsetsRequest v5 (key 2)
    replica_id INT32
    isolation_level INT8
    topics ARRAY
      name STRING
      partitions ARRAY
        partition_index INT32
        current_leader_epoch INT32
        timestamp INT64
ListOffsetsResponse v5 (key 2)
    throttle_time_ms INT32
    topics ARRAY
      name STRING
      partitions ARRAY
        partition_index INT32
        error_code INT16
        timestamp INT64
        offset INT64
        leader_epoch INT32
MetadataRequest v8 (key 3)
    topics NULLABLE_ARRAY
      name STRING
    allow_auto_topic_creation BOOLEAN
    include_cluster_authorized_operations BOOLEAN
    include_topic_authorized_operations BOOLEAN
MetadataResponse v8 (key 3)
    throttle_time_ms INT32
    brokers ARRAY
      node_id INT32
      host STRING
      port INT32
      rack NULLABLE_STRING
    cluster_id NULLABLE_STRING
    controller_id INT32
    topics ARRAY
      error_code INT16
      name STRING
      is_internal BOOLEAN
      partitions ARRAY
        error_code INT16
        partition_index INT32
        leader_id INT32
        leader_epoch INT32
        replica_nodes ARRAY(INT32)
        isr_nodes ARRAY(INT32)
        offline_replicas ARRAY(INT32)
      topic_authorized_operations INT32
    cluster_authorized_operations INT32
LeaderAndIsrRequest v3 (key 4)
    controller_id INT32
    controller_epoch INT32
    broker_epoch INT64
    topic_states ARRAY
      topic_name STRING
      partition_states ARRAY
        partition_index INT32
        controller_epoch INT32
        leader INT32
        leader_epoch INT32
        isr ARRAY(INT32)
        zk_version INT32
        replicas ARRAY(INT32)
        adding_replicas ARRAY(INT32)
        removing_replicas ARRAY(INT32)
        is_new BOOLEAN
    live_leaders ARRAY
      broker_id INT32
      host_name STRING
      port INT32
LeaderAndIsrResponse v3 (key 4)
    error_code INT16
    partition_errors ARRAY
      topic_name STRING
      partition_index INT32
      error_code INT16
StopReplicaRequest v1 (key 5)
    controller_id INT32
    controller_epoch INT32
    broker_epoch INT64
    delete_partitions BOOLEAN
    topics ARRAY
      name STRING
      partition_indexes ARRAY(INT32)
StopReplicaResponse v1 (key 5)
    error_code INT16
    partition_errors ARRAY
      topic_name STRING
      partition_index INT32
      error_code INT16
UpdateMetadataRequest v5 (key 6)
    controller_id INT32
    controller_epoch INT32
    broker_epoch INT64
    topic_states ARRAY
      topic_name STRING
      partition_states ARRAY
        partition_index INT32
        controller_epoch INT32
        leader INT32
        leader_epoch INT32
        isr ARRAY(INT32)
        zk_version INT32
        replicas ARRAY(INT32)
        offline_replicas ARRAY(INT32)
    live_brokers ARRAY
      id INT32
      endpoints ARRAY
        port INT32
        host STRING
        listener STRING
        security_protocol INT16
      rack NULLABLE_STRING
UpdateMetadataResponse v5 (key 6)
    error_code INT16
ControlledShutdownRequest v2 (key 7)
    broker_id INT32
    broker_epoch INT64
ControlledShutdownResponse v2 (key 7)
    error_code INT16
    remaining_partitions ARRAY
      topic_name STRING
      partition_index INT32
FindCoordinatorRequest v2 (key 10)
    key STRING
    key_type INT8
FindCoordinatorResponse v2 (key 10)
    throttle_time_ms INT32
    error_code INT16
    error_message NULLABLE_STRING
    node_id INT32
    host STRING
    port INT32
ApiVersionsRequest v2 (key 18)
    (empty)
ApiVersionsResponse v2 (key 18)
    error_code INT16
    api_keys ARRAY
      api_key INT16
      min_version INT16
      max_version INT16
    throttle_time_ms INT32
InitProducerIdRequest v1 (key 22)
    transactional_id NULLABLE_STRING
    transaction_timeout_ms INT32
InitProducerIdResponse v1 (key 22)
    throttle_time_ms INT32
    error_code INT16
    producer_id INT64
    producer_epoch INT16
OffsetForLeaderEpochRequest v3 (key 23)
    replica_id INT32
    topics ARRAY
      topic STRING
      partitions ARRAY
        partition INT32
        current_leader_epoch INT32
        leader_epoch INT32
OffsetForLeaderEpochResponse v3 (key 23)
    throttle_time_ms INT32
    topics ARRAY
      topic STRING
      partitions ARRAY
        error_code INT16
        partition INT32
        leader_epoch INT32
        end_offset INT64
ElectLeadersRequest v1 (key 43)
    election_type INT8
    topic_partitions NULLABLE_ARRAY
      topic STRING
      partitions ARRAY(INT32)
    timeout_ms INT32
ElectLeadersResponse v1 (key 43)
    throttle_time_ms INT32
    error_code INT16
    replica_election_results ARRAY
      topic STRING
      partition_result ARRAY
        partition_id INT32
        error_code INT16
        error_message NULLABLE_STRING
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from enum import IntEnum
from typing import Any

from .schema import ArrayOf, Field, Message, Struct
from .types import BOOLEAN, INT8, INT16, INT32, INT64, NULLABLE_STRING, RECORDS, STRING

F = Field


class ApiKey(IntEnum):
    """The API keys we speak (Kafka's `ApiKeys`)."""

    PRODUCE = 0
    FETCH = 1
    LIST_OFFSETS = 2
    METADATA = 3
    LEADER_AND_ISR = 4
    STOP_REPLICA = 5
    UPDATE_METADATA = 6
    CONTROLLED_SHUTDOWN = 7
    FIND_COORDINATOR = 10
    API_VERSIONS = 18
    INIT_PRODUCER_ID = 22
    OFFSET_FOR_LEADER_EPOCH = 23
    ELECT_LEADERS = 43


FIRST_FLEXIBLE_VERSION: Mapping[ApiKey, int] = {
    ApiKey.PRODUCE: 9,
    ApiKey.FETCH: 12,
    ApiKey.LIST_OFFSETS: 6,
    ApiKey.METADATA: 9,
    ApiKey.LEADER_AND_ISR: 4,
    ApiKey.STOP_REPLICA: 2,
    ApiKey.UPDATE_METADATA: 6,
    ApiKey.CONTROLLED_SHUTDOWN: 3,
    ApiKey.FIND_COORDINATOR: 3,
    ApiKey.API_VERSIONS: 3,
    ApiKey.INIT_PRODUCER_ID: 2,
    ApiKey.OFFSET_FOR_LEADER_EPOCH: 4,
    ApiKey.ELECT_LEADERS: 2,
}
"""Kafka's `flexibleVersions` start per API: it decides the header versions (messages.py), even for
versions we do not speak, because an ApiVersions v3+ request must still have its header read."""

NO_AUTHORIZED_OPERATIONS = -(1 << 31)
"""Metadata v8's "authorized operations not provided" (INT32 minimum)."""

# --- ApiVersions (key 18) ------------------------------------------------------------------------------
# v1: response adds throttle_time_ms (last). v2: same as v1. v3+ is flexible: refused (messages.py).
API_VERSIONS_REQUEST = Message("ApiVersionsRequest", "0-2", [])
API_VERSIONS_RESPONSE = Message(
    "ApiVersionsResponse",
    "0-2",
    [
        F("error_code", INT16),
        F("api_keys", ArrayOf(Struct(F("api_key", INT16), F("min_version", INT16), F("max_version", INT16)))),
        F("throttle_time_ms", INT32, "1+", default=0),
    ],
)

# --- Metadata (key 3) ----------------------------------------------------------------------------------
# request  v1: topics becomes nullable: null = all topics, [] = none (v0: [] = all). v2, v3: same as v1.
#          v4: adds allow_auto_topic_creation. v5-v7: same as v4. v8: adds the two include_* flags.
# response v1: adds rack, controller_id, is_internal. v2: adds cluster_id. v3: adds throttle_time_ms.
#          v4: same. v5: adds offline_replicas. v6: same. v7: adds leader_epoch.
#          v8: adds topic_authorized_operations and cluster_authorized_operations.
METADATA_REQUEST = Message(
    "MetadataRequest",
    "0-8",
    [
        F("topics", ArrayOf(Struct(F("name", STRING))), nullable="1+"),
        F("allow_auto_topic_creation", BOOLEAN, "4+", default=True),
        F("include_cluster_authorized_operations", BOOLEAN, "8-10", default=False),
        F("include_topic_authorized_operations", BOOLEAN, "8+", default=False),
    ],
)
METADATA_RESPONSE = Message(
    "MetadataResponse",
    "0-8",
    [
        F("throttle_time_ms", INT32, "3+", default=0),
        F(
            "brokers",
            ArrayOf(
                Struct(
                    F("node_id", INT32),
                    F("host", STRING),
                    F("port", INT32),
                    F("rack", NULLABLE_STRING, "1+", default=None),
                )
            ),
        ),
        F("cluster_id", NULLABLE_STRING, "2+", default=None),
        F("controller_id", INT32, "1+", default=-1),
        F(
            "topics",
            ArrayOf(
                Struct(
                    F("error_code", INT16),
                    F("name", STRING),
                    F("is_internal", BOOLEAN, "1+", default=False),
                    F(
                        "partitions",
                        ArrayOf(
                            Struct(
                                F("error_code", INT16),
                                F("partition_index", INT32),
                                F("leader_id", INT32),
                                F("leader_epoch", INT32, "7+", default=-1),
                                F("replica_nodes", ArrayOf(INT32)),
                                F("isr_nodes", ArrayOf(INT32)),
                                F("offline_replicas", ArrayOf(INT32), "5+", default=[]),
                            )
                        ),
                    ),
                    F("topic_authorized_operations", INT32, "8+", default=NO_AUTHORIZED_OPERATIONS),
                )
            ),
        ),
        F("cluster_authorized_operations", INT32, "8-10", default=NO_AUTHORIZED_OPERATIONS),
    ],
)

# --- Produce (key 0) -----------------------------------------------------------------------------------
# request  v3: adds transactional_id; record batches v2 only. v4: same (KAFKA_STORAGE_ERROR possible).
#          v5, v6: same. v7: same (zstd batches allowed). v8: same (response adds record errors).
# response v1: adds throttle_time_ms (last). v2: adds log_append_time_ms. v3, v4: same.
#          v5: adds log_start_offset. v6, v7: same. v8: adds record_errors and error_message.
PRODUCE_REQUEST = Message(
    "ProduceRequest",
    "3-8",
    [
        F("transactional_id", NULLABLE_STRING, default=None),
        F("acks", INT16),
        F("timeout_ms", INT32),
        F(
            "topic_data",
            ArrayOf(
                Struct(
                    F("name", STRING), F("partition_data", ArrayOf(Struct(F("index", INT32), F("records", RECORDS))))
                )
            ),
        ),
    ],
)
PRODUCE_RESPONSE = Message(
    "ProduceResponse",
    "3-8",
    [
        F(
            "responses",
            ArrayOf(
                Struct(
                    F("name", STRING),
                    F(
                        "partition_responses",
                        ArrayOf(
                            Struct(
                                F("index", INT32),
                                F("error_code", INT16),
                                F("base_offset", INT64),
                                F("log_append_time_ms", INT64, "2+", default=-1),
                                F("log_start_offset", INT64, "5+", default=-1),
                                F(
                                    "record_errors",
                                    ArrayOf(
                                        Struct(
                                            F("batch_index", INT32),
                                            F("batch_index_error_message", NULLABLE_STRING, default=None),
                                        )
                                    ),
                                    "8+",
                                    default=[],
                                ),
                                F("error_message", NULLABLE_STRING, "8+", default=None),
                            )
                        ),
                    ),
                )
            ),
        ),
        F("throttle_time_ms", INT32, "1+", default=0),
    ],
)

# --- Fetch (key 1) -------------------------------------------------------------------------------------
# request  v4: adds isolation_level; record batches v2. v5: adds partitions[].log_start_offset. v6: same.
#          v7: adds session_id, session_epoch, forgotten_topics_data (KIP-227). v8: same.
#          v9: adds partitions[].current_leader_epoch (KIP-320). v10: same (zstd). v11: adds rack_id.
# response v4: adds last_stable_offset, aborted_transactions. v5: adds log_start_offset. v6: same.
#          v7: adds top-level error_code and session_id. v8-v10: same. v11: adds preferred_read_replica.
FETCH_REQUEST = Message(
    "FetchRequest",
    "4-11",
    [
        F("replica_id", INT32, default=-1),
        F("max_wait_ms", INT32),
        F("min_bytes", INT32),
        F("max_bytes", INT32, "3+", default=0x7FFFFFFF),
        F("isolation_level", INT8, "4+", default=0),
        F("session_id", INT32, "7+", default=0),
        F("session_epoch", INT32, "7+", default=-1),
        F(
            "topics",
            ArrayOf(
                Struct(
                    F("topic", STRING),
                    F(
                        "partitions",
                        ArrayOf(
                            Struct(
                                F("partition", INT32),
                                F("current_leader_epoch", INT32, "9+", default=-1),
                                F("fetch_offset", INT64),
                                F("log_start_offset", INT64, "5+", default=-1),
                                F("partition_max_bytes", INT32),
                            )
                        ),
                    ),
                )
            ),
        ),
        F(
            "forgotten_topics_data",
            ArrayOf(Struct(F("topic", STRING), F("partitions", ArrayOf(INT32)))),
            "7+",
            default=[],
        ),
        F("rack_id", STRING, "11+", default=""),
    ],
)
FETCH_RESPONSE = Message(
    "FetchResponse",
    "4-11",
    [
        F("throttle_time_ms", INT32, "1+", default=0),
        F("error_code", INT16, "7+", default=0),
        F("session_id", INT32, "7+", default=0),
        F(
            "responses",
            ArrayOf(
                Struct(
                    F("topic", STRING),
                    F(
                        "partitions",
                        ArrayOf(
                            Struct(
                                F("partition_index", INT32),
                                F("error_code", INT16),
                                F("high_watermark", INT64),
                                F("last_stable_offset", INT64, "4+", default=-1),
                                F("log_start_offset", INT64, "5+", default=-1),
                                # Kafka's clients expect an empty array, not null, when there is none.
                                F(
                                    "aborted_transactions",
                                    ArrayOf(Struct(F("producer_id", INT64), F("first_offset", INT64))),
                                    "4+",
                                    nullable="4+",
                                    default=[],
                                ),
                                F("preferred_read_replica", INT32, "11+", default=-1),
                                # Empty records are length 0, never null (kafka-protocol.md §6).
                                F("records", RECORDS, default=b""),
                            )
                        ),
                    ),
                )
            ),
        ),
    ],
)

# --- ListOffsets (key 2) -------------------------------------------------------------------------------
# request  v1: drops v0's max_num_offsets. v2: adds isolation_level. v3: same.
#          v4: adds partitions[].current_leader_epoch. v5: same.
# response v1: one timestamp + offset instead of v0's offset list. v2: adds throttle_time_ms. v3: same.
#          v4: adds leader_epoch. v5: same (OFFSET_NOT_AVAILABLE possible).
LIST_OFFSETS_REQUEST = Message(
    "ListOffsetsRequest",
    "1-5",
    [
        F("replica_id", INT32),
        F("isolation_level", INT8, "2+", default=0),
        F(
            "topics",
            ArrayOf(
                Struct(
                    F("name", STRING),
                    F(
                        "partitions",
                        ArrayOf(
                            Struct(
                                F("partition_index", INT32),
                                F("current_leader_epoch", INT32, "4+", default=-1),
                                F("timestamp", INT64),
                            )
                        ),
                    ),
                )
            ),
        ),
    ],
)
LIST_OFFSETS_RESPONSE = Message(
    "ListOffsetsResponse",
    "1-5",
    [
        F("throttle_time_ms", INT32, "2+", default=0),
        F(
            "topics",
            ArrayOf(
                Struct(
                    F("name", STRING),
                    F(
                        "partitions",
                        ArrayOf(
                            Struct(
                                F("partition_index", INT32),
                                F("error_code", INT16),
                                F("timestamp", INT64, default=-1),
                                F("offset", INT64, default=-1),
                                F("leader_epoch", INT32, "4+", default=-1),
                            )
                        ),
                    ),
                )
            ),
        ),
    ],
)

# --- OffsetForLeaderEpoch (key 23) ---------------------------------------------------------------------
# request  v1: same as v0. v2: adds partitions[].current_leader_epoch. v3: adds replica_id.
# response v1: adds leader_epoch. v2: adds throttle_time_ms. v3: same.
OFFSET_FOR_LEADER_EPOCH_REQUEST = Message(
    "OffsetForLeaderEpochRequest",
    "0-3",
    [
        # Kafka's default -2 is "debug": any replica may answer (kafka-protocol.md §8).
        F("replica_id", INT32, "3+", default=-2),
        F(
            "topics",
            ArrayOf(
                Struct(
                    F("topic", STRING),
                    F(
                        "partitions",
                        ArrayOf(
                            Struct(
                                F("partition", INT32),
                                F("current_leader_epoch", INT32, "2+", default=-1),
                                F("leader_epoch", INT32),
                            )
                        ),
                    ),
                )
            ),
        ),
    ],
)
OFFSET_FOR_LEADER_EPOCH_RESPONSE = Message(
    "OffsetForLeaderEpochResponse",
    "0-3",
    [
        F("throttle_time_ms", INT32, "2+", default=0),
        F(
            "topics",
            ArrayOf(
                Struct(
                    F("topic", STRING),
                    F(
                        "partitions",
                        ArrayOf(
                            Struct(
                                F("error_code", INT16),
                                F("partition", INT32),
                                F("leader_epoch", INT32, "1+", default=-1),
                                F("end_offset", INT64, default=-1),
                            )
                        ),
                    ),
                )
            ),
        ),
    ],
)

# --- InitProducerId (key 22) ---------------------------------------------------------------------------
# v1: same as v0 (the throttle is applied before answering instead of after).
INIT_PRODUCER_ID_REQUEST = Message(
    "InitProducerIdRequest",
    "0-1",
    [F("transactional_id", NULLABLE_STRING), F("transaction_timeout_ms", INT32)],
)
INIT_PRODUCER_ID_RESPONSE = Message(
    "InitProducerIdResponse",
    "0-1",
    [
        F("throttle_time_ms", INT32, default=0),
        F("error_code", INT16),
        F("producer_id", INT64, default=-1),
        F("producer_epoch", INT16, default=-1),
    ],
)

# --- FindCoordinator (key 10) --------------------------------------------------------------------------
# request  v1: adds key_type (0 group, 1 transaction). v2: same.
# response v1: adds throttle_time_ms (first) and error_message. v2: same.
FIND_COORDINATOR_REQUEST = Message(
    "FindCoordinatorRequest",
    "0-2",
    [F("key", STRING), F("key_type", INT8, "1+", default=0)],
)
FIND_COORDINATOR_RESPONSE = Message(
    "FindCoordinatorResponse",
    "0-2",
    [
        F("throttle_time_ms", INT32, "1+", default=0),
        F("error_code", INT16),
        F("error_message", NULLABLE_STRING, "1+", default=None),
        F("node_id", INT32),
        F("host", STRING),
        F("port", INT32),
    ],
)

# --- LeaderAndIsr (key 4), controller -> broker ---------------------------------------------------------
# request  v1: adds is_new. v2: adds broker_epoch; partitions grouped by topic (topic_states).
#          v3: adds adding_replicas, removing_replicas (KIP-455).
# response v1: same (KAFKA_STORAGE_ERROR possible). v2, v3: same.
# zk_version is Kafka 2.8's name; later Kafka calls it partition_epoch (kafka-protocol.md §11).
_LEADER_AND_ISR_PARTITION_STATE = Struct(
    F("topic_name", STRING, "0-1", default=""),
    F("partition_index", INT32),
    F("controller_epoch", INT32),
    F("leader", INT32),
    F("leader_epoch", INT32),
    F("isr", ArrayOf(INT32)),
    F("zk_version", INT32),
    F("replicas", ArrayOf(INT32)),
    F("adding_replicas", ArrayOf(INT32), "3+", default=[]),
    F("removing_replicas", ArrayOf(INT32), "3+", default=[]),
    F("is_new", BOOLEAN, "1+", default=False),
)
LEADER_AND_ISR_REQUEST = Message(
    "LeaderAndIsrRequest",
    "0-3",
    [
        F("controller_id", INT32),
        F("controller_epoch", INT32),
        F("broker_epoch", INT64, "2+", default=-1),
        F("ungrouped_partition_states", ArrayOf(_LEADER_AND_ISR_PARTITION_STATE), "0-1", default=[]),
        F(
            "topic_states",
            ArrayOf(Struct(F("topic_name", STRING), F("partition_states", ArrayOf(_LEADER_AND_ISR_PARTITION_STATE)))),
            "2+",
            default=[],
        ),
        F("live_leaders", ArrayOf(Struct(F("broker_id", INT32), F("host_name", STRING), F("port", INT32)))),
    ],
)
_PARTITION_ERROR = Struct(F("topic_name", STRING), F("partition_index", INT32), F("error_code", INT16))
LEADER_AND_ISR_RESPONSE = Message(
    "LeaderAndIsrResponse",
    "0-3",
    [F("error_code", INT16), F("partition_errors", ArrayOf(_PARTITION_ERROR))],
)

# --- StopReplica (key 5), controller -> broker ----------------------------------------------------------
# request  v1: adds broker_epoch; partitions grouped by topic (topics[].partition_indexes).
# response v1: same as v0.
STOP_REPLICA_REQUEST = Message(
    "StopReplicaRequest",
    "0-1",
    [
        F("controller_id", INT32),
        F("controller_epoch", INT32),
        F("broker_epoch", INT64, "1+", default=-1),
        F("delete_partitions", BOOLEAN),
        F(
            "ungrouped_partitions",
            ArrayOf(Struct(F("topic_name", STRING), F("partition_index", INT32))),
            "0",
            default=[],
        ),
        F("topics", ArrayOf(Struct(F("name", STRING), F("partition_indexes", ArrayOf(INT32)))), "1+", default=[]),
    ],
)
STOP_REPLICA_RESPONSE = Message(
    "StopReplicaResponse",
    "0-1",
    [F("error_code", INT16), F("partition_errors", ArrayOf(_PARTITION_ERROR))],
)

# --- UpdateMetadata (key 6), controller -> broker -------------------------------------------------------
# request  v1: a list of endpoints per broker instead of v0's single host and port. v2: adds rack.
#          v3: adds endpoints[].listener. v4: adds offline_replicas.
#          v5: adds broker_epoch; partitions grouped by topic (topic_states).
# response v1-v5: same as v0.
# Note the endpoint order: port before host, unlike everywhere else (kafka-protocol.md §11).
_UPDATE_METADATA_PARTITION_STATE = Struct(
    F("topic_name", STRING, "0-4", default=""),
    F("partition_index", INT32),
    F("controller_epoch", INT32),
    F("leader", INT32),
    F("leader_epoch", INT32),
    F("isr", ArrayOf(INT32)),
    F("zk_version", INT32),
    F("replicas", ArrayOf(INT32)),
    F("offline_replicas", ArrayOf(INT32), "4+", default=[]),
)
UPDATE_METADATA_REQUEST = Message(
    "UpdateMetadataRequest",
    "0-5",
    [
        F("controller_id", INT32),
        F("controller_epoch", INT32),
        F("broker_epoch", INT64, "5+", default=-1),
        F("ungrouped_partition_states", ArrayOf(_UPDATE_METADATA_PARTITION_STATE), "0-4", default=[]),
        F(
            "topic_states",
            ArrayOf(Struct(F("topic_name", STRING), F("partition_states", ArrayOf(_UPDATE_METADATA_PARTITION_STATE)))),
            "5+",
            default=[],
        ),
        F(
            "live_brokers",
            ArrayOf(
                Struct(
                    F("id", INT32),
                    F("v0_host", STRING, "0", default=""),
                    F("v0_port", INT32, "0", default=-1),
                    F(
                        "endpoints",
                        ArrayOf(
                            Struct(
                                F("port", INT32),
                                F("host", STRING),
                                F("listener", STRING, "3+", default=""),
                                F("security_protocol", INT16, default=0),  # 0 = PLAINTEXT
                            )
                        ),
                        "1+",
                        default=[],
                    ),
                    F("rack", NULLABLE_STRING, "2+", default=None),
                )
            ),
        ),
    ],
)
UPDATE_METADATA_RESPONSE = Message("UpdateMetadataResponse", "0-5", [F("error_code", INT16)])

# --- ControlledShutdown (key 7), broker -> controller ---------------------------------------------------
# request  v0 (request header v0, see messages.py): broker_id. v1: same, header v1. v2: adds broker_epoch.
# response v0-v2: the partitions the broker still leads.
CONTROLLED_SHUTDOWN_REQUEST = Message(
    "ControlledShutdownRequest",
    "1-2",
    [F("broker_id", INT32), F("broker_epoch", INT64, "2+", default=-1)],
)
CONTROLLED_SHUTDOWN_RESPONSE = Message(
    "ControlledShutdownResponse",
    "1-2",
    [
        F("error_code", INT16),
        F("remaining_partitions", ArrayOf(Struct(F("topic_name", STRING), F("partition_index", INT32)))),
    ],
)

# --- ElectLeaders (key 43), admin -> any broker -> controller ---------------------------------------------


class ElectionType(IntEnum):
    """`org.apache.kafka.common.ElectionType`: its value is ElectLeaders' `election_type` byte, its text
    Kafka's enum name (what `kafka-leader-election` prints)."""

    PREFERRED = 0
    UNCLEAN = 1

    def __str__(self) -> str:
        return self.name


# request  v1: adds election_type (0 preferred, 1 unclean; v0 is preferred only).
# response v1: adds the top-level error_code. v2+ is flexible.
ELECT_LEADERS_REQUEST = Message(
    "ElectLeadersRequest",
    "0-1",
    [
        F("election_type", INT8, "1+", default=0),
        # null: every partition of the cluster (kafka-leader-election --all-topic-partitions)
        F(
            "topic_partitions",
            ArrayOf(Struct(F("topic", STRING), F("partitions", ArrayOf(INT32)))),
            nullable="0+",
        ),
        F("timeout_ms", INT32, default=60000),
    ],
)
ELECT_LEADERS_RESPONSE = Message(
    "ElectLeadersResponse",
    "0-1",
    [
        F("throttle_time_ms", INT32, default=0),
        F("error_code", INT16, "1+", default=0),
        F(
            "replica_election_results",
            ArrayOf(
                Struct(
                    F("topic", STRING),
                    F(
                        "partition_result",
                        ArrayOf(
                            Struct(
                                F("partition_id", INT32),
                                F("error_code", INT16),
                                F("error_message", NULLABLE_STRING, default=None),
                            )
                        ),
                    ),
                )
            ),
        ),
    ],
)


REQUESTS: Mapping[ApiKey, Message] = {
    ApiKey.PRODUCE: PRODUCE_REQUEST,
    ApiKey.FETCH: FETCH_REQUEST,
    ApiKey.LIST_OFFSETS: LIST_OFFSETS_REQUEST,
    ApiKey.METADATA: METADATA_REQUEST,
    ApiKey.LEADER_AND_ISR: LEADER_AND_ISR_REQUEST,
    ApiKey.STOP_REPLICA: STOP_REPLICA_REQUEST,
    ApiKey.UPDATE_METADATA: UPDATE_METADATA_REQUEST,
    ApiKey.CONTROLLED_SHUTDOWN: CONTROLLED_SHUTDOWN_REQUEST,
    ApiKey.FIND_COORDINATOR: FIND_COORDINATOR_REQUEST,
    ApiKey.API_VERSIONS: API_VERSIONS_REQUEST,
    ApiKey.INIT_PRODUCER_ID: INIT_PRODUCER_ID_REQUEST,
    ApiKey.OFFSET_FOR_LEADER_EPOCH: OFFSET_FOR_LEADER_EPOCH_REQUEST,
    ApiKey.ELECT_LEADERS: ELECT_LEADERS_REQUEST,
}
RESPONSES: Mapping[ApiKey, Message] = {
    ApiKey.PRODUCE: PRODUCE_RESPONSE,
    ApiKey.FETCH: FETCH_RESPONSE,
    ApiKey.LIST_OFFSETS: LIST_OFFSETS_RESPONSE,
    ApiKey.METADATA: METADATA_RESPONSE,
    ApiKey.LEADER_AND_ISR: LEADER_AND_ISR_RESPONSE,
    ApiKey.STOP_REPLICA: STOP_REPLICA_RESPONSE,
    ApiKey.UPDATE_METADATA: UPDATE_METADATA_RESPONSE,
    ApiKey.CONTROLLED_SHUTDOWN: CONTROLLED_SHUTDOWN_RESPONSE,
    ApiKey.FIND_COORDINATOR: FIND_COORDINATOR_RESPONSE,
    ApiKey.API_VERSIONS: API_VERSIONS_RESPONSE,
    ApiKey.INIT_PRODUCER_ID: INIT_PRODUCER_ID_RESPONSE,
    ApiKey.OFFSET_FOR_LEADER_EPOCH: OFFSET_FOR_LEADER_EPOCH_RESPONSE,
    ApiKey.ELECT_LEADERS: ELECT_LEADERS_RESPONSE,
}

SUPPORTED_VERSIONS: Mapping[ApiKey, tuple[int, int]] = {
    key: (message.versions.start, message.versions.stop - 1) for key, message in REQUESTS.items()
}
"""What this codec can read and write per API: kafka-protocol.md §1's set. A broker advertises these
in ApiVersions (FindCoordinator optionally, §10)."""


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
