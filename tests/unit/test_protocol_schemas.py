"""Request/response bodies: known-answer bytes written by hand from the layouts in kafka-protocol.md, round
trips of generated values at every version, garbage that must fail with CorruptMessageError, and (when
kafka-python is installed) agreement with kafka-python's encoders, which are generated from Kafka's own
message JSON."""

from __future__ import annotations

import contextlib
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafkaops.cluster.common.errors import CorruptMessageError, EncodeError, UnsupportedVersionError
from kafkaops.cluster.protocol import schemas
from kafkaops.cluster.protocol.records import Record, build_batch
from kafkaops.cluster.protocol.schema import Field, Message, Schema
from kafkaops.cluster.protocol.schemas import (
    REQUESTS,
    RESPONSES,
    ApiKey,
    flatten_stop_replica_partitions,
    iter_partition_states,
    partition_state_fields,
    stop_replica_partition_fields,
)
from kafkaops.cluster.protocol.types import (
    FLOAT64,
    INT8,
    INT16,
    INT32,
    INT64,
    TAG_BUFFER,
    UINT16,
    UUID,
    Array,
    Fixed,
    Type,
    _Bytes,
    _String,
)


def h(text: str) -> bytes:
    """Bytes from spaced hex; `|` separates fields for the reader."""
    return bytes.fromhex(text.replace("|", " ").replace(" ", ""))


# --- value generation from the schemas themselves -------------------------------------------------------------

_RANGES = {
    INT8: (-(2**7), 2**7 - 1),
    INT16: (-(2**15), 2**15 - 1),
    INT32: (-(2**31), 2**31 - 1),
    INT64: (-(2**63), 2**63 - 1),
    UINT16: (0, 2**16 - 1),
}


def values(type_: Type) -> st.SearchStrategy[Any]:
    """Any value of a compiled wire type, with only the fields present at that version."""
    if isinstance(type_, Schema):
        return st.fixed_dictionaries({field.name: values(t) for field, t in [*type_.present, *type_.tagged]})
    if isinstance(type_, Array):
        items = st.lists(values(type_.elem), max_size=3)
        return st.none() | items if type_.nullable else items
    if isinstance(type_, _String):
        text = st.text(max_size=8)
        return st.none() | text if type_.nullable else text
    if isinstance(type_, _Bytes):
        data = st.binary(max_size=16)
        return st.none() | data if type_.nullable else data
    if type_ is TAG_BUFFER:
        return st.dictionaries(st.integers(0, 300), st.binary(max_size=4), max_size=2)
    if type_ is UUID:
        return st.uuids()
    assert isinstance(type_, Fixed)
    if type_.fmt == "?":
        return st.booleans()
    if type_ is FLOAT64:
        return st.floats(allow_nan=False)
    low, high = _RANGES[type_]
    return st.integers(low, high)


def present_only(value: Any, type_: Type) -> Any:
    """A decoded value without the fields its version lacks (decoding fills them with defaults)."""
    if isinstance(type_, Schema):
        return {field.name: present_only(value[field.name], t) for field, t in [*type_.present, *type_.tagged]}
    if isinstance(type_, Array) and value is not None:
        return [present_only(item, type_.elem) for item in value]
    return value


ALL_VERSIONS = [
    pytest.param(message, version, id=f"{message.name}-v{version}")
    for table in (REQUESTS, RESPONSES)
    for message in table.values()
    for version in message.versions
]


