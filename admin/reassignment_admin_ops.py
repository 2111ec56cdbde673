"""Executing, verifying, cancelling and listing partition reassignments through the Admin API
(Kafka 2.8 `ReassignPartitionsCommand`'s AdminClient paths; the ZooKeeper paths are
`reassignment_ops`). The pure rules (move maps, throttle lists, partition states, throttle clearing
order) and the result values are `reassignment_ops`' own, so both modes print the same texts.

    execute   ListPartitionReassignments, Metadata (brokers, current replicas), IncrementalAlterConfigs
              (topic then broker throttles), AlterPartitionReassignments
    verify    ListPartitionReassignments, Metadata; when nothing is active anywhere, throttles removed
              with IncrementalAlterConfigs DELETE (topics that no longer exist are skipped)
    cancel    ListPartitionReassignments of the file's partitions, AlterPartitionReassignments(None)
    list      ListPartitionReassignments
    log_dirs  AlterReplicaLogDirs once the reassignment started (retried while the broker answers
              REPLICA_NOT_AVAILABLE, until --timeout), DescribeLogDirs for --verify and --cancel

Every input is checked before the first write: a partition that does not exist is refused up front
with the ZooKeeper path's text (Kafka's AdminClient path would set the throttles first and then fail
per partition).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence

from kafkaops.admin import reassignment_ops as ops
from kafkaops.admin.kafka_client.client import KafkaClient
from kafkaops.admin.kafka_client.config_admin import (
    AlterConfigOpType,
    ConfigResource,
    ResourceType,
    incremental_alter_configs,
)
from kafkaops.admin.kafka_client.log_dirs import (
    TopicPartitionReplica,
    alter_replica_log_dirs,
    describe_log_dirs,
    describe_replica_log_dirs,
    partition_sizes,
)
from kafkaops.admin.kafka_client.reassignment_admin import (
    alter_partition_reassignments,
    list_partition_reassignments,
)
from kafkaops.admin.kafka_client.topic_admin import list_topics
from kafkaops.admin.log_dir_moves import (
    LogDirMoveState,
    MoveKind,
    ReplicaDirs,
    move_state_lines,
    move_states,
    moves_started_line,
    moves_timed_out_message,
    replica_order,
    target_moves,
)
from kafkaops.admin.reassignment import ClusterView, ReassignmentEntry, check_reassignment_entries
from kafkaops.cluster.common.errors import (
    AdminOperationError,
    BrokerError,
    KafkaStorageError,
    ReplicaNotAvailableError,
    TerseReassignmentFailure,
)
from kafkaops.cluster.common.jvm_text import int_hash, scala_list_text, scala_set_order
from kafkaops.cluster.zk.values import ReplicaAssignment, TopicPartition

MOVE_RETRY_S = 0.1
"""Kafka's pause between AlterReplicaLogDirs rounds while a replica does not exist on its broker yet."""


def read_cluster(client: KafkaClient, topics: Sequence[str]) -> ClusterView:
    """`--generate`'s inputs over the wire: the live brokers with their racks, the current replicas of
    the topics that exist (Kafka's `describeCluster` and `describeTopics`), and the partitions' sizes from
    DescribeLogDirs (ours: Kafka's `--generate` balances replica counts only)."""
    cluster = client.metadata(list(dict.fromkeys(topics)))
    assignment = {
        (info.name, p.partition): list(p.replicas)
        for info in cluster.topics.values()
        if not info.error_code
        for p in info.partitions
    }
    holders = sorted({b for replicas in assignment.values() for b in replicas if b in cluster.brokers})
    return ClusterView({b.node_id: b.rack for b in cluster.brokers.values()}, assignment, _sizes(client, holders))


def _sizes(client: KafkaClient, brokers: Sequence[int]) -> dict[tuple[str, int], int] | None:
    """The partitions' sizes as the brokers holding them report them; None when one cannot tell (a broker
    that does not answer or refuses DescribeLogDirs): the plan then balances replica counts, as Kafka's."""
    try:
        return partition_sizes(describe_log_dirs(client, brokers))
    except BrokerError:
        return None


