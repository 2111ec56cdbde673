"""The topic deletion manager against the in-memory fakes: Kafka 2.8's `TopicDeletionManagerTest`, case by
case (each test is named after Kafka's), then the deletion events' handlers.

Kafka's test runs the manager over mock state machines that only change states; here the real state
machines run over the fake ZooKeeper and channel, counted the way Kafka's mocks count. Adapted where
kafkaops differs from Kafka (each case says how): topics start their deletion one at a time (Kafka
handles all eligible topics in one call, so its counts are per round, these per topic), dead replicas
go to ReplicaDeletionIneligible only when there are some, and the replicas of an ineligible topic stay
ReplicaDeletionIneligible until the topic is resumed (Kafka moves them back to OfflineReplica at once).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from kafkaops.cluster.controller.events import TopicDeletionStopReplicaResponseReceived
from kafkaops.cluster.controller.state_machines import PartitionReplica, PartitionState, ReplicaState
from kafkaops.cluster.zk.values import ReplicaAssignment, TopicPartition
from tests.unit.controller_fakes import Harness, broker

R = ReplicaState


def init_context(h: Harness, brokers: Sequence[int], topics: Sequence[str], partitions: int, replication: int) -> None:
    """Kafka's `initContext`: live brokers (epoch 1) and a round-robin assignment."""
    h.live_brokers(*brokers)
    h.context.set_all_topics(topics)
    leader_index = 0
    for topic in topics:
        h.zk.add_topic(topic, {})
        for p in range(partitions):
            replicas = tuple(brokers[(i + leader_index) % len(brokers)] for i in range(replication))
            h.context.update_partition_full_replica_assignment(TopicPartition(topic, p), ReplicaAssignment(replicas))
            leader_index += 1


class StateChangeCalls:
    """Kafka's `stateChangesCalls` of its mock state machines: calls to `handle_state_changes` per target."""

    def __init__(self, h: Harness) -> None:
        self.partitions: Counter[PartitionState] = Counter()
        self.replicas: Counter[ReplicaState] = Counter()
        for machine, counts in (
            (h.handlers.partition_state_machine, self.partitions),
            (h.handlers.replica_state_machine, self.replicas),
        ):
            original = machine.handle_state_changes

            def counted(
                items: Sequence[Any],
                target: Any,
                *args: Any,
                _original: Any = original,
                _counts: Counter[Any] = counts,
                **kwargs: Any,
            ) -> Any:
                _counts[target] += 1
                return _original(items, target, *args, **kwargs)

            machine.handle_state_changes = counted

    def clear(self) -> None:
        self.partitions.clear()
        self.replicas.clear()


def startup(h: Harness) -> StateChangeCalls:
    calls = StateChangeCalls(h)
    h.handlers.replica_state_machine.startup()
    h.handlers.partition_state_machine.startup()
    return calls


def partitions_for(h: Harness, topic: str) -> set[TopicPartition]:
    return set(h.context.partitions_for_topic(topic))


def replicas_for(h: Harness, topic: str) -> set[PartitionReplica]:
    return h.context.replicas_for_partitions(h.context.partitions_for_topic(topic))


def replica_states_of(h: Harness, topic: str) -> set[PartitionReplica]:
    return {r for r in h.context.replica_states if r.partition.topic == topic}


# --- Kafka's TopicDeletionManagerTest --------------------------------------------------------------------


def test_initialization() -> None:
    h = Harness()
    init_context(h, [1, 2, 3], ["foo", "bar", "baz"], 2, 3)
    startup(h)
    deletion = h.handlers.topic_deletion
    assert deletion.is_delete_topic_enabled
    deletion.init({"foo", "bar"}, {"bar", "baz"})
    assert h.context.topics_to_be_deleted == {"foo", "bar"}
    assert h.context.topics_ineligible_for_deletion == {"bar"}


