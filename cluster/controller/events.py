"""The controller's events (Kafka 2.8 `ControllerEvent` case objects and classes), one typed union.

Events are small and immutable: a kazoo watch callback, a timer, a send thread or a request handler
builds one and puts it on the queue (`ControllerEventManager`); the handler re-reads whatever it
needs. `KafkaController` dispatches them with `match` over `ControllerEvent`, so the type checker
sees every case; `ActiveControllerEvent` are those only an active controller acts on.
"""

from __future__ import annotations

import threading
from concurrent.futures import Future
from dataclasses import dataclass

from kafkaops.cluster.protocol.schemas import ElectionType
from kafkaops.cluster.zk.values import ReplicaAssignment, TopicPartition

# --- controller election and lifecycle (handled whether or not this broker is the controller) -------


@dataclass(frozen=True)
class Startup:
    """The controller component started: compete for `/controller`."""


@dataclass(frozen=True)
class ControllerChange:
    """`/controller` changed (the watch set at startup)."""


@dataclass(frozen=True)
class Reelect:
    """Compete again: the session came back without a known controller, or this controller moved."""


@dataclass(frozen=True)
class Expire:
    """The ZooKeeper session was lost."""


@dataclass(frozen=True)
class ShutdownController:
    """The broker is stopping; `done` is set once the controller has resigned."""

    done: threading.Event


@dataclass(frozen=True)
class ControlledShutdown:
    """A broker asks to move its leaderships away (`result`: the partitions it still leads)."""

    broker_id: int
    broker_epoch: int
    result: Future[set[TopicPartition]]


@dataclass(frozen=True)
class ReplicaLeaderElection:
    """An ElectLeaders request (`kafka-leader-election --bootstrap-server`): `partitions` None = all;
    `result`: per partition (error code, message)."""

    election_type: ElectionType
    partitions: tuple[TopicPartition, ...] | None
    result: Future[dict[TopicPartition, tuple[int, str | None]]]


@dataclass(frozen=True)
class ApiPartitionReassignment:
    """An AlterPartitionReassignments request (KIP-455): per partition its target replicas, None to cancel;
    `result`: per partition (error code, message)."""

    reassignments: tuple[tuple[TopicPartition, tuple[int, ...] | None], ...]
    result: Future[dict[TopicPartition, tuple[int, str | None]]]


@dataclass(frozen=True)
class ListPartitionReassignments:
    """A ListPartitionReassignments request: `partitions` None = every one being reassigned; `result`: the
    full assignment of each partition being reassigned."""

    partitions: tuple[TopicPartition, ...] | None
    result: Future[dict[TopicPartition, ReplicaAssignment]]


@dataclass(frozen=True)
class UncleanLeaderElectionEnable:
    """The broker's dynamic `unclean.leader.election.enable` changed (Kafka's event of that name)."""

    enable: bool


# --- what an active controller acts on ----------------------------------------------------------


@dataclass(frozen=True)
class BrokerChange:
    """The children of `/brokers/ids` changed."""


@dataclass(frozen=True)
class TopicChange:
    """The children of `/brokers/topics` changed."""


@dataclass(frozen=True)
class PartitionModifications:
    """`/brokers/topics/<topic>` changed (partitions may have been added)."""

    topic: str


@dataclass(frozen=True)
class TopicDeletion:
    """The children of `/admin/delete_topics` changed."""


@dataclass(frozen=True)
class TopicDeletionStopReplicaResponseReceived:
    """A broker answered a StopReplica(delete=true)."""

    broker_id: int
    partition_errors: tuple[tuple[TopicPartition, int], ...]
    error_code: int


@dataclass(frozen=True)
class IsrChangeNotification:
    """The children of `/isr_change_notification` changed."""


@dataclass(frozen=True)
class PreferredReplicaLeaderElection:
    """`/admin/preferred_replica_election` was created or changed."""


@dataclass(frozen=True)
class LogDirEventNotification:
    """A child of `/log_dir_event_notification`: a broker lost a log dir."""


@dataclass(frozen=True)
class LeaderAndIsrResponseReceived:
    """A LeaderAndIsr answer naming replicas on offline log dirs (KAFKA_STORAGE_ERROR) or from a broker
    that had some."""

    broker_id: int
    partition_errors: tuple[tuple[TopicPartition, int], ...]


@dataclass(frozen=True)
class ZkPartitionReassignment:
    """`/admin/reassign_partitions` was created, changed or deleted."""


@dataclass(frozen=True)
class PartitionReassignmentIsrChange:
    """The state znodes of partitions being reassigned changed (Kafka's watch when AlterIsr is off); the
    partitions wait in the reassignment handler's set of changed ones."""


@dataclass(frozen=True)
class AutoPreferredReplicaLeaderElection:
    """The auto rebalance timer fired; `generation` tells a resigned controller's timer from the
    current one's."""

    generation: int


@dataclass(frozen=True)
class ZkWatchesLost:
    """The session's connection was lost and is back (the session lives on). kazoo then drops its one-shot
    watches (it does not send ZooKeeper's SetWatches on reconnect, as the Java client Kafka uses does):
    the topics' and the moving partitions' watches are set again and what changed meanwhile is caught
    up on. `generation` tells a resigned controller's event from the current one's."""

    generation: int


ActiveControllerEvent = (
    BrokerChange
    | TopicChange
    | PartitionModifications
    | TopicDeletion
    | TopicDeletionStopReplicaResponseReceived
    | IsrChangeNotification
    | PreferredReplicaLeaderElection
    | LogDirEventNotification
    | LeaderAndIsrResponseReceived
    | ZkPartitionReassignment
    | PartitionReassignmentIsrChange
    | AutoPreferredReplicaLeaderElection
    | ZkWatchesLost
)

ControllerEvent = (
    Startup
    | ControllerChange
    | Reelect
    | Expire
    | ShutdownController
    | ControlledShutdown
    | ReplicaLeaderElection
    | ApiPartitionReassignment
    | ListPartitionReassignments
    | UncleanLeaderElectionEnable
    | ActiveControllerEvent
)
