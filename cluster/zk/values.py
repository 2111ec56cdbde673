"""Immutable values stored in Kafka's znodes, owning their rules and their state-change-log text.

Kafka keeps these in `kafka.api.LeaderAndIsr`, `kafka.controller.ReplicaAssignment` and
`kafka.cluster.Broker`; their `__str__` forms are the ones that appear in `state-change.log`
(kafka-reference.md §0.3), so the controller and the log parser can rely on them.
"""

from __future__ import annotations

import base64
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

from kafkaops.cluster.common.jvm_text import scala_list_text

INTERNAL_TOPICS = frozenset({"__consumer_offsets", "__transaction_state"})
"""Kafka's `Topic.INTERNAL_TOPICS`: the topics its own coordinators own."""


def new_kafka_uuid() -> str:
    """A random id as Kafka prints one (cluster id, topic id): 22 URL-safe base64 characters."""
    return base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")


def kafka_uuid_from_text(text: str | None) -> uuid.UUID:
    """The wire value of a topic id as the znodes hold it (`Uuid.fromString`); None → the zero UUID.
    Raises ValueError for text that is not 16 bytes of URL-safe base64."""
    if not text:
        return uuid.UUID(int=0)
    return uuid.UUID(bytes=base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)))


def kafka_uuid_text(value: uuid.UUID) -> str | None:
    """A wire topic id as Kafka prints it (`Uuid.toString`); None for the zero UUID (no id)."""
    if value.int == 0:
        return None
    return base64.urlsafe_b64encode(value.bytes).decode().rstrip("=")


NO_LEADER = -1
"""`LeaderAndIsr.NoLeader`: the partition has no leader."""

LEADER_DURING_DELETE = -2
"""`LeaderAndIsr.LeaderDuringDelete`: in-memory only, while a topic is being deleted."""

INITIAL_LEADER_EPOCH = 0
INITIAL_PARTITION_EPOCH = 0


class TopicPartition(NamedTuple):
    """A named tuple rather than a dataclass: controllers create, hash and compare millions of them
    (and sort them: by topic, then partition)."""

    topic: str
    partition: int

    def __str__(self) -> str:
        # org.apache.kafka.common.TopicPartition.toString
        return f"{self.topic}-{self.partition}"

    def __repr__(self) -> str:
        return f"TopicPartition(topic={self.topic!r}, partition={self.partition})"


@dataclass(frozen=True)
class LeaderAndIsr:
    """Leader, leader epoch and ISR of one partition, plus the state znode's data version."""

    leader: int
    leader_epoch: int
    isr: tuple[int, ...]
    zk_version: int = INITIAL_PARTITION_EPOCH

    def new_leader(self, leader: int) -> LeaderAndIsr:
        """A leader change always bumps the leader epoch: followers truncate by it."""
        return self.new_leader_and_isr(leader, self.isr)

    def new_leader_and_isr(self, leader: int, isr: Sequence[int]) -> LeaderAndIsr:
        # the constructor, not dataclasses.replace: an election makes one per partition
        return LeaderAndIsr(leader, self.leader_epoch + 1, tuple(isr), self.zk_version)

    def new_epoch(self) -> LeaderAndIsr:
        """Kafka's `newEpoch`: same leader and ISR, next leader epoch; the zkVersion stays the one the
        conditional write expects."""
        return self.new_leader_and_isr(self.leader, self.isr)

    def with_zk_version(self, zk_version: int) -> LeaderAndIsr:
        return LeaderAndIsr(self.leader, self.leader_epoch, self.isr, zk_version)

    @property
    def has_leader(self) -> bool:
        return self.leader >= 0

    def __str__(self) -> str:
        return (
            f"LeaderAndIsr(leader={self.leader}, leaderEpoch={self.leader_epoch}, "
            f"isr={scala_list_text(self.isr)}, zkVersion={self.zk_version})"
        )