def test_basic_deletion() -> None:
    h = Harness()
    init_context(h, [1, 2, 3], ["foo", "bar"], 2, 3)
    calls = startup(h)
    deletion = h.handlers.topic_deletion
    assert deletion.is_delete_topic_enabled
    deletion.init(set(), set())
    foo_partitions, foo_replicas = partitions_for(h, "foo"), replicas_for(h, "foo")
    bar_partitions, bar_replicas = partitions_for(h, "bar"), replicas_for(h, "bar")
    calls.clear()
    h.channel.sent.clear()

    deletion.enqueue_topics_for_deletion({"foo", "bar"})
    assert h.context.partitions_in_states(PartitionState.NON_EXISTENT, topic="foo") == foo_partitions
    assert h.context.replicas_in_state("foo", R.DELETION_STARTED) == foo_replicas
    assert h.context.partitions_in_states(PartitionState.NON_EXISTENT, topic="bar") == bar_partitions
    assert h.context.replicas_in_state("bar", R.DELETION_STARTED) == bar_replicas
    assert h.channel.update_metadata_partitions() == foo_partitions | bar_partitions
    assert h.context.topics_to_be_deleted == {"foo", "bar"}
    assert h.context.topics_with_deletion_started == {"foo", "bar"}
    assert h.context.topics_ineligible_for_deletion == set()

    deletion.complete_replica_deletion(sorted(foo_replicas | bar_replicas))
    assert partitions_for(h, "foo") == set() and replica_states_of(h, "foo") == set()
    assert partitions_for(h, "bar") == set() and replica_states_of(h, "bar") == set()
    assert h.context.topics_to_be_deleted == set()
    assert h.context.topics_with_deletion_started == set()
    assert h.context.topics_ineligible_for_deletion == set()
    assert h.zk.deleted_topics == ["bar", "foo"]

    # Kafka: one call per target for both topics together; here one per topic
    assert calls.partitions[PartitionState.OFFLINE] == 2
    assert calls.partitions[PartitionState.NON_EXISTENT] == 2
    assert calls.replicas[R.DELETION_INELIGIBLE] == 0  # no dead replica (Kafka calls with none: 1)
    assert calls.replicas[R.OFFLINE] == 2
    assert calls.replicas[R.DELETION_STARTED] == 2
    assert calls.replicas[R.DELETION_SUCCESSFUL] == 1


def test_deletion_with_broker_offline() -> None:
    h = Harness()
    init_context(h, [1, 2, 3], ["foo", "bar"], 2, 3)
    startup(h)
    deletion = h.handlers.topic_deletion
    assert deletion.is_delete_topic_enabled
    deletion.init(set(), set())
    foo_partitions, foo_replicas = partitions_for(h, "foo"), replicas_for(h, "foo")

    failed_broker = 2  # taken offline
    last_epoch = h.context.broker_epoch(failed_broker)
    assert last_epoch is not None
    h.context.remove_live_brokers({failed_broker})
    assert h.context.live_broker_ids == {1, 3}
    offline_replicas = {r for r in foo_replicas if r.replica == failed_broker}
    online_replicas = foo_replicas - offline_replicas
    h.handlers.replica_state_machine.handle_state_changes(sorted(offline_replicas), R.OFFLINE)
    h.channel.sent.clear()

    deletion.enqueue_topics_for_deletion({"foo"})
    assert h.context.partitions_in_states(PartitionState.NON_EXISTENT, topic="foo") == foo_partitions
    assert h.channel.update_metadata_partitions() == foo_partitions
    assert h.context.replicas_in_state("foo", R.DELETION_STARTED) == online_replicas
    assert h.context.replicas_in_state("foo", R.DELETION_INELIGIBLE) == offline_replicas
    assert h.context.topics_to_be_deleted == {"foo"}
    assert h.context.topics_with_deletion_started == {"foo"}
    assert h.context.topics_ineligible_for_deletion == {"foo"}

    # deletion succeeds for the online replicas
    deletion.complete_replica_deletion(sorted(online_replicas))
    assert h.context.partitions_in_states(PartitionState.NON_EXISTENT, topic="foo") == foo_partitions
    assert h.context.topics_to_be_deleted == {"foo"}
    assert h.context.topics_with_deletion_started == {"foo"}
    assert h.context.topics_ineligible_for_deletion == {"foo"}
    assert h.context.replicas_in_state("foo", R.DELETION_SUCCESSFUL) == online_replicas
    # Kafka: back to OfflineReplica at once; here they wait as they are
    assert h.context.replicas_in_state("foo", R.DELETION_INELIGIBLE) == offline_replicas

    # broker 2 comes back and the deletion resumes
    h.context.add_live_brokers([(broker(failed_broker), last_epoch + 1)])
    deletion.resume_deletion_for_topics({"foo"})
    assert h.context.replicas_in_state("foo", R.DELETION_SUCCESSFUL) == online_replicas
    assert h.context.replicas_in_state("foo", R.DELETION_STARTED) == offline_replicas

    deletion.complete_replica_deletion(sorted(offline_replicas))
    assert partitions_for(h, "foo") == set() and replica_states_of(h, "foo") == set()
    assert h.context.topics_to_be_deleted == set()
    assert h.context.topics_with_deletion_started == set()
    assert h.context.topics_ineligible_for_deletion == set()


