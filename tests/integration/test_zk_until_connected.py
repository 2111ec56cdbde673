"""Requests outlive a connection lost under them (Kafka's `retryRequestUntilConnected`), against a real
ZooKeeper: when the server a session talks to goes away (the chaos run's `zk_node_kill`), kazoo fails the
requests in flight with ConnectionLoss and moves the session to another server. The loss is injected into
the first matching kazoo request, before the server saw it or after it applied it (its answer lost)."""

from __future__ import annotations

import pytest
from kazoo.exceptions import BadVersionError, ConnectionLoss, SessionExpiredError

from kafkaops.cluster.zk import multi, znodes
from kafkaops.cluster.zk.client import KafkaZkClient
from kafkaops.cluster.zk.zookeeper_client import Op


def lose_first(monkeypatch, kazoo, method, applied=False, error=ConnectionLoss, path=None):
    """The first call of kazoo's `method` (on `path` if given) fails with `error` (after doing its work if
    `applied`); returns the list of the calls that failed."""
    real = getattr(kazoo, method)
    failed = []

    def flaky(*args, **kwargs):
        if failed or (path is not None and args[0] != path):
            return real(*args, **kwargs)
        failed.append(args[0] if args else None)
        if not method.endswith("_async"):
            if applied:
                real(*args, **kwargs)
            raise error()
        answer = kazoo.handler.async_result()
        answer.set_exception(error())
        return answer

    monkeypatch.setattr(kazoo, method, flaky)
    return failed


READS = {
    "get": ("get_async", lambda zk: zk.get("/a/b")[0], b"x"),
    "exists": ("exists_async", lambda zk: zk.exists("/a/b"), True),
    "get_children": ("get_children_async", lambda zk: zk.get_children("/a"), ["b"]),
    "get_many": (
        "get_async",
        lambda zk: {p: e and e[0] for p, e in zk.get_many(["/a", "/a/b", "/c"]).items()},
        {"/a": b"", "/a/b": b"x", "/c": None},
    ),
    "get_children_many": (
        "get_children_async",
        lambda zk: zk.get_children_many(["/a", "/c"]),
        {"/a": ["b"], "/c": None},
    ),
    "watch_many": ("exists_async", lambda zk: zk.watch_many(["/a/b", "/c"], lambda event: None), None),
    "get_all_brokers": ("get_children_async", lambda zk: zk.get_all_brokers(), []),
}


@pytest.mark.parametrize("read", sorted(READS))
def test_a_read_outlives_a_lost_connection(zk, monkeypatch, read):
    zk.ensure_paths(["/a", znodes.BrokerIdsZNode.path()])
    zk.create("/a/b", b"x")
    method, call, expected = READS[read]
    failed = lose_first(monkeypatch, zk.kazoo, method)
    assert call(zk) == expected
    assert len(failed) == 1


def test_an_expired_session_is_the_readers_to_handle(zk, monkeypatch):
    """Kafka retries a read on CONNECTIONLOSS only: SESSIONEXPIRED is its caller's (the broker re-registers,
    the controller resigns), not something to wait out."""
    failed = lose_first(monkeypatch, zk.kazoo, "get_async", error=SessionExpiredError)
    with pytest.raises(SessionExpiredError):
        zk.get("/")
    assert len(failed) == 1


@pytest.mark.parametrize("applied", [False, True], ids=["lost-before-the-server", "answer-lost"])
def test_broker_start_up_paths_and_cluster_id_outlive_a_lost_connection(zk, monkeypatch, applied):
    failed = lose_first(monkeypatch, zk.kazoo, "create", applied=applied)
    zk.ensure_paths(znodes.PERSISTENT_PATHS)
    assert failed and all(zk.exists(path) for path in znodes.PERSISTENT_PATHS)
    failed = lose_first(monkeypatch, zk.kazoo, "create", applied=applied, path=znodes.ClusterIdZNode.path())
    assert zk.get_or_create_cluster_id("AAAAAAAAAAAAAAAAAAAAAA") == "AAAAAAAAAAAAAAAAAAAAAA"
    assert failed == [znodes.ClusterIdZNode.path()]
    assert zk.get_or_create_cluster_id("BBBBBBBBBBBBBBBBBBBBBB") == "AAAAAAAAAAAAAAAAAAAAAA"


@pytest.mark.parametrize("applied", [False, True], ids=["lost-before-the-server", "answer-lost"])
def test_controller_election_outlives_a_lost_connection(zk_connect, monkeypatch, applied):
    """The election's multi (create `/controller`, bump `/controller_epoch`) lost in flight: made again, and
    a multi already applied is read back as this broker's win (Kafka's NODEEXISTS after a retry)."""
    with KafkaZkClient(zk_connect) as broker, KafkaZkClient(zk_connect) as other:
        failed = lose_first(monkeypatch, broker, "multi", applied=applied)
        epoch, version = broker.register_controller_and_increment_controller_epoch(1, 1_000)
        assert len(failed) == 1
        assert (epoch, broker.get_controller_id()) == (1, 1)
        assert other.get_controller_epoch() == (1, version)


@pytest.mark.parametrize("applied", [False, True], ids=["lost-before-the-server", "answer-lost"])
def test_fenced_controller_writes_outlive_a_lost_connection(zk, monkeypatch, applied):
    """A controller's fenced multi lost in flight is made again once connected (Kafka's
    `retryRequestsUntilConnected`); one the server had applied then fails on its versions, a BADVERSION the
    controller answers by reading the partition again (Kafka's `updatesToRetry`). Nothing is written twice."""
    _, epoch_zk_version = zk.register_controller_and_increment_controller_epoch(0, 0)
    zk.ensure_paths(["/p"])
    for name in ("x", "y"):
        zk.create(f"/p/{name}", b"0")
    real = multi.commit_async
    failed = []

    def flaky(client, body):
        if failed:
            return real(client, body)
        failed.append(body)
        if applied:
            real(client, body).get()
        answer = client.handler.async_result()
        answer.set_exception(ConnectionLoss())
        return answer

    monkeypatch.setattr(multi, "commit_async", flaky)
    outcomes = zk.fenced_multi_many([[Op.set("/p/x", b"1", 0)], [Op.set("/p/y", b"1", 0)]], epoch_zk_version)
    assert len(failed) == 1
    if applied:
        assert all(isinstance(outcome, BadVersionError) for outcome in outcomes)
    else:
        assert [[stat.version for stat in outcome] for outcome in outcomes] == [[1], [1]]
    assert [zk.get(f"/p/{name}")[1].version for name in ("x", "y")] == [1, 1]