def _current_replicas(
    client: KafkaClient, partitions: Sequence[TopicPartition]
) -> dict[TopicPartition, tuple[int, ...]]:
    """The partitions' replicas now; partitions whose topic or index does not exist are left out."""
    cluster = client.metadata(list(dict.fromkeys(tp.topic for tp in partitions)))
    current = {}
    for tp in partitions:
        info = cluster.partition(tp.topic, tp.partition)
        if info is not None:
            current[tp] = tuple(info.replicas)
    return current


# --- --execute -----------------------------------------------------------------------------------


def plan_execute(
    client: KafkaClient,
    entries: Sequence[ReassignmentEntry],
    *,
    additional: bool = False,
    throttle: int = ops.NO_THROTTLE,
    log_dir_throttle: int = ops.NO_THROTTLE,
) -> ops.ExecutePlan:
    """Kafka 2.8's AdminClient `executeAssignment` up to its first write, in its order: the file's
    content checks, an active reassignment without `additional` (TerseReassignmentFailure), unknown
    brokers (`Unknown broker id N`), then the current replicas and the throttles to set."""
    check_reassignment_entries(entries)
    order = ops.kafka_map_order([e.partition for e in entries])
    by_partition = {e.partition: e.replicas for e in entries}
    proposed = {tp: by_partition[tp] for tp in order}
    active = list_partition_reassignments(client)
    if active and not additional:
        raise TerseReassignmentFailure(ops.CANNOT_EXECUTE_MESSAGE)
    live = set(client.metadata([]).brokers)
    for broker in scala_set_order((b for r in proposed.values() for b in r), int_hash):
        if broker not in live:
            raise AdminOperationError(f"Unknown broker id {broker}")
    current = _current_replicas(client, list(proposed))
    missing = [tp for tp in proposed if tp not in current]
    if missing:
        raise AdminOperationError(
            f"The proposed assignment contains non-existent partitions: {scala_list_text(missing)}"
        )
    moves = ops.proposed_move_map(active, proposed, current)
    topic_throttles: dict[str, dict[str, str]] = {}
    broker_throttles: dict[int, dict[str, str]] = {}
    if throttle >= 0:
        leaders, followers = ops.leader_throttles(moves), ops.follower_throttles(moves)
        topic_throttles = {
            t: {ops.TOPIC_LEADER_THROTTLE: leaders[t], ops.TOPIC_FOLLOWER_THROTTLE: followers[t]} for t in sorted(moves)
        }
        broker_throttles = {
            b: {ops.BROKER_LEADER_THROTTLE: str(throttle), ops.BROKER_FOLLOWER_THROTTLE: str(throttle)}
            for b in ops.reassigning_brokers(moves)
        }
    return ops.ExecutePlan(
        proposed,
        current,
        active,
        moves,
        topic_throttles,
        broker_throttles,
        throttle,
        log_dir_throttle,
        additional,
        target_moves(entries),
    )


def _set(client: KafkaClient, resource: ConfigResource, values: Mapping[str, str]) -> None:
    incremental_alter_configs(client, resource, [(k, AlterConfigOpType.SET, v) for k, v in values.items()])


