"""The `__consumer_offsets` record schemas, byte for byte (Kafka 2.8's OffsetCommitKey/Value,
GroupMetadataKey/Value, written with `MessageUtil.toVersionPrefixedBytes`)."""

from __future__ import annotations

import struct

import pytest

from kafkaops.cluster.common.errors import CorruptMessageError
from kafkaops.cluster.protocol.group_coordinator_records import (
    GroupMetadataKey,
    OffsetAndMetadata,
    OffsetKey,
    format_record_key_and_value,
    group_metadata_key,
    group_metadata_value,
    offset_commit_key,
    offset_commit_value,
    read_group_message_value,
    read_message_key,
    read_offset_message_value,
)


def test_offset_commit_key_is_version_1_group_topic_partition() -> None:
    key = offset_commit_key("g", "t", 3)
    assert key.hex() == "0001" + "0001" + "67" + "0001" + "74" + "00000003"
    assert read_message_key(key) == OffsetKey(1, "g", "t", 3)
    # version 0 has the same layout (Kafka 0.9 wrote it)
    assert read_message_key(bytes.fromhex("0000000167000174ffffffff")) == OffsetKey(0, "g", "t", -1)


def test_group_metadata_key_is_version_2() -> None:
    key = group_metadata_key("grp")
    assert key.hex() == "0002" + "0003" + b"grp".hex()
    assert read_message_key(key) == GroupMetadataKey(2, "grp")


def test_unknown_key_versions_are_refused() -> None:
    with pytest.raises(CorruptMessageError, match="Unknown group metadata message version: 3"):
        read_message_key(bytes.fromhex("00030000"))
    with pytest.raises(CorruptMessageError):
        read_message_key(b"\x00")


def test_offset_commit_value_v3_carries_the_leader_epoch() -> None:
    value = offset_commit_value(OffsetAndMetadata(5, 7, "md", 1000))
    assert value.hex() == "0003" + "0000000000000005" + "00000007" + "0002" + b"md".hex() + "00000000000003e8"
    assert read_offset_message_value(value) == OffsetAndMetadata(5, 7, "md", 1000)
    no_epoch = offset_commit_value(OffsetAndMetadata(5, None, "", 1000))
    assert no_epoch[10:14] == b"\xff\xff\xff\xff"
    assert read_offset_message_value(no_epoch) == OffsetAndMetadata(5, None, "", 1000)


def test_offset_commit_value_v1_when_an_expire_timestamp_is_given() -> None:
    value = offset_commit_value(OffsetAndMetadata(9, 4, "", 1000, 2000))
    # v1: offset, metadata, commit timestamp, expire timestamp (no leader epoch)
    assert value.hex() == "0001" + "0000000000000009" + "0000" + "00000000000003e8" + "00000000000007d0"
    assert read_offset_message_value(value) == OffsetAndMetadata(9, None, "", 1000, 2000)


@pytest.mark.parametrize("version", [0, 2])
def test_older_offset_commit_values_decode(version: int) -> None:
    value = offset_commit_value(OffsetAndMetadata(1, None, "x", 10), version)
    assert read_offset_message_value(value) == OffsetAndMetadata(1, None, "x", 10)


def test_tombstones_decode_to_none() -> None:
    assert read_offset_message_value(None) is None
    assert read_group_message_value(None) is None


MEMBER = {
    "member_id": "m-1",
    "group_instance_id": "static",
    "client_id": "c",
    "client_host": "/127.0.0.1",
    "rebalance_timeout": 300000,
    "session_timeout": 10000,
    "subscription": b"\x00\x01",
    "assignment": b"\x02",
}
GROUP = {
    "protocol_type": "consumer",
    "generation": 3,
    "protocol": "range",
    "leader": "m-1",
    "current_state_timestamp": 1234,
    "members": [MEMBER],
}


