"""Kafka's reads and writes of its ZooKeeper layout over a session (Kafka's `KafkaZkClient`).

Every byte read or written goes through the codecs of `znodes`; this module only moves them.
Reads of many znodes are pipelined (all requests sent, then all answers awaited), so describing
a thousand topics costs one round trip's latency, not a thousand; bulk reads of a whole cluster go
further, as multiReads on a connection of their own (`pipelined.py`). Writes that must land together
(a topic's config and its assignment, a config and its change notification) go in one ZooKeeper
`multi`: either all of them exist afterwards or none does.

One policy for a znode that cannot be read: a missing znode is None, malformed bytes are a
MalformedZNodeError, never "missing". Reads of one znode raise it; reads of many return it in place
of that znode's value (`PartitionStateRead`), so that one corrupt znode does not hide the others.

The session itself (kazoo, pipelined raw reads, the waiting out of a lost connection) is
`zookeeper_client.ZkClient`, Kafka's `ZooKeeperClient`.

Threading: a client may be used from any thread; kazoo serialises requests on its own thread.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from typing import TYPE_CHECKING, Any, TypeAlias, TypeVar

from kazoo.exceptions import (
    BadVersionError,
    ConnectionLoss,
    KazooException,
    NodeExistsError,
    NoNodeError,
    ZookeeperError,
)
from kazoo.protocol.states import WatchedEvent

from kafkaops.cluster.common import errors
from kafkaops.cluster.common.errors import KafkaOpsError, MalformedZNodeError
from kafkaops.cluster.zk import multi, znodes
from kafkaops.cluster.zk.acls import DigestCredentials
from kafkaops.cluster.zk.pipelined import MULTI_READ_OPS, PipelinedReader
from kafkaops.cluster.zk.set_watches import SetWatchesRequest
from kafkaops.cluster.zk.values import (
    BrokerRegistration,
    LeaderIsrAndControllerEpoch,
    ProducerIdBlock,
    TopicAssignment,
    TopicPartition,
)
from kafkaops.cluster.zk.zookeeper_client import (
    DEFAULT_CONNECTION_TIMEOUT_MS,
    DEFAULT_SESSION_TIMEOUT_MS,
    Op,
    ZkClient,
    add_to_transaction,
    call_async,
    ensure_path,
    first_failure,
)

if TYPE_CHECKING:
    import asyncio  # a tool's start-up does without it: only a broker's ISR writes use it

MAX_OPS_PER_MULTI = 500
"""Operations per ZooKeeper multi in bulk controller writes: a few hundred KB, far below `jute.maxbuffer`."""
TOPIC_ZNODES_PER_MULTI_READ = 50
"""Topic znodes are big (one entry per partition): fewer of them per multiRead keeps an answer small."""

_R = TypeVar("_R")

PartitionStateRead: TypeAlias = LeaderIsrAndControllerEpoch | MalformedZNodeError | None
"""A partition-state znode as read among many: its state, None if it does not exist, or the typed error
of its malformed bytes."""


def decode_partition_state(
    partition: TopicPartition, data: bytes, zk_version: int
) -> LeaderIsrAndControllerEpoch | MalformedZNodeError:
    """The one place a partition-state znode's bytes are turned into a state; malformed bytes come back
    as the typed error (the caller of a single read raises it, a bulk read keeps it per partition)."""
    try:
        return znodes.TopicPartitionStateZNode.decode(partition.topic, partition.partition, data, zk_version)
    except MalformedZNodeError as error:
        return error


def _on_loop(loop: asyncio.AbstractEventLoop, settle: Callable[[Any], None]) -> Callable[[Any], None]:
    """A kazoo completion callback (run on kazoo's thread) that hands the result to `settle` on `loop`."""

    def deliver(result: Any) -> None:
        with suppress(RuntimeError):  # the loop closed meanwhile (the broker stopped): nobody waits
            loop.call_soon_threadsafe(settle, result)

    return deliver


def _copy_outcome(into: asyncio.Future[Any], source: asyncio.Future[Any]) -> None:
    """`source`'s result or exception, into `into` (unless something settled it already)."""
    if into.done():
        return
    if source.cancelled():
        into.cancel()
    elif (error := source.exception()) is not None:
        into.set_exception(error)
    else:
        into.set_result(source.result())


class KafkaZkClient(ZkClient):
    """Kafka's reads and writes of its ZooKeeper layout, in the vocabulary of `KafkaZkClient.scala`."""

    # --- brokers ----------------------------------------------------------------------------

    def get_sorted_broker_ids(self) -> list[int]:
        return sorted(int(b) for b in self.get_children(znodes.BrokerIdsZNode.path()) or [] if b.isdigit())

    def get_broker(self, broker_id: int) -> BrokerRegistration | None:
        """Kafka's `getBroker`: the broker's registration, None if it is not registered."""
        entry = self.get(znodes.BrokerIdZNode.path(broker_id))
        return None if entry is None else znodes.BrokerIdZNode.decode(broker_id, entry[0])

    def get_all_brokers(self) -> list[BrokerRegistration]:
        """Registered brokers, sorted by id (pipelined reads)."""
        ids = self.get_sorted_broker_ids()
        found = self.get_many(znodes.BrokerIdZNode.path(b) for b in ids)
        brokers = []
        for broker_id in ids:
            entry = found[znodes.BrokerIdZNode.path(broker_id)]
            if entry is not None:  # deregistered between the two reads
                brokers.append(znodes.BrokerIdZNode.decode(broker_id, entry[0]))
        return brokers

    # --- topics -----------------------------------------------------------------------------

    def get_all_topics(self) -> list[str]:
        return sorted(self.get_children(znodes.TopicsZNode.path()) or [])

    def topic_exists(self, topic: str) -> bool:
        return self.exists(znodes.TopicZNode.path(topic))

    def get_topic_assignments(self, topics: Iterable[str]) -> dict[str, TopicAssignment]:
        """Assignments of the topics that exist (pipelined); missing topics are left out."""
        topics = list(topics)
        found = self.get_many(znodes.TopicZNode.path(t) for t in topics)
        return {
            topic: znodes.TopicZNode.decode(topic, entry[0])
            for topic in topics
            if (entry := found[znodes.TopicZNode.path(topic)]) is not None
        }

    def get_partition_states(
        self, partitions: Iterable[TopicPartition], watch: Callable[[WatchedEvent], object] | None = None
    ) -> dict[TopicPartition, LeaderIsrAndControllerEpoch | None]:
        """States of the partitions (None where there is none). Raises MalformedZNodeError for the first
        malformed one: for callers that can do nothing with the others (the tools)."""
        result: dict[TopicPartition, LeaderIsrAndControllerEpoch | None] = {}
        for tp, state in self.get_topic_partition_states(list(partitions), watch=watch).items():
            if isinstance(state, MalformedZNodeError):
                raise state
            result[tp] = state
        return result

    def get_topic_partition_states(
        self,
        partitions: Sequence[TopicPartition],
        *,
        bulk: bool = False,
        watch: Callable[[WatchedEvent], object] | None = None,
    ) -> dict[TopicPartition, PartitionStateRead]:
        """Kafka's `getTopicPartitionStatesRaw`, decoded: per partition its state, None, or the
        MalformedZNodeError of its bytes.

        `bulk`: multiReads (a thousand znodes each) on a connection of their own, ~30 times faster than
        this session for a whole cluster; that connection starts from this session's last zxid, so its
        reads see this session's writes (a caller re-reading after losing a conditional write may ask
        for it). If that connection fails, the session reads. `watch` (one-shot, on kazoo's thread) is
        left on each state by this session: with `bulk`, by one SetWatches per multiRead answer
        (`set_watches.py`), else by each read.
        """
        paths = [znodes.TopicPartitionStateZNode.path(tp.topic, tp.partition) for tp in partitions]
        if bulk:
            found = self._get_data_bulk(paths) if watch is None else self._get_data_bulk_watched(paths, watch)
            if found is not None:
                return {
                    tp: None if entry is None else decode_partition_state(tp, entry[0], entry[1])
                    for tp, entry in zip(partitions, found, strict=True)
                }
        by_path = self.get_many(paths, watch)
        result: dict[TopicPartition, PartitionStateRead] = {}
        for tp, path in zip(partitions, paths, strict=True):
            entry = by_path[path]
            result[tp] = None if entry is None else decode_partition_state(tp, entry[0], entry[1].version)
        return result

    def get_full_replica_assignments(self, topics: Sequence[str]) -> dict[str, TopicAssignment | MalformedZNodeError]:
        """Every topic's assignment (topics without a znode left out), or the MalformedZNodeError of its
        znode: multiReads on a connection of their own (see `get_topic_partition_states`), the session
        if that connection fails. A controller loading the cluster reads them all at once."""
        paths = [znodes.TopicZNode.path(t) for t in topics]
        found: Sequence[bytes | None]
        bulk = self._get_data_bulk(paths, TOPIC_ZNODES_PER_MULTI_READ)
        if bulk is None:
            by_path = self.get_many(paths)
            found = [None if (entry := by_path[path]) is None else entry[0] for path in paths]
        else:
            found = [None if entry is None else entry[0] for entry in bulk]
        result: dict[str, TopicAssignment | MalformedZNodeError] = {}
        for topic, data in zip(topics, found, strict=True):
            if data is None:
                continue
            try:
                result[topic] = znodes.TopicZNode.decode(topic, data)
            except MalformedZNodeError as error:
                result[topic] = error
        return result

    def _get_data_bulk(
        self, paths: Sequence[str], ops_per_request: int = MULTI_READ_OPS
    ) -> Sequence[tuple[bytes, int] | None] | None:
        """The znodes' (data, version) by multiRead on a bulk connection; None if that connection failed."""
        return self._bulk_read(lambda reader: reader.get_data_and_versions(paths, ops_per_request))

    def _bulk_read(self, read: Callable[[PipelinedReader], _R]) -> _R | None:
        """`read` on a bulk connection that starts from this session's last zxid; None if it failed."""
        try:
            with PipelinedReader(str(self.connect_string), last_zxid_seen=self._zk.last_zxid) as reader:
                return read(reader)
        except (KafkaOpsError, OSError):
            return None

    def _get_data_bulk_watched(
        self, paths: Sequence[str], watch: Callable[[WatchedEvent], object]
    ) -> list[tuple[bytes, int] | None] | None:
        """`_get_data_bulk`, with `watch` left on each znode by this session: a SetWatches from each
        multiRead answer's zxid, so that a change made after the read fires it. None if the bulk
        connection failed or has no multiRead (nothing was watched then)."""
        answers = self._bulk_read(lambda reader: reader.get_data_and_versions_with_zxids(paths))
        if answers is None:
            return None
        chroot = self._zk.chroot or ""
        requests = []
        found: list[tuple[bytes, int] | None] = []
        for chunk, entries, zxid in answers:
            existing = [chroot + path for path, entry in zip(chunk, entries, strict=True) if entry is not None]
            missing = [chroot + path for path, entry in zip(chunk, entries, strict=True) if entry is None]
            requests.append(SetWatchesRequest(self._zk, zxid, existing, missing, watch))
            found += entries

        def set_watches() -> None:
            for answer in [call_async(self._zk, request) for request in requests]:
                answer.get()

        self.until_connected(set_watches)
        return found

    def get_topics_marked_for_deletion(self) -> set[str]:
        return set(self.get_children(znodes.DeleteTopicsZNode.path()) or [])

    def create_topic(
        self,
        topic: str,
        assignment: Mapping[int, Sequence[int]],
        config: Mapping[str, str],
        topic_id: str | None = None,
    ) -> None:
        """Write a new topic's config and assignment (with `topic_id`, if given) in one multi (Kafka writes
        the config first).

        Raises TopicExistsError if `/brokers/topics/<t>` exists (Kafka's text). A leftover config
        znode from an earlier, half-finished Kafka create is overwritten, as Kafka's createOrSet does.
        """
        self.ensure_paths([znodes.TopicsZNode.path(), znodes.ConfigEntityTypeZNode.path(znodes.ConfigType.TOPIC)])
        config_path = znodes.ConfigEntityZNode.path(znodes.ConfigType.TOPIC, topic)
        config_data = znodes.ConfigEntityZNode.encode(config)
        existing = self.get(config_path)
        config_op = (
            Op.create(config_path, config_data)
            if existing is None
            else Op.set(config_path, config_data, existing[1].version)
        )
        try:
            topic_data = znodes.TopicZNode.encode_replicas(assignment, topic_id)
            self.multi([config_op, Op.create(znodes.TopicZNode.path(topic), topic_data)])
        except NodeExistsError:
            raise errors.TopicExistsError(f"Topic '{topic}' already exists.") from None
        except (BadVersionError, NoNodeError):
            raise errors.ZooKeeperError(
                f"The config of topic '{topic}' changed while it was being created; nothing was written"
            ) from None

    def set_topic_assignment(self, topic: str, assignment: TopicAssignment, expected_version: int) -> None:
        """Rewrite `/brokers/topics/<t>` only if nobody else changed it since it was read."""
        try:
            self.multi(
                [
                    Op.set(
                        znodes.TopicZNode.path(topic),
                        znodes.TopicZNode.encode(assignment.partitions, assignment.topic_id),
                        expected_version,
                    )
                ]
            )
        except (BadVersionError, NoNodeError):
            raise errors.ZNodeVersionConflictError(
                f"The assignment of topic '{topic}' changed while it was being updated; nothing was written"
            ) from None

    def get_topic_assignment_versioned(self, topic: str) -> tuple[TopicAssignment, int] | None:
        entry = self.get(znodes.TopicZNode.path(topic))
        if entry is None:
            return None
        return znodes.TopicZNode.decode(topic, entry[0]), entry[1].version

    def mark_topic_for_deletion(self, topic: str) -> bool:
        """Create `/admin/delete_topics/<t>`; False if it is already there."""
        self.ensure_paths([znodes.DeleteTopicsZNode.path()])
        try:
            self.create(znodes.DeleteTopicsTopicZNode.path(topic), znodes.DeleteTopicsTopicZNode.encode())
        except NodeExistsError:
            return False
        return True

    # --- controller election and fencing (Kafka 2.8 KafkaZkClient, reference §5.1) --------------

    def get_controller_id(self) -> int | None:
        entry = self.get(znodes.ControllerZNode.path())
        return None if entry is None else znodes.ControllerZNode.decode(entry[0])

    def get_controller_epoch(self) -> tuple[int, int] | None:
        """The controller epoch and the data version of `/controller_epoch` (the fencing token)."""
        entry = self.get(znodes.ControllerEpochZNode.path())
        return None if entry is None else (znodes.ControllerEpochZNode.decode(entry[0]), entry[1].version)

    def register_controller_and_increment_controller_epoch(
        self, controller_id: int, timestamp_ms: int
    ) -> tuple[int, int]:
        """Create `/controller` and bump `/controller_epoch` in one multi; returns (epoch, epoch zkVersion).

        Raises ControllerMovedError if another broker won. Like Kafka, a lost answer (NODEEXISTS or
        BADVERSION after a retry) is resolved by reading back who owns `/controller` and the epoch.
        """
        current = self.get_controller_epoch()
        if current is None:
            with suppress(NodeExistsError):
                self.until_connected(
                    lambda: self.create(
                        znodes.ControllerEpochZNode.path(),
                        znodes.ControllerEpochZNode.encode(znodes.ControllerEpochZNode.INITIAL_CONTROLLER_EPOCH),
                    )
                )
            current = self.get_controller_epoch()
            if current is None:
                raise errors.ControllerMovedError("/controller_epoch went away during controller election")
        epoch, version = current
        new_epoch = epoch + 1
        try:
            ops = [
                Op.create(
                    znodes.ControllerZNode.path(),
                    znodes.ControllerZNode.encode(controller_id, timestamp_ms),
                    znodes.ControllerZNode.mode,
                ),
                Op.set(znodes.ControllerEpochZNode.path(), znodes.ControllerEpochZNode.encode(new_epoch), version),
            ]
            results = self.until_connected(lambda: self.multi(ops))
        except (NodeExistsError, BadVersionError):
            if self.get_controller_id() == controller_id:
                after = self.get_controller_epoch()
                if after is not None and after[0] == new_epoch:
                    return after
            raise errors.ControllerMovedError(
                "Controller moved to another broker. Aborting controller startup procedure"
            ) from None
        return new_epoch, results[1].version

    def fenced_multi_many(
        self, batches: Sequence[Sequence[Op]], epoch_zk_version: int, max_ops_per_multi: int = MAX_OPS_PER_MULTI
    ) -> list[Any]:
        """Many fenced batches: one result list (or the failing kazoo error) per batch, in order.

        Each batch is atomic on its own, so one partition's BADVERSION must not fail the others'
        writes. To spare a round trip and kazoo's per-request cost for each batch, consecutive
        batches travel together in one multi (one epoch check for all) while it stays under
        `max_ops_per_multi`; only a group that fails is retried batch by batch. A failed epoch check
        raises ControllerMovedError (nothing of that group was written).
        """
        groups: list[list[int]] = []
        ops_in_group = 0
        for index, ops in enumerate(batches):
            if not groups or ops_in_group + len(ops) > max_ops_per_multi:
                groups.append([])
                ops_in_group = 0
            groups[-1].append(index)
            ops_in_group += len(ops)
        outcomes: list[Any] = [None] * len(batches)
        retry: list[int] = []
        for group, results in zip(
            groups,
            self._commit_fenced([[op for i in g for op in batches[i]] for g in groups], epoch_zk_version),
            strict=True,
        ):
            if isinstance(results, Exception):
                if len(group) == 1:
                    outcomes[group[0]] = results
                else:
                    retry.extend(group)
                continue
            offset = 0
            for index in group:
                outcomes[index] = results[offset : offset + len(batches[index])]
                offset += len(batches[index])
        if retry:
            for index, results in zip(
                retry, self._commit_fenced([batches[i] for i in retry], epoch_zk_version), strict=True
            ):
                outcomes[index] = results
        return outcomes

    def _commit_fenced(self, batches: Sequence[Sequence[Op]], epoch_zk_version: int) -> list[Any]:
        """Pipelined multis, each `[check epoch, *ops]`: the op results, or the failing op's error.

        The multis a lost connection failed in flight are made again once connected (Kafka's
        `retryRequestsUntilConnected`); one the server had applied then fails on its versions, and the
        caller sees a BADVERSION, NODEEXISTS or NONODE, as Kafka's controller does.
        """
        outcomes: list[Any] = [None] * len(batches)
        remaining = list(range(len(batches)))

        def commit() -> None:
            nonlocal remaining
            lost = []
            moved = False
            answers = self._send_fenced([batches[i] for i in remaining], epoch_zk_version)
            for index, results in zip(remaining, answers, strict=True):
                if isinstance(results, ConnectionLoss):
                    lost.append(index)
                    continue
                failure = first_failure(results)
                if failure is not None and failure is results[0]:
                    moved = True
                outcomes[index] = failure if failure is not None else list(results[1:])
            if moved:
                raise errors.ControllerMovedError("Controller epoch zkVersion check fails: a newer controller exists")
            remaining = lost
            if lost:
                raise ConnectionLoss()

        self.until_connected(commit)
        return outcomes

    def _send_fenced(self, batches: Sequence[Sequence[Op]], epoch_zk_version: int) -> list[Any]:
        """The multis sent, then their answers: kazoo's results, or the ConnectionLoss that failed one."""
        check = Op.check(znodes.ControllerEpochZNode.path(), epoch_zk_version)
        chroot = self.connect_string.chroot
        pending = []
        for ops in batches:
            if multi.serializable(ops):
                pending.append(multi.commit_async(self._zk, multi.serialize((check, *ops), chroot)))
                continue
            transaction = self._zk.transaction()
            for op in (check, *ops):
                add_to_transaction(transaction, op, self.acl)
            pending.append(transaction.commit_async())
        answers: list[Any] = []
        for request in pending:
            try:
                answers.append(request.get())
            except ConnectionLoss as lost:
                answers.append(lost)
        return answers

    # --- broker registration ------------------------------------------------------------------

    def register_broker(self, registration: BrokerRegistration) -> int:
        """Create the ephemeral `/brokers/ids/<id>`; returns the broker epoch (the znode's czxid).

        Kafka's `checkedEphemeralCreate`: a node left by this very session (after a lost answer) is
        ours; one owned by another session means the id is taken. A connection lost meanwhile (the
        ZooKeeper server it talked to went away) is waited out and the registration tried again, as
        Kafka's `retryRequestUntilConnected` does, for up to a session and a connection time-out: a broker
        starting while one ZooKeeper node restarts must not exit.
        """
        path = znodes.BrokerIdZNode.path(registration.broker_id)

        def register() -> int:  # retried as a whole, below
            ensure_path(self._zk, znodes.BrokerIdsZNode.path(), self.acl)
            with suppress(NodeExistsError):
                self.create(path, znodes.BrokerIdZNode.encode(registration), znodes.BrokerIdZNode.mode)
            stat = self._zk.exists(path)
            session_id = self._zk.client_id[0] if self._zk.client_id else None
            if stat is None or stat.ephemeralOwner != session_id:
                owner = stat.ephemeralOwner if stat is not None else None
                raise errors.BrokerIdTakenError(
                    f"Error while creating ephemeral at {path}, node already exists and owner '{owner}' does "
                    f"not match current session '{session_id}'"
                )
            return int(stat.czxid)

        return self.until_connected(register, through_expiry=True)

    def get_or_create_cluster_id(self, proposed: str) -> str:
        """Kafka's `createOrGetClusterId`: the first broker's id wins (ours too if our create's answer was
        lost: it is read back)."""
        self.ensure_paths([znodes.ClusterZNode.path()])
        try:
            self.until_connected(
                lambda: self.create(znodes.ClusterIdZNode.path(), znodes.ClusterIdZNode.encode(proposed))
            )
            return proposed
        except NodeExistsError:
            entry = self.get(znodes.ClusterIdZNode.path())
            if entry is None:
                raise errors.ZooKeeperError("/cluster/id went away while it was being read") from None
            return znodes.ClusterIdZNode.decode(entry[0])

    # --- what a partition leader writes ---------------------------------------------------------

    def conditional_update_partition_state(
        self, partition: TopicPartition, state: LeaderIsrAndControllerEpoch, expected_version: int
    ) -> asyncio.Future[int | None]:
        """A leader's ISR change (Kafka's `conditionalUpdatePath`), for the caller's running asyncio loop:
        resolves to the new zk_version, or None when the znode moved on (a controller elected someone
        else meanwhile) or is gone. Sent at once, without a thread: a leader widening the ISR of
        thousands of partitions has them all in flight together.

        A bad version, or a connection lost with the write in flight, is checked as Kafka's
        `checkLeaderAndIsrZkData` does: a znode that holds exactly this state is this write, applied
        before its answer was lost (Kafka retries it after a reconnection and lands here too). Without
        that the leader kept its old ISR and zk_version, and every later change of its ISR failed until
        the controller next sent it a LeaderAndIsr. Raises (through the future) on any other failure."""
        import asyncio

        loop = asyncio.get_running_loop()
        future: asyncio.Future[int | None] = loop.create_future()
        path = znodes.TopicPartitionStateZNode.path(partition.topic, partition.partition)

        def settle_check(result: Any) -> None:  # on the loop
            if future.done():
                return
            if result.successful():
                data, stat = result.value
                try:
                    written = znodes.TopicPartitionStateZNode.decode(
                        partition.topic, partition.partition, data, int(stat.version)
                    )
                except MalformedZNodeError:
                    future.set_result(None)  # not this write's (Kafka's checker: no match)
                    return
                future.set_result(int(stat.version) if written.same_state(state) else None)
            elif isinstance(result.exception, NoNodeError):
                future.set_result(None)
            else:
                future.set_exception(result.exception)

        def settle(result: Any) -> None:  # on the loop
            if future.done():
                return
            if result.successful():
                future.set_result(int(result.value.version))
            elif isinstance(result.exception, NoNodeError):
                future.set_result(None)
            elif isinstance(result.exception, (BadVersionError, ConnectionLoss)):
                self._zk.get_async(path).rawlink(_on_loop(loop, settle_check))
            else:
                future.set_exception(result.exception)

        pending = self._zk.set_async(path, znodes.TopicPartitionStateZNode.encode(state), version=expected_version)
        pending.rawlink(_on_loop(loop, settle))
        return future

    def conditional_update_partition_states(
        self, updates: Sequence[tuple[TopicPartition, LeaderIsrAndControllerEpoch, int]]
    ) -> list[asyncio.Future[int | None]]:
        """Many leaders' ISR changes (`(partition, state, expected_version)`), each settled as
        `conditional_update_partition_state` settles one, for the caller's running asyncio loop.

        Up to MAX_OPS_PER_MULTI of them travel in one multi of conditional setData: ZooKeeper then
        commits one transaction instead of one each (a leader whose followers all catch up at once widens
        thousands of ISRs in one fetch round, and the single writes queued in ZooKeeper for seconds). A
        multi is all or nothing, so a group that fails (a znode moved on, or the connection was lost with
        it in flight) is written again one by one, where each write is checked as Kafka checks it."""
        futures: list[asyncio.Future[int | None]] = []
        for start in range(0, len(updates), MAX_OPS_PER_MULTI):
            group = updates[start : start + MAX_OPS_PER_MULTI]
            if len(group) == 1:
                futures.append(self.conditional_update_partition_state(*group[0]))
            else:
                futures += self._conditional_update_partition_states_in_one_multi(group)
        return futures

    def _conditional_update_partition_states_in_one_multi(
        self, group: Sequence[tuple[TopicPartition, LeaderIsrAndControllerEpoch, int]]
    ) -> list[asyncio.Future[int | None]]:
        import asyncio

        loop = asyncio.get_running_loop()
        settled: list[asyncio.Future[int | None]] = [loop.create_future() for _ in group]
        ops = [
            Op.set(
                znodes.TopicPartitionStateZNode.path(tp.topic, tp.partition),
                znodes.TopicPartitionStateZNode.encode(state),
                version,
            )
            for tp, state, version in group
        ]

        def settle(result: Any) -> None:  # on the loop
            if result.successful() and first_failure(result.value) is None:
                for future, stat in zip(settled, result.value, strict=True):
                    if not future.done():
                        future.set_result(int(stat.version))
                return
            for update, future in zip(group, settled, strict=True):
                self.conditional_update_partition_state(*update).add_done_callback(
                    functools.partial(_copy_outcome, future)
                )

        multi.commit_async(self._zk, multi.serialize(ops, self.connect_string.chroot)).rawlink(_on_loop(loop, settle))
        return settled

    def propagate_isr_changes(self, partitions: Iterable[TopicPartition]) -> None:
        """One `/isr_change_notification/isr_change_<seq>` for the controller (`propagateIsrChanges`)."""
        self.ensure_paths([znodes.IsrChangeNotificationZNode.path()])
        self.create(
            znodes.IsrChangeNotificationSequenceZNode.path(),
            znodes.IsrChangeNotificationSequenceZNode.encode(partitions),
            znodes.IsrChangeNotificationSequenceZNode.mode,
        )

    def propagate_log_dir_event(self, broker_id: int) -> None:
        """One `/log_dir_event_notification/log_dir_event_<seq>` (`propagateLogDirEvent`): a log dir of this
        broker failed; the controller then finds out which replicas are offline."""
        self.ensure_paths([znodes.LogDirEventNotificationZNode.path()])
        self.create(
            znodes.LogDirEventNotificationSequenceZNode.path(),
            znodes.LogDirEventNotificationSequenceZNode.encode(broker_id),
            znodes.LogDirEventNotificationSequenceZNode.mode,
        )

    def allocate_producer_id_block(self, broker_id: int) -> ProducerIdBlock:
        """Claim the next block of producer ids from `/latest_producer_id_block` (Kafka's
        `ProducerIdManager`): ids stay unique across brokers and restarts."""
        path = znodes.ProducerIdBlockZNode.path()
        size = znodes.ProducerIdBlockZNode.BLOCK_SIZE
        while True:
            entry = self.get(path)
            if entry is None:
                block = ProducerIdBlock(broker_id, 0, size - 1)
                with suppress(NodeExistsError):
                    self.create(path, znodes.ProducerIdBlockZNode.encode(block))
                    return block
                continue
            if not entry[0]:  # created empty with the persistent paths: nobody has claimed a block yet
                block = ProducerIdBlock(broker_id, 0, size - 1)
            else:
                latest = znodes.ProducerIdBlockZNode.decode(entry[0])
                block = ProducerIdBlock(broker_id, latest.block_end + 1, latest.block_end + size)
            with suppress(BadVersionError):
                self._zk.set(path, znodes.ProducerIdBlockZNode.encode(block), version=entry[1].version)
                return block

    # --- configs ----------------------------------------------------------------------------

    def set_or_create_consumer_offset(self, group: str, tp: TopicPartition, offset: int) -> None:
        """Kafka's `setOrCreateConsumerOffset` (OffsetCommit v0): set, or create with the parents."""
        path = znodes.ConsumerOffsetZNode.path(group, tp.topic, tp.partition)
        data = znodes.ConsumerOffsetZNode.encode(offset)
        try:
            self._zk.set(path, data)
            return
        except NoNodeError:
            pass
        ensure_path(self._zk, path.rsplit("/", 1)[0], self.acl)
        try:
            self._zk.create(path, data, acl=self.acl(path))
        except NodeExistsError:
            self._zk.set(path, data)

    def get_consumer_offset(self, group: str, tp: TopicPartition) -> int | None:
        """Kafka's `getConsumerOffset` (OffsetFetch v0)."""
        found = self.get(znodes.ConsumerOffsetZNode.path(group, tp.topic, tp.partition))
        return None if found is None else znodes.ConsumerOffsetZNode.decode(group, tp.topic, tp.partition, found[0])

    def get_entity_config(self, entity_type: str, entity_path: str) -> tuple[dict[str, str], int | None]:
        """Overrides of one entity and the znode's version (None if the znode does not exist)."""
        path = znodes.ConfigEntityZNode.path(entity_type, entity_path)
        entry = self.get(path)
        if entry is None:
            return {}, None
        return znodes.ConfigEntityZNode.decode(path, entry[0]), entry[1].version

    def get_entity_configs(self, entity_type: str, entity_paths: Iterable[str]) -> dict[str, dict[str, str]]:
        paths = {name: znodes.ConfigEntityZNode.path(entity_type, name) for name in entity_paths}
        found = self.get_many(paths.values())
        return {
            name: znodes.ConfigEntityZNode.decode(path, entry[0]) if (entry := found[path]) else {}
            for name, path in paths.items()
        }

    def get_all_entities(self, entity_type: str) -> list[str]:
        return sorted(self.get_children(znodes.ConfigEntityTypeZNode.path(entity_type)) or [])

    def get_user_client_entities(self, sanitized_user: str) -> list[str]:
        """The sanitized client ids that have a <user, client-id> config znode under `sanitized_user`."""
        parent = znodes.ConfigEntityZNode.path(znodes.ConfigType.USER, znodes.user_client_entity_path(sanitized_user))
        return sorted(self.get_children(parent) or [])

    def set_entity_config_and_notify(
        self, entity_type: str, entity_path: str, config: Mapping[str, str], expected_version: int | None
    ) -> str:
        """Replace an entity's overrides and announce the change, atomically.

        `expected_version` is the version read before the change (None: the znode did not exist);
        a concurrent change makes the whole multi fail with BadVersionError and nothing is written.
        Returns the path of the change notification created.
        """
        path = znodes.ConfigEntityZNode.path(entity_type, entity_path)
        # a <user, client-id> entity's parents (`/config/users/<user>/clients`) are created as Kafka's
        # createRecursive creates them: empty znodes
        self.ensure_paths([path.rsplit("/", 1)[0], znodes.ConfigEntityChangeNotificationZNode.path()])
        data = znodes.ConfigEntityZNode.encode(config)
        write = Op.create(path, data) if expected_version is None else Op.set(path, data, expected_version)
        notification = Op.create(
            znodes.ConfigEntityChangeNotificationSequenceZNode.path(),
            znodes.ConfigEntityChangeNotificationSequenceZNode.encode(f"{entity_type}/{entity_path}"),
            znodes.CreateMode.PERSISTENT_SEQUENTIAL,
        )
        try:
            results = self.multi([write, notification])
        except (BadVersionError, NodeExistsError, NoNodeError):
            raise errors.ZNodeVersionConflictError(
                f"The config of {entity_type}/{entity_path} changed while it was being updated; nothing was written"
            ) from None
        return str(results[1])


@contextmanager
def connect(
    connect_string: str,
    connection_timeout_ms: int = DEFAULT_CONNECTION_TIMEOUT_MS,
    session_timeout_ms: int = DEFAULT_SESSION_TIMEOUT_MS,
    credentials: DigestCredentials | None = None,
    set_acl: bool = False,
) -> Iterator[KafkaZkClient]:
    """A KafkaZkClient for the duration of a `with` block."""
    client = KafkaZkClient(
        connect_string,
        session_timeout_ms=session_timeout_ms,
        connection_timeout_ms=connection_timeout_ms,
        credentials=credentials,
        set_acl=set_acl,
    )
    try:
        yield client
    except (KazooException, ZookeeperError) as error:
        raise errors.ZooKeeperError(f"ZooKeeper error: {type(error).__name__} {error}") from error
    finally:
        client.close()
