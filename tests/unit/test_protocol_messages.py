"""Whole messages: the header-version rule, known request and response frames, the ApiVersions refusal of
kafka-protocol.md §3 byte for byte, and requests that must be refused with a typed error."""

from __future__ import annotations

import contextlib
import uuid
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kafkaops.cluster.common.errors import CorruptMessageError, InvalidRequestError, UnsupportedVersionError
from kafkaops.cluster.protocol.framing import frame
from kafkaops.cluster.protocol.messages import (
    REQUEST_HEADER,
    RESPONSE_HEADER,
    RequestHeader,
    api_versions_refusal,
    decode_request,
    decode_response,
    encode_request,
    encode_response,
    is_unsupported_api_versions,
    request_header_version,
    response_header_version,
)
from kafkaops.cluster.protocol.schemas import SUPPORTED_VERSIONS, ApiKey
from kafkaops.cluster.protocol.shared_array import SharedArray
from kafkaops.cluster.protocol.types import ZERO_UUID


def h(text: str) -> bytes:
    return bytes.fromhex(text.replace("|", " ").replace(" ", ""))


@pytest.mark.parametrize(
    ("key", "version", "request_header", "response_header"),
    [
        (ApiKey.METADATA, 8, 1, 0),
        (ApiKey.METADATA, 9, 2, 1),  # flexible: a version we refuse, but its header is still v2
        (ApiKey.FETCH, 11, 1, 0),
        (ApiKey.FETCH, 12, 2, 1),
        (ApiKey.LEADER_AND_ISR, 3, 1, 0),
        (ApiKey.LEADER_AND_ISR, 4, 2, 1),
        (ApiKey.API_VERSIONS, 2, 1, 0),
        (ApiKey.API_VERSIONS, 3, 2, 0),  # KIP-511: ApiVersions responses always use header v0
        (ApiKey.API_VERSIONS, 4, 2, 0),
        (ApiKey.API_VERSIONS, 77, 2, 0),  # even for versions nobody knows yet
    ],
)
def test_header_version_rule(key: ApiKey, version: int, request_header: int, response_header: int) -> None:
    assert request_header_version(key, version) == request_header
    assert response_header_version(key, version) == response_header


def test_unknown_api_key_is_an_invalid_request() -> None:
    with pytest.raises(InvalidRequestError, match="unknown API key 99"):
        request_header_version(99, 0)
    with pytest.raises(InvalidRequestError, match="unknown API key 66"):  # 42 is DeleteGroups since Kafka 1.1
        decode_request(h("0042 0000 00000001 0000"))


def test_metadata_request_frame() -> None:
    """The same bytes kafka-python 3.0.12 sends for MetadataRequest[8](topics=['t']) with client id 'c'."""
    payload = encode_request(RequestHeader(ApiKey.METADATA, 8, 7, "c"), {"topics": [{"name": "t"}]})
    assert payload == h("0003 0008 00000007 0001 63 | 00000001 0001 74 | 01 00 00")
    request = decode_request(payload)
    assert request.header == RequestHeader(ApiKey.METADATA, 8, 7, "c")
    assert request.body == {
        "topics": [{"name": "t", "topic_id": ZERO_UUID}],  # topic_id: Metadata v10+ (decoding fills it)
        "allow_auto_topic_creation": True,
        "include_cluster_authorized_operations": False,
        "include_topic_authorized_operations": False,
    }


def test_null_client_id_reads_as_empty() -> None:
    request = decode_request(h("0012 0000 00000005 ffff"))
    assert request.header == RequestHeader(ApiKey.API_VERSIONS, 0, 5, "")
    assert request.body == {"client_software_name": "", "client_software_version": ""}  # v3+ fields, defaults


