"""LeaderEpochCache: Kafka 2.8's LeaderEpochFileCacheTest, case by case (same names, snake_case), plus the
checkpoint persistence the Kafka cache does through its checkpoint file, here through the Log."""

from __future__ import annotations

from pathlib import Path

import pytest

from kafkaops.cluster.log import UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET, EpochEntry, LeaderEpochCache, Log, LogConfig
from kafkaops.cluster.log.checkpoints import LEADER_EPOCH_CHECKPOINT
from kafkaops.cluster.protocol.records import Record, build_batch

UNDEFINED = (UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET)


@pytest.fixture
def cache() -> LeaderEpochCache:
    return LeaderEpochCache()


def test_should_add_epoch_and_message_offset_to_cache(cache: LeaderEpochCache) -> None:
    cache.assign(2, 10)
    log_end_offset = 11
    assert cache.latest_epoch == 2
    assert cache.entries[0] == EpochEntry(2, 10)
    assert cache.end_offset_for(2, log_end_offset) == (2, log_end_offset)


def test_should_return_log_end_offset_if_latest_epoch_requested(cache: LeaderEpochCache) -> None:
    cache.assign(2, 11)
    cache.assign(2, 12)
    assert cache.end_offset_for(2, 14) == (2, 14)


def test_should_return_undefined_offset_if_undefined_epoch_requested(cache: LeaderEpochCache) -> None:
    cache.assign(2, 11)
    cache.assign(3, 12)
    assert cache.end_offset_for(UNDEFINED_EPOCH, 0) == UNDEFINED


def test_should_not_overwrite_log_end_offset_for_a_leader_epoch_once_it_has_been_assigned(
    cache: LeaderEpochCache,
) -> None:
    cache.assign(2, 9)
    assert not cache.assign(2, 10)
    assert cache.entries == [EpochEntry(2, 9)]


def test_should_enforce_monotonically_increasing_start_offsets(cache: LeaderEpochCache) -> None:
    cache.assign(2, 9)
    cache.assign(3, 9)
    assert cache.entries == [EpochEntry(3, 9)]


def test_should_not_overwrite_offset_for_a_leader_epoch_once_it_has_been_assigned(cache: LeaderEpochCache) -> None:
    cache.assign(2, 6)
    cache.assign(2, 10)
    assert cache.entries[0].start_offset == 6


def test_should_return_unsupported_if_no_epoch_recorded(cache: LeaderEpochCache) -> None:
    assert cache.end_offset_for(0, 0) == UNDEFINED


def test_should_return_unsupported_if_no_epoch_recorded_and_undefined_epoch_requested(cache: LeaderEpochCache) -> None:
    assert cache.end_offset_for(UNDEFINED_EPOCH, 73) == UNDEFINED


def test_should_return_first_epoch_if_requested_epoch_less_than_first_epoch(cache: LeaderEpochCache) -> None:
    cache.assign(5, 11)
    cache.assign(6, 12)
    cache.assign(7, 13)
    assert cache.end_offset_for(4, 0) == (4, 11)


def test_should_truncate_if_matching_epoch_but_earlier_starting_offset(cache: LeaderEpochCache) -> None:
    cache.assign(5, 11)
    cache.assign(6, 12)
    cache.assign(7, 13)
    cache.assign(7, 12)  # epoch 7 starts at an earlier offset
    assert cache.end_offset_for(5, 0) == (5, 12)
    assert cache.end_offset_for(6, 0) == (5, 12)


def test_should_get_first_offset_of_subsequent_epoch_when_offset_requested_for_previous_epoch(
    cache: LeaderEpochCache,
) -> None:
    for epoch, offset in [(1, 11), (1, 12), (2, 13), (2, 14), (3, 15), (3, 16)]:
        cache.assign(epoch, offset)
    assert cache.end_offset_for(2, 17) == (2, 15)


def test_should_return_next_available_epoch_if_there_is_no_exact_epoch_for_the_one_requested(
    cache: LeaderEpochCache,
) -> None:
    cache.assign(0, 10)
    cache.assign(2, 13)
    cache.assign(4, 17)
    assert cache.end_offset_for(1, 0) == (0, 13)
    assert cache.end_offset_for(2, 0) == (2, 17)
    assert cache.end_offset_for(3, 0) == (2, 17)


def test_should_not_update_epoch_and_start_offset_if_it_did_not_change(cache: LeaderEpochCache) -> None:
    cache.assign(2, 6)
    cache.assign(2, 7)
    assert cache.entries == [EpochEntry(2, 6)]


