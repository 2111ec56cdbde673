"""Which partition a record goes to: Kafka's `DefaultPartitioner` for keyed records (murmur2 of the key)
and its `StickyPartitionCache` (KIP-480) for records without a key."""

from __future__ import annotations

import random

from kafkaops.cluster.common.jvm_text import java_int


def murmur2(data: bytes) -> int:
    """Kafka's `Utils.murmur2` (signed 32-bit result), which its default partitioner hashes keys with."""
    m, r = 0x5BD1E995, 24
    length = len(data)
    h = (0x9747B28C ^ length) & 0xFFFFFFFF
    for i in range(0, length - length % 4, 4):
        k = data[i] | (data[i + 1] << 8) | (data[i + 2] << 16) | (data[i + 3] << 24)
        k = (k * m) & 0xFFFFFFFF
        k ^= k >> r
        k = (k * m) & 0xFFFFFFFF
        h = (h * m) & 0xFFFFFFFF
        h ^= k
    tail = length & ~3
    extra = length % 4
    if extra == 3:
        h ^= data[tail + 2] << 16
    if extra >= 2:
        h ^= data[tail + 1] << 8
    if extra >= 1:
        h ^= data[tail]
        h = (h * m) & 0xFFFFFFFF
    h ^= h >> 13
    h = (h * m) & 0xFFFFFFFF
    h ^= h >> 15
    return java_int(h)


def partition_for_key(key: bytes, num_partitions: int) -> int:
    """Kafka's DefaultPartitioner for a keyed record: `toPositive(murmur2(key)) % numPartitions`."""
    return (murmur2(key) & 0x7FFFFFFF) % num_partitions


class StickyPartitioner:
    """Kafka 2.4+'s choice for records without a key: one partition for a whole batch, a new random one
    (different from the last, when there is a choice) for the next batch (KIP-480)."""

    def __init__(self, rng: random.Random) -> None:
        self._rng = rng
        self._current: dict[str, int] = {}

    def partition(self, topic: str, num_partitions: int) -> int:
        if topic not in self._current or self._current[topic] >= num_partitions:
            self._current[topic] = self._rng.randrange(num_partitions)
        return self._current[topic]

    def new_batch(self, topic: str, num_partitions: int) -> int:
        previous = self._current.get(topic)
        choice = self._rng.randrange(num_partitions)
        if num_partitions > 1 and choice == previous:
            choice = (choice + 1 + self._rng.randrange(num_partitions - 1)) % num_partitions
        self._current[topic] = choice
        return choice