@pytest.mark.parametrize(("message", "version"), ALL_VERSIONS)
# No example database for the parametrized properties: writing it per case doubled the run time.
@settings(max_examples=15, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_round_trip_at_every_version(message: Message, version: int, data: st.DataObject) -> None:
    schema = message.schemas[version]
    value = data.draw(values(schema))
    encoded = message.encode(value, version)
    decoded = message.decode(encoded, version)
    assert present_only(decoded, schema) == value
    # Decoding filled the fields this version lacks; encoding ignores them again: same bytes.
    assert message.encode(decoded, version) == encoded


def _all_fields(message: Message) -> set[str]:
    return {field.name for schema in message.schemas.values() for field, _ in schema.present} | {
        name for schema in message.schemas.values() for name, _ in schema._absent
    }


@pytest.mark.parametrize(("message", "version"), ALL_VERSIONS)
def test_decoded_values_have_the_same_keys_at_every_version(message: Message, version: int) -> None:
    """Handlers read one shape whatever version came in (schema.py's rule)."""
    schema = message.schemas[version]
    assert {f.name for f, _ in schema.present} | {n for n, _ in schema._absent} == _all_fields(message)


# --- fuzzing: garbage in, CorruptMessageError out ---------------------------------------------------------------


@settings(max_examples=400, deadline=None)
@given(case=st.sampled_from([p.values for p in ALL_VERSIONS]), data=st.binary(max_size=64))
def test_random_bytes_decode_or_raise_corrupt_message(case: tuple[Message, int], data: bytes) -> None:
    message, version = case
    with contextlib.suppress(CorruptMessageError):
        message.decode(data, version)


@st.composite
def mutated(draw: st.DrawFn) -> tuple[Message, int, bytes]:
    """A valid encoding, then cut short, a byte changed, or bytes inserted: garbage that gets past the
    first fields, where random bytes rarely do."""
    message, version = draw(st.sampled_from([p.values for p in ALL_VERSIONS]))
    encoded = bytearray(message.encode(draw(values(message.schemas[version])), version))
    how = draw(st.sampled_from(["truncate", "flip", "insert"]))
    at = draw(st.integers(0, len(encoded)))
    if how == "truncate":
        del encoded[at:]
    elif how == "flip" and encoded:
        at = min(at, len(encoded) - 1)
        encoded[at] = draw(st.sampled_from([0x00, 0x7F, 0x80, 0xFF]))
    else:
        encoded[at:at] = draw(st.binary(min_size=1, max_size=4))
    return message, version, bytes(encoded)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=mutated())
def test_mutated_messages_decode_or_raise_corrupt_message(case: tuple[Message, int, bytes]) -> None:
    message, version, data = case
    with contextlib.suppress(CorruptMessageError):
        message.decode(data, version)


def test_leftover_bytes_are_corrupt() -> None:
    with pytest.raises(CorruptMessageError, match="1 bytes left over"):
        schemas.UPDATE_METADATA_RESPONSE.decode(h("0000 00"), 0)


def test_array_count_larger_than_the_buffer_is_refused_before_allocating() -> None:
    with pytest.raises(CorruptMessageError, match="exceeds"):
        schemas.METADATA_REQUEST.decode(h("7fffffff 0001 74"), 0)


def test_negative_string_length_other_than_null_is_corrupt() -> None:
    with pytest.raises(CorruptMessageError):
        schemas.METADATA_REQUEST.decode(h("00000001 fffe"), 0)


def test_invalid_utf8_is_corrupt() -> None:
    with pytest.raises(CorruptMessageError, match="UTF-8"):
        schemas.METADATA_REQUEST.decode(h("00000001 0001 ff"), 0)


# --- encoding errors are ours, and say where --------------------------------------------------------------------


def test_missing_required_field_names_schema_and_field() -> None:
    with pytest.raises(EncodeError, match=r"MetadataResponse v8\.brokers: missing field 'port'"):
        schemas.METADATA_RESPONSE.encode({"brokers": [{"node_id": 1, "host": "h"}], "topics": []}, 8)


def test_out_of_range_number_is_an_encode_error() -> None:
    with pytest.raises(EncodeError, match="FindCoordinatorResponse v0"):
        schemas.FIND_COORDINATOR_RESPONSE.encode({"error_code": 0, "node_id": 1, "host": "h", "port": 2**31}, 0)


def test_wrong_type_is_an_encode_error() -> None:
    with pytest.raises(EncodeError):
        schemas.FIND_COORDINATOR_REQUEST.encode({"key": 5}, 0)
    with pytest.raises(EncodeError, match="cannot be null"):
        schemas.FIND_COORDINATOR_REQUEST.encode({"key": None}, 0)


def test_unknown_version_is_unsupported() -> None:
    with pytest.raises(UnsupportedVersionError, match="MetadataRequest v12"):  # Kafka 2.8's last is v11
        schemas.METADATA_REQUEST.encode({"topics": None}, 12)


def test_a_field_missing_from_some_versions_must_declare_a_default() -> None:
    with pytest.raises(ValueError, match="absent from some versions but has no default"):
        Message("Broken", "0-1", [Field("added_in_v1", INT32, "1+")])