def test_group_metadata_value_v3() -> None:
    value = group_metadata_value(GROUP)
    expected = (
        "0003"
        + "0008"
        + b"consumer".hex()
        + "00000003"
        + "0005"
        + b"range".hex()
        + "0003"
        + b"m-1".hex()
        + "00000000000004d2"
        + "00000001"
        + "0003"
        + b"m-1".hex()
        + "0006"
        + b"static".hex()
        + "0001"
        + b"c".hex()
        + "000a"
        + b"/127.0.0.1".hex()
        + "000493e0"
        + "00002710"
        + "00000002"
        + "0001"
        + "00000001"
        + "02"
    )
    assert value.hex() == expected
    assert read_group_message_value(value) == GROUP


def test_empty_group_metadata_with_null_protocol_and_leader() -> None:
    empty = {"protocol_type": "consumer", "generation": 4, "protocol": None, "leader": None, "members": []}
    value = group_metadata_value(empty)
    assert (
        value.hex()
        == "0003" + "0008" + b"consumer".hex() + "00000004" + "ffff" + "ffff" + "ffffffffffffffff" + "00000000"
    )
    assert read_group_message_value(value) == {**empty, "current_state_timestamp": -1}


def test_group_metadata_value_v0_takes_the_session_timeout_as_rebalance_timeout() -> None:
    v0 = group_metadata_value(GROUP, version=0)
    decoded = read_group_message_value(v0)
    assert decoded is not None
    (member,) = decoded["members"]
    assert member["rebalance_timeout"] == member["session_timeout"] == 10000
    assert member["group_instance_id"] is None and decoded["current_state_timestamp"] == -1


def test_unknown_value_versions_are_refused() -> None:
    with pytest.raises(CorruptMessageError, match="Unknown offset message version: 4"):
        read_offset_message_value(bytes.fromhex("0004"))
    with pytest.raises(CorruptMessageError, match="Unknown group metadata message version: 9"):
        read_group_message_value(bytes.fromhex("0009"))


def _consumer_assignment(partitions: dict[str, list[int]], user_data: bytes | None) -> bytes:
    """ConsumerProtocolAssignment v1 (what Kafka's consumers send in SyncGroup)."""
    out = struct.pack(">hi", 1, len(partitions))
    for topic, indexes in partitions.items():
        out += (
            struct.pack(">h", len(topic)) + topic.encode() + struct.pack(f">i{len(indexes)}i", len(indexes), *indexes)
        )
    return out + (struct.pack(">i", -1) if user_data is None else struct.pack(">i", len(user_data)) + user_data)


def test_kafkas_text_of_the_records() -> None:
    key = offset_commit_key("g", "t", 0)
    assert format_record_key_and_value(key, offset_commit_value(OffsetAndMetadata(5, None, "", 1))) == (
        "offset_commit::group=g,partition=t-0",
        "offset=5",
    )
    assert (
        format_record_key_and_value(key, offset_commit_value(OffsetAndMetadata(5, 2, "m", 1)))[1]
        == "offset=5,metadata=m"
    )
    assert format_record_key_and_value(key, None)[1] == "<DELETE>"
    members = [
        {**MEMBER, "member_id": "a", "assignment": _consumer_assignment({"t": [0, 1], "u": [2]}, None)},
        {**MEMBER, "member_id": "b", "assignment": _consumer_assignment({"t": [2]}, b"\x00\x0a\xff")},
    ]
    value = group_metadata_value({**GROUP, "members": members})
    assert format_record_key_and_value(group_metadata_key("g"), value) == (
        "group_metadata::group=g",
        '{"protocolType":"consumer","protocol":"range","generationId":3,"assignment":"{a=[t-0, t-1, u-2],b=[t-2]:AFF}"}',
    )
    connect = group_metadata_value(
        {**GROUP, "protocol_type": "connect", "members": [{**MEMBER, "assignment": b"\x00\x1f"}]}
    )
    assert format_record_key_and_value(group_metadata_key("g"), connect)[1].endswith('"assignment":"{m-1=1F}"}')
    assert format_record_key_and_value(group_metadata_key("g"), None) == ("group_metadata::group=g", "<DELETE>")
    with pytest.raises(CorruptMessageError, match="missing key"):
        format_record_key_and_value(None, b"")