def test_broker_failure_after_deletion_started() -> None:
    h = Harness()
    init_context(h, [1, 2, 3], ["foo", "bar"], 2, 3)
    startup(h)
    deletion = h.handlers.topic_deletion
    deletion.init(set(), set())
    foo_partitions, foo_replicas = partitions_for(h, "foo"), replicas_for(h, "foo")

    deletion.enqueue_topics_for_deletion({"foo"})
    assert h.context.partitions_in_states(PartitionState.NON_EXISTENT, topic="foo") == foo_partitions
    assert h.context.replicas_in_state("foo", R.DELETION_STARTED) == foo_replicas

    failed_broker = 2  # fails
    last_epoch = h.context.broker_epoch(failed_broker)
    assert last_epoch is not None
    h.context.remove_live_brokers({failed_broker})
    assert h.context.live_broker_ids == {1, 3}
    offline_replicas = {r for r in foo_replicas if r.replica == failed_broker}
    online_replicas = foo_replicas - offline_replicas

    deletion.fail_replica_deletion(sorted(offline_replicas))
    assert h.context.topics_to_be_deleted == {"foo"}
    assert h.context.topics_with_deletion_started == {"foo"}
    assert h.context.topics_ineligible_for_deletion == {"foo"}
    assert h.context.replicas_in_state("foo", R.DELETION_INELIGIBLE) == offline_replicas
    assert h.context.replicas_in_state("foo", R.DELETION_STARTED) == online_replicas

    # broker 2 is restarted: the offline replicas remain ineligible
    h.context.add_live_brokers([(broker(failed_broker), last_epoch + 1)])
    deletion.resume_deletion_for_topics({"foo"})
    assert h.context.topics_to_be_deleted == {"foo"}
    assert h.context.topics_with_deletion_started == {"foo"}
    assert h.context.topics_ineligible_for_deletion == set()
    assert h.context.replicas_in_state("foo", R.DELETION_STARTED) == online_replicas
    assert h.context.replicas_in_state("foo", R.DELETION_INELIGIBLE) == offline_replicas

    # when deletion completes for the replicas which started, deletion begins for the remaining ones
    deletion.complete_replica_deletion(sorted(online_replicas))
    assert h.context.topics_to_be_deleted == {"foo"}
    assert h.context.topics_with_deletion_started == {"foo"}
    assert h.context.topics_ineligible_for_deletion == set()
    assert h.context.replicas_in_state("foo", R.DELETION_SUCCESSFUL) == online_replicas
    assert h.context.replicas_in_state("foo", R.DELETION_STARTED) == offline_replicas


# --- the deletion events ---------------------------------------------------------------------------------


def test_topic_deletion_event_drops_intents_for_unknown_topics_and_queues_the_others() -> None:
    h = Harness()
    h.live_brokers(1, 2)
    h.topic("doomed", {0: [1, 2]})
    h.zk.topic_deletions = {"doomed", "ghost"}
    h.handlers.topic_deletion.process_topic_deletion()
    assert ("delete_topic_deletions", (("ghost",),)) in h.zk.calls
    assert h.context.topics_with_deletion_started == {"doomed"}
    assert sorted(h.channel.stop_replica()) == [
        (1, TopicPartition("doomed", 0), False),
        (1, TopicPartition("doomed", 0), True),
        (2, TopicPartition("doomed", 0), False),
        (2, TopicPartition("doomed", 0), True),
    ]


