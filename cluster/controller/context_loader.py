"""Loading the controller context at failover (Kafka 2.8 `KafkaController.initializeControllerContext`).

A new controller reads the whole cluster: brokers, topics with their assignments, every partition's
state. At scale that is 100,000 znodes, so topics and states come by multiRead on a bulk connection
(`KafkaZkClient.get_full_replica_assignments`, `get_topic_partition_states`). An unreadable topic or
state is logged and left out: the controller comes up with the rest.

Runs on the controller's event thread.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence

from kafkaops.cluster.common.errors import MalformedZNodeError
from kafkaops.cluster.controller.broker_change import read_live_brokers
from kafkaops.cluster.controller.context import ControllerContext
from kafkaops.cluster.controller.controller_zk_client import ContextLoadZkClient
from kafkaops.cluster.zk.values import TopicAssignment, TopicPartition

log = logging.getLogger("kafkaops.controller")


def initialize_controller_context(
    context: ControllerContext, zk: ContextLoadZkClient, watch_topics: Callable[[Sequence[str]], None]
) -> list[str]:
    """Fill a new context with the live brokers, topics, assignments, reassignments under way and
    leaders; `watch_topics` is called with every topic before their znodes are read (a change after the
    read fires). A topic whose znode is malformed is known without partitions until its znode changes.
    Returns the topics loaded."""
    context.set_live_brokers(read_live_brokers(zk))
    topics = zk.get_all_topics()
    watch_topics(topics)
    found = zk.get_full_replica_assignments(topics)
    assignments: dict[str, TopicAssignment] = {}
    for topic in topics:
        entry = found.get(topic)
        if entry is None:
            continue
        if isinstance(entry, MalformedZNodeError):
            log.error("Ignoring topic %s until its znode changes: %s", topic, entry)
            continue
        assignments[topic] = entry
    partitions = [TopicPartition(t, p) for t, a in assignments.items() for p in sorted(a.partitions)]
    states = zk.get_topic_partition_states(partitions)
    context.set_all_topics(found)
    for topic, assignment in assignments.items():
        if assignment.topic_id:
            context.topic_ids[topic] = assignment.topic_id
        for partition, replica_assignment in assignment.partitions.items():
            tp = TopicPartition(topic, partition)
            context.update_partition_full_replica_assignment(tp, replica_assignment)
            if replica_assignment.is_being_reassigned:
                context.partitions_being_reassigned.add(tp)
    for tp in partitions:
        state = states[tp]
        if state is None:
            continue
        if isinstance(state, MalformedZNodeError):
            log.error("Ignoring the state of %s: %s", tp, state)
            continue
        context.put_partition_leadership_info(tp, state)
    return list(assignments)
