"""Watches left by SetWatches after a bulk read (`cluster/zk/set_watches.py`), against a real ZooKeeper
under a chroot: each fires once for a change made after the read, even one made before the watches were
set, and for a state created where none was."""

from __future__ import annotations

import threading

from kafkaops.cluster.zk import znodes
from kafkaops.cluster.zk.pipelined import PipelinedReader
from kafkaops.cluster.zk.values import LeaderAndIsr, LeaderIsrAndControllerEpoch, TopicPartition


class Fired:
    """A watcher that records the paths it is called for."""

    def __init__(self) -> None:
        self.paths: list[str] = []
        self.changed = threading.Condition()

    def __call__(self, event) -> None:
        with self.changed:
            self.paths.append(event.path)
            self.changed.notify_all()

    def wait_for(self, count: int, timeout_s: float = 10.0) -> list[str]:
        with self.changed:
            self.changed.wait_for(lambda: len(self.paths) >= count, timeout_s)
            return sorted(self.paths)


def state(leader: int) -> bytes:
    return znodes.TopicPartitionStateZNode.encode(LeaderIsrAndControllerEpoch(LeaderAndIsr(leader, 0, (leader,), 0), 1))


def create_states(zk, topic: str, count: int) -> list[TopicPartition]:
    partitions = [TopicPartition(topic, p) for p in range(count)]
    pending = [
        zk.kazoo.create_async(znodes.TopicPartitionStateZNode.path(topic, tp.partition), state(0), makepath=True)
        for tp in partitions
    ]
    for request in pending:
        request.get()
    return partitions


def path(tp: TopicPartition) -> str:
    return znodes.TopicPartitionStateZNode.path(tp.topic, tp.partition)


def test_bulk_watched_read_reads_what_the_session_reads_and_fires_for_a_later_change(zk):
    partitions = create_states(zk, "w", 1_200)  # two multiRead answers, two SetWatches
    zk.kazoo.set(path(partitions[7]), state(1))
    fired = Fired()
    watched = zk.get_topic_partition_states(partitions, bulk=True, watch=fired)
    assert watched == zk.get_topic_partition_states(partitions)
    assert watched[partitions[7]].leader_and_isr.leader == 1 and watched[partitions[7]].leader_and_isr.zk_version == 1
    assert fired.paths == []  # nothing changed since the read
    zk.kazoo.set(path(partitions[3]), state(2))
    zk.kazoo.set(path(partitions[1_100]), state(2))
    assert fired.wait_for(2) == sorted([path(partitions[3]), path(partitions[1_100])])
    zk.kazoo.set(path(partitions[3]), state(0))  # one-shot: fired already
    zk.kazoo.sync("/")
    assert len(fired.wait_for(3, timeout_s=0.5)) == 2


def test_a_change_between_the_read_and_the_watches_fires_at_once(zk, monkeypatch):
    partitions = create_states(zk, "x", 10)
    read = PipelinedReader.get_data_and_versions_with_zxids

    def read_then_change(reader, paths, *args):
        answers = read(reader, paths, *args)
        zk.kazoo.set(path(partitions[4]), state(3))  # after the read, before SetWatches
        return answers

    monkeypatch.setattr(PipelinedReader, "get_data_and_versions_with_zxids", read_then_change)
    fired = Fired()
    watched = zk.get_topic_partition_states(partitions, bulk=True, watch=fired)
    assert watched[partitions[4]].leader_and_isr.leader == 0  # the state as read
    assert fired.wait_for(1) == [path(partitions[4])]


def test_a_missing_state_is_watched_until_it_is_created(zk):
    partitions = create_states(zk, "y", 3)
    absent = TopicPartition("y", 3)
    fired = Fired()
    watched = zk.get_topic_partition_states([*partitions, absent], bulk=True, watch=fired)
    assert watched[absent] is None
    zk.kazoo.create(path(absent), state(0), makepath=True)
    assert fired.wait_for(1) == [path(absent)]


def test_without_multi_read_the_session_reads_and_watches(zk, monkeypatch):
    """A server before ZooKeeper 3.6: nothing tells when each pipelined read was made, so the session reads
    each state with its watch, as without `bulk`."""
    partitions = create_states(zk, "v", 5)
    monkeypatch.setattr(PipelinedReader, "get_data_and_versions_with_zxids", lambda *args: None)
    fired = Fired()
    watched = zk.get_topic_partition_states(partitions, bulk=True, watch=fired)
    assert watched == zk.get_topic_partition_states(partitions)
    zk.kazoo.set(path(partitions[2]), state(1))
    assert fired.wait_for(1) == [path(partitions[2])]
