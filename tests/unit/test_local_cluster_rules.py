"""The local cluster's pure rules: which partitions keep a broker from being removed; when a local ZooKeeper
counts as started."""

from __future__ import annotations

import socketserver
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from kafkaops.cluster.local.cluster import replicas_held
from kafkaops.cluster.local.zookeeper import (
    LocalZooKeeper,
    QuorumPeer,
    free_port,
    free_ports,
    listen_port_candidates,
    zookeeper_answers,
)
from kafkaops.cluster.zk.values import ReplicaAssignment, TopicAssignment, TopicPartition


def test_a_broker_holds_its_replicas_and_those_a_reassignment_adds() -> None:
    assignments = {
        "b": TopicAssignment({1: ReplicaAssignment((0, 1)), 0: ReplicaAssignment((1, 2))}),
        "a": TopicAssignment({0: ReplicaAssignment((0, 3, 1), adding_replicas=(3,), removing_replicas=(1,))}),
        "c": TopicAssignment({0: ReplicaAssignment((1, 2))}),
    }
    assert replicas_held(3, assignments) == [TopicPartition("a", 0)]
    assert replicas_held(0, assignments) == [TopicPartition("a", 0), TopicPartition("b", 1)]
    assert replicas_held(1, assignments) == [
        TopicPartition("a", 0),
        TopicPartition("b", 0),
        TopicPartition("b", 1),
        TopicPartition("c", 0),
    ]
    assert replicas_held(9, assignments) == []


def test_nobody_answers_on_a_free_port() -> None:
    assert not zookeeper_answers(f"127.0.0.1:{free_port()},127.0.0.1:{free_port()}/chroot")
    assert not zookeeper_answers("no-port-here")


def test_listen_ports_are_outside_the_ephemeral_range() -> None:
    candidates = listen_port_candidates((32768, 60999))
    assert candidates[0] == 20000 and candidates[-1] == 65535
    assert not [port for port in candidates if 32768 <= port <= 60999]
    assert len(set(free_ports(20))) == 20


NOT_SERVING = "This ZooKeeper instance is not currently serving requests\n"


@pytest.fixture
def four_letter_words() -> Iterator[tuple[int, dict[str, str]]]:
    """A loopback server answering ZooKeeper's four-letter words from a dict the test changes: a ZooKeeper
    caught between binding its client port and loading its database."""
    answers = {"ruok": "imok", "srvr": NOT_SERVING}

    class Handler(socketserver.BaseRequestHandler):
        def handle(self) -> None:
            self.request.sendall(answers[self.request.recv(4).decode()].encode())

    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1], answers
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def test_a_standalone_zookeeper_has_started_once_it_serves_not_once_it_answers_ruok(
    tmp_path: Path, four_letter_words: tuple[int, dict[str, str]]
) -> None:
    port, answers = four_letter_words
    standalone = LocalZooKeeper(tmp_path, port)
    member = LocalZooKeeper(tmp_path, port, server_id=1, quorum={1: QuorumPeer(1, port, 0, 0)})
    assert standalone.is_serving() and not standalone.has_started()
    assert member.has_started()  # it serves once a quorum forms: the ensemble waits for that
    answers["srvr"] = "Zookeeper version: 3.8.4\nMode: standalone\nNode count: 5\n"
    assert standalone.has_started() and standalone.mode() == "standalone"
