"""Followers' fetchers (Kafka's `ReplicaFetcherThread`): one asyncio task per leader broker.

Each partition a fetcher serves first *truncates*, then *fetches*:

* Truncating (after becoming a follower, kafka-protocol.md §13): an OffsetForLeaderEpoch v3 for our
  latest leader epoch tells where our log and the leader's diverge; `truncation_offset` (pure) decides
  where to cut, perhaps over several rounds. A log without epochs truncates to its high watermark.
* Fetching: Fetch v11 with our broker id from our LEO, in an incremental fetch session (KIP-227,
  fetch_session.py: after one full request, only the partitions whose position changed are named, and
  the leader answers only those with news); the leader's batches are appended byte for byte,
  and our HW and log start offset follow the leader's. OFFSET_OUT_OF_RANGE means our log is ahead of
  the leader's (truncate to its LEO) or behind its start (start again at its log start offset).

The fetcher runs on the broker's event loop with the replica manager, so partitions are touched from one
thread only. Disk writes happen on the loop: appends land in the page cache and are quick.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kafkaops.cluster.broker.fetch_session import FetchSessionHandler, Position
from kafkaops.cluster.broker.partition import Partition
from kafkaops.cluster.common import errors
from kafkaops.cluster.common.client_channel import PLAINTEXT_CHANNEL, ClientChannel
from kafkaops.cluster.common.errors import KafkaOpsError
from kafkaops.cluster.log import UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET
from kafkaops.cluster.protocol.framing import frame, read_frame
from kafkaops.cluster.protocol.messages import RequestHeader, decode_response, encode_request
from kafkaops.cluster.protocol.sasl_client_authenticator import open_channel
from kafkaops.cluster.protocol.schemas import ApiKey
from kafkaops.cluster.zk.values import TopicPartition

log = logging.getLogger("kafkaops.broker.fetcher")

FETCH_VERSION = 11
OFFSET_FOR_LEADER_EPOCH_VERSION = 3
LIST_OFFSETS_VERSION = 5
EARLIEST_TIMESTAMP = -2
LATEST_TIMESTAMP = -1


def truncation_offset(
    *,
    leader_epoch: int,
    leader_end_offset: int,
    follower_end_for_epoch: tuple[int, int],
    follower_log_end_offset: int,
    high_watermark: int,
) -> tuple[int, bool]:
    """Kafka's `AbstractFetcherThread.getOffsetTruncationState`: (offset to truncate to, done?).

    `leader_epoch`/`leader_end_offset` answer OffsetForLeaderEpoch for our latest epoch;
    `follower_end_for_epoch` is our own (epoch, end offset) for the largest epoch ≤ the leader's
    (UNDEFINED when we have none). Not done means: truncate there, then ask again for the epoch we now
    end with, because we never saw the epoch the leader named."""
    if leader_end_offset == UNDEFINED_EPOCH_OFFSET:
        return high_watermark, True  # the leader knows nothing of our epoch: pre-KIP-101 behaviour
    if leader_epoch == UNDEFINED_EPOCH:
        return min(leader_end_offset, follower_log_end_offset), True
    follower_epoch, follower_end = follower_end_for_epoch
    if follower_epoch == UNDEFINED_EPOCH or follower_end == UNDEFINED_EPOCH_OFFSET:
        return min(leader_end_offset, follower_log_end_offset), True
    if follower_epoch != leader_epoch:
        return min(follower_end, follower_log_end_offset), False
    return min(follower_end, leader_end_offset, follower_log_end_offset), True


@dataclass
class FetchState:
    partition: Partition
    leader_epoch: int
    truncating: bool = True
    lag: int | None = None
    """The leader's HW minus our LEO after the last fetch (Kafka's `PartitionFetchState.lag`)."""

    @property
    def in_sync(self) -> bool:
        return self.lag is not None and self.lag <= 0


class ReplicaFetcher:
    """Fetches the partitions this broker follows from one leader broker."""

    def __init__(
        self,
        broker_id: int,
        leader_id: int,
        address: tuple[str, int],
        *,
        max_wait_ms: int,
        min_bytes: int,
        max_bytes: int,
        partition_max_bytes: int,
        backoff_ms: int,
        socket_timeout_ms: int,
        follower_throttled: Callable[[Partition, bool], bool],
        record_throttled: Callable[[int], None],
        channel: ClientChannel = PLAINTEXT_CHANNEL,
    ) -> None:
        self.broker_id = broker_id
        self.leader_id = leader_id
        self.address = address
        self.max_wait_ms = max_wait_ms
        self.min_bytes = min_bytes
        self.max_bytes = max_bytes
        self.partition_max_bytes = partition_max_bytes
        self.backoff_s = backoff_ms / 1000
        self.socket_timeout_s = socket_timeout_ms / 1000
        self.follower_throttled = follower_throttled
        self.record_throttled = record_throttled
        self.channel = channel
        """How to reach the leader: its inter-broker listener's protocol (TLS for SSL, the login for SASL)."""
        self.partitions: dict[TopicPartition, FetchState] = {}
        self._task: asyncio.Task[None] | None = None
        self._connection: tuple[asyncio.StreamReader, asyncio.StreamWriter] | None = None
        self._correlation_id = 0
        self._changed = asyncio.Event()
        self._session = FetchSessionHandler()

    def __repr__(self) -> str:
        return f"ReplicaFetcher(broker {self.broker_id} from {self.leader_id} at {self.address})"

    # --- membership (called on the loop by the replica manager) -----------------------------------------

    def add_partition(self, partition: Partition) -> None:
        self.partitions[partition.tp] = FetchState(partition, partition.leader_epoch)
        self._changed.set()
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._run(), name=repr(self))

    def remove_partition(self, tp: TopicPartition) -> None:
        self.partitions.pop(tp, None)

    async def shutdown(self) -> None:
        self._close()
        if self._task is not None:
            self._task.cancel()
            # Bounded: a broker's shutdown must not hang on one fetcher.
            await asyncio.wait({self._task}, timeout=5)

    # --- the loop --------------------------------------------------------------------------------------

    async def _run(self) -> None:
        while True:
            if not self.partitions:
                self._changed.clear()
                await self._changed.wait()
                continue
            try:
                # connected first: a request of thousands of partitions is built only for a leader that is up
                # (a dead leader's fetcher retries every backoff until the controller moves its partitions)
                await self._connect()
                if any(state.truncating for state in self.partitions.values()):
                    await self._truncate()
                await self._fetch()
            except asyncio.CancelledError:
                raise
            except (TimeoutError, OSError, asyncio.IncompleteReadError, KafkaOpsError) as error:
                log.info("%s: %s; retrying in %ss", self, error, self.backoff_s)
                self._close()
                await asyncio.sleep(self.backoff_s)
            except Exception:  # noqa: BLE001 - a fetcher must outlive any one bad response
                log.exception("%s failed; retrying", self)
                self._close()
                await asyncio.sleep(self.backoff_s)

    async def _connect(self) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        if self._connection is None:
            # asyncio.timeout, not wait_for: 3.11's wait_for can swallow the cancellation of shutdown.
            async with asyncio.timeout(self.socket_timeout_s):
                self._connection = await open_channel(
                    self.channel, *self.address, f"broker-{self.broker_id}-fetcher-0", limit=1 << 20
                )
        return self._connection

    async def _send(self, api_key: ApiKey, version: int, body: dict[str, Any]) -> dict[str, Any]:
        reader, writer = await self._connect()
        self._correlation_id += 1
        header = RequestHeader(api_key, version, self._correlation_id, f"broker-{self.broker_id}-fetcher-0")
        writer.write(frame(encode_request(header, body)))
        await writer.drain()
        async with asyncio.timeout(self.socket_timeout_s):
            payload = await read_frame(reader, 1 << 30)
        if payload is None:
            raise ConnectionError(f"leader {self.leader_id} closed the connection")
        correlation_id, response = decode_response(api_key, version, payload)
        if correlation_id != self._correlation_id:
            raise ConnectionError(f"correlation id {correlation_id} != {self._correlation_id}")
        return response

    def _close(self) -> None:
        if self._connection is not None:
            self._connection[1].close()
            self._connection = None
        self._session.reset()

    # --- truncation ------------------------------------------------------------------------------------

    async def _truncate(self) -> None:
        asked = {tp: state for tp, state in self.partitions.items() if state.truncating}
        with_epochs: dict[TopicPartition, int] = {}
        for tp, state in asked.items():
            latest = state.partition.log.latest_epoch
            if latest is None:
                # No epochs: Kafka's `truncateToHighWatermark`.
                state.partition.truncate_to(state.partition.high_watermark)
                state.truncating = False
            else:
                with_epochs[tp] = latest
        if not with_epochs:
            return
        topics: dict[str, list[dict[str, Any]]] = {}
        for tp, epoch in with_epochs.items():
            topics.setdefault(tp.topic, []).append(
                {"partition": tp.partition, "current_leader_epoch": asked[tp].leader_epoch, "leader_epoch": epoch}
            )
        response = await self._send(
            ApiKey.OFFSET_FOR_LEADER_EPOCH,
            OFFSET_FOR_LEADER_EPOCH_VERSION,
            {
                "replica_id": self.broker_id,
                "topics": [{"topic": t, "partitions": ps} for t, ps in topics.items()],
            },
        )
        for topic in response["topics"]:
            for answer in topic["partitions"]:
                tp = TopicPartition(topic["topic"], answer["partition"])
                current = self.partitions.get(tp)
                if current is None or current is not asked.get(tp):
                    continue  # removed or re-added while we asked
                state = current
                code = answer["error_code"]
                if code != errors.NONE:
                    if code == errors.FencedLeaderEpochError.code:
                        self.partitions.pop(tp, None)  # newer leadership news will come from the controller
                    continue  # the leader may not know it leads yet (NOT_LEADER, UNKNOWN_LEADER_EPOCH): ask again
                partition = state.partition
                offset, done = truncation_offset(
                    leader_epoch=answer["leader_epoch"],
                    leader_end_offset=answer["end_offset"],
                    follower_end_for_epoch=partition.log.end_offset_for_epoch(answer["leader_epoch"])
                    if answer["leader_epoch"] != UNDEFINED_EPOCH
                    else (UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET),
                    follower_log_end_offset=partition.log_end_offset,
                    high_watermark=partition.high_watermark,
                )
                if offset < partition.log_end_offset:
                    log.info("Truncating %s to offset %s (leader epoch %s)", tp, offset, answer["leader_epoch"])
                    partition.truncate_to(offset)
                state.truncating = not done

    # --- fetching --------------------------------------------------------------------------------------

    async def _fetch(self) -> None:
        # one pass, attributes read once: an idle follower repeats this for every partition it follows every
        # round (twice a second per leader), so its cost is most of what an idle follower costs
        throttled = self.follower_throttled
        fetching: dict[TopicPartition, FetchState] = {}
        wanted: dict[TopicPartition, Position] = {}
        for tp, state in self.partitions.items():
            if state.truncating:
                continue
            partition = state.partition
            if throttled(partition, state.in_sync):
                continue
            fetching[tp] = state
            log_ = partition.log
            wanted[tp] = (log_.log_end_offset, log_.log_start_offset, state.leader_epoch)
        if not fetching:
            await asyncio.sleep(self.backoff_s)  # everything throttled: let the quota window move on
            return
        session = self._session
        naming, forgotten = session.next_request(wanted)
        forgotten_by_topic: dict[str, list[int]] = {}
        for tp in forgotten:
            forgotten_by_topic.setdefault(tp.topic, []).append(tp.partition)
        topics: dict[str, list[dict[str, Any]]] = {}
        for tp, (fetch_offset, log_start_offset, leader_epoch) in naming.items():
            topics.setdefault(tp.topic, []).append(
                {
                    "partition": tp.partition,
                    "current_leader_epoch": leader_epoch,
                    "fetch_offset": fetch_offset,
                    "log_start_offset": log_start_offset,
                    "partition_max_bytes": self.partition_max_bytes,
                }
            )
        response = await self._send(
            ApiKey.FETCH,
            FETCH_VERSION,
            {
                "replica_id": self.broker_id,
                "max_wait_ms": self.max_wait_ms,
                "min_bytes": self.min_bytes,
                "max_bytes": self.max_bytes,
                "isolation_level": 0,
                "session_id": session.session_id,
                "session_epoch": session.epoch,
                "topics": [{"topic": t, "partitions": ps} for t, ps in topics.items()],
                "forgotten_topics_data": [{"topic": t, "partitions": ps} for t, ps in forgotten_by_topic.items()],
                "rack_id": "",
            },
        )
        code = response["error_code"]
        if code in (errors.FetchSessionIdNotFoundError.code, errors.InvalidFetchSessionEpochError.code):
            log.info("%s: fetch session %s lost (error %s); opening a new one", self, session.session_id, code)
            session.lost()
            return
        if code != errors.NONE:
            raise KafkaOpsError(f"fetch from leader {self.leader_id} failed with error {code}")
        session.answered(wanted, response["session_id"])
        backoff = False
        for topic in response["responses"]:
            for answer in topic["partition_responses"]:
                tp = TopicPartition(topic["topic"], answer["partition"])
                current = self.partitions.get(tp)
                if current is None or current is not fetching.get(tp):
                    continue  # removed or re-added while we fetched
                if answer["error_code"] == errors.NONE:
                    self._append(current, answer)  # no await per partition: thousands answer every round
                else:
                    backoff |= await self._process(current, answer)
        if backoff:
            await asyncio.sleep(self.backoff_s)

    async def _process(self, state: FetchState, answer: dict[str, Any]) -> bool:
        """Apply one partition's answer; returns whether to back off before the next fetch."""
        partition, code = state.partition, answer["error_code"]
        if code == errors.NONE:
            self._append(state, answer)
            return False
        if code == errors.OffsetOutOfRangeError.code:
            await self._handle_out_of_range(state)
            return False
        if code == errors.FencedLeaderEpochError.code:
            self.partitions.pop(partition.tp, None)  # a newer leader exists: wait for the controller's LeaderAndIsr
            return True
        # NOT_LEADER_OR_FOLLOWER / UNKNOWN_LEADER_EPOCH (the leader has not heard of its leadership yet: the
        # controller's requests race), storage errors...: back off and retry, as Kafka's fetchers do.
        return True

    def _append(self, state: FetchState, answer: dict[str, Any]) -> None:
        partition = state.partition
        was_in_sync = state.in_sync
        appended = partition.append_as_follower(
            answer["record_set"] or b"", answer["high_watermark"], answer["log_start_offset"]
        )
        state.lag = max(0, answer["high_watermark"] - partition.log_end_offset)
        if appended and not was_in_sync:
            self.record_throttled(appended)

    async def _handle_out_of_range(self, state: FetchState) -> None:
        """Kafka's `handleOutOfRangeError`: our LEO is past the leader's (truncate to it) or before its log
        start (throw our log away and start at the leader's log start)."""
        partition = state.partition
        leader_end = await self._leader_offset(state, LATEST_TIMESTAMP)
        if leader_end < partition.log_end_offset:
            log.warning("Truncating %s to the leader's end offset %s", partition.tp, leader_end)
            partition.truncate_to(leader_end)
            return
        leader_start = await self._leader_offset(state, EARLIEST_TIMESTAMP)
        if partition.log_end_offset < leader_start:
            log.warning("Restarting %s at the leader's log start offset %s", partition.tp, leader_start)
            partition.truncate_fully_and_start_at(leader_start)

    async def _leader_offset(self, state: FetchState, timestamp: int) -> int:
        tp = state.partition.tp
        response = await self._send(
            ApiKey.LIST_OFFSETS,
            LIST_OFFSETS_VERSION,
            {
                "replica_id": self.broker_id,
                "isolation_level": 0,
                "topics": [
                    {
                        "name": tp.topic,
                        "partitions": [
                            {
                                "partition_index": tp.partition,
                                "current_leader_epoch": state.leader_epoch,
                                "timestamp": timestamp,
                            }
                        ],
                    }
                ],
            },
        )
        answer = response["topics"][0]["partitions"][0]
        if answer["error_code"] != errors.NONE:
            raise KafkaOpsError(f"ListOffsets for {tp} from leader {self.leader_id}: error {answer['error_code']}")
        return int(answer["offset"])
