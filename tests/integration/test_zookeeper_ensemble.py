"""A 3-node ZooKeeper ensemble on loopback ports (cluster/local/zookeeper.py), as the chaos runner uses it.

Real servers from Debian's zookeeper package: the quorum forms, survives the loss of its leader (the
others elect a new one and keep serving writes), the killed node rejoins as a follower with its old
ports and data, and a session can be ended from outside (a broker's, in the chaos runner) because
ZooKeeper derives a session's password from its id.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from kazoo.client import KazooClient

from kafkaops.cluster.local.zookeeper import (
    QuorumPeer,
    ZooKeeperEnsemble,
    ZooKeeperStartError,
    expire_session,
    java_random_bytes,
    parse_mode,
    render_ensemble_cfg,
    session_password,
)


@pytest.fixture(scope="module")
def ensemble(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ZooKeeperEnsemble]:
    servers = ZooKeeperEnsemble(tmp_path_factory.mktemp("ensemble"))
    try:
        servers.start()
        yield servers
    finally:
        servers.stop(hard=True)


def _client(connect: str, timeout_s: float = 10.0) -> KazooClient:
    client = KazooClient(hosts=connect, timeout=timeout_s)
    client.start(timeout=30)
    return client


# --- pure ------------------------------------------------------------------------------------------------


def test_java_random_bytes_match_the_jvm() -> None:
    # java.util.Random(0).nextInt() is -1155484576 (0xbb20b460), its bytes are taken low first
    assert java_random_bytes(0, 4) == bytes.fromhex("60b420bb")
    assert java_random_bytes(42, 6) == bytes.fromhex("359d41baf78a")  # -1170105035, then 234785527's low bytes


def test_session_password_matches_zookeeper_server_generate_passwd() -> None:
    # pinned with jshell: new Random(id ^ 0xB3415C00L).nextBytes(new byte[16]), as ZooKeeperServer.generatePasswd
    assert session_password(0x1234567890ABCDEF).hex() == "f7721b383fd583ba74d220ede39f7b43"
    assert session_password(-5).hex() == "d47144b5e45e45c49c3b7fdcd66257ba"


def test_ensemble_config_names_every_member_on_loopback(tmp_path: Path) -> None:
    quorum = {i: QuorumPeer(i, 2180 + i, 2880 + i, 3880 + i) for i in (1, 2, 3)}
    config = render_ensemble_cfg(tmp_path, quorum[2], quorum, init_limit=20, sync_limit=5).splitlines()
    assert "clientPort=2182" in config
    assert "clientPortAddress=127.0.0.1" in config
    assert [line for line in config if line.startswith(("initLimit", "syncLimit"))] == ["initLimit=20", "syncLimit=5"]
    assert [line for line in config if line.startswith("server.")] == [
        "server.1=127.0.0.1:2881:3881",
        "server.2=127.0.0.1:2882:3882",
        "server.3=127.0.0.1:2883:3883",
    ]


def test_parse_mode() -> None:
    assert parse_mode("Zookeeper version: 3.8.0\nLatency min/avg/max: 0/0.0/0\nMode: follower\nNode count: 5\n") == (
        "follower"
    )
    assert parse_mode("This ZooKeeper instance is not currently serving requests\n") is None
    assert parse_mode(None) is None


# --- a real ensemble -------------------------------------------------------------------------------------


def test_ensemble_forms_one_quorum(ensemble: ZooKeeperEnsemble) -> None:
    modes = ensemble.modes()
    assert sorted(modes.values()) == ["follower", "follower", "leader"]
    for server_id, node in ensemble.nodes.items():
        assert (node.home / "data" / "myid").read_text().strip() == str(server_id)
    assert ensemble.connect_string.count(",") == 2
    assert all(host.startswith("127.0.0.1:") for host in ensemble.connect_string.split(","))


def test_writes_go_on_when_the_leader_is_killed_and_it_rejoins(ensemble: ZooKeeperEnsemble) -> None:
    client = _client(ensemble.connect_string)
    try:
        client.create("/before", b"1")
        old_leader = ensemble.leader_id()
        assert old_leader is not None
        assert ensemble.stop_node(old_leader, hard=True)
        assert ensemble.running() == [s for s in ensemble.nodes if s != old_leader]
        # the two others elect a leader among themselves; the client fails over to one of them
        deadline = time.monotonic() + 60
        while True:
            try:
                client.create("/during", b"2")
                break
            except Exception:  # noqa: BLE001 - ConnectionLoss / SessionMoved while the quorum re-forms
                assert time.monotonic() < deadline, f"no write within 60 s of killing the leader: {ensemble.modes()}"
                time.sleep(0.2)
        assert ensemble.leader_id() not in (None, old_leader)
        ensemble.start_node(old_leader)
        assert ensemble.modes()[old_leader] == "follower"
        # the restarted node serves the data written while it was down
        direct = _client(ensemble.nodes[old_leader].connect_string)
        try:
            direct.sync("/")
            assert direct.get("/during")[0] == b"2"
            assert direct.get("/before")[0] == b"1"
        finally:
            direct.stop()
            direct.close()
    finally:
        client.stop()
        client.close()


def test_a_session_ended_from_outside_loses_its_ephemeral_nodes(ensemble: ZooKeeperEnsemble) -> None:
    victim = _client(ensemble.connect_string, timeout_s=20)
    observer = _client(ensemble.connect_string)
    lost = threading.Event()
    try:
        victim.create("/ephemeral", b"mine", ephemeral=True)
        session_id = victim.client_id[0]
        # ZooKeeper orders one client's reads after its writes only: another client's server may lag the
        # leader until a sync (a CI run read NoNode here)
        observer.sync("/")
        assert observer.get("/ephemeral")[1].ephemeralOwner == session_id
        victim.add_listener(lambda state: lost.set() if state == "LOST" else None)
        assert expire_session(ensemble.connect_string, session_id) >= 1
        observer.sync("/")
        assert observer.exists("/ephemeral") is None
        assert lost.wait(30), "the victim's client never learned that its session expired"
        deadline = time.monotonic() + 30
        while victim.client_id is None or victim.client_id[0] == session_id or not victim.connected:
            assert time.monotonic() < deadline, "the victim's client did not get a new session"
            time.sleep(0.1)
        with pytest.raises(ZooKeeperStartError, match="already ended"):
            expire_session(ensemble.connect_string, session_id, timeout_s=5)
    finally:
        for client in (victim, observer):
            client.stop()
            client.close()


def test_ports_are_kept_for_a_reopened_ensemble(ensemble: ZooKeeperEnsemble) -> None:
    reopened = ZooKeeperEnsemble(ensemble.state_dir)
    assert reopened.connect_string == ensemble.connect_string
    assert {s: n.pid() for s, n in reopened.nodes.items()} == {s: n.pid() for s, n in ensemble.nodes.items()}
