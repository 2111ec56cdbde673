"""ISR change notifications (Kafka 2.8 `KafkaController.processIsrChangeNotification`; reference §5.5).

Leaders write a sequential znode under `/isr_change_notification` when they change an ISR; the
controller reads the partitions' states again, tells every broker (UpdateMetadata) and deletes the
notifications it read. An expanded ISR may complete a reassignment.

Owned by the controller's event thread.
"""

from __future__ import annotations

import logging

from kafkaops.cluster.common.errors import MalformedZNodeError
from kafkaops.cluster.controller.channel import ControllerChannel
from kafkaops.cluster.controller.context import ControllerContext
from kafkaops.cluster.controller.controller_zk_client import IsrChangeZkClient
from kafkaops.cluster.controller.reassignment_handler import ReassignmentHandler
from kafkaops.cluster.zk.values import TopicPartition

log = logging.getLogger("kafkaops.controller")


class IsrChangeNotificationHandler:
    def __init__(
        self,
        context: ControllerContext,
        zk: IsrChangeZkClient,
        channel: ControllerChannel,
        reassignments: ReassignmentHandler,
    ) -> None:
        self.context = context
        self.zk = zk
        self.channel = channel
        self.reassignments = reassignments

    def process_isr_change_notification(self) -> None:
        ctx = self.context
        children = self.zk.get_all_isr_change_notifications()
        if not children:
            return
        partitions: set[TopicPartition] = set()
        for path, found in self.zk.get_partitions_from_isr_change_notifications(children).items():
            if isinstance(found, MalformedZNodeError):
                log.error("Ignoring ISR change notification %s: %s", path, found)
                continue
            partitions |= found
        try:
            known = sorted(tp for tp in partitions if tp.topic in ctx.all_topics)
            states = self.zk.get_topic_partition_states(known, fresh=True)
            for tp, state in states.items():
                if isinstance(state, MalformedZNodeError):
                    log.error("Unreadable state of %s: %s", tp, state)
                elif state is not None:
                    ctx.put_partition_leadership_info(tp, state)
            batch = self.channel.new_batch()
            batch.add_update_metadata(ctx.live_broker_ids, known)
            self.channel.send(batch)
            # the leaders write these when they expand the ISR: a reassignment may be complete (its
            # completion watch, set apart, fires as well)
            self.reassignments.maybe_complete_reassignments(known, states)
        finally:
            # only the notifications read: one written meanwhile fires the watch again
            self.zk.delete_isr_change_notifications(children, ctx.epoch_zk_version)
