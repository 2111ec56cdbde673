"""The records of `__consumer_offsets`: Kafka 2.8's OffsetCommitKey/Value and GroupMetadataKey/Value.

Kafka 2.8 declares them as message files (core/src/main/resources/common/message/, copied into
`message/` here) and writes each key and value as `MessageUtil.toVersionPrefixedBytes`: an INT16 version,
then the struct at that version. The key's version tells the record's kind: 0 and 1 an offset commit,
2 a group's metadata (`GroupMetadataManager.readMessageKey`). A null value is a tombstone.

What Kafka 2.8 writes (IBP 2.8): OffsetCommitKey v1, OffsetCommitValue v3 (leader epoch) or v1 when the
commit carries an explicit expire timestamp (OffsetCommit v1 with a commit timestamp, v2-v4 with a
retention time), GroupMetadataKey v2, GroupMetadataValue v3 (static member ids).
"""

from __future__ import annotations

import json
import struct
from dataclasses import dataclass
from importlib import resources
from typing import Any

from kafkaops.cluster.common.errors import CorruptMessageError
from kafkaops.cluster.protocol.message_specs import build_message, read_json
from kafkaops.cluster.protocol.schema import Message

NO_PARTITION_LEADER_EPOCH = -1
DEFAULT_TIMESTAMP = -1
"""`OffsetCommitRequest.DEFAULT_TIMESTAMP`: no expire timestamp."""
NO_METADATA = ""
"""`OffsetAndMetadata.NoMetadata`."""

OFFSET_COMMIT_KEY_VERSION = 1
GROUP_METADATA_KEY_VERSION = 2
OFFSET_COMMIT_VALUE_VERSION = 3
GROUP_METADATA_VALUE_VERSION = 3


def _load(name: str) -> Message:
    text = resources.files(__package__).joinpath("message", f"{name}.json").read_text(encoding="utf-8")
    return build_message(read_json(text), {})


OFFSET_COMMIT_KEY = _load("OffsetCommitKey")
OFFSET_COMMIT_VALUE = _load("OffsetCommitValue")
GROUP_METADATA_KEY = _load("GroupMetadataKey")
GROUP_METADATA_VALUE = _load("GroupMetadataValue")


@dataclass(frozen=True, slots=True)
class OffsetAndMetadata:
    """Kafka's `kafka.common.OffsetAndMetadata`: a committed offset as the coordinator keeps it."""

    offset: int
    leader_epoch: int | None
    metadata: str
    commit_timestamp: int
    expire_timestamp: int | None = None


@dataclass(frozen=True, slots=True)
class OffsetKey:
    """The key of an offset commit record (`OffsetKey`: version, GroupTopicPartition)."""

    version: int
    group: str
    topic: str
    partition: int


@dataclass(frozen=True, slots=True)
class GroupMetadataKey:
    """The key of a group metadata record."""

    version: int
    group: str


def _prefixed(message: Message, value: dict[str, Any], version: int) -> bytes:
    return struct.pack(">h", version) + message.encode(value, version)


def _version(buf: bytes) -> int:
    if len(buf) < 2:
        raise CorruptMessageError(f"a __consumer_offsets key or value of {len(buf)} bytes has no version")
    version: int = struct.unpack_from(">h", buf, 0)[0]
    return version


# --- keys ---------------------------------------------------------------------------------------------


def offset_commit_key(group: str, topic: str, partition: int) -> bytes:
    """`GroupMetadataManager.offsetCommitKey`."""
    value = {"group": group, "topic": topic, "partition": partition}
    return _prefixed(OFFSET_COMMIT_KEY, value, OFFSET_COMMIT_KEY_VERSION)


def group_metadata_key(group: str) -> bytes:
    """`GroupMetadataManager.groupMetadataKey`."""
    return _prefixed(GROUP_METADATA_KEY, {"group": group}, GROUP_METADATA_KEY_VERSION)


def read_message_key(buf: bytes) -> OffsetKey | GroupMetadataKey:
    """`GroupMetadataManager.readMessageKey`; CorruptMessageError for another version or malformed bytes."""
    version = _version(buf)
    if version in OFFSET_COMMIT_KEY.versions:
        key = OFFSET_COMMIT_KEY.decode(buf, version, 2)
        return OffsetKey(version, key["group"], key["topic"], key["partition"])
    if version in GROUP_METADATA_KEY.versions:
        return GroupMetadataKey(version, GROUP_METADATA_KEY.decode(buf, version, 2)["group"])
    raise CorruptMessageError(f"Unknown group metadata message version: {version}")


# --- values -------------------------------------------------------------------------------------------


def offset_commit_value_version(offset: OffsetAndMetadata) -> int:
    """The version Kafka 2.8 (IBP >= 2.1-IV1) writes: v1 carries an explicit expire timestamp, v3 the rest."""
    return 1 if offset.expire_timestamp is not None else OFFSET_COMMIT_VALUE_VERSION


def offset_commit_value(offset: OffsetAndMetadata, version: int | None = None) -> bytes:
    """`GroupMetadataManager.offsetCommitValue`."""
    value = {
        "offset": offset.offset,
        "leader_epoch": NO_PARTITION_LEADER_EPOCH if offset.leader_epoch is None else offset.leader_epoch,
        "metadata": offset.metadata,
        "commit_timestamp": offset.commit_timestamp,
        "expire_timestamp": DEFAULT_TIMESTAMP if offset.expire_timestamp is None else offset.expire_timestamp,
    }
    return _prefixed(OFFSET_COMMIT_VALUE, value, offset_commit_value_version(offset) if version is None else version)