# --- known answers, written by hand from kafka-protocol.md ------------------------------------------------------

BATCH = build_batch([Record(0, 1700000000000, None, b"hi")], partition_leader_epoch=0)

BROKER = {"node_id": 1, "host": "h", "port": 9092, "rack": None}
PARTITION = {
    "error_code": 0,
    "partition_index": 0,
    "leader_id": 1,
    "leader_epoch": 5,
    "replica_nodes": [1],
    "isr_nodes": [1],
}
METADATA_V8 = {
    "throttle_time_ms": 0,
    "brokers": [BROKER],
    "cluster_id": "c",
    "controller_id": 1,
    "topics": [
        {"error_code": 0, "name": "t", "is_internal": False, "partitions": [{**PARTITION, "offline_replicas": []}]}
    ],
}
LEADER_AND_ISR_STATE = {
    "topic_name": "t",
    "partition_index": 0,
    "controller_epoch": 2,
    "leader": 1,
    "leader_epoch": 3,
    "isr": [1, 2],
    "zk_version": 4,
    "replicas": [1, 2],
    "is_new": True,
}
PARTITION_STATE_BYTES = (
    "00000000 00000002 00000001 00000003 | 00000002 00000001 00000002 | 00000004 | 00000002 00000001 00000002"
)

KNOWN_ANSWERS = [
    # Metadata request: v0 [] = all topics, v1+ null = all topics, v4 adds the auto-creation flag, v8 two more.
    (schemas.METADATA_REQUEST, 0, {"topics": [{"name": "t"}]}, "00000001 0001 74"),
    (schemas.METADATA_REQUEST, 1, {"topics": None}, "ffffffff"),
    (schemas.METADATA_REQUEST, 4, {"topics": [], "allow_auto_topic_creation": False}, "00000000 00"),
    (schemas.METADATA_REQUEST, 8, {"topics": [{"name": "t"}]}, "00000001 0001 74 | 01 00 00"),
    (
        schemas.METADATA_RESPONSE,
        0,
        {"brokers": [BROKER], "topics": [{"error_code": 0, "name": "t", "partitions": [PARTITION]}]},
        "00000001 | 00000001 0001 68 00002384 | 00000001 | 0000 0001 74 | 00000001 "
        "| 0000 00000000 00000001 | 00000001 00000001 | 00000001 00000001",
    ),
    (
        # throttle first; rack after port; cluster_id, controller_id; is_internal after the name;
        # leader_epoch after the leader; offline replicas; then the two authorized-operations sentinels.
        schemas.METADATA_RESPONSE,
        8,
        METADATA_V8,
        "00000000 | 00000001 | 00000001 0001 68 00002384 ffff | 0001 63 | 00000001 | 00000001 | 0000 0001 74 00 "
        "| 00000001 | 0000 00000000 00000001 00000005 | 00000001 00000001 | 00000001 00000001 | 00000000 "
        "| 80000000 | 80000000",
    ),
    (
        schemas.PRODUCE_REQUEST,
        3,
        {
            "acks": -1,
            "timeout_ms": 30000,
            "topic_data": [{"name": "t", "partition_data": [{"index": 0, "records": BATCH}]}],
        },
        f"ffff ffff 00007530 | 00000001 0001 74 | 00000001 00000000 | 00000046 {BATCH.hex()}",
    ),
    (
        # v8: record_errors (empty) and error_message (null) per partition; throttle comes last.
        schemas.PRODUCE_RESPONSE,
        8,
        {"responses": [{"name": "t", "partition_responses": [{"index": 0, "error_code": 0, "base_offset": 42}]}]},
        "00000001 0001 74 | 00000001 | 00000000 0000 000000000000002a | ffffffffffffffff ffffffffffffffff "
        "| 00000000 | ffff | 00000000",
    ),
    (
        # A follower's fetch (§13): replica 1, 500 ms, 1 byte, 10 MiB, sessionless; one partition.
        schemas.FETCH_REQUEST,
        11,
        {
            "replica_id": 1,
            "max_wait_ms": 500,
            "min_bytes": 1,
            "max_bytes": 10485760,
            "topics": [
                {
                    "topic": "t",
                    "partitions": [
                        {
                            "partition": 0,
                            "current_leader_epoch": 3,
                            "fetch_offset": 100,
                            "log_start_offset": 0,
                            "partition_max_bytes": 1048576,
                        }
                    ],
                }
            ],
        },
        "00000001 000001f4 00000001 00a00000 00 00000000 ffffffff | 00000001 0001 74 | 00000001 "
        "| 00000000 00000003 0000000000000064 0000000000000000 00100000 | 00000000 | 0000",
    ),
    (
        # Fetch v4: no session fields, no leader epoch, no log start offset, no rack.
        schemas.FETCH_REQUEST,
        4,
        {
            "max_wait_ms": 500,
            "min_bytes": 1,
            "topics": [
                {"topic": "t", "partitions": [{"partition": 0, "fetch_offset": 7, "partition_max_bytes": 1024}]}
            ],
        },
        "ffffffff 000001f4 00000001 7fffffff 00 | 00000001 0001 74 | 00000001 | 00000000 0000000000000007 00000400",
    ),
    (
        # Empty records are length 0, aborted transactions an empty array (§6).
        schemas.FETCH_RESPONSE,
        11,
        {
            "responses": [
                {
                    "topic": "t",
                    "partition_responses": [
                        {
                            "partition": 0,
                            "error_code": 0,
                            "high_watermark": 10,
                            "last_stable_offset": 10,
                            "log_start_offset": 0,
                        }
                    ],
                }
            ]
        },
        "00000000 0000 00000000 | 00000001 0001 74 | 00000001 | 00000000 0000 000000000000000a 000000000000000a "
        "0000000000000000 | 00000000 | ffffffff | 00000000",
    ),
    (
        schemas.LIST_OFFSETS_REQUEST,
        5,
        {
            "replica_id": -1,
            "isolation_level": 1,
            "topics": [{"name": "t", "partitions": [{"partition_index": 0, "timestamp": -2}]}],
        },
        "ffffffff 01 | 00000001 0001 74 | 00000001 | 00000000 ffffffff fffffffffffffffe",
    ),
    (
        schemas.LIST_OFFSETS_RESPONSE,
        5,
        {
            "topics": [
                {"name": "t", "partitions": [{"partition_index": 0, "error_code": 0, "offset": 3, "leader_epoch": 2}]}
            ]
        },
        "00000000 | 00000001 0001 74 | 00000001 | 00000000 0000 ffffffffffffffff 0000000000000003 00000002",
    ),
    (
        schemas.OFFSET_FOR_LEADER_EPOCH_REQUEST,
        0,
        {"topics": [{"topic": "t", "partitions": [{"partition": 0, "leader_epoch": 4}]}]},
        "00000001 0001 74 | 00000001 | 00000000 00000004",
    ),
    (
        schemas.OFFSET_FOR_LEADER_EPOCH_REQUEST,
        3,
        {
            "replica_id": 1,
            "topics": [{"topic": "t", "partitions": [{"partition": 0, "current_leader_epoch": 5, "leader_epoch": 4}]}],
        },
        "00000001 | 00000001 0001 74 | 00000001 | 00000000 00000005 00000004",
    ),
    (
        # error_code comes before the partition here.
        schemas.OFFSET_FOR_LEADER_EPOCH_RESPONSE,
        3,
        {
            "topics": [
                {"topic": "t", "partitions": [{"error_code": 0, "partition": 0, "leader_epoch": 4, "end_offset": 100}]}
            ]
        },
        "00000000 | 00000001 0001 74 | 00000001 | 0000 00000000 00000004 0000000000000064",
    ),
    (schemas.INIT_PRODUCER_ID_REQUEST, 1, {"transactional_id": None, "transaction_timeout_ms": 60000}, "ffff 0000ea60"),
    (
        schemas.INIT_PRODUCER_ID_RESPONSE,
        1,
        {"error_code": 0, "producer_id": (1 << 32) | 1, "producer_epoch": 0},
        "00000000 0000 0000000100000001 0000",
    ),
    (schemas.FIND_COORDINATOR_REQUEST, 1, {"key": "g", "key_type": 0}, "0001 67 00"),
    (
        # The "no coordinator" answer of §10.
        schemas.FIND_COORDINATOR_RESPONSE,
        2,
        {"error_code": 15, "node_id": -1, "host": "", "port": -1},
        "00000000 000f ffff ffffffff 0000 ffffffff",
    ),
    (schemas.API_VERSIONS_REQUEST, 2, {}, ""),
    (
        schemas.API_VERSIONS_RESPONSE,
        2,
        {"error_code": 0, "api_keys": [{"api_key": 3, "min_version": 0, "max_version": 8}]},
        "0000 | 00000001 0003 0000 0008 | 00000000",
    ),
    (
        schemas.LEADER_AND_ISR_REQUEST,
        0,
        {
            "controller_id": 1,
            "controller_epoch": 2,
            "ungrouped_partition_states": [LEADER_AND_ISR_STATE],
            "live_leaders": [{"broker_id": 1, "host_name": "h", "port": 9092}],
        },
        f"00000001 00000002 | 00000001 | 0001 74 {PARTITION_STATE_BYTES} | 00000001 00000001 0001 68 00002384",
    ),
    (
        # v3: broker epoch, grouped by topic, adding/removing replicas and is_new after the replicas.
        schemas.LEADER_AND_ISR_REQUEST,
        3,
        {
            "controller_id": 1,
            "controller_epoch": 2,
            "broker_epoch": 16,
            "topic_states": [{"topic_name": "t", "partition_states": [LEADER_AND_ISR_STATE]}],
            "live_leaders": [{"broker_id": 1, "host_name": "h", "port": 9092}],
        },
        f"00000001 00000002 0000000000000010 | 00000001 0001 74 | 00000001 | {PARTITION_STATE_BYTES} "
        "| 00000000 00000000 01 | 00000001 00000001 0001 68 00002384",
    ),
    (
        schemas.LEADER_AND_ISR_RESPONSE,
        3,
        {"error_code": 0, "partition_errors": [{"topic_name": "t", "partition_index": 0, "error_code": 11}]},
        "0000 | 00000001 0001 74 00000000 000b",
    ),
    (
        schemas.STOP_REPLICA_REQUEST,
        0,
        {
            "controller_id": 1,
            "controller_epoch": 2,
            "delete_partitions": True,
            "ungrouped_partitions": [{"topic_name": "t", "partition_index": 0}],
        },
        "00000001 00000002 01 | 00000001 0001 74 00000000",
    ),
    (
        schemas.STOP_REPLICA_REQUEST,
        1,
        {
            "controller_id": 1,
            "controller_epoch": 2,
            "broker_epoch": 16,
            "delete_partitions": False,
            "topics": [{"name": "t", "partition_indexes": [0, 1]}],
        },
        "00000001 00000002 0000000000000010 00 | 00000001 0001 74 00000002 00000000 00000001",
    ),
    (
        schemas.UPDATE_METADATA_REQUEST,
        0,
        {
            "controller_id": 1,
            "controller_epoch": 2,
            "ungrouped_partition_states": [LEADER_AND_ISR_STATE],
            "live_brokers": [{"id": 1, "v0_host": "h", "v0_port": 9092}],
        },
        f"00000001 00000002 | 00000001 | 0001 74 {PARTITION_STATE_BYTES} | 00000001 00000001 0001 68 00002384",
    ),
    (
        # v5: port BEFORE host in endpoints, then listener and security protocol; rack last.
        schemas.UPDATE_METADATA_REQUEST,
        5,
        {
            "controller_id": 1,
            "controller_epoch": 2,
            "broker_epoch": 16,
            "topic_states": [{"topic_name": "t", "partition_states": [LEADER_AND_ISR_STATE]}],
            "live_brokers": [
                {
                    "id": 1,
                    "endpoints": [{"port": 9092, "host": "h", "listener": "PLAINTEXT", "security_protocol": 0}],
                    "rack": "r",
                }
            ],
        },
        f"00000001 00000002 0000000000000010 | 00000001 0001 74 | 00000001 | {PARTITION_STATE_BYTES} | 00000000 "
        "| 00000001 | 00000001 | 00000001 | 00002384 0001 68 0009 504c41494e54455854 0000 | 0001 72",
    ),
    (schemas.UPDATE_METADATA_RESPONSE, 5, {"error_code": 77}, "004d"),
]


