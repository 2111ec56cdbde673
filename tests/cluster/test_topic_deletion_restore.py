"""Partitions added to a topic that is being deleted are written out of its znode again (Kafka's
`restorePartitionReplicaAssignment`), so a deletion never leaves half a topic behind."""

from __future__ import annotations

from kafkaops.admin import topics as admin_topics
from kafkaops.admin.assignment import JavaRandom
from kafkaops.cluster.local.waiting import wait_for
from kafkaops.cluster.zk.values import ReplicaAssignment, TopicAssignment, TopicPartition


def test_partitions_added_while_a_topic_is_deleted_are_reverted(cluster, zk):
    local = cluster(brokers=2)
    admin_topics.create_topic(zk, "doomed", None, None, {0: [0, 1]}, {}, rng=JavaRandom(1))
    wait_for(lambda: zk.get_partition_states([TopicPartition("doomed", 0)])[TopicPartition("doomed", 0)] is not None)
    # An offline replica, so the deletion cannot finish. Not the controller's broker: a controller elected
    # after the partition is added would load the grown topic as it is, and there is nothing to restore.
    wait_for(lambda: zk.get_controller_id() is not None)  # broker 0 is a falsy id
    offline = 1 - zk.get_controller_id()
    local.stop_broker(offline, hard=True)
    wait_for(lambda: offline not in zk.get_sorted_broker_ids(), timeout_s=30)
    assert zk.mark_topic_for_deletion("doomed")
    current, version = zk.get_topic_assignment_versioned("doomed")
    grown = TopicAssignment({**current.partitions, 1: ReplicaAssignment((0, 1))}, current.topic_id)
    zk.set_topic_assignment("doomed", grown, version)
    wait_for(lambda: set(zk.get_topic_assignment_versioned("doomed")[0].partitions) == {0}, timeout_s=30)
    assert zk.get("/brokers/topics/doomed/partitions/1") is None
    local.start_broker(offline)  # the deletion can now complete
    wait_for(lambda: not zk.topic_exists("doomed"), timeout_s=60)