def read_offset_message_value(buf: bytes | None) -> OffsetAndMetadata | None:
    """`GroupMetadataManager.readOffsetMessageValue`: None for a tombstone."""
    if buf is None:
        return None
    version = _version(buf)
    if version not in OFFSET_COMMIT_VALUE.versions:
        raise CorruptMessageError(f"Unknown offset message version: {version}")
    value = OFFSET_COMMIT_VALUE.decode(buf, version, 2)
    epoch, expire = value["leader_epoch"], value["expire_timestamp"]
    return OffsetAndMetadata(
        value["offset"],
        None if epoch == NO_PARTITION_LEADER_EPOCH else epoch,
        value["metadata"],
        value["commit_timestamp"],
        None if expire == DEFAULT_TIMESTAMP else expire,
    )


def group_metadata_value(value: dict[str, Any], version: int = GROUP_METADATA_VALUE_VERSION) -> bytes:
    """`GroupMetadataManager.groupMetadataValue` of a GroupMetadataValue dict: protocol_type, generation,
    protocol, leader, current_state_timestamp, members (member_id, group_instance_id, client_id, client_host,
    rebalance_timeout, session_timeout, subscription, assignment)."""
    defaults = {"current_state_timestamp": -1}
    member_defaults = {"group_instance_id": None, "rebalance_timeout": 0}
    full = {**defaults, **value, "members": [{**member_defaults, **m} for m in value.get("members", [])]}
    return _prefixed(GROUP_METADATA_VALUE, full, version)


def read_group_message_value(buf: bytes | None) -> dict[str, Any] | None:
    """`GroupMetadataManager.readGroupMessageValue` as a GroupMetadataValue dict (None for a tombstone).
    As Kafka does, a v0 member's rebalance timeout is its session timeout."""
    if buf is None:
        return None
    version = _version(buf)
    if version not in GROUP_METADATA_VALUE.versions:
        raise CorruptMessageError(f"Unknown group metadata message version: {version}")
    value = GROUP_METADATA_VALUE.decode(buf, version, 2)
    if version == 0:
        for member in value["members"]:
            member["rebalance_timeout"] = member["session_timeout"]
    return value


# --- Kafka's text of the records (`GroupMetadataManager.formatRecordKeyAndValue`, dump-log --offsets-decoder) --


def _hex(data: bytes) -> str:
    """Kafka's `"%X".format(BigInt(1, bytes))`: upper case, no leading zeros, empty for no bytes."""
    return format(int.from_bytes(data, "big"), "X") if data else ""


def _consumer_assignment(data: bytes) -> tuple[list[str], bytes | None]:
    """`ConsumerProtocol.deserializeAssignment`: the partitions as `topic-partition`, and the user data."""
    try:
        (version,) = struct.unpack_from(">h", data, 0)
        if version < 0:
            raise CorruptMessageError(f"Unsupported assignment version: {version}")
        position, partitions = 2, list[str]()
        (topics,) = struct.unpack_from(">i", data, position)
        position += 4
        for _ in range(max(topics, 0)):
            (length,) = struct.unpack_from(">h", data, position)
            topic = data[position + 2 : position + 2 + length].decode()
            position += 2 + length
            (count,) = struct.unpack_from(">i", data, position)
            indexes = struct.unpack_from(f">{max(count, 0)}i", data, position + 4)
            position += 4 + 4 * max(count, 0)
            partitions.extend(f"{topic}-{p}" for p in indexes)
        (size,) = struct.unpack_from(">i", data, position)
    except struct.error as error:
        raise CorruptMessageError(f"Error reading a consumer assignment: {error}") from None
    user_data = None if size < 0 else data[position + 4 : position + 4 + size]
    return partitions, user_data


def _member_assignment(protocol_type: str, member: dict[str, Any]) -> str:
    if protocol_type != "consumer":
        return f"{member['member_id']}={_hex(member['assignment'])}"
    partitions, user_data = _consumer_assignment(member["assignment"])
    assigned = f"{member['member_id']}=[{', '.join(partitions)}]"
    return f"{assigned}:{_hex(user_data)}" if user_data else assigned


def format_record_key_and_value(key: bytes | None, value: bytes | None) -> tuple[str, str]:
    """Kafka 2.8's `formatRecordKeyAndValue`: `offset_commit::group=g,partition=t-0` with `offset=5[,metadata=m]`,
    `group_metadata::group=g` with a JSON summary, `<DELETE>` for a tombstone."""
    if key is None:
        raise CorruptMessageError("Failed to decode message using offset topic decoder (message had a missing key)")
    parsed = read_message_key(key)
    if isinstance(parsed, OffsetKey):
        offset = read_offset_message_value(value)
        key_text = f"offset_commit::group={parsed.group},partition={parsed.topic}-{parsed.partition}"
        if offset is None:
            return key_text, "<DELETE>"
        metadata = f",metadata={offset.metadata}" if offset.metadata else ""
        return key_text, f"offset={offset.offset}{metadata}"
    group = read_group_message_value(value)
    key_text = f"group_metadata::group={parsed.group}"
    if group is None:
        return key_text, "<DELETE>"
    protocol_type = group["protocol_type"] or ""
    assignment = ",".join(_member_assignment(protocol_type, m) for m in group["members"])
    summary = {
        "protocolType": protocol_type,
        "protocol": group["protocol"],
        "generationId": group["generation"],
        "assignment": "{" + assignment + "}",
    }
    return key_text, json.dumps(summary, ensure_ascii=False, separators=(",", ":"))