@pytest.mark.parametrize(
    ("message", "version", "value", "expected"),
    [pytest.param(*case, id=f"{case[0].name}-v{case[1]}") for case in KNOWN_ANSWERS],
)
def test_known_answer_bytes(message: Message, version: int, value: dict[str, Any], expected: str) -> None:
    encoded = message.encode(value, version)
    assert encoded.hex() == h(expected).hex()
    decoded = message.decode(h(expected), version)
    assert message.encode(decoded, version) == encoded


def test_decoding_fills_fields_the_version_lacks_with_kafkas_defaults() -> None:
    fetch = schemas.FETCH_REQUEST.decode(
        h("ffffffff 000001f4 00000001 7fffffff 00 | 00000001 0001 74 | 00000001 | 00000000 0000000000000007 00000400"),
        4,
    )
    assert fetch["session_epoch"] == -1 and fetch["forgotten_topics_data"] == [] and fetch["rack_id"] == ""
    assert fetch["topics"][0]["partitions"][0] == {
        "partition": 0,
        "current_leader_epoch": -1,
        "fetch_offset": 7,
        "log_start_offset": -1,
        "partition_max_bytes": 1024,
        "last_fetched_epoch": -1,  # Fetch v12 (Kafka 2.8)
    }
    metadata = schemas.METADATA_RESPONSE.decode(h("00000000 00000000"), 0)
    assert metadata["controller_id"] == -1 and metadata["cluster_id"] is None and metadata["throttle_time_ms"] == 0