def apply_execute(
    client: KafkaClient,
    plan: ops.ExecutePlan,
    timeout_ms: int,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> list[str]:
    """The throttles (topics, then brokers, then the log-dir throttle of the brokers whose replicas move
    between dirs), AlterPartitionReassignments, then the log-dir moves; Kafka's lines about the moves.
    Raises TerseReassignmentFailure with Kafka's `Error reassigning partition(s):` text for refused
    partitions, or when moves did not start within `timeout_ms`."""
    for topic, values in plan.topic_throttles.items():
        _set(client, ConfigResource(ResourceType.TOPIC, topic), values)
    for broker, values in plan.broker_throttles.items():
        _set(client, ConfigResource(ResourceType.BROKER, str(broker)), values)
    if plan.log_dir_throttle >= 0:
        for broker in sorted({r.broker_id for r in plan.log_dir_moves}):
            _set(
                client,
                ConfigResource(ResourceType.BROKER, str(broker)),
                {ops.BROKER_LOG_DIR_THROTTLE: str(plan.log_dir_throttle)},
            )
    errors = alter_partition_reassignments(client, plan.proposed)
    if errors:
        raise TerseReassignmentFailure(
            "Error reassigning partition(s):\n" + "\n".join(f"{tp}: {errors[tp].message}" for tp in sorted(errors))
        )
    return execute_moves(client, plan.log_dir_moves, timeout_ms, clock, sleep)


def execute_moves(
    client: KafkaClient,
    moves: Mapping[TopicPartitionReplica, str],
    timeout_ms: int,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> list[str]:
    """Kafka's `executeMoves`: AlterReplicaLogDirs until every move started; a replica the broker does not
    have yet (REPLICA_NOT_AVAILABLE: its reassignment has not created it) is asked again every 100 ms.
    One line per round that started some. Raises AdminOperationError (`Failed to alter dir for ...`) for
    another error, TerseReassignmentFailure when `timeout_ms` passes first."""
    start = clock()
    pending = dict(moves)
    lines = []
    while pending:
        answers = alter_replica_log_dirs(client, pending)
        for replica in sorted(answers, key=replica_order):
            error = answers[replica]
            if error is not None and not isinstance(error, ReplicaNotAvailableError):
                raise AdminOperationError(f"Failed to alter dir for {replica}")
        started = [r for r, error in answers.items() if error is None]
        if started:
            lines.append(moves_started_line(started))
        for replica in started:
            del pending[replica]
        if pending and clock() >= start + timeout_ms / 1000:
            raise TerseReassignmentFailure(moves_timed_out_message(list(pending)))
        if pending:
            sleep(MOVE_RETRY_S)
    return lines


def log_dir_states(
    client: KafkaClient, targets: Mapping[TopicPartitionReplica, str]
) -> dict[TopicPartitionReplica, LogDirMoveState]:
    """Kafka's `findLogDirMoveStates` over DescribeLogDirs: a replica in an offline log dir (KAFKA_STORAGE_ERROR)
    or on no dir of its broker has no current dir."""
    if not targets:
        return {}
    found = {}
    for replica, info in describe_replica_log_dirs(client, targets).items():
        if isinstance(info, KafkaStorageError):
            found[replica] = ReplicaDirs(None, None)
        elif isinstance(info, BrokerError):
            raise info
        else:
            found[replica] = ReplicaDirs(info.current_replica_log_dir, info.future_replica_log_dir)
    return move_states(targets, found)


# --- --verify ------------------------------------------------------------------------------------


def verify_reassignment(
    client: KafkaClient, entries: Sequence[ReassignmentEntry], *, preserve_throttles: bool = False
) -> ops.VerifyResult:
    """Kafka 2.8's AdminClient `verifyAssignment`: a partition with an ongoing reassignment is in
    progress (its current replicas are the full set), any other is done on its replicas now (none for a
    partition that does not exist); when no reassignment is ongoing anywhere in the cluster, clear the
    throttles unless preserved."""
    targets = ops.targets_of(entries)
    ongoing = list_partition_reassignments(client)
    current = _current_replicas(client, [tp for tp in targets if tp not in ongoing])
    states = {
        tp: ops.PartitionState(tuple(ongoing[tp].replicas), tuple(targets[tp]), False)
        if tp in ongoing
        else ops.PartitionState(current.get(tp, ()), tuple(targets[tp]), True)
        for tp in sorted(targets)
    }
    moves = log_dir_states(client, target_moves(entries))
    moving = not all(state.done for state in moves.values())
    cleared = None
    if not ongoing and not moving and not preserve_throttles:
        cleared = clear_throttles(client, entries)
    return ops.VerifyResult(states, bool(ongoing) or moving, cleared, tuple(move_state_lines(moves)))


def clear_throttles(client: KafkaClient, entries: Sequence[ReassignmentEntry]) -> ops.ClearedThrottles:
    """Kafka 2.8's AdminClient `clearAllThrottles`: DELETE of the three broker throttles on the live
    brokers and the file's brokers, and of the two topic throttle lists on the file's topics (those
    that still exist)."""
    brokers, topics = ops.throttle_clearing_targets(sorted(client.metadata([]).brokers), entries)
    for broker in brokers:
        incremental_alter_configs(
            client,
            ConfigResource(ResourceType.BROKER, str(broker)),
            [(k, AlterConfigOpType.DELETE, None) for k in ops.BROKER_THROTTLES],
        )
    existing = set(list_topics(client))
    for topic in topics:
        if topic in existing:
            incremental_alter_configs(
                client,
                ConfigResource(ResourceType.TOPIC, topic),
                [(k, AlterConfigOpType.DELETE, None) for k in ops.TOPIC_THROTTLES],
            )
    return ops.ClearedThrottles(brokers, topics)


def read_progress(
    client: KafkaClient, targets: Mapping[TopicPartition, Sequence[int]], elapsed_s: float = 0.0
) -> ops.ReassignmentProgress:
    """`--verify --wait`'s snapshot over the wire: each partition's state (as `verify_reassignment`
    judges it), its adding/removing replicas, leader and ISR (Metadata)."""
    ongoing = list_partition_reassignments(client, list(targets))
    cluster = client.metadata(list(dict.fromkeys(tp.topic for tp in targets)))
    rows = []
    for tp in sorted(targets):
        info = cluster.partition(tp.topic, tp.partition)
        reassigning = ongoing.get(tp)
        if reassigning is not None and reassigning.is_being_reassigned:
            state = ops.PartitionState(tuple(reassigning.replicas), tuple(targets[tp]), False)
        else:
            state = ops.PartitionState(tuple(info.replicas) if info else (), tuple(targets[tp]), True)
        rows.append(
            ops.PartitionProgress(
                tp,
                state,
                tuple(reassigning.adding_replicas) if reassigning else (),
                tuple(reassigning.removing_replicas) if reassigning else (),
                info.leader if info is not None and info.leader >= 0 else None,
                tuple(info.isr) if info is not None else None,
            )
        )
    return ops.ReassignmentProgress(rows, elapsed_s, False)


# --- --cancel and --list -------------------------------------------------------------------------


def cancel_reassignment(
    client: KafkaClient,
    entries: Sequence[ReassignmentEntry],
    *,
    preserve_throttles: bool = False,
    timeout_ms: int = 10000,
) -> ops.CancelResult:
    """Kafka 2.8's AdminClient `cancelAssignment`: cancel the file's partitions that are being
    reassigned, move the file's replicas that are moving between log dirs back to their current dir,
    then clear the throttles unless preserved. Raises TerseReassignmentFailure with Kafka's text for
    partitions the controller refused."""
    targets = ops.targets_of(entries)
    active = {tp: a for tp, a in list_partition_reassignments(client, list(targets)).items() if a.is_being_reassigned}
    if active:
        errors: dict[TopicPartition, BrokerError] = alter_partition_reassignments(client, dict.fromkeys(active))
        if errors:
            plural = "" if len(errors) == 1 else "s"
            raise TerseReassignmentFailure(
                f"Error cancelling partition reassignment{plural} for:\n"
                + "\n".join(f"{tp}: {errors[tp].message}" for tp in sorted(errors))
            )
    moving = {
        replica: state.current
        for replica, state in log_dir_states(client, target_moves(entries)).items()
        if state.kind is MoveKind.ACTIVE and state.current is not None
    }
    move_lines = execute_moves(client, moving, timeout_ms) if moving else []
    cleared = None if preserve_throttles else clear_throttles(client, entries)
    return ops.CancelResult({tp: tuple(a.original_replicas) for tp, a in active.items()}, cleared, tuple(move_lines))


def list_reassignments(client: KafkaClient) -> dict[TopicPartition, ReplicaAssignment]:
    """Every ongoing reassignment, sorted by (topic, partition)."""
    return list_partition_reassignments(client)