def test_should_return_invalid_offset_if_epoch_is_requested_which_is_not_currently_tracked(
    cache: LeaderEpochCache,
) -> None:
    cache.assign(2, 100)
    assert cache.end_offset_for(3, 100) == UNDEFINED


def test_should_support_epochs_that_do_not_start_from_zero(cache: LeaderEpochCache) -> None:
    cache.assign(2, 6)
    assert cache.end_offset_for(2, 7) == (2, 7)
    assert cache.entries == [EpochEntry(2, 6)]


def test_should_enforce_monotonically_increasing_epochs(cache: LeaderEpochCache) -> None:
    cache.assign(1, 5)
    cache.assign(2, 6)
    # An epoch in the past with a later offset: the log is already inconsistent, and the cache truncates the
    # conflicting later epochs so that epochs and offsets keep increasing together.
    cache.assign(1, 7)
    assert cache.latest_epoch == 1
    assert cache.end_offset_for(1, 8) == (1, 8)
    assert cache.end_offset_for(2, 8) == UNDEFINED
    assert cache.entries == [EpochEntry(1, 7)]


def test_should_enforce_offsets_increase_monotonically(cache: LeaderEpochCache) -> None:
    cache.assign(2, 6)
    cache.assign(3, 5)
    assert cache.entries == [EpochEntry(3, 5)]


def test_should_increase_and_track_epochs_as_leaders_change_many_times(cache: LeaderEpochCache) -> None:
    cache.assign(0, 0)
    cache.assign(1, 0)
    assert cache.latest_epoch == 1
    assert cache.end_offset_for(1, 0) == (1, 0)
    assert cache.end_offset_for(0, 0) == (0, 0)
    # five messages in epoch 1
    assert cache.end_offset_for(1, 5) == (1, 5)
    assert cache.end_offset_for(0, 5) == (0, 0)
    cache.assign(2, 5)
    assert cache.end_offset_for(2, 10) == (2, 10)
    assert cache.end_offset_for(1, 10) == (1, 5)
    assert cache.end_offset_for(0, 10) == (0, 0)


def test_should_increase_and_track_epochs_as_follower_receives_many_messages(cache: LeaderEpochCache) -> None:
    for offset in range(3):
        cache.assign(0, offset)
    assert cache.latest_epoch == 0
    assert cache.end_offset_for(0, 3) == (0, 3)
    for offset in range(3, 6):
        cache.assign(1, offset)
    assert cache.latest_epoch == 1
    assert cache.end_offset_for(1, 6) == (1, 6)
    for offset in range(6, 9):
        cache.assign(2, offset)
    assert cache.latest_epoch == 2
    assert cache.end_offset_for(2, 9) == (2, 9)
    assert cache.end_offset_for(0, 9) == (0, 3)
    assert cache.end_offset_for(1, 9) == (1, 6)


@pytest.fixture
def three_epochs(cache: LeaderEpochCache) -> LeaderEpochCache:
    cache.assign(2, 6)
    cache.assign(3, 8)
    cache.assign(4, 11)
    return cache


def test_should_drop_entries_on_epoch_boundary_when_removing_latest_entries(three_epochs: LeaderEpochCache) -> None:
    three_epochs.truncate_from_end(8)
    assert three_epochs.entries == [EpochEntry(2, 6)]


def test_should_preserve_reset_offset_on_clear_earliest_if_one_exists(three_epochs: LeaderEpochCache) -> None:
    three_epochs.truncate_from_start(8)
    assert three_epochs.entries == [EpochEntry(3, 8), EpochEntry(4, 11)]


def test_should_update_saved_offset_when_offset_to_clear_to_is_between_epochs(three_epochs: LeaderEpochCache) -> None:
    three_epochs.truncate_from_start(9)
    assert three_epochs.entries == [EpochEntry(3, 9), EpochEntry(4, 11)]


def test_should_not_clear_anything_if_offset_to_early(three_epochs: LeaderEpochCache) -> None:
    assert not three_epochs.truncate_from_start(1)
    assert three_epochs.entries == [EpochEntry(2, 6), EpochEntry(3, 8), EpochEntry(4, 11)]


def test_should_not_clear_anything_if_offset_to_first_offset(three_epochs: LeaderEpochCache) -> None:
    three_epochs.truncate_from_start(6)
    assert three_epochs.entries == [EpochEntry(2, 6), EpochEntry(3, 8), EpochEntry(4, 11)]


def test_should_retain_latest_epoch_on_clear_all_earliest(three_epochs: LeaderEpochCache) -> None:
    three_epochs.truncate_from_start(11)
    assert three_epochs.entries == [EpochEntry(4, 11)]


