"""The multi body packed by `cluster.zk.multi` is, byte for byte, what kazoo's own `Transaction` sends for
the same operations under the same chroot: kazoo then reads its answer as for one of its own multis."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from kazoo.protocol.paths import _prefix_root
from kazoo.protocol.serialization import CheckVersion, Delete, SetData, Transaction

from kafkaops.cluster.zk import multi
from kafkaops.cluster.zk.pipelined import parse_connect_string
from kafkaops.cluster.zk.zookeeper_client import Op

segment = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="/\x00"), min_size=1, max_size=12)
path = st.lists(segment.filter(lambda s: s not in (".", "..")), min_size=1, max_size=4).map(lambda p: "/" + "/".join(p))
version = st.integers(-1, 2**31 - 1)
op = st.one_of(
    st.builds(Op.set, path, st.binary(max_size=64), version),
    st.builds(Op.check, path, version),
    st.builds(Op.delete, path, version),
)


def kazoo_body(ops: list[Op], chroot: str) -> bytes:
    kinds = {"set": lambda o, p: SetData(p, o.data, o.version), "check": lambda o, p: CheckVersion(p, o.version)}
    kinds["delete"] = lambda o, p: Delete(p, o.version)
    return bytes(Transaction([kinds[o.kind](o, _prefix_root(chroot, o.path)) for o in ops]).serialize())


@given(st.lists(op, max_size=8), st.sampled_from(["", "/", "/kafka", "/kafka/", "/a/b"]))
def test_the_body_is_kazoos(ops: list[Op], chroot: str) -> None:
    session_chroot = parse_connect_string(f"zk:2181{chroot}").chroot  # what the session's ZkClient holds
    assert multi.serialize(ops, session_chroot) == kazoo_body(ops, chroot)


def test_the_request_sends_its_body_as_a_kazoo_multi() -> None:
    body = multi.serialize([Op.check("/controller_epoch", 3), Op.set("/x", b"1", 0)])
    request = multi.SerializedMulti(body)
    assert request.type == Transaction.type and request.serialize() == body


@pytest.mark.parametrize(
    ("ops", "expected"),
    [([Op.set("/x", b"", 0)], True), ([Op.check("/x", 1), Op.delete("/y")], True), ([Op.create("/x", b"")], False)],
)
def test_creates_stay_on_kazoos_transaction(ops: list[Op], expected: bool) -> None:
    assert multi.serializable(ops) is expected
