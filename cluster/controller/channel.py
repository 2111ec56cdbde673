"""Controller → broker requests: one send thread per broker, and the per-event request batch.

Kafka's `ControllerChannelManager` / `RequestSendThread`: each live broker has a thread that owns a
connection and a queue; a request is retried (reconnecting with a short backoff) until the broker
answers or is removed because it died. Responses are handed to callbacks on that thread, which must
only enqueue controller events.

`ControllerBrokerRequestBatch` collects what one controller event wants to tell the brokers
(LeaderAndIsr, StopReplica, UpdateMetadata) and sends it, batched per broker, stamped with the
controller's id and epoch and each recipient's broker epoch.
"""

from __future__ import annotations

import contextlib
import logging
import queue
import socket
import threading
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from operator import itemgetter
from typing import Any, Protocol

from kafkaops.cluster.common.client_channel import (
    PLAINTEXT_CHANNEL,
    SECURITY_PROTOCOLS,
    ClientChannel,
    security_protocol_id,
)
from kafkaops.cluster.common.errors import KafkaOpsError
from kafkaops.cluster.protocol.framing import frame, read_frame_blocking
from kafkaops.cluster.protocol.messages import RequestHeader, decode_response, encode_request, encode_request_body
from kafkaops.cluster.protocol.sasl_client_authenticator import connect_channel
from kafkaops.cluster.protocol.schemas import ApiKey
from kafkaops.cluster.protocol.shared_array import SharedArray, SharedStruct
from kafkaops.cluster.state_change_log import ControllerLog, LeaderAndIsrPartitionState, Level, StateChangeEntry
from kafkaops.cluster.zk.values import (
    LEADER_DURING_DELETE,
    BrokerRegistration,
    EndPoint,
    LeaderIsrAndControllerEpoch,
    ReplicaAssignment,
    TopicPartition,
    kafka_uuid_from_text,
)

log = logging.getLogger("kafkaops.controller.channel")

LEADER_AND_ISR_VERSION = 3
UPDATE_METADATA_VERSION = 7
"""Kafka 2.8's choice at inter.broker.protocol.version 2.8 (`updateMetadataRequestVersion`): v7 carries
each topic's id, which the brokers' Metadata v10+ and CreateTopics v7 answers give to clients."""
STOP_REPLICA_VERSION = 1
RETRY_BACKOFF_S = 0.1
SOCKET_TIMEOUT_S = 30.0

ResponseCallback = Callable[[int, dict[str, Any]], None]
"""Called with (broker id, response body) on the broker's send thread."""


@dataclass
class _Outgoing:
    api_key: ApiKey
    version: int
    body: dict[str, Any]
    callback: ResponseCallback | None
    encoded: bytes | None = None
    """The body's bytes when the controller's event thread has encoded it (`encode_request_body`)."""


def listener_endpoint(broker: BrokerRegistration, listener_name: str) -> EndPoint | None:
    """A broker's endpoint on a listener (Kafka's `brokerEndPoint(listenerName)`), or None."""
    return next((e for e in broker.endpoints if e.listener == listener_name), None)


