"""Kafka's `ConsumerProtocol`: the bytes consumers put in JoinGroup (their subscription) and SyncGroup (their
assignment), which the coordinator only relays and DescribeGroups hands back to admin tools.

    Subscription   version int16 | topics [string] | user_data bytes | owned_partitions (v1+) [topic [int32]]
    Assignment     version int16 | partitions [topic string, [int32]] | user_data bytes

Versions 0 and 1 (Kafka 2.4+ writes 1, reads any: fields a newer version adds are ignored). Pure: no I/O.
Malformed bytes raise CorruptMessageError, as every decoder of ours does.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from kafkaops.cluster.common.errors import CorruptMessageError
from kafkaops.cluster.zk.values import TopicPartition

PROTOCOL_TYPE = "consumer"
"""JoinGroup's protocol type of every Kafka consumer (`ConsumerProtocol.PROTOCOL_TYPE`)."""
VERSION = 1


@dataclass(frozen=True, slots=True)
class Subscription:
    topics: tuple[str, ...]
    user_data: bytes | None = None
    owned_partitions: tuple[TopicPartition, ...] = ()


@dataclass(frozen=True, slots=True)
class Assignment:
    partitions: tuple[TopicPartition, ...]
    user_data: bytes | None = field(default=None)


def _string(text: str) -> bytes:
    raw = text.encode()
    return struct.pack(">h", len(raw)) + raw


def _bytes(data: bytes | None) -> bytes:
    return struct.pack(">i", -1) if data is None else struct.pack(">i", len(data)) + data


def _by_topic(partitions: Iterable[TopicPartition]) -> bytes:
    grouped: dict[str, list[int]] = {}
    for tp in partitions:
        grouped.setdefault(tp.topic, []).append(tp.partition)
    out = [struct.pack(">i", len(grouped))]
    for topic, ids in grouped.items():
        out.append(_string(topic) + struct.pack(f">i{len(ids)}i", len(ids), *ids))
    return b"".join(out)


def encode_subscription(subscription: Subscription, version: int = VERSION) -> bytes:
    out = [struct.pack(">hi", version, len(subscription.topics))]
    out += [_string(topic) for topic in subscription.topics]
    out.append(_bytes(subscription.user_data))
    if version >= 1:
        out.append(_by_topic(subscription.owned_partitions))
    return b"".join(out)


def encode_assignment(assignment: Assignment, version: int = VERSION) -> bytes:
    return struct.pack(">h", version) + _by_topic(assignment.partitions) + _bytes(assignment.user_data)


class _Reader:
    def __init__(self, data: bytes) -> None:
        self.data, self.pos = data, 0

    def take(self, fmt: str) -> int:
        size = struct.calcsize(fmt)
        if self.pos + size > len(self.data):
            raise CorruptMessageError("consumer protocol bytes cut short")
        (value,) = struct.unpack_from(fmt, self.data, self.pos)
        self.pos += size
        return int(value)

    def raw(self, size: int) -> bytes:
        if size < 0 or self.pos + size > len(self.data):
            raise CorruptMessageError("consumer protocol bytes cut short")
        chunk = self.data[self.pos : self.pos + size]
        self.pos += size
        return chunk

    def string(self) -> str:
        try:
            return self.raw(self.take(">h")).decode()
        except UnicodeDecodeError:
            raise CorruptMessageError("consumer protocol string is not UTF-8") from None

    def nullable_bytes(self) -> bytes | None:
        size = self.take(">i")
        return None if size < 0 else self.raw(size)

    def count(self) -> int:
        n = self.take(">i")
        if n < 0 or n > len(self.data):
            raise CorruptMessageError(f"consumer protocol array of {n} items")
        return n

    def partitions(self) -> tuple[TopicPartition, ...]:
        found: list[TopicPartition] = []
        for _ in range(self.count()):
            topic = self.string()
            found += [TopicPartition(topic, self.take(">i")) for _ in range(self.count())]
        return tuple(found)


def decode_subscription(data: bytes) -> Subscription:
    reader = _Reader(data)
    version = reader.take(">h")
    topics = tuple(reader.string() for _ in range(reader.count()))
    user_data = reader.nullable_bytes()
    owned = reader.partitions() if version >= 1 and reader.pos < len(data) else ()
    return Subscription(topics, user_data, owned)


def decode_assignment(data: bytes) -> Assignment:
    reader = _Reader(data)
    reader.take(">h")
    partitions = reader.partitions()
    user_data = reader.nullable_bytes() if reader.pos < len(data) else None
    return Assignment(partitions, user_data)


def range_assign(
    partitions_per_topic: dict[str, int], subscriptions: dict[str, Sequence[str]]
) -> dict[str, list[TopicPartition]]:
    """Kafka's `RangeAssignor`: per topic, its partitions in order split into contiguous ranges over the
    members subscribed to it, sorted by member id; the first `partitions % members` get one more."""
    assignment: dict[str, list[TopicPartition]] = {member: [] for member in subscriptions}
    for topic in sorted({t for topics in subscriptions.values() for t in topics}):
        count = partitions_per_topic.get(topic)
        if count is None:
            continue
        members = sorted(m for m, topics in subscriptions.items() if topic in topics)
        per_member, extra = divmod(count, len(members))
        start = 0
        for i, member in enumerate(members):
            length = per_member + (1 if i < extra else 0)
            assignment[member] += [TopicPartition(topic, p) for p in range(start, start + length)]
            start += length
    return assignment