def test_default_lists_are_fresh_per_decoded_value() -> None:
    first = schemas.FETCH_REQUEST.decode(h("ffffffff 000001f4 00000001 7fffffff 00 00000000"), 4)
    first["forgotten_topics_data"].append("x")
    second = schemas.FETCH_REQUEST.decode(h("ffffffff 000001f4 00000001 7fffffff 00 00000000"), 4)
    assert second["forgotten_topics_data"] == []


def test_supported_versions_are_kafka_2_8s_but_where_we_say_less() -> None:
    """Kafka 2.8's ranges (issue 15: they supersede kafka-protocol.md §1), but no message format v0/v1
    (Produce < 3, Fetch < 4, ListOffsets v0) and the controller APIs at what our controller sends."""
    assert {k: v for k, v in schemas.SUPPORTED_VERSIONS.items() if v != _kafka_range(k)} == {
        ApiKey.PRODUCE: (3, 9),
        ApiKey.FETCH: (4, 12),
        ApiKey.LIST_OFFSETS: (1, 6),
        ApiKey.LEADER_AND_ISR: (0, 3),
        ApiKey.STOP_REPLICA: (0, 1),
        ApiKey.CONTROLLED_SHUTDOWN: (1, 2),
    }
    for key in (ApiKey.METADATA, ApiKey.API_VERSIONS, ApiKey.FIND_COORDINATOR, ApiKey.INIT_PRODUCER_ID):
        assert schemas.SUPPORTED_VERSIONS[key] == _kafka_range(key)
    assert schemas.SUPPORTED_VERSIONS[ApiKey.METADATA] == (0, 11)
    assert schemas.SUPPORTED_VERSIONS[ApiKey.OFFSET_FOR_LEADER_EPOCH] == (0, 4)
    assert schemas.SUPPORTED_VERSIONS[ApiKey.ELECT_LEADERS] == (0, 2)
    assert set(schemas.SUPPORTED_VERSIONS) == set(ApiKey)
    for key, message in REQUESTS.items():
        assert RESPONSES[key].versions == message.versions


