"""Hostile bytes against the request decoder: whatever arrives, decoding either succeeds or raises a
KafkaProtocolError (which closes that one connection), never anything else, and no frame is believed
larger than the limit before its bytes are read.

Two generators: raw bytes, and mutations of valid requests of every API and version we speak (a flipped
byte, a truncation, a huge count), which reach far deeper into the decoder than random bytes do."""

from __future__ import annotations

import asyncio
import contextlib
import struct
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafkaops.cluster.common.errors import InvalidFrameError, KafkaProtocolError
from kafkaops.cluster.protocol.framing import read_frame
from kafkaops.cluster.protocol.messages import RequestHeader, decode_request, encode_request
from kafkaops.cluster.protocol.records import Record, build_batch, validate_produce_records
from kafkaops.cluster.protocol.schema import Schema
from kafkaops.cluster.protocol.schemas import REQUESTS, SUPPORTED_VERSIONS, ApiKey
from kafkaops.cluster.protocol.types import UUID, ZERO_UUID, Array, Type, _Bytes, _String

FUZZ = settings(max_examples=3000, deadline=None, suppress_health_check=[HealthCheck.too_slow])

_BATCH = build_batch([Record(0, 1_700_000_000_000, b"k", b"v", (("h", b"x"),))])

VALID: dict[ApiKey, dict[str, Any]] = {
    ApiKey.PRODUCE: {
        "transactional_id": None,
        "acks": -1,
        "timeout_ms": 1000,
        "topic_data": [{"name": "t", "partition_data": [{"index": 0, "records": _BATCH}]}],
    },
    ApiKey.FETCH: {
        "replica_id": -1,
        "max_wait_ms": 500,
        "min_bytes": 1,
        "topics": [
            {
                "topic": "t",
                "partitions": [
                    {"partition": 0, "current_leader_epoch": -1, "fetch_offset": 0, "partition_max_bytes": 1 << 20}
                ],
            }
        ],
    },
    ApiKey.LIST_OFFSETS: {
        "replica_id": -1,
        "topics": [{"name": "t", "partitions": [{"partition_index": 0, "timestamp": -2}]}],
    },
    ApiKey.METADATA: {"topics": [{"name": "t"}]},
    ApiKey.LEADER_AND_ISR: {"controller_id": 1, "controller_epoch": 1, "live_leaders": []},
    ApiKey.STOP_REPLICA: {"controller_id": 1, "controller_epoch": 1, "delete_partitions": False},
    ApiKey.UPDATE_METADATA: {"controller_id": 1, "controller_epoch": 1, "live_brokers": []},
    ApiKey.CONTROLLED_SHUTDOWN: {"broker_id": 1},
    ApiKey.FIND_COORDINATOR: {"key": "g"},
    ApiKey.API_VERSIONS: {},
    ApiKey.INIT_PRODUCER_ID: {"transactional_id": None, "transaction_timeout_ms": 1},
    ApiKey.OFFSET_FOR_LEADER_EPOCH: {
        "topics": [{"topic": "t", "partitions": [{"partition": 0, "leader_epoch": 3}]}],
    },
    ApiKey.ELECT_LEADERS: {"topic_partitions": [{"topic": "t", "partition_id": [0, 1]}]},
}


def _minimal(type_: Type) -> Any:
    """The smallest value of a compiled type: the seeds of the APIs without a hand-written one."""
    if isinstance(type_, Schema):
        return {field.name: _minimal(t) for field, t in type_.present}
    if isinstance(type_, Array):
        return []
    if type_ is UUID:
        return ZERO_UUID
    if isinstance(type_, _String):
        return ""
    return b"" if isinstance(type_, _Bytes) else 0


for _key in set(ApiKey) - set(VALID):
    VALID[_key] = _minimal(REQUESTS[_key].schemas[SUPPORTED_VERSIONS[_key][1]])

SEEDS = [
    encode_request(RequestHeader(key, version, 7, "fuzz"), VALID[key])
    for key, (low, high) in SUPPORTED_VERSIONS.items()
    for version in range(low, high + 1)
]


def _decode_or_refuse(payload: bytes) -> None:
    # A KafkaProtocolError closes (or answers) this one connection; anything else would be a bug.
    with contextlib.suppress(KafkaProtocolError):
        decode_request(payload)


def test_every_api_and_version_has_a_valid_seed() -> None:
    assert set(VALID) == set(SUPPORTED_VERSIONS)
    for seed in SEEDS:
        decode_request(seed)


@FUZZ
@given(st.binary(max_size=512))
def test_random_bytes_never_escape_as_anything_but_a_protocol_error(payload: bytes) -> None:
    _decode_or_refuse(payload)


@FUZZ
@given(
    seed=st.sampled_from(SEEDS),
    position=st.integers(min_value=0, max_value=10_000),
    value=st.integers(min_value=0, max_value=255),
    cut=st.integers(min_value=0, max_value=10_000),
    wide=st.sampled_from([0x7FFFFFFF, 0xFFFFFFFF, 0x80000000, 0x00FFFFFF]),
    mode=st.sampled_from(["flip", "truncate", "count", "append"]),
)
def test_mutated_valid_requests_never_escape_as_anything_but_a_protocol_error(
    seed: bytes, position: int, value: int, cut: int, wide: int, mode: str
) -> None:
    data = bytearray(seed)
    at = position % len(data)
    if mode == "flip":
        data[at] ^= value or 1
    elif mode == "truncate":
        del data[cut % len(data) :]
    elif mode == "count":
        # A length or count field blown up: the decoder must not try to allocate it.
        data[at : at + 4] = struct.pack(">I", wide)
    else:
        data += bytes([value]) * (cut % 64)
    _decode_or_refuse(bytes(data))


@FUZZ
@given(position=st.integers(min_value=0, max_value=len(_BATCH) - 1), value=st.integers(min_value=1, max_value=255))
def test_a_produce_batch_with_any_flipped_byte_is_refused_or_still_valid(position: int, value: int) -> None:
    """Every byte of a batch is covered by its length, magic or CRC, except the base offset and the
    partition leader epoch, which the leader overwrites anyway."""
    data = bytearray(_BATCH)
    data[position] ^= value
    try:
        validate_produce_records(bytes(data), 8)
    except KafkaProtocolError:
        return
    assert position < 8 or 12 <= position < 16  # base offset, partition leader epoch


@pytest.mark.parametrize("size", [-1, -(2**31), 100 * 1024 * 1024 + 1, 2**31 - 1])
def test_oversized_or_negative_frames_are_refused_before_their_bytes_are_read(size: int) -> None:
    async def read() -> None:
        reader = asyncio.StreamReader()
        reader.feed_data(struct.pack(">i", size))  # and nothing more: a read of the body would hang
        await asyncio.wait_for(read_frame(reader, 100 * 1024 * 1024), 1)

    with pytest.raises(InvalidFrameError):
        asyncio.run(read())
