"""The cluster as a Metadata answer describes it: brokers, the controller, topics and their partitions.

Kafka's `Cluster`, `Node`, `PartitionInfo`, built from a `MetadataResponse` by `cluster_metadata`.
"""

from __future__ import annotations

import base64
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class BrokerNode:
    node_id: int
    host: str
    port: int
    rack: str | None = None

    @property
    def address(self) -> str:
        return f"{self.host}:{self.port}"


@dataclass(frozen=True, slots=True)
class PartitionInfo:
    """One partition as a broker's Metadata answer describes it; `leader` is -1 when there is none."""

    topic: str
    partition: int
    leader: int
    leader_epoch: int
    replicas: tuple[int, ...]
    isr: tuple[int, ...]
    offline_replicas: tuple[int, ...] = ()
    error_code: int = 0


@dataclass(frozen=True, slots=True)
class TopicInfo:
    name: str
    error_code: int
    is_internal: bool
    partitions: tuple[PartitionInfo, ...]
    topic_id: str | None = None  # Metadata v10+; None for the zero UUID or an older broker


@dataclass(frozen=True, slots=True)
class ClusterMetadata:
    """A Metadata answer: live brokers, the controller and the topics asked for (all of them for None)."""

    brokers: Mapping[int, BrokerNode]
    controller_id: int
    cluster_id: str | None
    topics: Mapping[str, TopicInfo]

    def partition(self, topic: str, partition: int) -> PartitionInfo | None:
        info = self.topics.get(topic)
        if info is None:
            return None
        return next((p for p in info.partitions if p.partition == partition), None)


ZERO_UUID_TEXT = "AAAAAAAAAAAAAAAAAAAAAA"


def uuid_text(value: object) -> str | None:
    """A topic id as Kafka prints it (`Uuid.toString`: URL-safe base64 of the 16 bytes, unpadded);
    None for a missing or zero id."""
    if value is None:
        return None
    if isinstance(value, uuid.UUID):
        value = value.bytes
    if isinstance(value, bytes | bytearray):
        text = base64.urlsafe_b64encode(bytes(value)).decode("ascii").rstrip("=")
    else:
        text = str(value)
    return None if text == ZERO_UUID_TEXT else text


def cluster_metadata(response: Mapping[str, Any]) -> ClusterMetadata:
    """A Metadata answer's body as values; each topic's partitions in partition order."""
    brokers = {b["node_id"]: BrokerNode(b["node_id"], b["host"], b["port"], b.get("rack")) for b in response["brokers"]}
    topics = {}
    for t in response["topics"]:
        partitions = tuple(
            sorted(
                (
                    PartitionInfo(
                        t["name"],
                        p["partition_index"],
                        p["leader_id"],
                        p["leader_epoch"],
                        tuple(p["replica_nodes"]),
                        tuple(p["isr_nodes"]),
                        tuple(p["offline_replicas"]),
                        p["error_code"],
                    )
                    for p in t["partitions"]
                ),
                key=lambda p: p.partition,
            )
        )
        topics[t["name"]] = TopicInfo(
            t["name"], t["error_code"], t["is_internal"], partitions, uuid_text(t.get("topic_id"))
        )
    return ClusterMetadata(brokers, response["controller_id"], response["cluster_id"], topics)
