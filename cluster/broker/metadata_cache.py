"""The broker's metadata cache: what the controller's UpdateMetadata requests said (Kafka's `ZkMetadataCache`).

It answers Kafka's Metadata request. Replaced wholesale per partition by each UpdateMetadata, whose
partition states it keeps as they came (as Kafka's cache does); a partition whose leader is -2
(LeaderDuringDelete) is removed, and with a topic's last partition its id. Topic ids (UpdateMetadata v7+)
are kept per topic: a request that names none for a topic keeps the one known, as Kafka 2.8's cache
merges them. Thread-safe: the request handlers read it while UpdateMetadata writes it.
"""

from __future__ import annotations

import threading
import uuid
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from kafkaops.cluster.state_change_log import UpdateMetadataPartitionState
from kafkaops.cluster.zk.values import LEADER_DURING_DELETE, EndPoint, TopicPartition

if TYPE_CHECKING:
    from kafkaops.cluster.broker.requests import UpdateMetadataRequest


@dataclass(frozen=True, slots=True)
class CachedBroker:
    """A live broker as UpdateMetadata described it: `host`/`port` of one listener (the first it registered,
    or the one `alive_brokers(listener)` asked for) and every endpoint it registered."""

    broker_id: int
    host: str
    port: int
    rack: str | None
    endpoints: tuple[EndPoint, ...] = ()

    def on_listener(self, listener_name: str) -> CachedBroker | None:
        """This broker as seen on `listener_name` (Kafka's `Broker.getNode(listenerName)`), or None."""
        for endpoint in self.endpoints:
            if endpoint.listener == listener_name:
                return replace(self, host=endpoint.host, port=endpoint.port)
        return None


class MetadataCache:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._brokers: dict[int, CachedBroker] = {}
        self._partitions: dict[str, dict[int, UpdateMetadataPartitionState]] = {}
        self._topic_ids: dict[str, uuid.UUID] = {}
        self.controller_id: int | None = None

    def update(self, request: UpdateMetadataRequest) -> list[TopicPartition]:
        """Apply an UpdateMetadata request; returns the partitions it deleted (leader -2)."""
        deleted: list[TopicPartition] = []
        with self._lock:
            self.controller_id = request.controller_id
            self._brokers = {broker.broker_id: broker for broker in request.live_brokers}
            self._topic_ids.update(request.topic_ids)
            for state in request.partition_states:
                name, index = state.topic_name, state.partition_index
                if state.leader == LEADER_DURING_DELETE:
                    topic = self._partitions.get(name, {})
                    topic.pop(index, None)
                    if not topic:
                        self._partitions.pop(name, None)
                        self._topic_ids.pop(name, None)
                    deleted.append(state.partition)
                    continue
                self._partitions.setdefault(name, {})[index] = state
        return deleted

    def alive_brokers(self, listener_name: str | None = None) -> list[CachedBroker]:
        """The live brokers by id; with `listener_name`, those that have that listener, with its host and
        port (Kafka's `getAliveBrokerNodes(listenerName)`: what a client that came in on it may reach)."""
        with self._lock:
            brokers = sorted(self._brokers.values(), key=lambda b: b.broker_id)
        if listener_name is None:
            return brokers
        return [node for b in brokers if (node := b.on_listener(listener_name)) is not None]

    def topics(self) -> list[str]:
        with self._lock:
            return sorted(self._partitions)

    def contains(self, topic: str) -> bool:
        """Whether the topic has partitions in the cache (Kafka's `contains`)."""
        with self._lock:
            return topic in self._partitions

    def topic_id(self, topic: str) -> uuid.UUID | None:
        """The topic's id; None when the cache has none (Kafka answers the zero UUID)."""
        with self._lock:
            return self._topic_ids.get(topic)

    def topic_ids(self) -> dict[str, uuid.UUID]:
        """A copy of every known topic id, by topic name."""
        with self._lock:
            return dict(self._topic_ids)

    def topic_name(self, topic_id: uuid.UUID) -> str | None:
        """The topic with this id, if the cache has it (what DeleteTopics v6 resolves ids with)."""
        with self._lock:
            for name, known in self._topic_ids.items():
                if known == topic_id:
                    return name
            return None

    def partitions(self, topic: str) -> dict[int, UpdateMetadataPartitionState] | None:
        with self._lock:
            found = self._partitions.get(topic)
            return dict(found) if found is not None else None