def test_api_versions_v3_request_of_librdkafka_is_read_whole() -> None:
    """librdkafka's first request (§3): header v2, then a flexible body (KIP-511), served since Kafka 2.4."""
    librdkafka_v3 = h(
        "0012 0003 0000002a | 0007 72646b61666b61 | 00 "  # header v2: client_id keeps its INT16 length, no tags
        "| 0b 6c696272646b61666b61 | 06 322e302e32 | 00"  # body: compact "librdkafka", compact "2.0.2", no tags
    )
    request = decode_request(librdkafka_v3)
    assert request.header == RequestHeader(ApiKey.API_VERSIONS, 3, 42, "rdkafka")
    assert request.body == {"client_software_name": "librdkafka", "client_software_version": "2.0.2"}
    assert not is_unsupported_api_versions(request.header)
    body = {"error_code": 0, "api_keys": [{"api_key": 18, "min_version": 0, "max_version": 3}], "throttle_time_ms": 0}
    reply = frame(encode_response(ApiKey.API_VERSIONS, 3, 42, body))
    # response header v0 (KIP-511), then a compact array of one entry with its empty tag buffer, the throttle
    # time and the body's empty tag buffer
    assert reply == h("00000013 | 0000002a | 0000 | 02 | 0012 0000 0003 00 | 00000000 | 00")


def test_api_versions_above_ours_is_read_to_its_correlation_id_and_refused_in_v0_form() -> None:
    future = h("0012 0007 0000002a | 0007 72646b61666b61 | 00 | 0b 6c696272646b61666b61 | 06 322e302e32 | 00")
    request = decode_request(future)
    assert request.header == RequestHeader(ApiKey.API_VERSIONS, 7, 42, "rdkafka")
    assert request.body == {}
    assert is_unsupported_api_versions(request.header)
    reply = frame(encode_response(ApiKey.API_VERSIONS, 0, request.header.correlation_id, api_versions_refusal()))
    assert reply == h("00000010 | 0000002a | 0023 | 00000001 | 0012 0000 0003")  # §3's example, max 3
    # and our client reads that refusal, sent in answer to its v3, as v0 (Kafka's ApiVersionsResponse.parse)
    correlation_id, body = decode_response(ApiKey.API_VERSIONS, 3, reply[4:])
    assert (correlation_id, body["error_code"], body["api_keys"][0]["max_version"]) == (42, 35, 3)


def test_api_versions_header_v2_with_tagged_fields() -> None:
    request = decode_request(h("0012 0004 00000001 | 0003 6b7079 | 02 00 01 ab 05 02 cdef | ffff ff"))
    assert request.header == RequestHeader(ApiKey.API_VERSIONS, 4, 1, "kpy")
    assert is_unsupported_api_versions(request.header)


def test_supported_api_versions_requests_are_answered_normally() -> None:
    request = decode_request(h("0012 0002 00000009 0000"))
    assert not is_unsupported_api_versions(request.header)


def test_an_unsupported_version_of_another_api_is_refused() -> None:
    with pytest.raises(UnsupportedVersionError, match=r"METADATA v12 \(correlation id 7\); we speak v0-11"):
        decode_request(h("0003 000c 00000007 0000 00 | 00 00 00 00"))
    with pytest.raises(UnsupportedVersionError, match="PRODUCE v2"):
        decode_request(h("0000 0002 00000007 0000 | ffff 00000000 00000000"))


@pytest.mark.parametrize(
    "payload",
    [
        "00",  # not even a key and version
        "0003 0008 000000",  # correlation id cut short
        "0003 0008 00000007 0005 6162",  # client id longer than the frame
        "0003 0008 00000007 0000 00000001 0001",  # topic name cut short
        "0003 0008 00000007 0000 00000000 01 00 00 ff",  # a byte left over
        "0012 0003 00000007 0000 80",  # tag buffer count cut short
    ],
)
def test_malformed_requests_are_invalid_requests_caused_by_corrupt_bytes(payload: str) -> None:
    with pytest.raises(InvalidRequestError, match="malformed request") as caught:
        decode_request(h(payload))
    assert isinstance(caught.value.__cause__, CorruptMessageError)


