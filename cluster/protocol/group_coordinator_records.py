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
