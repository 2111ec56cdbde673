"""The chaos runner's group-consumer checks without a cluster: how a member's reading of a partition may
move across rebalances and coordinator failovers (re-reads back to the last acknowledged commit only),
and which acknowledged records it never read."""

from __future__ import annotations

from bench.chaos_runner.checks import unread_acks
from bench.chaos_runner.workload import Ack, ReadTracker

TP = ("chaos-0", 0)


def read(tracker: ReadTracker, *offsets: int) -> None:
    for offset in offsets:
        tracker.note(TP, offset)


def test_a_resume_at_the_last_commit_is_a_reread_not_a_fault() -> None:
    tracker = ReadTracker()
    tracker.assigned([TP])
    read(tracker, 0, 1, 2, 3)
    tracker.commit_acked({TP: 2})
    tracker.assigned([TP])  # a coordinator failover made the member rejoin
    read(tracker, 2, 3, 4)
    assert (tracker.rereads, tracker.rewinds, tracker.skips) == (1, [], [])
    assert tracker.caught_up({TP: 5}) and not tracker.caught_up({TP: 6})


def test_a_resume_before_the_last_commit_is_a_lost_commit() -> None:
    tracker = ReadTracker()
    tracker.assigned([TP])
    read(tracker, 0, 1, 2, 3)
    tracker.commit_acked({TP: 3})
    tracker.assigned([TP])
    read(tracker, 1)
    assert tracker.rewinds == [("chaos-0", 0, 1, 3)]


def test_a_commit_acknowledged_after_the_assignment_may_be_missed_by_it() -> None:
    """Commits are asynchronous: one acknowledged after the new assignment fetched the group's position may
    not be in it, and reading again from before it is no lost commit."""
    tracker = ReadTracker()
    tracker.assigned([TP])
    read(tracker, 0, 1, 2, 3)
    tracker.commit_acked({TP: 2})
    tracker.assigned([TP])
    tracker.commit_acked({TP: 4})
    read(tracker, 2, 3, 4)
    assert (tracker.rereads, tracker.rewinds) == (1, [])
    tracker.assigned([TP])
    read(tracker, 3)
    assert tracker.rewinds == [("chaos-0", 0, 3, 4)]


def test_jumps_forward_are_skips_even_on_a_first_assignment() -> None:
    tracker = ReadTracker()
    tracker.assigned([TP])
    read(tracker, 2)
    read(tracker, 3, 5)
    assert tracker.skips == [("chaos-0", 0, 0, 2), ("chaos-0", 0, 4, 5)]


def test_unread_acks_of_surviving_topics() -> None:
    acked = [Ack("chaos-0", 0, o, b"v", 0.0) for o in range(3)] + [Ack("doomed-0", 0, 0, b"v", 0.0)]
    assert unread_acks(acked, {TP: {0, 2}}, ["chaos-0"]) == [("chaos-0", 0, 1)]