@dataclass(frozen=True)
class LeaderIsrAndControllerEpoch:
    """The content of `/brokers/topics/<t>/partitions/<p>/state`."""

    leader_and_isr: LeaderAndIsr
    controller_epoch: int

    def same_state(self, other: LeaderIsrAndControllerEpoch) -> bool:
        """The same leader, leader epoch, ISR and controller epoch, whatever each one's zk_version: what
        Kafka's `checkLeaderAndIsrZkData` compares to tell its own write in a znode."""
        mine, theirs = self.leader_and_isr, other.leader_and_isr
        return (
            self.controller_epoch == other.controller_epoch
            and mine.leader == theirs.leader
            and mine.leader_epoch == theirs.leader_epoch
            and tuple(mine.isr) == tuple(theirs.isr)
        )

    def __str__(self) -> str:
        lai = self.leader_and_isr
        isr = ",".join(str(b) for b in lai.isr)
        return f"(Leader:{lai.leader},ISR:{isr},LeaderEpoch:{lai.leader_epoch},ControllerEpoch:{self.controller_epoch})"


@dataclass(frozen=True)
class ReplicaAssignment:
    """A partition's replicas, with the KIP-455 adding/removing sets of an ongoing reassignment."""

    replicas: tuple[int, ...]
    adding_replicas: tuple[int, ...] = ()
    removing_replicas: tuple[int, ...] = ()

    @property
    def is_being_reassigned(self) -> bool:
        return bool(self.adding_replicas or self.removing_replicas)

    @property
    def target_replicas(self) -> tuple[int, ...]:
        return tuple(r for r in self.replicas if r not in self.removing_replicas)

    @property
    def original_replicas(self) -> tuple[int, ...]:
        return tuple(r for r in self.replicas if r not in self.adding_replicas)

    def reassign_to(self, target: Sequence[int]) -> ReplicaAssignment:
        """Kafka's `ReplicaAssignment.reassignTo`: the union, target first, and what it adds/removes."""
        original = self.original_replicas
        full = tuple(dict.fromkeys([*target, *original]))
        return ReplicaAssignment(
            replicas=full,
            adding_replicas=tuple(r for r in target if r not in original),
            removing_replicas=tuple(r for r in original if r not in target),
        )

    def __str__(self) -> str:
        def csv(ids: tuple[int, ...]) -> str:
            return ",".join(str(i) for i in ids)

        return (
            f"ReplicaAssignment(replicas={csv(self.replicas)}, addingReplicas={csv(self.adding_replicas)}, "
            f"removingReplicas={csv(self.removing_replicas)})"
        )


@dataclass(frozen=True)
class TopicAssignment:
    """The content of `/brokers/topics/<t>`: every partition's replica assignment and the topic id."""

    partitions: dict[int, ReplicaAssignment]
    topic_id: str | None = None

    @property
    def replicas(self) -> dict[int, list[int]]:
        return {p: list(a.replicas) for p, a in sorted(self.partitions.items())}


@dataclass(frozen=True)
class EndPoint:
    listener: str
    host: str
    port: int

    def __str__(self) -> str:
        # Kafka's Utils.formatAddress brackets IPv6 hosts
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{self.listener}://{host}:{self.port}"


@dataclass(frozen=True)
class BrokerRegistration:
    """The content of `/brokers/ids/<id>`."""

    broker_id: int
    endpoints: tuple[EndPoint, ...]
    timestamp_ms: int
    rack: str | None = None
    jmx_port: int = -1
    listener_security_protocol_map: dict[str, str] = field(default_factory=dict)
    features: dict[str, tuple[int, int]] = field(default_factory=dict)
    version: int = 5

    @property
    def plaintext_endpoint(self) -> EndPoint | None:
        for endpoint in self.endpoints:
            if self.listener_security_protocol_map.get(endpoint.listener, endpoint.listener) == "PLAINTEXT":
                return endpoint
        return None


@dataclass(frozen=True)
class ProducerIdBlock:
    broker_id: int
    block_start: int
    block_end: int


@dataclass(frozen=True)
class AclEntry:
    principal: str
    permission_type: str
    operation: str
    host: str
