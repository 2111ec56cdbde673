"""Producer ids for idempotent producers (Kafka's `ProducerIdManager`, ZooKeeper mode): handed out one by one
from a block claimed in `/latest_producer_id_block`, so that ids stay unique across brokers and restarts
(kafka-protocol.md §9). Used on the event loop; the claim of a new block runs in the loop's executor.
"""

from __future__ import annotations

import asyncio
import logging

from kafkaops.cluster.zk.client import KafkaZkClient

# The broker's own logger: these lines have always been the broker's in server.out.
log = logging.getLogger("kafkaops.broker")


class ProducerIdManager:
    def __init__(self, broker_id: int, zk: KafkaZkClient) -> None:
        self.broker_id = broker_id
        self.zk = zk
        self._next = 0
        self._end = -1
        self._lock = asyncio.Lock()

    async def generate_producer_id(self) -> int | None:
        """The next id, or None when no block could be claimed (ZooKeeper unavailable: the client retries)."""
        async with self._lock:
            if self._next > self._end:
                try:
                    block = await asyncio.get_running_loop().run_in_executor(
                        None, self.zk.allocate_producer_id_block, self.broker_id
                    )
                except Exception as error:  # noqa: BLE001 - ZooKeeper unavailable: the client retries
                    log.warning("Could not allocate a producer id block: %s", error)
                    return None
                self._next, self._end = block.block_start, block.block_end
            producer_id = self._next
            self._next += 1
        return producer_id