def test_should_update_offset_between_epoch_boundaries_on_clear_earliest(three_epochs: LeaderEpochCache) -> None:
    three_epochs.truncate_from_start(9)
    assert three_epochs.entries == [EpochEntry(3, 9), EpochEntry(4, 11)]


def test_should_update_offset_between_epoch_boundaries_on_clear_earliest2(cache: LeaderEpochCache) -> None:
    cache.assign(0, 0)
    cache.assign(1, 7)
    cache.assign(2, 10)
    cache.truncate_from_start(5)
    assert cache.entries == [EpochEntry(0, 5), EpochEntry(1, 7), EpochEntry(2, 10)]


def test_should_retain_latest_epoch_on_clear_all_earliest_and_update_its_offset(three_epochs: LeaderEpochCache) -> None:
    three_epochs.truncate_from_start(15)
    assert three_epochs.entries == [EpochEntry(4, 15)]


def test_should_drop_entries_between_epoch_boundary_when_removing_newest(three_epochs: LeaderEpochCache) -> None:
    three_epochs.truncate_from_end(9)
    assert three_epochs.latest_epoch == 3
    assert three_epochs.entries == [EpochEntry(2, 6), EpochEntry(3, 8)]


def test_should_clear_all_entries(three_epochs: LeaderEpochCache) -> None:
    three_epochs.clear()
    assert three_epochs.entries == []


def test_should_not_reset_epoch_history_if_undefined_passed(three_epochs: LeaderEpochCache) -> None:
    # Kafka's ...HeadIfUndefinedPassed and ...TailIfUndefinedPassed are the same call.
    assert not three_epochs.truncate_from_end(UNDEFINED_EPOCH_OFFSET)
    assert len(three_epochs.entries) == 3


def test_should_fetch_latest_epoch_of_empty_cache(cache: LeaderEpochCache) -> None:
    assert cache.latest_epoch is None


def test_should_fetch_end_offset_of_empty_cache(cache: LeaderEpochCache) -> None:
    assert cache.end_offset_for(7, 0) == UNDEFINED


def test_should_clear_earliest_on_empty_cache(cache: LeaderEpochCache) -> None:
    assert not cache.truncate_from_start(7)


def test_should_clear_latest_on_empty_cache(cache: LeaderEpochCache) -> None:
    assert not cache.truncate_from_end(7)


# --- beyond Kafka's test ------------------------------------------------------------------------------


def test_invalid_entries_are_refused(cache: LeaderEpochCache) -> None:
    with pytest.raises(ValueError, match="invalid partition leader epoch entry"):
        cache.assign(-1, 0)
    with pytest.raises(ValueError):
        cache.assign(0, -5)


def test_a_cache_built_from_checkpoint_entries_is_as_assigned() -> None:
    assert LeaderEpochCache([EpochEntry(1, 0), EpochEntry(3, 10)]).entries == [EpochEntry(1, 0), EpochEntry(3, 10)]
    # a file with a non-monotonic tail loads the way `assign` would leave it
    assert LeaderEpochCache([EpochEntry(1, 0), EpochEntry(3, 10), EpochEntry(2, 12)]).entries == [
        EpochEntry(1, 0),
        EpochEntry(2, 12),
    ]


def test_mutators_report_whether_the_checkpoint_must_be_rewritten(three_epochs: LeaderEpochCache) -> None:
    assert not three_epochs.assign(4, 12)
    assert three_epochs.assign(5, 12)
    assert not three_epochs.truncate_from_end(13)
    assert three_epochs.truncate_from_end(12)
    assert three_epochs.clear()


def _batch() -> bytes:
    return build_batch([Record(0, 1_700_000_000_000, None, b"v")])


def test_should_persist_epochs_between_instances(tmp_path: Path) -> None:
    directory = tmp_path / "t-0"
    log = Log(directory, LogConfig())
    for _ in range(6):
        log.append_as_leader(_batch(), 1)
    log.assign_epoch_start_offset(2, 6)  # a new leader, at its log end
    log.append_as_leader(_batch(), 2)
    log.close()
    assert (directory / LEADER_EPOCH_CHECKPOINT).read_text() == "0\n2\n1 0\n2 6\n"
    assert Log(directory, LogConfig()).epoch_entries == [EpochEntry(1, 0), EpochEntry(2, 6)]


def test_loading_drops_epochs_at_or_past_the_log_end(tmp_path: Path) -> None:
    directory = tmp_path / "t-0"
    directory.mkdir()
    # Written before a crash that lost the data they start at. Kafka's Log truncates the cache at the log end
    # on load too, so an epoch opened at the log end but not yet written in is reopened by the next leader.
    (directory / LEADER_EPOCH_CHECKPOINT).write_text("0\n2\n1 0\n2 6\n")
    log = Log(directory, LogConfig())
    assert log.epoch_entries == []
    assert (directory / LEADER_EPOCH_CHECKPOINT).read_text() == "0\n0\n"