def _kafka_range(key: ApiKey) -> tuple[int, int]:
    return REQUESTS[key].versions.start, REQUESTS[key].versions.stop - 1


# --- the controller APIs' two shapes --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("message", "version"),
    [(schemas.LEADER_AND_ISR_REQUEST, v) for v in range(4)] + [(schemas.UPDATE_METADATA_REQUEST, v) for v in range(6)],
)
def test_partition_states_survive_either_shape(message: Message, version: int) -> None:
    states = [
        {**LEADER_AND_ISR_STATE, "topic_name": "a", "partition_index": 0},
        {**LEADER_AND_ISR_STATE, "topic_name": "b", "partition_index": 0},
        {**LEADER_AND_ISR_STATE, "topic_name": "a", "partition_index": 1},
    ]
    body = {
        "controller_id": 1,
        "controller_epoch": 2,
        "live_leaders": [],
        "live_brokers": [],
        **partition_state_fields(states),
    }
    decoded = message.decode(message.encode(body, version), version)
    flat = sorted(
        ({**state, "topic_name": topic} for topic, state in iter_partition_states(decoded)),
        key=lambda s: (s["topic_name"], s["partition_index"]),
    )
    assert [(s["topic_name"], s["partition_index"], s["isr"]) for s in flat] == [
        ("a", 0, [1, 2]),
        ("a", 1, [1, 2]),
        ("b", 0, [1, 2]),
    ]


