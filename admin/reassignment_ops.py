"""Executing, verifying, cancelling and listing partition reassignments through ZooKeeper (Kafka 2.8
`ReassignPartitionsCommand`, kafka-reference.md §2.3.a and §5.8).

Kafka 2.8 does `--execute` and `--verify` through ZooKeeper and needs `--bootstrap-server` (the KIP-455
AdminClient API) for `--additional`, `--cancel` and `--list`. kafkaops has no such API: every action
works on ZooKeeper intents, with Kafka's texts (DESIGN.md "Kafka compatibility is the contract"):

* a reassignment is *active* while its partition is listed in `/admin/reassign_partitions` (the
  controller has not finished it) or while its topic znode records adding/removing replicas (the
  controller is moving it) — the view of Kafka's `listPartitionReassignments`;
* `--additional` merges the new partitions into an existing `/admin/reassign_partitions`;
* `--cancel` writes, for each active partition, a reassignment back to its original replicas
  (replicas − adding) into `/admin/reassign_partitions`: the controller treats it as a superseding
  reassignment, which stops the adding replicas (§5.8, phase U).

Pure rules (move maps, throttle lists, partition states, the active view) are plain functions over
values; the ZooKeeper functions read, validate everything, then write. Every input error is raised
before the first write, so bad input leaves ZooKeeper as it was. Results are plain values; the CLI
prints Kafka's texts.

Known shortcut: `/admin/reassign_partitions` is written here through `KafkaZkClient.multi` with the
znode codec of `cluster/zk`, catching kazoo's NodeExists/BadVersion itself; a client method for the
conditional write would keep kazoo out of `admin`.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence

from kazoo.exceptions import BadVersionError as ZkBadVersionError
from kazoo.exceptions import NodeExistsError, NoNodeError

from kafkaops.admin import configs as admin_configs
from kafkaops.admin.config_def import validate_broker_config, validate_topic_config
from kafkaops.admin.kafka_client.log_dirs import TopicPartitionReplica
from kafkaops.admin.kafka_text import topic_partition_hash
from kafkaops.admin.reassignment import ReassignmentEntry, check_reassignment_entries
from kafkaops.admin.topics import validate_topic_name
from kafkaops.cluster.common.errors import (
    AdminOperationError,
    InvalidTopicError,
    TerseReassignmentFailure,
    ZNodeVersionConflictError,
)
from kafkaops.cluster.common.jvm_text import int_hash, java_string_hash, scala_list_text, scala_set_order
from kafkaops.cluster.zk import znodes
from kafkaops.cluster.zk.client import KafkaZkClient
from kafkaops.cluster.zk.values import LeaderIsrAndControllerEpoch, ReplicaAssignment, TopicPartition
from kafkaops.cluster.zk.zookeeper_client import Op

# Throttles set at the level of a broker (Kafka's `DynamicConfig.Broker`) and of a topic (`LogConfig`).
BROKER_LEADER_THROTTLE = "leader.replication.throttled.rate"
BROKER_FOLLOWER_THROTTLE = "follower.replication.throttled.rate"
BROKER_LOG_DIR_THROTTLE = "replica.alter.log.dirs.io.max.bytes.per.second"
BROKER_THROTTLES = (BROKER_LEADER_THROTTLE, BROKER_FOLLOWER_THROTTLE, BROKER_LOG_DIR_THROTTLE)
TOPIC_LEADER_THROTTLE = "leader.replication.throttled.replicas"
TOPIC_FOLLOWER_THROTTLE = "follower.replication.throttled.replicas"
TOPIC_THROTTLES = (TOPIC_LEADER_THROTTLE, TOPIC_FOLLOWER_THROTTLE)

NO_THROTTLE = -1
"""`--throttle` and `--replica-alter-log-dirs-throttle` default: a negative value sets no throttle."""

CANNOT_EXECUTE_MESSAGE = (
    "Cannot execute because there is an existing partition assignment.  Use --additional to override this and "
    "create a new partition assignment in addition to the existing one. The --additional flag can also be used "
    "to change the throttle by resubmitting the current reassignment."
)
LOG_DIRS_NEED_BOOTSTRAP_MESSAGE = "bootstrap-server needs to be provided when replica reassignments are present."

WRITE_ATTEMPTS = 5
"""Read-modify-write rounds on `/admin/reassign_partitions` before giving up on a busy controller."""


# --- pure rules ----------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class PartitionMove:
    """Kafka's `PartitionMove`: where a partition's data comes from and the brokers that receive it."""

    sources: tuple[int, ...]
    destinations: tuple[int, ...]


MoveMap = dict[str, dict[int, PartitionMove]]
"""Topic -> partition -> move (Kafka's `MoveMap`)."""


def proposed_move_map(
    active: Mapping[TopicPartition, ReplicaAssignment],
    proposed: Mapping[TopicPartition, Sequence[int]],
    current: Mapping[TopicPartition, Sequence[int]],
) -> MoveMap:
    """Kafka 2.8 `calculateProposedMoveMap`: the active reassignments (sources = replicas − adding,
    destinations = adding), then each proposed partition, whose sources are those of its active
    reassignment if it has one, else its current replicas; destinations = proposed − sources."""
    moves: MoveMap = {}
    for tp, assignment in active.items():
        moves.setdefault(tp.topic, {})[tp.partition] = PartitionMove(
            assignment.original_replicas, tuple(assignment.adding_replicas)
        )
    for tp, replicas in proposed.items():
        topic_moves = moves.setdefault(tp.topic, {})
        existing = topic_moves.get(tp.partition)
        sources = existing.sources if existing is not None else tuple(current.get(tp, ()))
        if not sources:
            raise AdminOperationError(f"Trying to reassign a topic partition {tp} with 0 replicas")
        topic_moves[tp.partition] = PartitionMove(sources, tuple(r for r in replicas if r not in sources))
    return moves


def leader_throttles(moves: MoveMap) -> dict[str, str]:
    """`calculateLeaderThrottles`: `partition:source` for every source replica, in string order (TreeSet)."""
    return {
        topic: ",".join(sorted({f"{p}:{b}" for p, move in partitions.items() for b in move.sources}))
        for topic, partitions in moves.items()
    }


def follower_throttles(moves: MoveMap) -> dict[str, str]:
    """`calculateFollowerThrottles`: `partition:destination` for every destination that is not a source.

    A topic whose moves only reorder replicas gets an empty list, which Kafka writes as `""`.
    """
    return {
        topic: ",".join(
            sorted({f"{p}:{b}" for p, move in partitions.items() for b in move.destinations if b not in move.sources})
        )
        for topic, partitions in moves.items()
    }


def reassigning_brokers(moves: MoveMap) -> list[int]:
    """`calculateReassigningBrokers`: every source and destination broker, ascending."""
    return sorted(
        {b for partitions in moves.values() for m in partitions.values() for b in (*m.sources, *m.destinations)}
    )


@dataclasses.dataclass(frozen=True)
class PartitionState:
    """Kafka's `PartitionReassignmentState`: current replicas (empty for a partition that does not
    exist), the target of the file, and whether no reassignment of the partition is active."""

    current: tuple[int, ...]
    target: tuple[int, ...]
    done: bool

    @property
    def complete(self) -> bool:
        return self.done and self.current == self.target

    @property
    def failed(self) -> bool:
        """Done, but on another replica set than the file's (superseded, cancelled, or never started)."""
        return self.done and self.current != self.target


def partition_states(
    targets: Mapping[TopicPartition, Sequence[int]],
    assignments: Mapping[TopicPartition, ReplicaAssignment],
    pending: Collection[TopicPartition],
) -> dict[TopicPartition, PartitionState]:
    """States of the file's partitions, sorted by (topic, partition) as Kafka prints them.

    A partition is in progress while listed in `/admin/reassign_partitions` (`pending`) or while its
    topic znode records adding/removing replicas.
    """
    states = {}
    for tp in sorted(targets):
        assignment = assignments.get(tp)
        current = assignment.replicas if assignment is not None else ()
        reassigning = assignment is not None and assignment.is_being_reassigned
        states[tp] = PartitionState(tuple(current), tuple(targets[tp]), not (tp in pending or reassigning))
    return states


def active_reassignments(
    assignments: Mapping[TopicPartition, ReplicaAssignment], pending: Mapping[TopicPartition, Sequence[int]]
) -> dict[TopicPartition, ReplicaAssignment]:
    """Every active reassignment with its full replica set and adding/removing replicas, sorted.

    From the topic znodes where the controller records them; a partition only listed in
    `/admin/reassign_partitions` (not picked up yet) shows what the controller will write for it
    (`ReplicaAssignment.reassign_to`). Listed partitions that do not exist are left out.
    """
    active = {tp: a for tp, a in assignments.items() if a.is_being_reassigned}
    for tp, target in pending.items():
        if tp not in active and tp in assignments:
            active[tp] = assignments[tp].reassign_to(target)
    return {tp: active[tp] for tp in sorted(active)}


def kafka_map_order(partitions: Sequence[TopicPartition]) -> list[TopicPartition]:
    """Iteration order of the Scala `Map[TopicPartition, _]` Kafka builds from the file (`toMap`):
    file order up to 4 partitions, hash-trie order beyond. It orders the partitions in
    `/admin/reassign_partitions` and in the non-existent-partitions message."""
    return scala_set_order(partitions, topic_partition_hash)


def throttle_clearing_targets(
    live_brokers: Sequence[int], entries: Sequence[ReassignmentEntry]
) -> tuple[list[int], list[str]]:
    """Kafka 2.8 `clearAllThrottles`: live brokers ∪ the file's brokers, and the file's topics, each in
    the iteration order of the Scala sets Kafka prints."""
    file_brokers = scala_set_order((b for e in entries for b in e.replicas), int_hash)
    brokers = scala_set_order([*scala_set_order(live_brokers, int_hash), *file_brokers], int_hash)
    topics = scala_set_order((e.partition.topic for e in entries), java_string_hash)
    return brokers, topics


# --- reading ZooKeeper ---------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class PendingReassignments:
    """`/admin/reassign_partitions`: its partitions in znode order, and its data version (None: absent)."""

    partitions: dict[TopicPartition, tuple[int, ...]]
    version: int | None


def read_pending(zk: KafkaZkClient) -> PendingReassignments:
    """Raises MalformedZNodeError for bytes that do not decode (never read as "no reassignment")."""
    entry = zk.get(znodes.ReassignPartitionsZNode.path())
    if entry is None:
        return PendingReassignments({}, None)
    return PendingReassignments(znodes.ReassignPartitionsZNode.decode(entry[0]), entry[1].version)


def legal_topics(topics: Iterable[str]) -> list[str]:
    """The names that can be topics, sorted: a file may name anything, and a name such as `` or `a/b` is
    not a znode of its own (`/brokers/topics/` is the topics' parent), just a topic that does not exist."""
    legal = set()
    for topic in topics:
        try:
            validate_topic_name(topic)
        except InvalidTopicError:
            continue
        legal.add(topic)
    return sorted(legal)


def read_assignments(zk: KafkaZkClient, topics: Iterable[str]) -> dict[TopicPartition, ReplicaAssignment]:
    """Every partition of the topics that exist (pipelined reads)."""
    return {
        TopicPartition(topic, p): a
        for topic, found in zk.get_topic_assignments(legal_topics(topics)).items()
        for p, a in found.partitions.items()
    }


def read_active(zk: KafkaZkClient) -> dict[TopicPartition, ReplicaAssignment]:
    """The active reassignments of the whole cluster (every topic znode, pipelined)."""
    pending = read_pending(zk)
    return active_reassignments(read_assignments(zk, zk.get_all_topics()), pending.partitions)


def _any_active(zk: KafkaZkClient, pending: PendingReassignments) -> bool:
    if pending.partitions:
        return True
    return any(a.is_being_reassigned for a in read_assignments(zk, zk.get_all_topics()).values())


def refuse_log_dirs(entries: Sequence[ReassignmentEntry]) -> None:
    """Log-dir moves need --bootstrap-server in Kafka 2.8 (AlterReplicaLogDirs); ZooKeeper cannot ask for them."""
    if any(e.log_dir_moves for e in entries):
        raise AdminOperationError(LOG_DIRS_NEED_BOOTSTRAP_MESSAGE)


# --- --execute -----------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class ExecutePlan:
    """What `--execute` will do, every input checked: nothing is written yet."""

    proposed: dict[TopicPartition, tuple[int, ...]]  # in Kafka's map order
    current: dict[TopicPartition, tuple[int, ...]]  # the proposed partitions' replicas now (rollback)
    active: dict[TopicPartition, ReplicaAssignment]  # reassignments already active (--additional)
    moves: MoveMap
    topic_throttles: dict[str, dict[str, str]]  # topic -> throttle configs to set (empty: no --throttle)
    broker_throttles: dict[int, dict[str, str]]  # broker -> throttle configs to set
    throttle: int
    log_dir_throttle: int
    additional: bool
    log_dir_moves: Mapping[TopicPartitionReplica, str] = dataclasses.field(default_factory=dict)  # Admin API path

    @property
    def started(self) -> list[TopicPartition]:
        return sorted(self.proposed)


def plan_execute(
    zk: KafkaZkClient,
    entries: Sequence[ReassignmentEntry],
    *,
    additional: bool = False,
    throttle: int = NO_THROTTLE,
    log_dir_throttle: int = NO_THROTTLE,
) -> ExecutePlan:
    """Kafka 2.8 ZooKeeper `executeAssignment` up to its first write, in its order: the file's content
    checks, log-dir moves (need --bootstrap-server), non-existent partitions and brokers, an existing
    reassignment (unless `additional`), then the throttle configs, validated against each entity's
    current config so that applying them cannot fail on a value.

    Raises InvalidArgumentError / AdminOperationError (Kafka's texts), TerseReassignmentFailure
    (an active reassignment without `additional`), InvalidConfigurationError.
    """
    check_reassignment_entries(entries)
    refuse_log_dirs(entries)
    order = kafka_map_order([e.partition for e in entries])
    by_partition = {e.partition: e.replicas for e in entries}
    proposed = {tp: by_partition[tp] for tp in order}

    assignments = read_assignments(zk, {tp.topic for tp in proposed})
    missing = [tp for tp in proposed if tp not in assignments]
    if missing:
        raise AdminOperationError(
            f"The proposed assignment contains non-existent partitions: {scala_list_text(missing)}"
        )
    registered = set(zk.get_sorted_broker_ids())
    unknown = scala_set_order((b for r in proposed.values() for b in r if b not in registered), int_hash)
    if unknown:
        raise AdminOperationError(
            f"The proposed assignment contains non-existent brokerIDs: {','.join(map(str, unknown))}"
        )
    pending = read_pending(zk)
    active = active_reassignments(read_assignments(zk, zk.get_all_topics()), pending.partitions)
    if (active or pending.version is not None) and not additional:
        raise TerseReassignmentFailure(CANNOT_EXECUTE_MESSAGE)

    current = {tp: tuple(assignments[tp].replicas) for tp in proposed}
    moves = proposed_move_map(active if additional else {}, proposed, current)
    topic_throttles: dict[str, dict[str, str]] = {}
    broker_throttles: dict[int, dict[str, str]] = {}
    if throttle >= 0:
        leaders, followers = leader_throttles(moves), follower_throttles(moves)
        topic_throttles = {
            t: {TOPIC_LEADER_THROTTLE: leaders[t], TOPIC_FOLLOWER_THROTTLE: followers[t]} for t in sorted(moves)
        }
        broker_throttles = {
            b: {BROKER_LEADER_THROTTLE: str(throttle), BROKER_FOLLOWER_THROTTLE: str(throttle)}
            for b in reassigning_brokers(moves)
        }
        _validate_throttle_configs(zk, topic_throttles, broker_throttles)
    return ExecutePlan(
        proposed, current, active, moves, topic_throttles, broker_throttles, throttle, log_dir_throttle, additional
    )


def _validate_throttle_configs(
    zk: KafkaZkClient, topics: Mapping[str, Mapping[str, str]], brokers: Mapping[int, Mapping[str, str]]
) -> None:
    topic_configs = zk.get_entity_configs(znodes.ConfigType.TOPIC, topics)
    for topic, values in topics.items():
        validate_topic_config({**topic_configs[topic], **values})
    broker_configs = zk.get_entity_configs(znodes.ConfigType.BROKER, [str(b) for b in brokers])
    for broker, values in brokers.items():
        validate_broker_config({**broker_configs[str(broker)], **values})


def apply_execute(zk: KafkaZkClient, plan: ExecutePlan) -> None:
    """Write the throttles (topic configs, then broker configs, each with its change notification),
    then `/admin/reassign_partitions` — Kafka's order.

    Raises TerseReassignmentFailure if another reassignment appeared since `plan_execute` (without
    `additional`), ZNodeVersionConflictError if the znode kept changing under us.
    """
    for topic, values in plan.topic_throttles.items():
        admin_configs.alter_config(zk, admin_configs.ConfigEntity(znodes.ConfigType.TOPIC, topic), values, [])
    for broker, values in plan.broker_throttles.items():
        admin_configs.alter_config(zk, admin_configs.ConfigEntity(znodes.ConfigType.BROKER, str(broker)), values, [])
    write_pending(zk, plan.proposed, merge=plan.additional)


def write_pending(zk: KafkaZkClient, updates: Mapping[TopicPartition, Sequence[int]], *, merge: bool) -> None:
    """Create `/admin/reassign_partitions` with `updates` or, with `merge`, set these partitions in the
    existing znode (listed ones keep their place, new ones are appended), conditional on the version
    read so that a controller removing a finished partition meanwhile is not undone.

    Raises TerseReassignmentFailure (the znode exists and `merge` is False), ZNodeVersionConflictError.
    """
    path = znodes.ReassignPartitionsZNode.path()
    zk.ensure_paths([znodes.AdminZNode.path()])
    for _ in range(WRITE_ATTEMPTS):
        pending = read_pending(zk)
        try:
            if pending.version is None:
                zk.multi([Op.create(path, znodes.ReassignPartitionsZNode.encode(dict(updates)))])
                return
            if not merge:
                raise TerseReassignmentFailure(CANNOT_EXECUTE_MESSAGE)
            merged = dict(pending.partitions)
            merged.update({tp: tuple(r) for tp, r in updates.items()})
            zk.multi([Op.set(path, znodes.ReassignPartitionsZNode.encode(merged), pending.version)])
            return
        except NodeExistsError:
            if not merge:
                raise TerseReassignmentFailure(CANNOT_EXECUTE_MESSAGE) from None
        except (ZkBadVersionError, NoNodeError):
            continue
    raise ZNodeVersionConflictError(f"{path} kept changing while it was being updated; nothing was written")


# --- --verify ------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class ClearedThrottles:
    """The brokers and topics whose reassignment throttles were cleared, in Kafka's printing order."""

    brokers: list[int]
    topics: list[str]


@dataclasses.dataclass(frozen=True)
class VerifyResult:
    states: dict[TopicPartition, PartitionState]  # sorted by (topic, partition)
    ongoing: bool  # any reassignment active anywhere in the cluster
    cleared: ClearedThrottles | None  # None: throttles kept (something ongoing, or --preserve-throttles)
    move_lines: tuple[str, ...] = ()  # Kafka's log-dir move report (the Admin API path prints one)

    @property
    def failed(self) -> list[TopicPartition]:
        return [tp for tp, s in self.states.items() if s.failed]

    @property
    def in_progress(self) -> list[TopicPartition]:
        return [tp for tp, s in self.states.items() if not s.done]


def targets_of(entries: Sequence[ReassignmentEntry]) -> dict[TopicPartition, tuple[int, ...]]:
    """The file's partitions as Kafka's `--verify` reads them (`toMap`: no content checks, the last
    entry of a partition listed twice wins)."""
    return {e.partition: e.replicas for e in entries}


def read_states(
    zk: KafkaZkClient, targets: Mapping[TopicPartition, Sequence[int]]
) -> tuple[dict[TopicPartition, PartitionState], PendingReassignments, dict[TopicPartition, ReplicaAssignment]]:
    pending = read_pending(zk)
    assignments = read_assignments(zk, {tp.topic for tp in targets})
    return partition_states(targets, assignments, pending.partitions), pending, assignments


def verify_reassignment(
    zk: KafkaZkClient, entries: Sequence[ReassignmentEntry], *, preserve_throttles: bool = False
) -> VerifyResult:
    """Kafka 2.8 ZooKeeper `verifyAssignment`: each partition's state; when no reassignment is active
    anywhere and throttles are not preserved, clear every reassignment throttle (broker rates on the
    live brokers and the file's brokers, replica lists on the file's topics).

    Raises AdminOperationError for log-dir moves (they need --bootstrap-server).
    """
    refuse_log_dirs(entries)
    states, pending, _ = read_states(zk, targets_of(entries))
    ongoing = any(not s.done for s in states.values()) or _any_active(zk, pending)
    cleared = None
    if not ongoing and not preserve_throttles:
        cleared = clear_throttles(zk, entries)
    return VerifyResult(states, ongoing, cleared)


def clear_throttles(zk: KafkaZkClient, entries: Sequence[ReassignmentEntry]) -> ClearedThrottles:
    """Kafka 2.8 `clearAllThrottles`: remove the three broker throttles and the two topic throttle lists
    where they are set (one config write and notification per entity that had any). A topic that no
    longer exists is skipped (Kafka would fail on it)."""
    brokers, topics = throttle_clearing_targets(zk.get_sorted_broker_ids(), entries)
    broker_configs = zk.get_entity_configs(znodes.ConfigType.BROKER, [str(b) for b in brokers])
    for broker in brokers:
        present = [k for k in BROKER_THROTTLES if k in broker_configs[str(broker)]]
        if present:
            admin_configs.alter_config(
                zk, admin_configs.ConfigEntity(znodes.ConfigType.BROKER, str(broker)), {}, present
            )
    topic_configs = zk.get_entity_configs(znodes.ConfigType.TOPIC, legal_topics(topics))
    for topic in topic_configs:
        present = [k for k in TOPIC_THROTTLES if k in topic_configs[topic]]
        if present and zk.topic_exists(topic):
            admin_configs.alter_config(zk, admin_configs.ConfigEntity(znodes.ConfigType.TOPIC, topic), {}, present)
    return ClearedThrottles(brokers, topics)


# --- --verify --wait -----------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class PartitionProgress:
    """One partition while it moves: its state, full replica set, adding/removing replicas, leader and
    ISR (from the partition state znode; None before the controller created it)."""

    partition: TopicPartition
    state: PartitionState
    adding: tuple[int, ...]
    removing: tuple[int, ...]
    leader: int | None
    isr: tuple[int, ...] | None


@dataclasses.dataclass(frozen=True)
class ReassignmentProgress:
    partitions: list[PartitionProgress]  # sorted by (topic, partition)
    elapsed_s: float
    timed_out: bool

    @property
    def done(self) -> bool:
        return all(p.state.done for p in self.partitions)

    @property
    def completed(self) -> int:
        return sum(p.state.done for p in self.partitions)


def read_progress(
    zk: KafkaZkClient, targets: Mapping[TopicPartition, Sequence[int]], elapsed_s: float = 0.0, timed_out: bool = False
) -> ReassignmentProgress:
    states, _, assignments = read_states(zk, targets)
    leadership: Mapping[TopicPartition, LeaderIsrAndControllerEpoch | None] = zk.get_partition_states(list(states))
    rows = []
    for tp, state in states.items():
        assignment = assignments.get(tp)
        info = leadership.get(tp)
        rows.append(
            PartitionProgress(
                tp,
                state,
                tuple(assignment.adding_replicas) if assignment else (),
                tuple(assignment.removing_replicas) if assignment else (),
                info.leader_and_isr.leader if info else None,
                tuple(info.leader_and_isr.isr) if info else None,
            )
        )
    return ReassignmentProgress(rows, elapsed_s, timed_out)


def watch_reassignment(
    zk: KafkaZkClient,
    targets: Mapping[TopicPartition, Sequence[int]],
    *,
    timeout_s: float | None = None,
    interval_s: float = 1.0,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> Iterator[ReassignmentProgress]:
    """Poll the file's partitions until none is in progress or `timeout_s` passes (None: no limit),
    yielding a snapshot per poll; the last one is done, or has `timed_out` set."""
    return watch_progress(
        lambda elapsed: read_progress(zk, targets, elapsed),
        timeout_s=timeout_s,
        interval_s=interval_s,
        clock=clock,
        sleep=sleep,
    )


def watch_progress(
    read: Callable[[float], ReassignmentProgress],
    *,
    timeout_s: float | None = None,
    interval_s: float = 1.0,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> Iterator[ReassignmentProgress]:
    """`watch_reassignment` over any reader of the progress (ZooKeeper, or the Admin API)."""
    start = clock()
    while True:
        elapsed = clock() - start
        progress = read(elapsed)
        if progress.done:
            yield progress
            return
        if timeout_s is not None and elapsed >= timeout_s:
            yield dataclasses.replace(progress, timed_out=True)
            return
        yield progress
        pause = interval_s if timeout_s is None else max(0.0, min(interval_s, timeout_s - elapsed))
        sleep(pause)


# --- --cancel ------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class CancelResult:
    cancelled: dict[TopicPartition, tuple[int, ...]]  # partition -> the original replicas it goes back to
    cleared: ClearedThrottles | None
    move_lines: tuple[str, ...] = ()  # log-dir moves started back to their current dirs (Admin API path)


def cancel_reassignment(
    zk: KafkaZkClient, entries: Sequence[ReassignmentEntry], *, preserve_throttles: bool = False
) -> CancelResult:
    """Cancel the file's partitions that have an active reassignment: write each one back to its original
    replicas (replicas − adding of its topic znode; its current replicas if the controller has not
    picked it up yet) into `/admin/reassign_partitions`, then clear the throttles unless preserved
    (Kafka 2.8 `cancelAssignment` clears them whatever is still active).

    Raises AdminOperationError for log-dir moves (they need --bootstrap-server), ZNodeVersionConflictError.
    """
    refuse_log_dirs(entries)
    targets = targets_of(entries)
    pending = read_pending(zk)
    assignments = read_assignments(zk, {tp.topic for tp in targets})
    active = active_reassignments(
        {tp: a for tp, a in assignments.items() if tp in targets},
        {tp: r for tp, r in pending.partitions.items() if tp in targets},
    )
    cancelled = {tp: tuple(assignments[tp].original_replicas) for tp in active}
    if cancelled:
        write_pending(zk, cancelled, merge=True)
    cleared = None if preserve_throttles else clear_throttles(zk, entries)
    return CancelResult(cancelled, cleared)


# --- --list --------------------------------------------------------------------------------------


def list_reassignments(zk: KafkaZkClient) -> dict[TopicPartition, ReplicaAssignment]:
    """Every active reassignment (Kafka's `listPartitionReassignments`), sorted by (topic, partition)."""
    return read_active(zk)