def test_an_epoch_opened_at_the_log_end_is_written_with_its_first_record(tmp_path: Path) -> None:
    directory = tmp_path / "t-0"
    checkpoint = directory / LEADER_EPOCH_CHECKPOINT
    log = Log(directory, LogConfig())
    log.append_as_leader(_batch(), 1)
    assert checkpoint.read_text() == "0\n1\n1 0\n"
    log.assign_epoch_start_offset(2, 1)  # a new leader at its log end: loading would drop the entry anyway
    assert log.epoch_entries == [EpochEntry(1, 0), EpochEntry(2, 1)]
    assert checkpoint.read_text() == "0\n1\n1 0\n"
    # a crash now loses nothing that loading keeps: the entry is at the log end
    assert Log(directory, LogConfig()).epoch_entries == [EpochEntry(1, 0)]
    log.append_as_leader(_batch(), 2)
    assert checkpoint.read_text() == "0\n2\n1 0\n2 1\n"
    log.assign_epoch_start_offset(3, 2)
    log.assign_epoch_start_offset(4, 2)  # replaces epoch 3's entry, which got no record: at the log end too
    assert log.epoch_entries == [EpochEntry(1, 0), EpochEntry(2, 1), EpochEntry(4, 2)]
    assert checkpoint.read_text() == "0\n2\n1 0\n2 1\n"
    assert Log(directory, LogConfig()).epoch_entries == [EpochEntry(1, 0), EpochEntry(2, 1)]
    log.append_as_leader(_batch(), 4)
    assert checkpoint.read_text() == "0\n3\n1 0\n2 1\n4 2\n"
    log.assign_epoch_start_offset(5, 3)
    log.close()  # a clean close leaves epoch 5 out too: loading drops an entry at the log end
    assert checkpoint.read_text() == "0\n3\n1 0\n2 1\n4 2\n"
    assert Log(directory, LogConfig()).epoch_entries == [EpochEntry(1, 0), EpochEntry(2, 1), EpochEntry(4, 2)]


def test_an_epoch_assignment_that_drops_an_entry_below_the_log_end_is_written_at_once(tmp_path: Path) -> None:
    """Loading keeps the entries below the log end: one the cache dropped must leave the file now."""
    directory = tmp_path / "t-0"
    checkpoint = directory / LEADER_EPOCH_CHECKPOINT
    log = Log(directory, LogConfig())
    log.append_as_leader(_batch(), 1)
    log.append_as_leader(_batch(), 4)
    assert checkpoint.read_text() == "0\n2\n1 0\n4 1\n"
    log.assign_epoch_start_offset(3, 2)  # below the latest epoch: epoch 4's entry (offset 1) goes
    assert log.epoch_entries == [EpochEntry(1, 0), EpochEntry(3, 2)]
    assert checkpoint.read_text() == "0\n2\n1 0\n3 2\n"
    log.close()


def test_the_log_feeds_the_cache_from_appends_and_truncations(tmp_path: Path) -> None:
    log = Log(tmp_path / "t-0", LogConfig())
    for epoch in (0, 0, 1, 1, 3):
        log.append_as_leader(_batch(), epoch)
    assert log.epoch_entries == [EpochEntry(0, 0), EpochEntry(1, 2), EpochEntry(3, 4)]
    assert log.end_offset_for_epoch(1) == (1, 4)
    assert log.end_offset_for_epoch(2) == (1, 4)
    assert log.end_offset_for_epoch(3) == (3, 5)
    log.truncate_to(3)
    assert log.epoch_entries == [EpochEntry(0, 0), EpochEntry(1, 2)]
    assert (tmp_path / "t-0" / LEADER_EPOCH_CHECKPOINT).read_text() == "0\n2\n0 0\n1 2\n"
    log.truncate_fully_and_start_at(40)
    assert log.epoch_entries == []
    assert (tmp_path / "t-0" / LEADER_EPOCH_CHECKPOINT).read_text() == "0\n0\n"


def test_a_follower_takes_epochs_from_the_leaders_batches(tmp_path: Path) -> None:
    leader = Log(tmp_path / "t-0", LogConfig())
    for epoch in (1, 1, 4):
        leader.append_as_leader(_batch(), epoch)
    follower = Log(tmp_path / "f" / "t-0", LogConfig())
    follower.append_as_follower(leader.read(0, 1 << 20).records)
    assert follower.epoch_entries == leader.epoch_entries == [EpochEntry(1, 0), EpochEntry(4, 2)]