@pytest.mark.parametrize("version", [0, 1])
def test_stop_replica_partitions_survive_either_shape(version: int) -> None:
    partitions = [("a", 0), ("b", 3), ("a", 1)]
    body = {
        "controller_id": 1,
        "controller_epoch": 2,
        "delete_partitions": True,
        **stop_replica_partition_fields(partitions),
    }
    decoded = schemas.STOP_REPLICA_REQUEST.decode(schemas.STOP_REPLICA_REQUEST.encode(body, version), version)
    assert sorted(flatten_stop_replica_partitions(decoded)) == sorted(partitions)


# --- agreement with kafka-python (generated from Kafka's JSON) -------------------------------------------------


def _kafka_python_classes() -> dict[ApiKey, tuple[Any, Any]]:
    admin = pytest.importorskip("kafka.protocol.admin")
    consumer = pytest.importorskip("kafka.protocol.consumer")
    metadata = pytest.importorskip("kafka.protocol.metadata")
    producer = pytest.importorskip("kafka.protocol.producer")
    return {
        ApiKey.PRODUCE: (producer.ProduceRequest, producer.ProduceResponse),
        ApiKey.FETCH: (consumer.FetchRequest, consumer.FetchResponse),
        ApiKey.LIST_OFFSETS: (consumer.ListOffsetsRequest, consumer.ListOffsetsResponse),
        ApiKey.METADATA: (metadata.MetadataRequest, metadata.MetadataResponse),
        ApiKey.API_VERSIONS: (metadata.ApiVersionsRequest, metadata.ApiVersionsResponse),
        ApiKey.FIND_COORDINATOR: (metadata.FindCoordinatorRequest, metadata.FindCoordinatorResponse),
        ApiKey.INIT_PRODUCER_ID: (producer.InitProducerIdRequest, producer.InitProducerIdResponse),
        ApiKey.OFFSET_FOR_LEADER_EPOCH: (consumer.OffsetForLeaderEpochRequest, consumer.OffsetForLeaderEpochResponse),
        ApiKey.ELECT_LEADERS: (admin.ElectLeadersRequest, admin.ElectLeadersResponse),
    }


CLIENT_APIS = [
    pytest.param(key, side, version, id=f"{key.name}-{side}-v{version}")
    for key in (
        ApiKey.PRODUCE,
        ApiKey.FETCH,
        ApiKey.LIST_OFFSETS,
        ApiKey.METADATA,
        ApiKey.API_VERSIONS,
        ApiKey.FIND_COORDINATOR,
        ApiKey.INIT_PRODUCER_ID,
        ApiKey.OFFSET_FOR_LEADER_EPOCH,
        ApiKey.ELECT_LEADERS,
    )
    for side in ("request", "response")
    for version in REQUESTS[key].versions
]


@pytest.mark.parametrize(("key", "side", "version"), CLIENT_APIS)
@settings(max_examples=10, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_kafka_python_reads_and_rewrites_our_bytes_unchanged(
    key: ApiKey, side: str, version: int, data: st.DataObject
) -> None:
    """kafka-python decodes what we encode and re-encodes the very same bytes: a field we wrote that it
    does not expect, or one we left out, would shift everything after it."""
    request_class, response_class = _kafka_python_classes()[key]
    message, theirs = (REQUESTS[key], request_class) if side == "request" else (RESPONSES[key], response_class)
    value = data.draw(values(message.schemas[version]))
    if key is ApiKey.METADATA and side == "request" and version == 0:
        value["topics"] = value["topics"] or []  # kafka-python rewrites v0's "all topics" as []
    if key is ApiKey.API_VERSIONS and side == "response":
        value["error_code"] = 0  # on an error kafka-python reads the body as v0 (its fallback, §3)
    ours = message.encode(value, version)
    assert theirs.decode(ours, version=version).encode() == ours
