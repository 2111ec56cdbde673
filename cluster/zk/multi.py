"""A ZooKeeper multi of set, check and delete operations, serialized once, for kazoo to send as it is.

kazoo's `TransactionRequest` makes one request object per operation (type and path checks, the chroot
prefix) on the caller's thread, and its connection thread serializes each again when it sends the
multi. A controller election of 10,000 partitions writes 10,000 state znodes in fenced multis: that was
~0.2 s of the event thread plus the connection thread's share of the GIL. Here each operation is packed
straight into the request body, in the jute layout kazoo's `Transaction.serialize` writes:

    multi  := { header(int32 opcode, bool done=false, int32 err=-1), op }*, header(-1, true, -1)
    set    := ustring path, buffer data, int32 version          (opcode 5)
    check  := ustring path, int32 version                       (opcode 13)
    delete := ustring path, int32 version                       (opcode 2)

The request is kazoo's own `Transaction` type with that body, so kazoo reads the answer, raises a
failed multi's errors per operation and keeps the session's ordering exactly as for its own multis.
Creates carry ACLs and modes and stay on kazoo's `TransactionRequest` (`serializable` says which). The
framing is the one `pipelined` speaks for its multiRead, from there.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from kazoo.protocol.serialization import Transaction

from kafkaops.cluster.zk.pipelined import INT, MULTI_DONE, MULTI_HEADER
from kafkaops.cluster.zk.zookeeper_client import call_async

OP_DELETE = 2
OP_SET_DATA = 5
OP_CHECK = 13

_OPCODES = {"set": OP_SET_DATA, "check": OP_CHECK, "delete": OP_DELETE}


class MultiOp(Protocol):
    """What an operation needs to be packed (`cluster.zk.client.Op` has it)."""

    @property
    def kind(self) -> str: ...
    @property
    def path(self) -> str: ...
    @property
    def data(self) -> bytes: ...
    @property
    def version(self) -> int: ...


def serializable(ops: Sequence[MultiOp]) -> bool:
    """Whether every operation is one this module packs (no creates)."""
    return all(op.kind in _OPCODES for op in ops)


def serialize(ops: Sequence[MultiOp], chroot: str = "") -> bytes:
    """The body of a multi request of `ops`, each path (absolute and normal, as `znodes` makes them)
    under `chroot` (the session's, as `ConnectString.chroot` holds it: "" or "/a/b")."""
    parts: list[bytes] = []
    append = parts.append
    pack_int = INT.pack
    for op in ops:
        opcode = _OPCODES[op.kind]
        path = (chroot + op.path).encode()
        append(MULTI_HEADER.pack(opcode, False, -1))
        append(pack_int(len(path)))
        append(path)
        if opcode == OP_SET_DATA:
            append(pack_int(len(op.data)))
            append(op.data)
        append(pack_int(op.version))
    append(MULTI_DONE)
    return b"".join(parts)


class SerializedMulti(Transaction):  # type: ignore[misc]  # kazoo is untyped
    """kazoo's multi request with its body already serialized (`serialize` above)."""

    body: bytes

    def __new__(cls, body: bytes) -> SerializedMulti:
        request: SerializedMulti = super().__new__(cls, ())
        request.body = body
        return request

    def serialize(self) -> bytes:
        return self.body

    def __repr__(self) -> str:
        return f"SerializedMulti({len(self.body)} bytes)"


def commit_async(client: Any, body: bytes) -> Any:
    """Send a serialized multi on a kazoo client's session; returns kazoo's async result (the list of
    per-operation results, as `TransactionRequest.commit_async` gives)."""
    return call_async(client, SerializedMulti(body))  # what TransactionRequest.commit_async does
