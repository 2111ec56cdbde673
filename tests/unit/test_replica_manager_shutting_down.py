"""A broker whose shutdown has begun becomes a follower without fetching (Kafka's `ReplicaManager.
makeFollowers` with `isShuttingDown` set): the one-pass controlled shutdown makes the leaving broker a follower
of the partitions it led, and a fetching follower would be taken back into the ISR it has just left."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest

from kafkaops.cluster.broker.config import parse_broker_config
from kafkaops.cluster.broker.metadata_cache import MetadataCache
from kafkaops.cluster.broker.replica_manager import ReplicaManager
from kafkaops.cluster.broker.requests import LeaderAndIsrRequest, LiveLeader
from kafkaops.cluster.log import LogManager
from kafkaops.cluster.state_change_log import Level, StateChangeLogFile
from kafkaops.cluster.zk.values import TopicPartition
from tests.unit.test_broker_replication_rules import _state as state

BROKER, LEADER = 1, 2


class NoTopicConfigs:
    """The one ZooKeeper read a first LeaderAndIsr makes: the topic's overrides (none here)."""

    def get_entity_config(self, entity_type: str, name: str) -> tuple[dict[str, str], None]:
        return {}, None


class Broker:
    def __init__(self, tmp_path: Path) -> None:
        self.shutting_down = False
        self.log_manager = LogManager([tmp_path / "logs"])
        self.log_manager.startup()
        self.state_change_log = StateChangeLogFile(tmp_path, threshold=Level.TRACE)
        config = parse_broker_config({"zookeeper.connect": "zk:2181", "broker.id": BROKER})
        self.replica_manager = ReplicaManager(
            BROKER,
            config,
            self.state_change_log,
            self.log_manager,
            NoTopicConfigs(),  # type: ignore[arg-type] - the only call a become-follower makes
            MetadataCache(),
            is_shutting_down=lambda: self.shutting_down,
        )

    def become_follower(self, epoch: int) -> None:
        request = LeaderAndIsrRequest(
            controller_id=LEADER,
            controller_epoch=1,
            broker_epoch=-1,
            partition_states=(state(LEADER, epoch, [LEADER], [LEADER, BROKER]),),
            live_leaders=(LiveLeader(LEADER, "127.0.0.1", 9),),
        )
        errors = self.replica_manager.become_leader_or_follower(1, request)
        assert errors.error_code == 0 and [code for _, code in errors.partition_errors] == [0]

    def state_change_lines(self) -> str:
        self.state_change_log.flush()
        return self.state_change_log.path.read_text()


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[Broker]:
    broker = Broker(tmp_path)
    yield broker
    broker.log_manager.shutdown()
    broker.state_change_log.close()


def fetched_partitions(broker: Broker) -> set[TopicPartition]:
    return {tp for fetcher in broker.replica_manager.fetchers.values() for tp in fetcher.partitions}


def test_a_running_broker_made_a_follower_fetches_from_its_leader(broker: Broker) -> None:
    async def follow() -> set[TopicPartition]:
        broker.become_follower(epoch=1)  # on the loop, as the broker handles it: a fetcher is a task
        fetched = fetched_partitions(broker)
        for fetcher in broker.replica_manager.fetchers.values():
            await fetcher.shutdown()
        return fetched

    assert asyncio.run(follow()) == {TopicPartition("t", 0)}


def test_a_shutting_down_broker_made_a_follower_adds_no_fetcher(broker: Broker) -> None:
    broker.shutting_down = True
    broker.become_follower(epoch=1)  # off any loop: a fetcher would fail to start its task
    assert broker.replica_manager.partitions[TopicPartition("t", 0)].leader == LEADER  # it follows all the same
    assert fetched_partitions(broker) == set()
    assert (
        "Skipped the adding-fetcher step of the become-follower state change with correlation id 1 from "
        f"controller {LEADER} epoch 1 for partition t-0 with leader {LEADER} since it is shutting down"
    ) in broker.state_change_lines()
