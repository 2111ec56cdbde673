"""The broker's metadata cache: what the controller's UpdateMetadata requests said (Kafka's `ZkMetadataCache`).

It answers Kafka's Metadata request. Replaced wholesale per partition by each UpdateMetadata; a
partition whose leader is -2 (LeaderDuringDelete) is removed. Thread-safe: the request handlers
read it while UpdateMetadata writes it.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

from kafkaops.cluster.protocol.schemas import flatten_partition_states
from kafkaops.cluster.zk.values import INTERNAL_TOPICS, LEADER_DURING_DELETE, TopicPartition


@dataclass(frozen=True)
class CachedBroker:
    broker_id: int
    host: str
    port: int
    rack: str | None


@dataclass(frozen=True)
class CachedPartition:
    leader: int
    leader_epoch: int
    isr: tuple[int, ...]
    zk_version: int
    replicas: tuple[int, ...]
    offline_replicas: tuple[int, ...]
    controller_epoch: int


class MetadataCache:
    def __init__(self, broker_id: int) -> None:
        self.broker_id = broker_id
        self._lock = threading.Lock()
        self._brokers: dict[int, CachedBroker] = {}
        self._partitions: dict[str, dict[int, CachedPartition]] = {}
        self.controller_id: int | None = None
        self.controller_epoch = 0

    def update(self, body: dict[str, Any]) -> tuple[list[TopicPartition], list[tuple[TopicPartition, CachedPartition]]]:
        """Apply an UpdateMetadata request; returns (deleted partitions, cached partitions)."""
        deleted: list[TopicPartition] = []
        cached: list[tuple[TopicPartition, CachedPartition]] = []
        with self._lock:
            self.controller_id = body["controller_id"]
            self.controller_epoch = body["controller_epoch"]
            brokers = {}
            for broker in body["live_brokers"]:
                endpoint = (
                    broker["endpoints"][0]
                    if broker["endpoints"]
                    else {"host": broker["v0_host"], "port": broker["v0_port"]}
                )
                brokers[broker["id"]] = CachedBroker(
                    broker["id"], endpoint["host"], endpoint["port"], broker.get("rack")
                )
            self._brokers = brokers
            for state in flatten_partition_states(body):
                tp = TopicPartition(state["topic_name"], state["partition_index"])
                if state["leader"] == LEADER_DURING_DELETE:
                    topic = self._partitions.get(tp.topic, {})
                    topic.pop(tp.partition, None)
                    if not topic:
                        self._partitions.pop(tp.topic, None)
                    deleted.append(tp)
                    continue
                partition = CachedPartition(
                    state["leader"],
                    state["leader_epoch"],
                    tuple(state["isr"]),
                    state["zk_version"],
                    tuple(state["replicas"]),
                    tuple(state.get("offline_replicas", [])),
                    state["controller_epoch"],
                )
                self._partitions.setdefault(tp.topic, {})[tp.partition] = partition
                cached.append((tp, partition))
        return deleted, cached

    def alive_brokers(self) -> list[CachedBroker]:
        with self._lock:
            return sorted(self._brokers.values(), key=lambda b: b.broker_id)

    def topics(self) -> list[str]:
        with self._lock:
            return sorted(self._partitions)

    def partitions(self, topic: str) -> dict[int, CachedPartition] | None:
        with self._lock:
            found = self._partitions.get(topic)
            return dict(found) if found is not None else None

    def metadata_response(self, requested: list[str] | None, cluster_id: str | None) -> dict[str, Any]:
        """A Metadata response body (any version 0-8: the codec drops what a version lacks).

        Kafka's errors: an unknown topic is UNKNOWN_TOPIC_OR_PARTITION (3); a partition whose
        leader is not alive is LEADER_NOT_AVAILABLE (5); missing replicas are REPLICA_NOT_AVAILABLE (9)
        only for old clients, so like Kafka 2.8 we report them as offline replicas instead.
        """
        brokers = self.alive_brokers()
        alive = {b.broker_id for b in brokers}
        topics = self.topics() if requested is None else requested
        topic_entries = []
        for topic in topics:
            partitions = self.partitions(topic)
            if partitions is None:
                topic_entries.append({"error_code": 3, "name": topic, "is_internal": False, "partitions": []})
                continue
            entries = []
            for index, partition in sorted(partitions.items()):
                leader_alive = partition.leader in alive
                entries.append(
                    {
                        "error_code": 0 if leader_alive else 5,
                        "partition_index": index,
                        "leader_id": partition.leader if leader_alive else -1,
                        "leader_epoch": partition.leader_epoch,
                        "replica_nodes": list(partition.replicas),
                        "isr_nodes": list(partition.isr),
                        "offline_replicas": [r for r in partition.replicas if r not in alive],
                    }
                )
            topic_entries.append(
                {"error_code": 0, "name": topic, "is_internal": topic in INTERNAL_TOPICS, "partitions": entries}
            )
        return {
            "throttle_time_ms": 0,
            "brokers": [{"node_id": b.broker_id, "host": b.host, "port": b.port, "rack": b.rack} for b in brokers],
            "cluster_id": cluster_id,
            "controller_id": self.controller_id if self.controller_id is not None else -1,
            "topics": topic_entries,
        }
