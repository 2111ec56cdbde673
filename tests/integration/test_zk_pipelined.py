"""The raw pipelined reader agrees with kazoo on a real ZooKeeper, chroot included."""

from __future__ import annotations

import pytest

from kafkaops.cluster.common.errors import ZooKeeperUnreachableError
from kafkaops.cluster.zk.pipelined import WINDOW, PipelinedReader


def test_pipelined_reads_match_kazoo(zk, zk_connect):
    zk.kazoo.create("/p/a", b"first", makepath=True)
    zk.kazoo.create("/p/empty", b"")
    zk.kazoo.set("/p/a", b"second")
    pending = [zk.kazoo.create_async(f"/p/n{i}", str(i).encode()) for i in range(WINDOW + 10)]
    for request in pending:
        request.get()
    paths = ["/p/a", "/p/empty", "/p/missing", *(f"/p/n{i}" for i in range(WINDOW + 10))]
    with PipelinedReader(zk_connect) as reader:
        data = reader.get_data_many(paths)
        children = reader.get_children_many(["/p", "/nope", "/"])
    expected = zk.get_many(paths)
    assert [None if d is None else (d[0], d[1].version, d[1].czxid) for d in data] == [
        None if e is None else (e[0], e[1].version, e[1].czxid) for e in (expected[p] for p in paths)
    ]
    assert data[0][1].version == 1 and data[2] is None
    assert sorted(children[0]) == sorted(zk.get_children("/p"))
    assert children[1] is None and children[2] == ["p"]


def test_pipelined_fallback_reads_the_same(zk, zk_connect):
    """Servers before ZooKeeper 3.6 have no multiRead: the window of single reads gives the same answers."""
    for i in range(5):
        zk.kazoo.create(f"/q/n{i}", str(i).encode(), makepath=True)
    paths = [f"/q/n{i}" for i in range(5)] + ["/q/missing"]
    with PipelinedReader(zk_connect) as multi, PipelinedReader(zk_connect) as single:
        single._multi_read = False
        assert [d and d[0] for d in multi.get_data_many(paths)] == [d and d[0] for d in single.get_data_many(paths)]
        assert single.get_children_many(["/q"]) == multi.get_children_many(["/q"])


def test_a_session_from_a_last_zxid_sees_the_writes_up_to_it_and_a_server_behind_it_refuses(zk, zk_connect):
    """The controller re-reads states after a lost conditional write on a bulk connection opened from its
    own session's last zxid: ZooKeeper refuses such a session on a server that has not applied it yet."""
    zk.kazoo.create("/z/a", b"old", makepath=True)
    zk.kazoo.set("/z/a", b"new")
    seen = zk.kazoo.last_zxid
    with PipelinedReader(zk_connect, last_zxid_seen=seen) as reader:
        assert reader.get_data_many(["/z/a"])[0][0] == b"new"
    with pytest.raises(ZooKeeperUnreachableError):
        PipelinedReader(zk_connect, timeout_s=5, last_zxid_seen=seen + 1_000_000)


def test_data_and_versions_agree_with_the_full_reads(zk, zk_connect):
    """The controller's bulk read (one pass over each multiRead answer, no Stat) gives what `get_data_many`
    gives, with the server's multiRead and without it, across several multiReads."""
    zk.kazoo.create("/v/a", b"first", makepath=True)
    zk.kazoo.set("/v/a", b"second")
    zk.kazoo.set("/v/a", b"third")
    zk.kazoo.create("/v/empty", b"")
    zk.kazoo.create("/v/null", None)
    pending = [zk.kazoo.create_async(f"/v/n{i}", str(i).encode() * i) for i in range(25)]
    for request in pending:
        request.get()
    paths = ["/v/a", "/v/missing", "/v/empty", "/v/null", *(f"/v/n{i}" for i in range(25)), "/v/gone"]
    with PipelinedReader(zk_connect) as multi, PipelinedReader(zk_connect) as single:
        single._multi_read = False
        full = [None if d is None else (d[0], d[1].version) for d in multi.get_data_many(paths)]
        assert multi.get_data_and_versions(paths, ops_per_request=7) == full
        assert single.get_data_and_versions(paths) == full
    assert full[0] == (b"third", 2) and full[1] is None and full[2] == full[3] == (b"", 0)
    assert full[-2] == (b"24" * 24, 0) and full[-1] is None