def test_topic_deletion_event_with_deletion_disabled_drops_every_intent() -> None:
    from kafkaops.cluster.controller.controller import ControllerSettings

    h = Harness(settings=ControllerSettings(broker_id=5, delete_topic_enable=False))
    h.topic("kept", {0: [1]})
    h.zk.topic_deletions = {"kept", "ghost"}
    h.handlers.topic_deletion.process_topic_deletion()
    assert h.zk.topic_deletions == set()
    assert h.context.topics_to_be_deleted == set() and h.channel.sent == []


def test_topic_with_an_offline_replica_waits_for_it() -> None:
    h = Harness()
    h.live_brokers(1)
    h.topic("doomed", {0: [1, 2]})
    h.context.put_replica_state(PartitionReplica(TopicPartition("doomed", 0), 2), R.OFFLINE)
    h.zk.topic_deletions = {"doomed"}
    h.handlers.topic_deletion.process_topic_deletion()
    assert h.context.topics_ineligible_for_deletion == {"doomed"}
    assert h.context.topics_with_deletion_started == set() and h.channel.sent == []


def test_stop_replica_response_completes_the_deletion_or_makes_replicas_ineligible() -> None:
    h = Harness()
    h.live_brokers(1, 2)
    tps = h.topic("doomed", {0: [1, 2], 1: [2, 1]})
    deletion = h.handlers.topic_deletion
    deletion.enqueue_topics_for_deletion(["doomed"])
    deletion.process_stop_replica_response(TopicDeletionStopReplicaResponseReceived(1, tuple((tp, 0) for tp in tps), 0))
    assert h.context.replicas_in_state("doomed", R.DELETION_SUCCESSFUL) == {PartitionReplica(tp, 1) for tp in tps}
    deletion.process_stop_replica_response(TopicDeletionStopReplicaResponseReceived(2, ((tps[0], 0), (tps[1], 56)), 0))
    assert h.context.replica_state(PartitionReplica(tps[1], 2)) is R.DELETION_INELIGIBLE
    assert h.context.topics_ineligible_for_deletion == {"doomed"}
    assert h.zk.deleted_topics == []
    deletion.resume_deletion_for_topics(["doomed"])  # broker 2 is back
    deletion.process_stop_replica_response(TopicDeletionStopReplicaResponseReceived(2, ((tps[1], 0),), 0))
    assert h.zk.deleted_topics == ["doomed"]
    assert "doomed" not in h.context.all_topics and h.context.partitions_for_topic("doomed") == []


def test_stop_replica_response_with_a_request_error_fails_every_partition() -> None:
    h = Harness()
    h.live_brokers(1)
    tps = h.topic("doomed", {0: [1]})
    deletion = h.handlers.topic_deletion
    deletion.enqueue_topics_for_deletion(["doomed"])
    deletion.process_stop_replica_response(TopicDeletionStopReplicaResponseReceived(1, ((tps[0], 0),), 41))
    assert h.context.replica_state(PartitionReplica(tps[0], 1)) is R.DELETION_INELIGIBLE


def test_halted_topics_are_those_given_with_an_offline_replica_or_a_reassignment() -> None:
    """At failover, of the topics queued for deletion, those that must wait (Kafka's
    `fetchTopicDeletionsInProgress`): only their own replicas are looked at."""
    h = Harness()
    init_context(h, [1, 2, 3], ["foo", "bar", "baz", "qux"], 2, 2)
    h.live_brokers(1, 2)  # broker 3 is gone: every topic has a replica on it
    h.context.partitions_being_reassigned.add(TopicPartition("baz", 0))
    deletion = h.handlers.topic_deletion
    assert deletion.halted_topics(["foo", "baz"]) == {"foo", "baz"}
    assert deletion.halted_topics([]) == set()
    h.live_brokers(1, 2, 3)
    assert deletion.halted_topics(["foo", "bar", "baz"]) == {"baz"}
    h.context.replicas_on_offline_dirs[2] = {TopicPartition("qux", 1)}  # a failed log dir takes it offline
    assert deletion.halted_topics(["foo", "qux"]) == {"qux"}
