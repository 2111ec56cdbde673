"""The partition leader's ISR and high-watermark rules, as pure functions over plain values.

Kafka 2.8 `Partition.scala` / `Replica.scala` on the ZooKeeper path (IBP < 2.7): the leader tracks
each follower's fetches, shrinks the ISR of followers that lag more than `replica.lag.time.max.ms`,
expands it with followers that reached the high watermark, and moves the high watermark to the
smallest log end offset in the ISR (kafka-reference.md §5.5, kafka-protocol.md §13). Times are
milliseconds passed in by the caller; nothing here reads a clock or writes anything.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence, Set
from dataclasses import dataclass

from kafkaops.cluster.zk.values import LeaderAndIsr, TopicPartition

UNKNOWN_OFFSET = -1


@dataclass(frozen=True)
class FollowerState:
    """What the leader knows of one follower (Kafka's `Replica` on the leader), times in ms."""

    broker: int
    log_end_offset: int = UNKNOWN_OFFSET
    last_caught_up_ms: int = 0
    last_fetch_leader_log_end_offset: int = 0
    last_fetch_time_ms: int = 0
    log_start_offset: int = UNKNOWN_OFFSET
    """The follower's log start offset, as its last fetch said (for the low watermark of DeleteRecords)."""


def follower_fetched(
    state: FollowerState,
    *,
    fetch_offset: int,
    leader_log_end_offset: int,
    fetch_time_ms: int,
    log_start_offset: int | None = None,
) -> FollowerState:
    """`Replica.updateFetchState`. A fetch at the leader's end offset means caught up now; a fetch at
    or past the leader's end offset *of the previous fetch* means caught up as of that fetch. The
    follower's LEO is the offset it asks for: what it has, not what this response will give it."""
    caught_up = state.last_caught_up_ms
    if fetch_offset >= leader_log_end_offset:
        caught_up = max(caught_up, fetch_time_ms)
    elif fetch_offset >= state.last_fetch_leader_log_end_offset:
        caught_up = max(caught_up, state.last_fetch_time_ms)
    return FollowerState(
        state.broker,
        fetch_offset,
        caught_up,
        leader_log_end_offset,
        fetch_time_ms,
        state.log_start_offset if log_start_offset is None else log_start_offset,
    )


def low_watermark(
    leader_log_start_offset: int,
    followers: Mapping[int, FollowerState],
    *,
    alive: Callable[[int], bool],
    future_log_start_offset: int | None = None,
) -> int:
    """Kafka's `lowWatermarkIfLeader`: the smallest log start offset among the leader, its followers on
    live brokers (UNKNOWN_OFFSET, -1, for one that has not fetched since this broker became leader) and the
    leader's future log. DeleteRecords is done once it reaches the offset asked for."""
    lowest = leader_log_start_offset
    for broker, state in followers.items():
        if alive(broker) and state.log_start_offset < lowest:
            lowest = state.log_start_offset
    return lowest if future_log_start_offset is None else min(lowest, future_log_start_offset)


def reset_followers_on_become_leader(
    replicas: Iterable[int], leader: int, isr: Set[int], *, leader_log_end_offset: int, now_ms: int
) -> dict[int, FollowerState]:
    """`Replica.resetLastCaughtUpTime` on becoming leader: ISR followers start a fresh lag window,
    the others are considered never caught up; their LEO is unknown until they fetch."""
    return {
        r: FollowerState(r, UNKNOWN_OFFSET, now_ms if r in isr else 0, leader_log_end_offset, now_ms)
        for r in replicas
        if r != leader
    }


def out_of_sync_replicas(
    isr: Sequence[int],
    leader: int,
    followers: Mapping[int, FollowerState],
    *,
    leader_log_end_offset: int,
    now_ms: int,
    max_lag_ms: int,
) -> tuple[int, ...]:
    """`Partition.getOutOfSyncReplicas`: ISR followers not at the leader's end offset and not caught
    up for more than `replica.lag.time.max.ms`. A follower the leader has no state for is out of sync."""
    out = []
    for r in isr:
        if r == leader:
            continue
        state = followers.get(r)
        if state is None or (
            state.log_end_offset != leader_log_end_offset and now_ms - state.last_caught_up_ms > max_lag_ms
        ):
            out.append(r)
    return tuple(out)


def shrink_isr(isr: Sequence[int], out_of_sync: Iterable[int]) -> tuple[int, ...]:
    """The ISR without the out-of-sync followers, in ISR order."""
    dropped = set(out_of_sync)
    return tuple(r for r in isr if r not in dropped)


def may_join_isr(
    follower: FollowerState,
    *,
    isr: Sequence[int],
    replicas: Sequence[int],
    high_watermark: int,
    leader_epoch_start_offset: int,
) -> bool:
    """`Partition.needsExpandIsr`: an assigned follower outside the ISR whose LEO has reached both the
    high watermark and the start offset of the current leader epoch (so it holds no divergent tail)."""
    return (
        follower.broker in replicas
        and follower.broker not in isr
        and follower.log_end_offset >= high_watermark
        and follower.log_end_offset >= leader_epoch_start_offset
    )


def expand_isr(isr: Sequence[int], follower: int) -> tuple[int, ...]:
    """The ISR with the follower appended (Kafka's small-Set insertion order)."""
    return tuple(isr) if follower in isr else (*isr, follower)


def high_watermark(
    current: int,
    *,
    leader: int,
    leader_log_end_offset: int,
    isr: Iterable[int],
    followers: Mapping[int, FollowerState],
) -> int:
    """HW = min(LEO of the leader and of every ISR follower), never moving backwards. An ISR follower
    whose LEO is unknown holds the HW where it is."""
    candidate = leader_log_end_offset
    for r in isr:
        if r != leader:
            state = followers.get(r)
            candidate = min(candidate, state.log_end_offset if state is not None else UNKNOWN_OFFSET)
    return max(current, candidate)


@dataclass(frozen=True)
class IsrChange:
    """A decided ISR change for the leader to write (conditionally) and to propagate."""

    partition: TopicPartition
    leader_and_isr: LeaderAndIsr
    removed: tuple[int, ...] = ()
    added: tuple[int, ...] = ()


def isr_change(partition: TopicPartition, leader_and_isr: LeaderAndIsr, new_isr: Sequence[int]) -> IsrChange | None:
    """The state to write when the leader changes the ISR itself (pre-2.7 ZooKeeper path): same leader
    and leader epoch (the ISR alone changes; only the zk_version moves, on the write), or None if the
    ISR is unchanged."""
    new = tuple(new_isr)
    if new == leader_and_isr.isr:
        return None
    removed = tuple(r for r in leader_and_isr.isr if r not in new)
    added = tuple(r for r in new if r not in leader_and_isr.isr)
    return IsrChange(
        partition,
        LeaderAndIsr(leader_and_isr.leader, leader_and_isr.leader_epoch, new, leader_and_isr.zk_version),
        removed,
        added,
    )


ISR_CHANGE_PROPAGATION_BLACKOUT_MS = 5000
"""`ReplicaManager.IsrChangePropagationBlackOut`: wait for ISR changes to settle this long..."""
ISR_CHANGE_PROPAGATION_INTERVAL_MS = 60000
"""`ReplicaManager.IsrChangePropagationInterval`: ...but never hold pending changes longer than this."""


def should_propagate_isr_changes(*, pending: bool, last_change_ms: int, last_propagation_ms: int, now_ms: int) -> bool:
    """`ReplicaManager.maybePropagateIsrChanges` (run every 2.5 s): write one `isr_change_` notification
    for all pending partitions once no ISR changed for 5 s, or at least once a minute under churn."""
    return pending and (
        last_change_ms + ISR_CHANGE_PROPAGATION_BLACKOUT_MS < now_ms
        or last_propagation_ms + ISR_CHANGE_PROPAGATION_INTERVAL_MS < now_ms
    )
