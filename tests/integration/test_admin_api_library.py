"""The admin library functions behind the brokers' Admin API, on a real ZooKeeper: validate-only writes
nothing, bad input gets Kafka's error and text and leaves ZooKeeper as it was."""

from __future__ import annotations

import pytest

from kafkaops.admin import configs, topics
from kafkaops.cluster.common import errors
from kafkaops.cluster.zk import znodes


def test_create_validate_only_writes_nothing(zk, brokers, zk_tree):
    brokers([0, 1])
    before = zk_tree()
    result = topics.create_topic(zk, "t", 3, 2, None, {"retention.ms": "1000"}, validate_only=True)
    assert not result.created and sorted(result.assignment) == [0, 1, 2]
    assert zk_tree() == before


def test_create_over_given_brokers(zk, brokers):
    brokers([0, 1, 2])
    result = topics.create_topic(zk, "t", 4, 1, None, {}, brokers=[(2, None)])
    assert result.created and set(map(tuple, result.assignment.values())) == {(2,)}


def test_create_partitions_kafka_texts(zk, brokers, zk_tree):
    brokers([0, 1])
    topics.create_topic(zk, "t", 2, 1, None, {})
    before = zk_tree()
    with pytest.raises(errors.InvalidPartitionsError, match="Topic already has 2 partitions."):
        topics.create_partitions(zk, "t", 2, None)
    with pytest.raises(errors.InvalidPartitionsError, match="which is higher than the requested 1"):
        topics.create_partitions(zk, "t", 1, None)
    with pytest.raises(errors.InvalidReplicaAssignmentError, match="Unknown broker\\(s\\) in replica assignment: 7."):
        topics.create_partitions(zk, "t", 3, [[7]])
    with pytest.raises(errors.InvalidReplicaAssignmentError, match="by 2 but 1 assignments provided"):
        topics.create_partitions(zk, "t", 4, [[0]])
    with pytest.raises(errors.UnknownTopicOrPartitionError, match="The topic 'nope' does not exist."):
        topics.create_partitions(zk, "nope", 4, None)
    assert topics.create_partitions(zk, "t", 3, [[1]], validate_only=True) == {2: [1]}
    assert zk_tree() == before
    assert topics.create_partitions(zk, "t", 4, [[1], [0]]) == {2: [1], 3: [0]}
    assert zk.get_topic_assignments(["t"])["t"].replicas[3] == [0]


def test_delete_topic(zk, brokers):
    brokers([0])
    topics.create_topic(zk, "t", 1, 1, None, {})
    assert topics.delete_topic(zk, "t") is True
    assert topics.delete_topic(zk, "t") is False
    with pytest.raises(errors.UnknownTopicOrPartitionError, match="topic nope to delete does not exist"):
        topics.delete_topic(zk, "nope")


def test_change_configs_validates_then_writes(zk, brokers, zk_tree):
    brokers([0])
    topics.create_topic(zk, "t", 1, 1, None, {})
    entity = configs.ConfigEntity(znodes.ConfigType.TOPIC, "t")
    before = zk_tree()
    with pytest.raises(errors.UnknownConfigNameError):
        configs.change_configs(zk, entity, {"nope": "1"}, None)
    with pytest.raises(errors.InvalidConfigurationError, match="Not a number of type LONG"):
        configs.change_configs(zk, entity, {"retention.ms": "x"}, None)
    configs.change_configs(zk, entity, {"retention.ms": "1000"}, None, validate_only=True)
    assert zk_tree() == before
    _, version = zk.get_entity_config("topics", "t")
    configs.change_configs(zk, entity, {"retention.ms": "1000"}, version)
    assert zk.get_entity_config("topics", "t")[0] == {"retention.ms": "1000"}
    default = configs.ConfigEntity(znodes.ConfigType.BROKER, znodes.DEFAULT_ENTITY_NAME)
    with pytest.raises(errors.InvalidConfigurationError, match="broker id must be specified"):
        configs.change_configs(zk, default, {"listeners": "PLAINTEXT://:1"}, None)