@settings(max_examples=500, deadline=None)
@given(
    key=st.sampled_from([int(k) for k in ApiKey] + [7, 99, -1]),
    version=st.integers(-1, 13),
    rest=st.binary(max_size=48),
)
def test_garbage_requests_raise_only_typed_errors(key: int, version: int, rest: bytes) -> None:
    payload = key.to_bytes(2, "big", signed=True) + version.to_bytes(2, "big", signed=True) + rest
    with contextlib.suppress(InvalidRequestError, UnsupportedVersionError):
        decode_request(payload)


MINIMAL: dict[ApiKey, dict[str, Any]] = {
    ApiKey.PRODUCE: {"acks": 1, "timeout_ms": 1000, "topic_data": []},
    ApiKey.FETCH: {"max_wait_ms": 500, "min_bytes": 1, "topics": []},
    ApiKey.LIST_OFFSETS: {"replica_id": -1, "topics": []},
    ApiKey.METADATA: {"topics": []},
    ApiKey.LEADER_AND_ISR: {"controller_id": 1, "controller_epoch": 1, "live_leaders": []},
    ApiKey.STOP_REPLICA: {"controller_id": 1, "controller_epoch": 1, "delete_partitions": False},
    ApiKey.UPDATE_METADATA: {"controller_id": 1, "controller_epoch": 1, "live_brokers": []},
    ApiKey.CONTROLLED_SHUTDOWN: {"broker_id": 1},
    ApiKey.FIND_COORDINATOR: {"key": "g"},
    ApiKey.API_VERSIONS: {},
    ApiKey.INIT_PRODUCER_ID: {"transactional_id": None, "transaction_timeout_ms": 1},
    ApiKey.OFFSET_FOR_LEADER_EPOCH: {"topics": []},
    ApiKey.ELECT_LEADERS: {"topic_partitions": None},
}


@pytest.mark.parametrize(
    ("key", "version"),
    [
        (key, version)
        for key in MINIMAL
        for version in range(SUPPORTED_VERSIONS[key][0], SUPPORTED_VERSIONS[key][1] + 1)
    ],
)
def test_every_request_survives_header_and_body(key: ApiKey, version: int) -> None:
    minimal = MINIMAL
    header = RequestHeader(key, version, 2**31 - 1, "kafkaops")
    request = decode_request(encode_request(header, minimal[key]))
    assert request.header == header
    assert {k: request.body[k] for k in minimal[key]} == minimal[key]


def test_response_frame_echoes_the_correlation_id() -> None:
    body = {"brokers": [], "topics": []}
    payload = encode_response(ApiKey.METADATA, 0, 0x01020304, body)
    assert payload == h("01020304 | 00000000 00000000")
    correlation_id, decoded = decode_response(ApiKey.METADATA, 0, payload)
    assert correlation_id == 0x01020304
    assert decoded["brokers"] == [] and decoded["topics"] == [] and decoded["controller_id"] == -1


def test_malformed_responses_are_corrupt() -> None:
    with pytest.raises(CorruptMessageError):
        decode_response(ApiKey.METADATA, 0, h("01020304 00000000"))


def test_flexible_headers_round_trip_with_tags() -> None:
    """Header v2 / response header v1 exist for the ApiVersions exception; their tags are carried opaquely."""
    request_header = {
        "request_api_key": 18,
        "request_api_version": 3,
        "correlation_id": 1,
        "client_id": None,
        "tagged_fields": {0: b"\xab", 5: b""},
    }
    encoded = REQUEST_HEADER.encode(request_header, 2)
    assert encoded == h("0012 0003 00000001 ffff | 02 00 01 ab 05 00")
    assert REQUEST_HEADER.decode(encoded, 2) == request_header
    assert RESPONSE_HEADER.encode({"correlation_id": 7}, 1) == h("00000007 00")
    assert REQUEST_HEADER.encode(request_header, 0) == h("0012 0003 00000001")


def test_tags_out_of_order_are_corrupt() -> None:
    with pytest.raises(CorruptMessageError, match="out of order"):
        REQUEST_HEADER.decode(h("0012 0003 00000001 ffff | 02 05 00 01 00"), 2)


