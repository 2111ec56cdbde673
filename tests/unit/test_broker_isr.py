"""The leader's ISR and high-watermark rules (reference §5.5, kafka-protocol.md §13)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from kafkaops.cluster.broker.isr import (
    UNKNOWN_OFFSET,
    FollowerState,
    IsrChange,
    expand_isr,
    follower_fetched,
    high_watermark,
    isr_change,
    may_join_isr,
    out_of_sync_replicas,
    reset_followers_on_become_leader,
    should_propagate_isr_changes,
    shrink_isr,
)
from kafkaops.cluster.zk.values import LeaderAndIsr, TopicPartition

LAG = 30000


def test_fetch_at_leader_end_is_caught_up_now() -> None:
    state = follower_fetched(FollowerState(2), fetch_offset=100, leader_log_end_offset=100, fetch_time_ms=5000)
    assert state == FollowerState(2, 100, 5000, 100, 5000)


def test_fetch_reaching_previous_leader_end_is_caught_up_as_of_that_fetch() -> None:
    first = follower_fetched(FollowerState(2), fetch_offset=50, leader_log_end_offset=100, fetch_time_ms=1000)
    assert first.last_caught_up_ms == 0  # behind the leader, and no earlier fetch to compare with
    # the leader moved on to 150, but the follower now has what the leader had at the previous fetch
    second = follower_fetched(first, fetch_offset=100, leader_log_end_offset=150, fetch_time_ms=2000)
    assert second.last_caught_up_ms == 1000
    assert second.log_end_offset == 100
    # still behind even the previous end: no progress in caught-up time
    third = follower_fetched(second, fetch_offset=120, leader_log_end_offset=200, fetch_time_ms=3000)
    assert third.last_caught_up_ms == 1000


def test_caught_up_time_never_goes_back() -> None:
    state = FollowerState(2, 100, 9000, 100, 9000)
    assert (
        follower_fetched(state, fetch_offset=100, leader_log_end_offset=100, fetch_time_ms=8000).last_caught_up_ms
        == 9000
    )


def test_out_of_sync_after_lag_time() -> None:
    followers = {
        2: FollowerState(2, 90, last_caught_up_ms=0),  # behind for 30.001 s
        3: FollowerState(3, 100, last_caught_up_ms=0),  # at the leader's end: in sync however old
        4: FollowerState(4, 90, last_caught_up_ms=1),  # behind for exactly 30 s: still in sync
    }
    out = out_of_sync_replicas([1, 2, 3, 4, 5], 1, followers, leader_log_end_offset=100, now_ms=LAG + 1, max_lag_ms=LAG)
    assert out == (2, 5)  # 5: the leader knows nothing of it
    assert shrink_isr([1, 2, 3, 4, 5], out) == (1, 3, 4)


def test_new_leader_gives_isr_followers_a_fresh_window() -> None:
    followers = reset_followers_on_become_leader([1, 2, 3], 1, {1, 2}, leader_log_end_offset=70, now_ms=500)
    assert followers == {
        2: FollowerState(2, UNKNOWN_OFFSET, 500, 70, 500),
        3: FollowerState(3, UNKNOWN_OFFSET, 0, 70, 500),
    }
    assert out_of_sync_replicas([1, 2], 1, followers, leader_log_end_offset=70, now_ms=500 + LAG, max_lag_ms=LAG) == ()


def test_join_isr_needs_hw_and_epoch_start() -> None:
    follower = FollowerState(3, 80)
    common = {"replicas": [1, 2, 3], "isr": [1, 2]}
    assert may_join_isr(follower, high_watermark=80, leader_epoch_start_offset=60, **common)
    assert not may_join_isr(follower, high_watermark=81, leader_epoch_start_offset=60, **common)
    assert not may_join_isr(follower, high_watermark=70, leader_epoch_start_offset=81, **common)
    assert not may_join_isr(follower, high_watermark=0, leader_epoch_start_offset=0, replicas=[1, 2], isr=[1, 2])
    assert not may_join_isr(follower, high_watermark=0, leader_epoch_start_offset=0, replicas=[1, 3], isr=[1, 3])
    assert expand_isr([1, 2], 3) == (1, 2, 3)
    assert expand_isr([1, 3], 3) == (1, 3)


def test_high_watermark_is_min_leo_over_isr_and_only_grows() -> None:
    followers = {2: FollowerState(2, 90), 3: FollowerState(3, 40)}
    # 3 is not in the ISR: its LEO does not hold the HW back
    assert high_watermark(10, leader=1, leader_log_end_offset=100, isr=[1, 2], followers=followers) == 90
    assert high_watermark(10, leader=1, leader_log_end_offset=100, isr=[1, 2, 3], followers=followers) == 40
    assert high_watermark(95, leader=1, leader_log_end_offset=100, isr=[1, 2], followers=followers) == 95
    # an ISR follower the leader has not heard from yet holds it where it is
    assert high_watermark(10, leader=1, leader_log_end_offset=100, isr=[1, 4], followers=followers) == 10
    assert high_watermark(10, leader=1, leader_log_end_offset=100, isr=[1], followers={}) == 100


def test_isr_change_keeps_leader_epoch() -> None:
    tp = TopicPartition("foo", 0)
    current = LeaderAndIsr(1, 5, (1, 2, 3), 8)
    assert isr_change(tp, current, [1, 2, 3]) is None
    assert isr_change(tp, current, [1, 3, 4]) == IsrChange(tp, LeaderAndIsr(1, 5, (1, 3, 4), 8), (2,), (4,))


def test_isr_change_propagation_timing() -> None:
    assert not should_propagate_isr_changes(pending=False, last_change_ms=0, last_propagation_ms=0, now_ms=10**9)
    # a change 5 s ago exactly: still inside the blackout; one more ms and it goes
    assert not should_propagate_isr_changes(pending=True, last_change_ms=10000, last_propagation_ms=9000, now_ms=15000)
    assert should_propagate_isr_changes(pending=True, last_change_ms=10000, last_propagation_ms=9000, now_ms=15001)
    # constant churn: at least once every 60 s
    assert should_propagate_isr_changes(pending=True, last_change_ms=70000, last_propagation_ms=9000, now_ms=70001)


@given(
    st.lists(st.integers(0, 9), min_size=1, max_size=6, unique=True),
    st.dictionaries(st.integers(0, 9), st.integers(-1, 200)),
    st.integers(0, 200),
    st.integers(0, 200),
)
def test_high_watermark_never_exceeds_an_isr_leo(
    isr: list[int], leos: dict[int, int], leader_leo: int, current: int
) -> None:
    leader = isr[0]
    followers = {b: FollowerState(b, leo) for b, leo in leos.items()}
    hw = high_watermark(current, leader=leader, leader_log_end_offset=leader_leo, isr=isr, followers=followers)
    assert hw >= current
    if hw > current:
        assert hw <= leader_leo
        assert all(r == leader or (r in followers and hw <= followers[r].log_end_offset) for r in isr)


@given(
    st.lists(st.integers(1, 6), min_size=1, max_size=6, unique=True),
    st.dictionaries(st.integers(1, 6), st.tuples(st.integers(0, 100), st.integers(0, 100_000))),
    st.integers(0, 100),
    st.integers(0, 100_000),
)
def test_shrink_keeps_the_leader_and_in_sync_followers(
    isr: list[int], states: dict[int, tuple[int, int]], leader_leo: int, now: int
) -> None:
    leader = isr[0]
    followers = {b: FollowerState(b, leo, caught_up) for b, (leo, caught_up) in states.items()}
    out = out_of_sync_replicas(isr, leader, followers, leader_log_end_offset=leader_leo, now_ms=now, max_lag_ms=LAG)
    new = shrink_isr(isr, out)
    assert new[0] == leader
    for r in new[1:]:
        state = followers[r]
        assert state.log_end_offset == leader_leo or now - state.last_caught_up_ms <= LAG
