"""Controller election, epoch fencing and broker registration against a real ZooKeeper (reference §5.1)."""

from __future__ import annotations

import pytest
from kazoo.exceptions import BadVersionError, ConnectionLoss

from kafkaops.cluster.common.errors import BrokerIdTakenError, ControllerMovedError
from kafkaops.cluster.local.standin import standin_registration
from kafkaops.cluster.zk import znodes
from kafkaops.cluster.zk.client import KafkaZkClient
from kafkaops.cluster.zk.zookeeper_client import Op


def test_first_controller_gets_epoch_1_and_losers_are_refused(zk_connect):
    with KafkaZkClient(zk_connect) as a, KafkaZkClient(zk_connect) as b:
        epoch, version = a.register_controller_and_increment_controller_epoch(1, 1_000)
        assert (epoch, a.get_controller_epoch()) == (1, (1, version))
        assert a.get(znodes.ControllerZNode.path())[0] == b'{"version":1,"brokerid":1,"timestamp":"1000"}'
        with pytest.raises(ControllerMovedError):
            b.register_controller_and_increment_controller_epoch(2, 2_000)
        assert a.get_controller_id() == 1 and a.get_controller_epoch()[0] == 1


def test_stale_controller_writes_are_rejected(zk_connect):
    a = KafkaZkClient(zk_connect)
    _, stale_version = a.register_controller_and_increment_controller_epoch(1, 1)
    [written] = a.fenced_multi_many([[Op.create("/written-by-a", b"1")]], stale_version)
    assert not isinstance(written, Exception)
    with KafkaZkClient(zk_connect) as b:
        a.close()  # session gone: /controller vanishes
        epoch, version = b.register_controller_and_increment_controller_epoch(2, 2)
        assert epoch == 2
        with KafkaZkClient(zk_connect) as zombie:
            with pytest.raises(ControllerMovedError):
                zombie.fenced_multi_many([[Op.create("/written-by-zombie", b"1")]], stale_version)
            assert not zombie.exists("/written-by-zombie")
        b.fenced_multi_many([[Op.create("/written-by-b", b"2")]], version)
        assert b.exists("/written-by-b")


def test_pipelined_fenced_writes_fail_one_by_one(zk):
    _, version = zk.register_controller_and_increment_controller_epoch(0, 0)
    zk.create("/p", b"")
    for name in ("x", "y"):
        zk.create(f"/p/{name}", b"0")
    outcomes = zk.fenced_multi_many(
        [[Op.set("/p/x", b"1", 0)], [Op.set("/p/y", b"1", 7)], [Op.create("/p/z", b"1")]], version
    )
    assert isinstance(outcomes[1], BadVersionError)
    assert not isinstance(outcomes[0], Exception) and not isinstance(outcomes[2], Exception)
    assert zk.get("/p/x")[0] == b"1" and zk.get("/p/y")[0] == b"0" and zk.exists("/p/z")


def test_packed_fenced_multis_write_under_the_chroot_and_fail_one_by_one(zk):
    """Sets, checks and deletes travel as multis packed by `cluster.zk.multi` (this test's own chroot)."""
    _, version = zk.register_controller_and_increment_controller_epoch(0, 0)
    zk.create("/q", b"")
    for name in ("a", "b", "c", "d"):
        zk.create(f"/q/{name}", b"0")
    batches = [
        [Op.set("/q/a", b"1", 0)],
        [Op.check("/q/b", 0), Op.set("/q/b", b"1", 0)],
        [Op.set("/q/c", b"1", 5)],  # a stale version: its group is retried batch by batch
        [Op.delete("/q/d", 0)],
    ]
    outcomes = zk.fenced_multi_many(batches, version)
    assert [stat.version for stat in outcomes[0]] == [1]
    assert outcomes[1][0] is True and outcomes[1][1].version == 1
    assert isinstance(outcomes[2], BadVersionError)
    assert outcomes[3] == [True]
    assert [zk.get(f"/q/{n}")[0] for n in "abc"] == [b"1", b"1", b"0"] and not zk.exists("/q/d")
    with pytest.raises(ControllerMovedError):
        zk.fenced_multi_many([[Op.set("/q/a", b"2", 1)]], version + 1)
    assert zk.get("/q/a")[0] == b"1"


@pytest.mark.parametrize("applied", [False, True], ids=["lost-before-the-server", "answer-lost"])
def test_broker_registration_outlives_a_lost_connection(zk_connect, monkeypatch, applied):
    """The ZooKeeper server a starting broker talks to goes away with its registration in flight (CI's chaos
    run killed the ensemble's leader just then, and the broker exited): the registration is tried again
    once connected, as Kafka's `retryRequestUntilConnected`; a node its own session created meanwhile is
    its own."""
    with KafkaZkClient(zk_connect) as broker:
        kazoo = broker._zk
        create = kazoo.create
        failures = []

        def flaky_create(path, *args, **kwargs):
            if path.startswith("/brokers/ids/") and not failures:
                failures.append(path)
                if applied:
                    create(path, *args, **kwargs)
                raise ConnectionLoss()
            return create(path, *args, **kwargs)

        monkeypatch.setattr(kazoo, "create", flaky_create)
        epoch = broker.register_broker(standin_registration(4))
        assert failures == ["/brokers/ids/4"]
        stat = kazoo.exists("/brokers/ids/4")
        assert epoch == stat.czxid and stat.ephemeralOwner == kazoo.client_id[0]


def test_broker_registration_is_exclusive(zk_connect):
    with KafkaZkClient(zk_connect) as first, KafkaZkClient(zk_connect) as second:
        epoch = first.register_broker(standin_registration(3))
        assert epoch > 0
        assert first.register_broker(standin_registration(3)) == epoch  # our own node: idempotent
        with pytest.raises(BrokerIdTakenError, match=r"Error while creating ephemeral at /brokers/ids/3, node already"):
            second.register_broker(standin_registration(3))
        assert first.get_or_create_cluster_id("AAAAAAAAAAAAAAAAAAAAAA") == "AAAAAAAAAAAAAAAAAAAAAA"
        assert second.get_or_create_cluster_id("BBBBBBBBBBBBBBBBBBBBBB") == "AAAAAAAAAAAAAAAAAAAAAA"
        assert first.get("/cluster/id")[0] == b'{"version":"1","id":"AAAAAAAAAAAAAAAAAAAAAA"}'