class RequestSendThread(threading.Thread):
    def __init__(
        self,
        controller_id: int,
        broker: BrokerRegistration,
        listener_name: str = "PLAINTEXT",
        client_channel: ClientChannel = PLAINTEXT_CHANNEL,
    ) -> None:
        super().__init__(name=f"controller-{controller_id}-to-broker-{broker.broker_id}-send-thread", daemon=True)
        self.controller_id = controller_id
        self.broker = broker
        self.listener_name = listener_name
        self.client_channel = client_channel
        self.requests: queue.Queue[_Outgoing | None] = queue.Queue()
        self._sock: socket.socket | None = None
        self._running = True
        self._correlation_id = 0

    def stop(self) -> None:
        self._running = False
        self.requests.put(None)
        if self._sock is not None:
            with contextlib.suppress(OSError):
                self._sock.shutdown(socket.SHUT_RDWR)

    def run(self) -> None:
        while self._running:
            outgoing = self.requests.get()
            if outgoing is None:
                break
            response = self._send_until_answered(outgoing)
            if response is not None and outgoing.callback is not None:
                try:
                    outgoing.callback(self.broker.broker_id, response)
                except Exception:  # noqa: BLE001 - a callback must not kill the send thread
                    log.exception("Response callback failed for broker %s", self.broker.broker_id)
        self._close()

    def _send_until_answered(self, outgoing: _Outgoing) -> dict[str, Any] | None:
        while self._running:
            try:
                sock = self._connect()
                self._correlation_id += 1
                header = RequestHeader(
                    outgoing.api_key, outgoing.version, self._correlation_id, f"controller-{self.controller_id}"
                )
                sock.sendall(frame(encode_request(header, outgoing.body, outgoing.encoded)))
                correlation_id, body = decode_response(outgoing.api_key, outgoing.version, read_frame_blocking(sock))
                if correlation_id != self._correlation_id:
                    raise OSError(f"correlation id {correlation_id}, expected {self._correlation_id}")
                return body
            except (OSError, ValueError, KafkaOpsError) as error:  # KafkaOpsError: a refused SASL login
                if self._running:
                    log.warning(
                        "Controller %s failed to send %s to broker %s (%s); retrying",
                        self.controller_id,
                        outgoing.api_key.name,
                        self.broker.broker_id,
                        error,
                    )
                self._close()
                threading.Event().wait(RETRY_BACKOFF_S)
        return None

    def _connect(self) -> socket.socket:
        if self._sock is None:
            endpoint = listener_endpoint(self.broker, self.listener_name)
            if endpoint is None:
                raise OSError(f"broker {self.broker.broker_id} has no endpoint on listener {self.listener_name}")
            self._sock = connect_channel(
                self.client_channel, endpoint.host, endpoint.port, SOCKET_TIMEOUT_S, f"controller-{self.controller_id}"
            )
        return self._sock

    def _close(self) -> None:
        if self._sock is not None:
            try:
                self._sock.close()
            finally:
                self._sock = None


def _protocol_id(broker: BrokerRegistration, endpoint: EndPoint) -> int:
    """The endpoint's `SecurityProtocol` id, from the broker's registered map (PLAINTEXT if unknown)."""
    protocol = broker.listener_security_protocol_map.get(endpoint.listener, endpoint.listener)
    return security_protocol_id(protocol) if protocol in SECURITY_PROTOCOLS else 0


class ControllerChannelManager:
    """The send threads of one controller incarnation. Thread-safe."""

    def __init__(
        self,
        controller_id: int,
        listener_name: str = "PLAINTEXT",
        client_channel: ClientChannel = PLAINTEXT_CHANNEL,
    ) -> None:
        self.controller_id = controller_id
        self.listener_name = listener_name
        """The inter-broker listener: the controller connects to it and names it to followers."""
        self.client_channel = client_channel
        self._threads: dict[int, RequestSendThread] = {}
        self._lock = threading.Lock()

    def add_broker(self, broker: BrokerRegistration) -> None:
        with self._lock:
            if broker.broker_id in self._threads:
                return
            thread = RequestSendThread(self.controller_id, broker, self.listener_name, self.client_channel)
            self._threads[broker.broker_id] = thread
            thread.start()

    def remove_broker(self, broker_id: int) -> None:
        with self._lock:
            thread = self._threads.pop(broker_id, None)
        if thread is not None:
            thread.stop()

    def send(
        self,
        broker_id: int,
        api_key: ApiKey,
        version: int,
        body: dict[str, Any],
        callback: ResponseCallback | None,
        encoded: bytes,
    ) -> bool:
        """Queue a request, `encoded` its body's bytes (`encode_request_body`, on the event thread); False
        (dropped) if the broker is not connected, as Kafka drops it."""
        with self._lock:
            thread = self._threads.get(broker_id)
        if thread is None:
            return False
        thread.requests.put(_Outgoing(api_key, version, body, callback, encoded))
        return True

    def shutdown(self) -> None:
        with self._lock:
            threads = list(self._threads.values())
            self._threads.clear()
        for thread in threads:
            thread.stop()


class StateChangeSink(Protocol):
    """Where the controller writes its state-change lines (a `StateChangeLogFile` is one)."""

    def enabled(self, level: Level) -> bool:
        """Whether entries at `level` are kept: check before building costly TRACE entries."""
        ...

    def write(self, entry: StateChangeEntry) -> None: ...


