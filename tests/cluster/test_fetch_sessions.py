"""Incremental fetch sessions (KIP-227) between brokers, on real brokers: the leader's side on the wire,
and the followers using them while they replicate."""

from __future__ import annotations

import socket

from kafkaops.admin import topics as admin_topics
from kafkaops.cluster.common.errors import FetchSessionIdNotFoundError, InvalidFetchSessionEpochError
from kafkaops.cluster.local.inprocess import InProcessCluster
from kafkaops.cluster.local.waiting import wait_for
from kafkaops.cluster.protocol.framing import frame, read_frame_blocking
from kafkaops.cluster.protocol.messages import RequestHeader, decode_response, encode_request
from kafkaops.cluster.protocol.records import Record, build_batch
from kafkaops.cluster.protocol.schemas import ApiKey
from kafkaops.cluster.zk.values import TopicPartition
from tests.cluster.conftest import FAST

TOPIC = "sessions"


class Peer:
    """One connection to a broker, speaking as a follower (replica_id 1) or a consumer (-1)."""

    def __init__(self, address: tuple[str, int]) -> None:
        self.sock = socket.create_connection(address, timeout=10)
        self.correlation_id = 0

    def request(self, key: ApiKey, version: int, body: dict) -> dict:
        self.correlation_id += 1
        header = RequestHeader(key, version, self.correlation_id, "session-test")
        self.sock.sendall(frame(encode_request(header, body)))
        return decode_response(key, version, read_frame_blocking(self.sock))[1]

    def fetch(
        self,
        session_id: int,
        epoch: int,
        positions: dict[int, int],
        forgotten: list[int] = (),  # type: ignore[assignment]
        replica_id: int = 1,
    ) -> dict:
        return self.request(
            ApiKey.FETCH,
            11,
            {
                "replica_id": replica_id,
                "max_wait_ms": 0,
                "min_bytes": 1,
                "max_bytes": 1 << 20,
                "isolation_level": 0,
                "session_id": session_id,
                "session_epoch": epoch,
                "topics": [
                    {
                        "topic": TOPIC,
                        "partitions": [
                            {
                                "partition": p,
                                "current_leader_epoch": -1,
                                "fetch_offset": offset,
                                "log_start_offset": 0,
                                "partition_max_bytes": 1 << 20,
                            }
                            for p, offset in positions.items()
                        ],
                    }
                ]
                if positions
                else [],
                "forgotten_topics_data": [{"topic": TOPIC, "partitions": list(forgotten)}] if forgotten else [],
                "rack_id": "",
            },
        )

    def produce(self, partition: int) -> None:
        body = {
            "transactional_id": None,
            "acks": 1,
            "timeout_ms": 5000,
            "topic_data": [
                {
                    "name": TOPIC,
                    "partition_data": [
                        {"index": partition, "records": build_batch([Record(0, 1_700_000_000_000, b"k", b"v")])}
                    ],
                }
            ],
        }
        answer = self.request(ApiKey.PRODUCE, 8, body)["responses"][0]["partition_responses"][0]
        assert answer["error_code"] == 0

    def close(self) -> None:
        self.sock.close()


def answered(response: dict) -> dict[int, dict]:
    assert response["error_code"] == 0, response
    return {p["partition"]: p for t in response["responses"] for p in t["partition_responses"]}


def _address(server) -> tuple[str, int]:  # type: ignore[no-untyped-def]
    return server.endpoints[0].host, server.endpoints[0].port


def test_a_leader_answers_a_followers_incremental_fetches_with_what_changed_only(zk_connect, zk, tmp_path):
    cluster = InProcessCluster(zk_connect, tmp_path, 2, FAST)
    cluster.start()
    try:
        admin_topics.create_topic(zk, TOPIC, None, None, {0: [0, 1], 1: [0, 1]}, {})
        leader = cluster.servers[0]
        wait_for(
            lambda: all(
                (p := leader.replica_manager.partitions.get(TopicPartition(TOPIC, i))) is not None and p.is_leader
                for i in (0, 1)
            )
        )
        peer = Peer(_address(leader))
        try:
            # epoch 0 opens a session: a full answer, every partition
            opened = peer.fetch(0, 0, {0: 0, 1: 0})
            session = opened["session_id"]
            assert session != 0 and set(answered(opened)) == {0, 1}
            # nothing changed: an incremental fetch naming no partition gets no partition back
            assert answered(peer.fetch(session, 1, {})) == {}
            # a record on partition 0: only partition 0 comes back, with it, from the position cached at epoch 0
            peer.produce(0)
            news = answered(peer.fetch(session, 2, {}))
            assert set(news) == {0} and len(news[0]["record_set"]) > 0
            # the follower moved on, then forgets partition 1: a record there is not answered
            answered(peer.fetch(session, 3, {0: 1}, forgotten=[1]))
            peer.produce(1)
            assert 1 not in answered(peer.fetch(session, 4, {}))
            # a stale epoch, an unknown session, and another follower's session are refused
            assert peer.fetch(session, 4, {})["error_code"] == InvalidFetchSessionEpochError.code
            assert peer.fetch(session + 1 if session < 2**31 - 1 else 1, 1, {})["error_code"] == (
                FetchSessionIdNotFoundError.code
            )
            assert peer.fetch(session, 5, {}, replica_id=0)["error_code"] == FetchSessionIdNotFoundError.code
            # a consumer asking for a session gets none (session id 0) and a full answer
            consumer = peer.fetch(0, 0, {0: 0, 1: 0}, replica_id=-1)
            assert consumer["session_id"] == 0 and set(answered(consumer)) == {0, 1}
            # epoch -1 closes the session: the answer is sessionless and full, the session is gone
            closing = peer.fetch(session, -1, {0: 1, 1: 0})
            assert closing["session_id"] == 0 and set(answered(closing)) == {0, 1}
            assert peer.fetch(session, 5, {})["error_code"] == FetchSessionIdNotFoundError.code
        finally:
            peer.close()
    finally:
        cluster.shutdown()


def test_followers_replicate_through_incremental_sessions(zk_connect, zk, tmp_path):
    cluster = InProcessCluster(zk_connect, tmp_path, 2, FAST)
    cluster.start()
    try:
        admin_topics.create_topic(zk, TOPIC, None, None, {p: [0, 1] for p in range(20)}, {})
        leader, follower = cluster.servers[0], cluster.servers[1]
        tps = [TopicPartition(TOPIC, p) for p in range(20)]
        wait_for(lambda: all((p := leader.replica_manager.partitions.get(tp)) and p.is_leader for tp in tps))
        sessions = leader.replica_manager.fetch_sessions.sessions
        # the follower opened one session holding its 20 partitions, and moves it on with incremental fetches
        wait_for(lambda: [(s.replica_id, set(s.partitions)) for s in sessions.values()] == [(1, set(tps))])
        epoch = next(iter(sessions.values())).epoch
        wait_for(lambda: next(iter(sessions.values())).epoch > epoch + 2)
        peer = Peer(_address(leader))
        try:
            for p in range(0, 20, 3):
                peer.produce(p)
        finally:
            peer.close()
        # what was appended reached the follower, and the high watermarks followed
        replicas = follower.replica_manager.partitions
        wait_for(
            lambda: (
                all(replicas[tp].log_end_offset == (1 if tp.partition % 3 == 0 else 0) for tp in tps)
                and all(
                    leader.replica_manager.partitions[tp].high_watermark == replicas[tp].log_end_offset for tp in tps
                )
            )
        )
    finally:
        cluster.shutdown()
