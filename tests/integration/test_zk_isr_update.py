"""A leader's conditional ISR write against a real ZooKeeper: Kafka's `conditionalUpdatePath` with its
`checkLeaderAndIsrZkData` checker (reference §5.5)."""

from __future__ import annotations

import asyncio

from kafkaops.cluster.zk import znodes
from kafkaops.cluster.zk.client import KafkaZkClient
from kafkaops.cluster.zk.values import LeaderAndIsr, LeaderIsrAndControllerEpoch, TopicPartition
from kafkaops.cluster.zk.zookeeper_client import Op

TP = TopicPartition("isr-writes", 0)
PATH = znodes.TopicPartitionStateZNode.path(TP.topic, TP.partition)


def state(isr: tuple[int, ...], leader_epoch: int = 3, controller_epoch: int = 2) -> LeaderIsrAndControllerEpoch:
    return LeaderIsrAndControllerEpoch(LeaderAndIsr(1, leader_epoch, isr, 0), controller_epoch)


def write(zk: KafkaZkClient, proposed: LeaderIsrAndControllerEpoch, expected_version: int) -> int | None:
    async def run() -> int | None:
        # bounded: a write whose answer is never settled would otherwise hang the test
        return await asyncio.wait_for(zk.conditional_update_partition_state(TP, proposed, expected_version), 10)

    return asyncio.run(run())


def test_an_isr_write_applied_before_its_answer_was_lost_counts_as_written(zk: KafkaZkClient) -> None:
    zk.ensure_paths([znodes.TopicPartitionZNode.path(TP.topic, TP.partition)])
    zk.create(PATH, znodes.TopicPartitionStateZNode.encode(state((1, 2, 3))))
    assert write(zk, state((1, 2)), 0) == 1
    # the same write again at the version it was based on: Kafka's retry after a lost connection; the
    # znode holds exactly it, so it is this write's, at the znode's version
    assert write(zk, state((1, 2)), 0) == 1
    assert zk.get(PATH)[1].version == 1


def test_an_isr_write_the_znode_moved_past_is_refused(zk: KafkaZkClient) -> None:
    zk.ensure_paths([znodes.TopicPartitionZNode.path(TP.topic, TP.partition)])
    zk.create(PATH, znodes.TopicPartitionStateZNode.encode(state((1, 2, 3))))
    assert write(zk, state((1, 2)), 0) == 1
    for other in (state((1, 3)), state((1, 2), leader_epoch=4), state((1, 2), controller_epoch=3)):
        assert write(zk, other, 0) is None  # another ISR, leader epoch or controller: not ours
    assert zk.get(PATH)[0] == znodes.TopicPartitionStateZNode.encode(state((1, 2)))


def test_an_isr_write_to_a_deleted_partition_is_refused(zk: KafkaZkClient) -> None:
    assert write(zk, state((1, 2)), 0) is None


def test_an_isr_write_meeting_a_malformed_state_is_refused(zk: KafkaZkClient) -> None:
    zk.ensure_paths([znodes.TopicPartitionZNode.path(TP.topic, TP.partition)])
    zk.create(PATH, b"{not json")
    assert write(zk, state((1, 2)), 3) is None  # answered, not left pending: the leader's next round retries


# --- many at once: a leader widening the ISR of many partitions in one fetch round ----------------------


def partitions(count: int) -> list[TopicPartition]:
    return [TopicPartition("isr-many", p) for p in range(count)]


def create_states(zk: KafkaZkClient, tps: list[TopicPartition]) -> None:
    for tp in tps:
        zk.ensure_paths([znodes.TopicPartitionZNode.path(tp.topic, tp.partition)])
        zk.create(
            znodes.TopicPartitionStateZNode.path(tp.topic, tp.partition),
            znodes.TopicPartitionStateZNode.encode(state((1, 2, 3))),
        )


def write_many(
    zk: KafkaZkClient, updates: list[tuple[TopicPartition, LeaderIsrAndControllerEpoch, int]]
) -> list[int | None]:
    async def run() -> list[int | None]:
        return list(await asyncio.wait_for(asyncio.gather(*zk.conditional_update_partition_states(updates)), 10))

    return asyncio.run(run())


def test_many_isr_writes_are_committed_in_one_transaction(zk: KafkaZkClient) -> None:
    tps = partitions(20)
    create_states(zk, tps)
    assert write_many(zk, [(tp, state((1, 2)), 0) for tp in tps]) == [1] * 20
    stats = [zk.get(znodes.TopicPartitionStateZNode.path(tp.topic, tp.partition))[1] for tp in tps]
    assert {stat.mzxid for stat in stats} == {stats[0].mzxid}  # one multi: one transaction id
    assert all(zk.get_topic_partition_states([tp])[tp].leader_and_isr.isr == (1, 2) for tp in tps)


def test_a_group_with_a_stale_write_still_writes_the_others(zk: KafkaZkClient, monkeypatch) -> None:
    import kafkaops.cluster.zk.client as client

    monkeypatch.setattr(client, "MAX_OPS_PER_MULTI", 4)  # three groups: 4, 4 and a single one
    tps = partitions(9)
    create_states(zk, tps)
    updates = [(tp, state((1, 2)), 0) for tp in tps]
    updates[1] = (tps[1], state((1, 3)), 7)  # the znode moved past it: refused, the rest of its group written
    zk.multi([Op.delete(znodes.TopicPartitionStateZNode.path(tps[5].topic, tps[5].partition))])  # deleted meanwhile
    assert write_many(zk, updates) == [1, None, 1, 1, 1, None, 1, 1, 1]
    assert zk.get_topic_partition_states([tps[1]])[tps[1]].leader_and_isr.isr == (1, 2, 3)