class ControllerChannel(Protocol):
    """What a controller handler needs of the channel to the brokers: a batch to collect one event's
    requests in, sending it (one request per broker and kind), and the brokers to keep connections to."""

    def new_batch(self) -> ControllerBrokerRequestBatch: ...

    def send(self, batch: ControllerBrokerRequestBatch) -> None:
        """Send what `batch` collected (nothing once this controller is no longer active) and empty it."""
        ...

    def add_broker(self, broker: BrokerRegistration) -> None: ...

    def remove_broker(self, broker_id: int) -> None: ...


@dataclass
class LeaderAndIsrEntry:
    """One partition's state in one broker's LeaderAndIsr request."""

    state: LeaderIsrAndControllerEpoch
    assignment: ReplicaAssignment
    is_new: bool


def _same_entry(a: LeaderAndIsrEntry, b: LeaderAndIsrEntry) -> bool:
    """Whether two brokers' entries for a partition make the same wire state: the usual case, one entry
    added for all of a partition's replicas, is told by identity; a batch may also hold entries of
    different steps (a later step's for some brokers only), compared by value."""
    return a is b or (a.is_new == b.is_new and a.state == b.state and a.assignment == b.assignment)


@dataclass
class ControllerBrokerRequestBatch:
    """What one controller event sends; `send_requests_to_brokers` empties it."""

    controller_id: int
    leader_and_isr: dict[int, dict[TopicPartition, LeaderAndIsrEntry]] = field(
        default_factory=lambda: defaultdict(dict)
    )
    stop_replica: dict[int, dict[TopicPartition, bool]] = field(default_factory=lambda: defaultdict(dict))
    update_metadata_brokers: set[int] = field(default_factory=set)
    update_metadata_partitions: set[TopicPartition] = field(default_factory=set)

    def add_leader_and_isr(
        self,
        broker_ids: Iterable[int],
        partition: TopicPartition,
        state: LeaderIsrAndControllerEpoch,
        assignment: ReplicaAssignment,
        is_new: bool = False,
    ) -> None:
        entry = LeaderAndIsrEntry(state, assignment, is_new)  # one for all: `_same_entry` tells it by identity
        for broker_id in broker_ids:
            if broker_id >= 0:
                self.leader_and_isr[broker_id][partition] = entry
        self.update_metadata_partitions.add(partition)

    def add_stop_replica(self, broker_ids: Iterable[int], partition: TopicPartition, delete: bool) -> None:
        for broker_id in broker_ids:
            if broker_id >= 0:
                previous = self.stop_replica[broker_id].get(partition, False)
                self.stop_replica[broker_id][partition] = previous or delete

    def add_update_metadata(self, broker_ids: Iterable[int], partitions: Iterable[TopicPartition]) -> None:
        self.update_metadata_brokers.update(broker_ids)
        self.update_metadata_partitions.update(partitions)

    def is_empty(self) -> bool:
        return not (self.leader_and_isr or self.stop_replica or self.update_metadata_brokers)

    def send_requests_to_brokers(
        self,
        controller_epoch: int,
        channel: ControllerChannelManager,
        live_brokers: dict[int, BrokerRegistration],
        broker_epochs: dict[int, int],
        leadership: Callable[[TopicPartition], LeaderIsrAndControllerEpoch | None],
        replicas: Callable[[TopicPartition], tuple[int, ...]],
        deleting: Callable[[TopicPartition], bool],
        log: ControllerLog,
        sink: StateChangeSink,
        stop_replica_callback: Callable[[int, bool], ResponseCallback | None] = lambda broker, delete: None,
        leader_and_isr_callback: ResponseCallback | None = None,
        topic_ids: Mapping[str, str] | None = None,
    ) -> None:
        """Send everything collected, to brokers that are live (or shutting down) only. `topic_ids` (the
        controller context's, as the znodes hold them) go into UpdateMetadata; a topic without one gets
        the zero UUID, as Kafka's builder does."""
        # All built first, then each encoded here and queued, LeaderAndIsr first: encoding holds the GIL
        # (the codec is compiled), and send threads encoding while the event thread built the next request,
        # or while another send thread encoded, slowed each other (at failover, building the requests for
        # 100,000 partitions took several times as long as in-process alone; at an election of 10,000, the
        # survivor's LeaderAndIsr took 55 ms to encode beside the UpdateMetadata's, 15 ms alone). A send
        # thread only puts the header before the bytes and writes them, without the GIL. Each broker's
        # queue gets them in Kafka's order.
        requests = [
            *self._leader_and_isr_requests(
                controller_epoch, channel.listener_name, live_brokers, broker_epochs, log, sink, leader_and_isr_callback
            ),
            *self._update_metadata_requests(
                controller_epoch,
                live_brokers,
                broker_epochs,
                leadership,
                replicas,
                deleting,
                log,
                sink,
                topic_ids or {},
            ),
            *self._stop_replica_requests(
                controller_epoch, live_brokers, broker_epochs, log, sink, stop_replica_callback
            ),
        ]
        for broker_id, request in requests:
            encoded = encode_request_body(request.api_key, request.version, request.body)
            channel.send(broker_id, request.api_key, request.version, request.body, request.callback, encoded)
        self.leader_and_isr.clear()
        self.stop_replica.clear()
        self.update_metadata_brokers.clear()
        self.update_metadata_partitions.clear()

    def _leader_and_isr_requests(
        self,
        controller_epoch: int,
        listener_name: str,
        live_brokers: dict[int, BrokerRegistration],
        broker_epochs: dict[int, int],
        log: ControllerLog,
        sink: StateChangeSink,
        callback: ResponseCallback | None,
    ) -> list[tuple[int, _Outgoing]]:
        requests: list[tuple[int, _Outgoing]] = []
        trace = sink.enabled(Level.TRACE)
        # One wire-shaped state per partition entry, shared by every broker's request that carries the same
        # entry: built once and encoded once (a SharedStruct), as each replica's broker gets the same bytes.
        built: dict[TopicPartition, tuple[LeaderAndIsrEntry, SharedStruct]] = {}
        for broker_id, entries in sorted(self.leader_and_isr.items()):
            if broker_id not in live_brokers:
                continue
            topics: dict[str, list[dict[str, Any]]] = defaultdict(list)
            leaders = followers = 0
            leader_ids: set[int] = set()
            for partition, entry in sorted(entries.items(), key=itemgetter(0)):  # (topic, partition) order
                lai = entry.state.leader_and_isr
                cached = built.get(partition)
                if cached is not None and _same_entry(cached[0], entry):
                    state = cached[1]
                else:
                    state = SharedStruct(
                        {
                            "partition_index": partition.partition,
                            "controller_epoch": entry.state.controller_epoch,
                            "leader": lai.leader,
                            "leader_epoch": lai.leader_epoch,
                            "isr": list(lai.isr),
                            "zk_version": lai.zk_version,
                            "replicas": list(entry.assignment.replicas),
                            "adding_replicas": list(entry.assignment.adding_replicas),
                            "removing_replicas": list(entry.assignment.removing_replicas),
                            "is_new": entry.is_new,
                        }
                    )
                    built[partition] = (entry, state)
                is_leader = lai.leader == broker_id
                leaders += is_leader
                followers += not is_leader
                if lai.leader >= 0:
                    leader_ids.add(lai.leader)
                if trace:
                    partition_state = LeaderAndIsrPartitionState.of(
                        partition, entry.state, entry.assignment, is_new=entry.is_new
                    )
                    sink.write(log.sending_leader_and_isr_partition(broker_id, partition_state))
                topics[partition.topic].append(state)
            sink.write(log.sending_leader_and_isr(broker_id, leaders, followers))
            body = {
                "controller_id": self.controller_id,
                "controller_epoch": controller_epoch,
                "broker_epoch": broker_epochs.get(broker_id, -1),
                "topic_states": [{"topic_name": t, "partition_states": s} for t, s in topics.items()],
                # the leaders' inter-broker endpoints: where the followers fetch from
                "live_leaders": [
                    {"broker_id": b, "host_name": endpoint.host, "port": endpoint.port}
                    for b in sorted(leader_ids)
                    if b in live_brokers and (endpoint := listener_endpoint(live_brokers[b], listener_name)) is not None
                ],
            }
            requests.append((broker_id, _Outgoing(ApiKey.LEADER_AND_ISR, LEADER_AND_ISR_VERSION, body, callback)))
        return requests

    def _update_metadata_requests(
        self,
        controller_epoch: int,
        live_brokers: dict[int, BrokerRegistration],
        broker_epochs: dict[int, int],
        leadership: Callable[[TopicPartition], LeaderIsrAndControllerEpoch | None],
        replicas: Callable[[TopicPartition], tuple[int, ...]],
        deleting: Callable[[TopicPartition], bool],
        log: ControllerLog,
        sink: StateChangeSink,
        topic_ids: Mapping[str, str],
    ) -> list[tuple[int, _Outgoing]]:
        if not self.update_metadata_brokers and not self.update_metadata_partitions:
            return []
        recipients = sorted(b for b in (self.update_metadata_brokers or set(live_brokers)) if b in live_brokers)
        if not self.update_metadata_brokers:
            recipients = sorted(live_brokers)
        topics: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for partition in sorted(self.update_metadata_partitions):
            state = leadership(partition)
            if state is None:
                continue
            lai = state.leader_and_isr
            assigned = replicas(partition)
            topics[partition.topic].append(
                {
                    "partition_index": partition.partition,
                    "controller_epoch": state.controller_epoch,
                    "leader": LEADER_DURING_DELETE if deleting(partition) else lai.leader,
                    "leader_epoch": lai.leader_epoch,
                    "isr": list(lai.isr),
                    "zk_version": lai.zk_version,
                    "replicas": list(assigned),
                    "offline_replicas": [r for r in assigned if r not in live_brokers],
                }
            )
        brokers = [
            {
                "id": b.broker_id,
                "endpoints": [
                    {
                        "port": e.port,
                        "host": e.host,
                        "listener": e.listener,
                        "security_protocol": _protocol_id(b, e),
                    }
                    for e in b.endpoints
                ],
                "rack": b.rack,
            }
            for b in sorted(live_brokers.values(), key=lambda r: r.broker_id)
        ]
        sink.write(log.sending_update_metadata(recipients, len(self.update_metadata_partitions)))
        # built and encoded once: every recipient's body shares it (only the broker epoch differs)
        topic_states = SharedArray(
            {"topic_name": t, "topic_id": kafka_uuid_from_text(topic_ids.get(t)), "partition_states": s}
            for t, s in topics.items()
        )
        return [
            (
                broker_id,
                _Outgoing(
                    ApiKey.UPDATE_METADATA,
                    UPDATE_METADATA_VERSION,
                    {
                        "controller_id": self.controller_id,
                        "controller_epoch": controller_epoch,
                        "broker_epoch": broker_epochs.get(broker_id, -1),
                        "topic_states": topic_states,
                        "live_brokers": brokers,
                    },
                    None,
                ),
            )
            for broker_id in recipients
        ]

    def _stop_replica_requests(
        self,
        controller_epoch: int,
        live_brokers: dict[int, BrokerRegistration],
        broker_epochs: dict[int, int],
        log: ControllerLog,
        sink: StateChangeSink,
        stop_replica_callback: Callable[[int, bool], ResponseCallback | None],
    ) -> list[tuple[int, _Outgoing]]:
        requests: list[tuple[int, _Outgoing]] = []
        for broker_id, partitions in sorted(self.stop_replica.items()):
            if broker_id not in live_brokers:
                continue
            for delete in (False, True):
                chosen = sorted(
                    (tp for tp, d in partitions.items() if d == delete), key=lambda tp: (tp.topic, tp.partition)
                )
                if not chosen:
                    continue
                by_topic: dict[str, list[int]] = defaultdict(list)
                for tp in chosen:
                    by_topic[tp.topic].append(tp.partition)
                sink.write(log.sending_stop_replica(broker_id, len(chosen)))
                body = {
                    "controller_id": self.controller_id,
                    "controller_epoch": controller_epoch,
                    "broker_epoch": broker_epochs.get(broker_id, -1),
                    "delete_partitions": delete,
                    "topics": [{"name": t, "partition_indexes": p} for t, p in by_topic.items()],
                }
                callback = stop_replica_callback(broker_id, delete)
                requests.append((broker_id, _Outgoing(ApiKey.STOP_REPLICA, STOP_REPLICA_VERSION, body, callback)))
        return requests
