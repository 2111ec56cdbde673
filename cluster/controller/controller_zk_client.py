"""What the controller reads and writes in ZooKeeper, in Kafka's `KafkaZkClient` vocabulary.

Each handler takes only the part it uses, declared here as a Protocol (`PartitionStateZkClient` for the
partition state machine, `TopicDeletionZkClient` for the deletion manager, ...), so that an in-memory
fake of those few methods (`tests/unit/controller_fakes.py`) tests it in milliseconds, as Kafka's
tests mock `KafkaZkClient`. `ControllerZkClient` is the one real implementation, over the session
wrapper of `cluster/zk` (which also owns the bulk reads and the one decoding of a partition's state).

Policy for bad znodes, as in `cluster/zk/client.py`: a missing znode is None, malformed bytes are a
MalformedZNodeError; reads of many znodes return that error in place of the value and the handler
decides. Every write is fenced on the zkVersion of `/controller_epoch` (`fenced_multi_many`): a failed
check raises ControllerMovedError, which only the event loop handles (by resigning).

Threading: the controller's event thread only, except the `on_change` callbacks of
`watch_topic_partition_states`, which kazoo calls on its own thread.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from kazoo.exceptions import BadVersionError, NodeExistsError, NoNodeError
from kazoo.protocol.states import WatchedEvent

from kafkaops.cluster.common.errors import KafkaOpsError, MalformedZNodeError
from kafkaops.cluster.zk import znodes
from kafkaops.cluster.zk.client import KafkaZkClient, PartitionStateRead
from kafkaops.cluster.zk.values import (
    BrokerRegistration,
    LeaderAndIsr,
    LeaderIsrAndControllerEpoch,
    ReplicaAssignment,
    TopicAssignment,
    TopicPartition,
)
from kafkaops.cluster.zk.zookeeper_client import Op

log = logging.getLogger("kafkaops.controller")

T = TypeVar("T")

BULK_READ_THRESHOLD = 200
"""From this many partitions on, state znodes are read with multiRead on a bulk connection."""


@dataclass(frozen=True)
class UpdateLeaderAndIsrResult:
    """Kafka's `UpdateLeaderAndIsrResult`: per partition written, its LeaderAndIsr with the new zkVersion
    or the error of its write; and the partitions whose conditional write lost to another writer
    (BADVERSION: a leader changed the ISR meanwhile), to be read again and retried."""

    finished: dict[TopicPartition, LeaderAndIsr | Exception]
    partitions_to_retry: list[TopicPartition]


@dataclass(frozen=True)
class TopicAssignmentWrite:
    """A conditional rewrite of `/brokers/topics/<topic>` (Kafka's `setTopicAssignment`)."""

    topic: str
    partitions: Mapping[int, ReplicaAssignment]
    topic_id: str | None
    expected_version: int


TopicZNodeRead = tuple[TopicAssignment | MalformedZNodeError, int]
"""A topic znode as read: its assignment (or the error of its bytes) and its data version."""


# --- the narrow interfaces ----------------------------------------------------------------------


class PartitionStatesReader(Protocol):
    def get_topic_partition_states(
        self, partitions: Sequence[TopicPartition], *, fresh: bool = False
    ) -> Mapping[TopicPartition, PartitionStateRead]:
        """`fresh`: on the session that writes, so that this controller's last writes are seen (after
        a lost conditional write); otherwise big sets come from a bulk connection."""
        ...


class LeaderAndIsrWriter(Protocol):
    def update_leader_and_isr(
        self,
        leader_and_isrs: Sequence[tuple[TopicPartition, LeaderAndIsr]],
        controller_epoch: int,
        epoch_zk_version: int,
    ) -> UpdateLeaderAndIsrResult:
        """Write each state conditionally on the zkVersion its LeaderAndIsr carries, in one pipelined
        round. Raises ControllerMovedError."""
        ...


class PartitionStateZkClient(PartitionStatesReader, LeaderAndIsrWriter, Protocol):
    """What the partition state machine reads and writes."""

    def create_topic_partition_states(
        self, states: Sequence[tuple[TopicPartition, LeaderIsrAndControllerEpoch]], epoch_zk_version: int
    ) -> list[Exception | None]:
        """Create the state znodes (and their parents) of new partitions; per partition None or the
        error of its create (NodeExistsError when it is there already)."""
        ...

    def get_topic_config(self, topic: str) -> Mapping[str, str]:
        """The topic's config overrides."""
        ...


class ReplicaStateZkClient(PartitionStatesReader, LeaderAndIsrWriter, Protocol):
    """What the replica state machine reads and writes (the ISR of the partitions a replica leaves)."""


class TopicZNodesClient(Protocol):
    def get_topic_znodes(self, topics: Sequence[str]) -> dict[str, TopicZNodeRead | None]: ...

    def set_topic_assignments(
        self, writes: Sequence[TopicAssignmentWrite], epoch_zk_version: int
    ) -> list[Exception | None]:
        """Per write None or its error (BadVersionError when the znode changed since it was read)."""
        ...


class TopicDeletionZkClient(Protocol):
    """What the topic deletion manager reads and writes (Kafka's `DeletionClient`, without the
    metadata update, which goes through the channel)."""

    def get_topic_deletions(self) -> list[str]: ...

    def delete_topic_deletions(self, topics: Sequence[str], epoch_zk_version: int) -> None: ...

    def delete_topic(self, topic: str, epoch_zk_version: int) -> None:
        """Delete the topic's znode, its config and its deletion intent, children first. Raises
        KafkaOpsError if a znode cannot be deleted."""
        ...


class ReassignmentZkClient(PartitionStatesReader, LeaderAndIsrWriter, TopicZNodesClient, Protocol):
    """What the reassignment handler reads and writes."""

    def watch_topic_partition_states(
        self, partitions: Sequence[TopicPartition], on_change: Callable[[TopicPartition], None]
    ) -> dict[TopicPartition, PartitionStateRead]:
        """Read the states on the session and leave a one-shot watch on each that exists; `on_change`
        is called on kazoo's thread with the partition whose state changed."""
        ...

    def get_partition_reassignment(
        self,
    ) -> tuple[dict[TopicPartition, tuple[int, ...]] | MalformedZNodeError, int] | None:
        """`/admin/reassign_partitions`: its entries (or the error of its bytes) and version."""
        ...

    def set_or_delete_partition_reassignment(
        self, entries: Mapping[TopicPartition, Sequence[int]], expected_version: int, epoch_zk_version: int
    ) -> Exception | None:
        """Rewrite the znode with `entries` (delete it when there are none) if it still has
        `expected_version`; None or the error of the write."""
        ...


class ReplicaElectionZkClient(Protocol):
    """What the preferred replica election handler reads and writes."""

    def get_preferred_replica_election(self) -> set[TopicPartition] | MalformedZNodeError | None: ...

    def delete_preferred_replica_election(self, epoch_zk_version: int) -> Exception | None: ...


class TopicChangeZkClient(TopicZNodesClient, Protocol):
    """What the topic change handlers read and write."""

    def get_all_topics(self) -> list[str]: ...


class BrokersReader(Protocol):
    def get_all_broker_and_epochs(self) -> dict[int, tuple[BrokerRegistration, int] | MalformedZNodeError]:
        """Registered brokers by id, ascending, with their epoch (the czxid of their znode)."""
        ...


class BrokerChangeZkClient(BrokersReader, Protocol):
    """What the broker change and log dir failure handlers read and write."""

    def get_all_log_dir_event_notifications(self) -> list[str]: ...

    def get_broker_ids_from_log_dir_events(self, sequences: Sequence[str]) -> dict[str, int | MalformedZNodeError]:
        """Per notification read (by path), the broker that reported a failed log dir."""
        ...

    def delete_log_dir_event_notifications(self, sequences: Sequence[str], epoch_zk_version: int) -> None: ...


class IsrChangeZkClient(PartitionStatesReader, Protocol):
    """What the ISR change notification handler reads and writes."""

    def get_all_isr_change_notifications(self) -> list[str]: ...

    def get_partitions_from_isr_change_notifications(
        self, sequences: Sequence[str]
    ) -> dict[str, set[TopicPartition] | MalformedZNodeError]:
        """Per notification read (by path), the partitions whose ISR changed."""
        ...

    def delete_isr_change_notifications(self, sequences: Sequence[str], epoch_zk_version: int) -> None: ...


class ContextLoadZkClient(PartitionStatesReader, BrokersReader, Protocol):
    """What a failover reads to load the controller context."""

    def get_all_topics(self) -> list[str]: ...

    def get_full_replica_assignments(
        self, topics: Sequence[str]
    ) -> dict[str, TopicAssignment | MalformedZNodeError]: ...

    def get_topic_deletions(self) -> list[str]: ...


class ControllerZk(
    PartitionStateZkClient,
    ReplicaStateZkClient,
    TopicDeletionZkClient,
    ReassignmentZkClient,
    ReplicaElectionZkClient,
    TopicChangeZkClient,
    BrokerChangeZkClient,
    IsrChangeZkClient,
    ContextLoadZkClient,
    Protocol,
):
    """Every narrow interface at once: what one controller incarnation's handlers are built over."""


# --- the implementation -------------------------------------------------------------------------


class ControllerZkClient:
    """Every narrow interface above, over one `KafkaZkClient` session."""

    def __init__(self, zk: KafkaZkClient) -> None:
        self.zk = zk

    def _fenced_errors(self, batches: Sequence[Sequence[Op]], epoch_zk_version: int) -> list[Exception | None]:
        """`fenced_multi_many`, per batch None or the kazoo error of its write. Raises ControllerMovedError."""
        return [
            outcome if isinstance(outcome, Exception) else None
            for outcome in self.zk.fenced_multi_many(batches, epoch_zk_version)
        ]

    # --- partition states

    def get_topic_partition_states(
        self, partitions: Sequence[TopicPartition], *, fresh: bool = False
    ) -> dict[TopicPartition, PartitionStateRead]:
        # a fresh read may be bulk too: the bulk connection starts from this session's last zxid
        bulk = len(partitions) >= BULK_READ_THRESHOLD
        return self.zk.get_topic_partition_states(partitions, bulk=bulk)

    def watch_topic_partition_states(
        self, partitions: Sequence[TopicPartition], on_change: Callable[[TopicPartition], None]
    ) -> dict[TopicPartition, PartitionStateRead]:
        bulk = len(partitions) >= BULK_READ_THRESHOLD
        return self.zk.get_topic_partition_states(partitions, bulk=bulk, watch=_PartitionStateWatch(on_change))

    def create_topic_partition_states(
        self, states: Sequence[tuple[TopicPartition, LeaderIsrAndControllerEpoch]], epoch_zk_version: int
    ) -> list[Exception | None]:
        # parents first (null data, Kafka's createTopicPartitions), then the states
        parents = sorted({znodes.TopicPartitionsZNode.path(tp.topic) for tp, _ in states})
        self._create_ignoring_existing(parents, epoch_zk_version)
        self._create_ignoring_existing(
            [znodes.TopicPartitionZNode.path(tp.topic, tp.partition) for tp, _ in states], epoch_zk_version
        )
        return self._fenced_errors(
            [
                [
                    Op.create(
                        znodes.TopicPartitionStateZNode.path(tp.topic, tp.partition),
                        znodes.TopicPartitionStateZNode.encode(state),
                    )
                ]
                for tp, state in states
            ],
            epoch_zk_version,
        )

    def _create_ignoring_existing(self, paths: Sequence[str], epoch_zk_version: int) -> None:
        errors = self._fenced_errors([[Op.create(p, b"")] for p in paths], epoch_zk_version)
        for path, error in zip(paths, errors, strict=True):
            if error is not None and not isinstance(error, NodeExistsError):
                raise KafkaOpsError(f"Could not create {path}: {error!r}")

    def update_leader_and_isr(
        self,
        leader_and_isrs: Sequence[tuple[TopicPartition, LeaderAndIsr]],
        controller_epoch: int,
        epoch_zk_version: int,
    ) -> UpdateLeaderAndIsrResult:
        outcomes = self.zk.fenced_multi_many(
            [
                [
                    Op.set(
                        znodes.TopicPartitionStateZNode.path(tp.topic, tp.partition),
                        znodes.TopicPartitionStateZNode.encode(LeaderIsrAndControllerEpoch(lai, controller_epoch)),
                        lai.zk_version,
                    )
                ]
                for tp, lai in leader_and_isrs
            ],
            epoch_zk_version,
        )
        finished: dict[TopicPartition, LeaderAndIsr | Exception] = {}
        retry: list[TopicPartition] = []
        for (tp, lai), outcome in zip(leader_and_isrs, outcomes, strict=True):
            if isinstance(outcome, BadVersionError):
                retry.append(tp)
            elif isinstance(outcome, Exception):
                finished[tp] = outcome
            else:
                finished[tp] = lai.with_zk_version(outcome[0].version)
        return UpdateLeaderAndIsrResult(finished, retry)

    def get_topic_config(self, topic: str) -> Mapping[str, str]:
        overrides, _ = self.zk.get_entity_config(znodes.ConfigType.TOPIC, topic)
        return overrides

    # --- topics

    def get_all_topics(self) -> list[str]:
        return self.zk.get_all_topics()

    def get_full_replica_assignments(self, topics: Sequence[str]) -> dict[str, TopicAssignment | MalformedZNodeError]:
        return self.zk.get_full_replica_assignments(topics)

    def get_topic_znodes(self, topics: Sequence[str]) -> dict[str, TopicZNodeRead | None]:
        found = self.zk.get_many(znodes.TopicZNode.path(t) for t in topics)
        result: dict[str, TopicZNodeRead | None] = {}
        for topic in topics:
            entry = found[znodes.TopicZNode.path(topic)]
            if entry is None:
                result[topic] = None
                continue
            try:
                result[topic] = (znodes.TopicZNode.decode(topic, entry[0]), entry[1].version)
            except MalformedZNodeError as error:
                result[topic] = (error, entry[1].version)
        return result

    def set_topic_assignments(
        self, writes: Sequence[TopicAssignmentWrite], epoch_zk_version: int
    ) -> list[Exception | None]:
        return self._fenced_errors(
            [
                [
                    Op.set(
                        znodes.TopicZNode.path(w.topic),
                        znodes.TopicZNode.encode(w.partitions, w.topic_id),
                        w.expected_version,
                    )
                ]
                for w in writes
            ],
            epoch_zk_version,
        )

    # --- topic deletion

    def get_topic_deletions(self) -> list[str]:
        return self.zk.get_children(znodes.DeleteTopicsZNode.path()) or []

    def delete_topic_deletions(self, topics: Sequence[str], epoch_zk_version: int) -> None:
        self.zk.fenced_multi_many(
            [[Op.delete(znodes.DeleteTopicsTopicZNode.path(t))] for t in topics], epoch_zk_version
        )

    def delete_topic(self, topic: str, epoch_zk_version: int) -> None:
        self._delete_recursive(znodes.TopicZNode.path(topic), epoch_zk_version)
        self._delete_recursive(znodes.ConfigEntityZNode.path(znodes.ConfigType.TOPIC, topic), epoch_zk_version)
        self._delete_recursive(znodes.DeleteTopicsTopicZNode.path(topic), epoch_zk_version)

    def _delete_recursive(self, path: str, epoch_zk_version: int) -> None:
        """Children first, each delete fenced (Kafka's `deleteRecursive` with the epoch check)."""
        order: list[str] = []
        stack = [path]
        while stack:
            current = stack.pop()
            children = self.zk.get_children(current)
            if children is None:
                continue
            order.append(current)
            stack.extend(f"{current}/{child}" for child in children)
        for node in reversed(order):
            [error] = self._fenced_errors([[Op.delete(node)]], epoch_zk_version)
            if error is not None and not isinstance(error, NoNodeError):
                raise KafkaOpsError(f"Could not delete {node}: {error!r}")

    # --- partition reassignment

    def get_partition_reassignment(
        self,
    ) -> tuple[dict[TopicPartition, tuple[int, ...]] | MalformedZNodeError, int] | None:
        entry = self.zk.get(znodes.ReassignPartitionsZNode.path())
        if entry is None:
            return None
        try:
            return znodes.ReassignPartitionsZNode.decode(entry[0]), entry[1].version
        except MalformedZNodeError as error:
            return error, entry[1].version

    def set_or_delete_partition_reassignment(
        self, entries: Mapping[TopicPartition, Sequence[int]], expected_version: int, epoch_zk_version: int
    ) -> Exception | None:
        path = znodes.ReassignPartitionsZNode.path()
        if not entries:
            op = Op.delete(path, expected_version)
        else:
            op = Op.set(path, znodes.ReassignPartitionsZNode.encode(entries), expected_version)
        return self._fenced_errors([[op]], epoch_zk_version)[0]

    # --- preferred replica election

    def get_preferred_replica_election(self) -> set[TopicPartition] | MalformedZNodeError | None:
        entry = self.zk.get(znodes.PreferredReplicaElectionZNode.path())
        if entry is None:
            return None
        try:
            return znodes.PreferredReplicaElectionZNode.decode(entry[0])
        except MalformedZNodeError as error:
            return error

    def delete_preferred_replica_election(self, epoch_zk_version: int) -> Exception | None:
        path = znodes.PreferredReplicaElectionZNode.path()
        return self._fenced_errors([[Op.delete(path)]], epoch_zk_version)[0]

    # --- brokers and log dir failures

    def get_all_broker_and_epochs(self) -> dict[int, tuple[BrokerRegistration, int] | MalformedZNodeError]:
        ids = self.zk.get_sorted_broker_ids()
        found = self.zk.get_many(znodes.BrokerIdZNode.path(b) for b in ids)
        result: dict[int, tuple[BrokerRegistration, int] | MalformedZNodeError] = {}
        for broker_id in ids:
            entry = found[znodes.BrokerIdZNode.path(broker_id)]
            if entry is None:
                continue  # deregistered between the two reads
            try:
                result[broker_id] = (znodes.BrokerIdZNode.decode(broker_id, entry[0]), int(entry[1].czxid))
            except MalformedZNodeError as error:
                result[broker_id] = error
        return result

    def get_all_log_dir_event_notifications(self) -> list[str]:
        return sorted(self.zk.get_children(znodes.LogDirEventNotificationZNode.path()) or [])

    def get_broker_ids_from_log_dir_events(self, sequences: Sequence[str]) -> dict[str, int | MalformedZNodeError]:
        root = znodes.LogDirEventNotificationZNode.path()
        return _decode_each(
            self.zk.get_many(f"{root}/{s}" for s in sequences), znodes.LogDirEventNotificationSequenceZNode.decode
        )

    def delete_log_dir_event_notifications(self, sequences: Sequence[str], epoch_zk_version: int) -> None:
        root = znodes.LogDirEventNotificationZNode.path()
        self.zk.fenced_multi_many([[Op.delete(f"{root}/{s}")] for s in sequences], epoch_zk_version)

    # --- ISR change notifications

    def get_all_isr_change_notifications(self) -> list[str]:
        return sorted(self.zk.get_children(znodes.IsrChangeNotificationZNode.path()) or [])

    def get_partitions_from_isr_change_notifications(
        self, sequences: Sequence[str]
    ) -> dict[str, set[TopicPartition] | MalformedZNodeError]:
        root = znodes.IsrChangeNotificationZNode.path()
        return _decode_each(
            self.zk.get_many(f"{root}/{s}" for s in sequences), znodes.IsrChangeNotificationSequenceZNode.decode
        )

    def delete_isr_change_notifications(self, sequences: Sequence[str], epoch_zk_version: int) -> None:
        root = znodes.IsrChangeNotificationZNode.path()
        self.zk.fenced_multi_many([[Op.delete(f"{root}/{s}")] for s in sequences], epoch_zk_version)


@dataclass(frozen=True)
class _PartitionStateWatch:
    """A one-shot watch on state znodes that reports the partition. Equal for equal `on_change`: kazoo
    keeps one watcher per path and function, so watching a partition again before its watch fires does
    not add a second callback."""

    on_change: Callable[[TopicPartition], None]

    def __call__(self, event: WatchedEvent) -> None:
        if event.path is None:  # kazoo dropped the watch with the connection: the controller's ZkWatchesLost
            return
        tp = znodes.TopicPartitionStateZNode.partition_of(event.path)
        if tp is not None:
            self.on_change(tp)


def _decode_each(
    found: Mapping[str, tuple[bytes, Any] | None], decode: Callable[[bytes], T]
) -> dict[str, T | MalformedZNodeError]:
    """Each znode read that exists, decoded (or its MalformedZNodeError), by path, in reading order."""
    result: dict[str, T | MalformedZNodeError] = {}
    for path, entry in found.items():
        if entry is None:
            continue
        try:
            result[path] = decode(entry[0])
        except MalformedZNodeError as error:
            result[path] = error
    return result