def test_refusal_lists_only_api_versions_with_our_range() -> None:
    assert api_versions_refusal() == {
        "error_code": 35,
        "api_keys": [{"api_key": 18, "min_version": 0, "max_version": SUPPORTED_VERSIONS[ApiKey.API_VERSIONS][1]}],
    }


# --- real frames from kafka-python (skipped when it is not installed) ---------------------------------------


def test_kafka_python_api_versions_v4_is_refused_and_it_reads_the_refusal() -> None:
    """kafka-python 3 opens with ApiVersions v4; on error 35 it reads the body as v0 and retries with the
    key-18 maximum it finds there (§3)."""
    metadata = pytest.importorskip("kafka.protocol.metadata")
    sent = metadata.ApiVersionsRequest[4](client_software_name="kafka-python", client_software_version="3.0.12")
    sent.with_header(correlation_id=11, client_id="kafka-python-3.0.12")
    request = decode_request(sent.encode(header=True))
    assert request.header == RequestHeader(ApiKey.API_VERSIONS, 4, 11, "kafka-python-3.0.12")
    assert is_unsupported_api_versions(request.header)
    reply = encode_response(ApiKey.API_VERSIONS, 0, 11, api_versions_refusal())
    theirs = metadata.ApiVersionsResponse.decode(reply, version=4, header=True)
    assert theirs.header.correlation_id == 11
    assert theirs.error_code == 35
    assert [(k.api_key, k.min_version, k.max_version) for k in theirs.api_keys] == [(18, 0, 3)]


def test_kafka_python_request_frames_decode() -> None:
    consumer = pytest.importorskip("kafka.protocol.consumer")
    fetch = consumer.FetchRequest[11](
        replica_id=-1,
        max_wait_ms=500,
        min_bytes=1,
        max_bytes=52428800,
        isolation_level=0,
        session_id=0,
        session_epoch=0,
        topics=[
            consumer.FetchRequest.FetchTopic(
                topic="t",
                partitions=[
                    consumer.FetchRequest.FetchTopic.FetchPartition(
                        partition=0,
                        current_leader_epoch=-1,
                        fetch_offset=5,
                        log_start_offset=-1,
                        partition_max_bytes=1048576,
                    )
                ],
            )
        ],
        forgotten_topics_data=[],
        rack_id="",
    )
    fetch.with_header(correlation_id=3, client_id="kp")
    request = decode_request(fetch.encode(header=True))
    assert request.header == RequestHeader(ApiKey.FETCH, 11, 3, "kp")
    assert request.body["max_bytes"] == 52428800
    assert request.body["topics"][0]["partitions"][0]["fetch_offset"] == 5


@pytest.mark.parametrize("version", range(8))
def test_a_shared_array_encodes_as_the_plain_list_at_every_version(version: int) -> None:
    """The controller's UpdateMetadata shares its topic states, encoded once, among the brokers' bodies."""
    states = [
        {
            "topic_name": f"t{t}",
            "topic_id": uuid.UUID(int=t + 1),
            "partition_states": [
                {
                    "topic_name": f"t{t}",
                    "partition_index": p,
                    "controller_epoch": 3,
                    "leader": 1,
                    "leader_epoch": 4,
                    "isr": [1, 2],
                    "zk_version": 5,
                    "replicas": [1, 2],
                    "offline_replicas": [],
                }
                for p in range(3)
            ],
        }
        for t in range(2)
    ]
    shared = SharedArray(states)

    def body(topic_states: list[Any], broker_epoch: int) -> dict[str, Any]:
        return {
            "controller_id": 1,
            "controller_epoch": 3,
            "broker_epoch": broker_epoch,
            "ungrouped_partition_states": [s for t in states for s in t["partition_states"]],
            "topic_states": topic_states,
            "live_brokers": [],
        }

    header = RequestHeader(ApiKey.UPDATE_METADATA, version, 7, "c")
    for broker_epoch in (10, 20):  # the second encode reuses the first one's bytes
        assert encode_request(header, body(shared, broker_epoch)) == encode_request(header, body(states, broker_epoch))
