"""Bulk reads on a raw ZooKeeper connection, for loading a whole cluster's state fast.

kazoo's async API costs about 0.5 ms of Python per request on this machine (~2-4k reads/s), and one
ZooKeeper server answers ~13k single reads/s on a pipelined connection. A controller failover reads
every partition's state znode (100k of them in a big cluster), so this module speaks just enough of
ZooKeeper's jute protocol to send many reads in one `multiRead` request (ZooKeeper 3.6+: ~230k
reads/s here, one round trip per thousand znodes), falling back to a window of pipelined
GetData/GetChildren requests on older servers:

    frame    := int32 length, payload
    connect  := int32 protocolVersion, int64 lastZxidSeen, int32 timeOut, int64 sessionId,
                buffer passwd, bool readOnly
    request  := int32 xid, int32 opcode, ustring path, bool watch        (GetData 4, GetChildren 8)
    reply    := int32 xid, int64 zxid, int32 err, [body]
    multiRead:= int32 xid, int32 22, { header(int32 opcode, bool done=false, int32 -1), path, bool }*,
                header(-1, true, -1)
    answer   := reply head, { header(opcode or -1 for an error, false, err), body or int32 err }*, header(-1, true, -1)
    getData  := buffer data, Stat
    Stat     := int64 czxid, mzxid, ctime, mtime; int32 version, cversion, aversion;
                int64 ephemeralOwner; int32 dataLength, numChildren; int64 pzxid

It opens its own short-lived read-only-use session (no watches), so it never disturbs the kazoo
session that owns the caller's ephemeral znodes and watches. Reads are as consistent as any
ZooKeeper reads on one session: each sees a state at least as new as the previous one.
"""

from __future__ import annotations

import contextlib
import socket
import struct
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from kafkaops.cluster.common import errors
from kafkaops.cluster.common.errors import ZooKeeperError, ZooKeeperUnreachableError

OP_GET_DATA = 4
OP_GET_CHILDREN = 8
OP_MULTI_READ = 22
OP_ERROR = -1
OP_CLOSE = -11
ERR_OK = 0
ERR_NO_NODE = -101

INT = struct.Struct(">i")
_REQUEST_HEADER = struct.Struct(">ii")
_REPLY_HEADER = struct.Struct(">iqi")
_STAT = struct.Struct(">qqqqiiiqiiq")
MULTI_HEADER = struct.Struct(">i?i")
"""A multi's (or multiRead's) per-operation header: opcode, done, err (the packed multis use it too)."""
MULTI_DONE = MULTI_HEADER.pack(-1, True, -1)
"""The header that ends a multi."""
_MULTI_OP = struct.Struct(">i?ii")
"""A multiRead op's header with the length of the path after it; in the answer, a GetData result's header
with its data length (an error result's code sits at the same place)."""
_STAT_VERSION = struct.calcsize(">qqqq")
"""Where a Stat's `version` is (`_STAT`'s fifth field): after czxid, mzxid, ctime and mtime."""
ERR_UNIMPLEMENTED = -6
_CONNECT_REQUEST = struct.Struct(">iqiqi16s?")
_CONNECT_RESPONSE_HEAD = struct.Struct(">iiqi")

_Result = tuple[str, int, memoryview, int]
"""One read's answer: path, error code, the reply it is in, and where its body starts."""

WINDOW = 512
"""Requests in flight at once: below the server's `globalOutstandingLimit` (1000) throttle."""
MULTI_READ_OPS = 1000
"""Reads per multiRead: its request stays far below `jute.maxbuffer` (1 MiB)."""


@dataclass(frozen=True)
class ConnectString:
    """Kafka's `zookeeper.connect`: `host:port,host:port/chroot`."""

    hosts: str
    chroot: str

    def __str__(self) -> str:
        return self.hosts + self.chroot


def parse_connect_string(text: str) -> ConnectString:
    """Split and check a connect string; the chroot (if any) starts at the first `/`.

    Raises InvalidArgumentError for an empty string, a host without a numeric port, or a chroot
    that is not an absolute ZooKeeper path.
    """
    text = text.strip()
    hosts, slash, chroot = text.partition("/")
    chroot = slash + chroot
    if not hosts:
        raise errors.InvalidArgumentError(f"Invalid ZooKeeper connect string '{text}': no host")
    for host in hosts.split(","):
        name, colon, port = host.strip().rpartition(":")
        if not colon or not name or not port.isdigit() or not 0 < int(port) < 65536:
            raise errors.InvalidArgumentError(f"Invalid ZooKeeper connect string '{text}': '{host}' is not host:port")
    chroot = chroot.rstrip("/")
    if "//" in chroot:
        raise errors.InvalidArgumentError(f"Invalid ZooKeeper connect string '{text}': bad chroot '{chroot}'")
    return ConnectString(hosts, chroot)


@dataclass(frozen=True)
class Stat:
    czxid: int
    mzxid: int
    ctime: int
    mtime: int
    version: int
    cversion: int
    aversion: int
    ephemeral_owner: int
    data_length: int
    num_children: int
    pzxid: int


class PipelinedReader:
    """One raw ZooKeeper session used only for bulk reads. Not thread-safe; close it when done."""

    def __init__(
        self, connect: str, timeout_s: float = 15.0, session_timeout_ms: int = 30_000, last_zxid_seen: int = 0
    ) -> None:
        """`last_zxid_seen`: a server that has not yet applied that transaction refuses the session (as it
        refuses a client moving to it from a server further ahead), so every read on this session sees
        at least what the session that saw it had seen: pass another session's last zxid to read that
        session's own writes here."""
        parsed = parse_connect_string(connect)
        self._chroot = parsed.chroot
        self._sock = self._connect(parsed.hosts, timeout_s, session_timeout_ms, last_zxid_seen)
        self._buffer = bytearray()
        self._xid = 0
        self._multi_read: bool | None = None  # unknown until the server answers one

    @staticmethod
    def _connect(hosts: str, timeout_s: float, session_timeout_ms: int, last_zxid_seen: int) -> socket.socket:
        last_error: OSError | None = None
        for host in hosts.split(","):
            name, _, port = host.strip().rpartition(":")
            try:
                sock = socket.create_connection((name, int(port)), timeout=timeout_s)
            except OSError as error:
                last_error = error
                continue
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            body = _CONNECT_REQUEST.pack(0, last_zxid_seen, session_timeout_ms, 0, 16, b"\0" * 16, False)
            try:
                sock.sendall(INT.pack(len(body)) + body)
                (length,) = INT.unpack(_recv_exactly(sock, 4))
                response = _recv_exactly(sock, length)
            except (OSError, ZooKeeperError) as error:  # a server behind last_zxid_seen closes the connection
                sock.close()
                last_error = OSError(str(error))
                continue
            _, negotiated_timeout, session_id, _ = _CONNECT_RESPONSE_HEAD.unpack_from(response)
            if negotiated_timeout <= 0 or session_id == 0:
                sock.close()
                continue  # the server refused the session (e.g. not serving yet)
            return sock
        raise ZooKeeperUnreachableError(f"Timed out waiting for connection while in state: CONNECTING ({last_error})")

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self._sock.sendall(_frame(_REQUEST_HEADER.pack(self._next_xid(), OP_CLOSE)))
        self._sock.close()

    def __enter__(self) -> PipelinedReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def get_data_many(
        self, paths: Sequence[str], ops_per_request: int = MULTI_READ_OPS
    ) -> list[tuple[bytes, Stat] | None]:
        """`(data, stat)` of each path, in order; None where the znode does not exist.

        Lower `ops_per_request` for big znodes (topic assignments) so an answer stays small.
        """
        results: list[tuple[bytes, Stat] | None] = []
        for path, err, body, offset in self._read(paths, OP_GET_DATA, ops_per_request):
            if err == ERR_NO_NODE:
                results.append(None)
                continue
            _check(err, path)
            (length,) = INT.unpack_from(body, offset)
            offset += 4
            data = b"" if length < 0 else bytes(body[offset : offset + length])
            offset += max(length, 0)
            results.append((data, Stat(*_STAT.unpack_from(body, offset))))
        return results

    def get_data_and_versions(
        self, paths: Sequence[str], ops_per_request: int = MULTI_READ_OPS
    ) -> list[tuple[bytes, int] | None]:
        """`(data, version)` of each path, in order; None where the znode does not exist. What a controller
        loading the cluster needs: each multiRead answer is walked once, and no Stat is built."""
        results: list[tuple[bytes, int] | None] = []
        if self._may_multi_read():
            for chunk, reply in self._multi_read_replies(paths, OP_GET_DATA, ops_per_request):
                results += _data_and_versions(reply, chunk)
            if self._may_multi_read():
                return results
        return [None if entry is None else (entry[0], entry[1].version) for entry in self.get_data_many(paths)]

    def get_data_and_versions_with_zxids(
        self, paths: Sequence[str], ops_per_request: int = MULTI_READ_OPS
    ) -> list[tuple[Sequence[str], list[tuple[bytes, int] | None], int]] | None:
        """Per multiRead answer: its paths, their `(data, version)` (None where no znode is), and the zxid in
        its header, which the server takes before it reads (`FinalRequestProcessor`): a change made after
        the read has a larger one, so a SetWatches from it misses none. None if the server has no
        multiRead (before ZooKeeper 3.6): then nothing says when each pipelined read was made."""
        if not self._may_multi_read():
            return None
        answers = []
        for chunk, reply in self._multi_read_replies(paths, OP_GET_DATA, ops_per_request):
            answers.append((chunk, _data_and_versions(reply, chunk), _REPLY_HEADER.unpack_from(reply)[1]))
        return answers if self._may_multi_read() else None

    def get_children_many(self, paths: Sequence[str]) -> list[list[str] | None]:
        """Children of each path, in order; None where the znode does not exist."""
        results: list[list[str] | None] = []
        for path, err, body, offset in self._read(paths, OP_GET_CHILDREN, MULTI_READ_OPS):
            if err == ERR_NO_NODE:
                results.append(None)
                continue
            _check(err, path)
            (count,) = INT.unpack_from(body, offset)
            offset += 4
            children = []
            for _ in range(max(count, 0)):
                (length,) = INT.unpack_from(body, offset)
                offset += 4
                children.append(bytes(body[offset : offset + length]).decode("utf-8"))
                offset += length
            results.append(children)
        return results

    def _read(self, paths: Sequence[str], opcode: int, ops_per_request: int) -> Iterator[_Result]:
        """Yield `(path, err, reply, body offset)` in request order, by multiRead where the server has it."""
        if self._may_multi_read():
            for chunk, reply in self._multi_read_replies(paths, opcode, ops_per_request):
                yield from _results(reply, chunk)
            if self._may_multi_read():
                return
        for replies in self._pipeline(paths, opcode):
            for path, (err, body, offset) in replies:
                yield path, err, body, offset

    def _may_multi_read(self) -> bool:
        """False once the server has refused a multiRead (a server before ZooKeeper 3.6); a method, as
        `_multi_read_replies` finds it out while the caller loops."""
        return self._multi_read is not False

    def _multi_read_replies(
        self, paths: Sequence[str], opcode: int, ops_per_request: int
    ) -> Iterator[tuple[Sequence[str], memoryview]]:
        """Each run of `ops_per_request` paths with its multiRead answer, in order; nothing if the server
        turns out to have no multiRead (`_multi_read` then says so)."""
        for begin in range(0, len(paths), ops_per_request):
            chunk = paths[begin : begin + ops_per_request]
            reply = self._multi_read_reply(chunk, opcode)
            if reply is None:
                if begin:
                    raise ZooKeeperError("ZooKeeper stopped answering multiRead")
                return
            yield chunk, reply

    def _multi_read_reply(self, paths: Sequence[str], opcode: int) -> memoryview | None:
        """Send one multiRead and return its answer, checked up to its results; None if the server does not
        implement it (and from then on, `_multi_read` says so)."""
        xid = self._next_xid()
        pack = _MULTI_OP.pack
        full = self._full_path
        ops = [full(path).encode() for path in paths]
        request = b"".join(
            [
                _REQUEST_HEADER.pack(xid, OP_MULTI_READ),
                *(pack(opcode, False, -1, len(op)) + op + b"\0" for op in ops),
                MULTI_DONE,
            ]
        )
        self._sock.sendall(_frame(request))
        reply = self._read_frame()
        reply_xid, _, err = _REPLY_HEADER.unpack_from(reply)
        if reply_xid != xid:
            raise ZooKeeperError(f"ZooKeeper answered xid {reply_xid} where {xid} was expected")
        if err == ERR_UNIMPLEMENTED:
            self._multi_read = False
            return None
        self._multi_read = True
        _check(err, paths[0] if paths else "/")
        return reply

    def _full_path(self, path: str) -> str:
        return self._chroot + path if path != "/" or not self._chroot else self._chroot

    def _pipeline(self, paths: Sequence[str], opcode: int) -> Iterator[list[tuple[str, tuple[int, memoryview, int]]]]:
        """Yield, window by window, `(path, (err, reply, body offset))` in request order."""
        for start in range(0, len(paths), WINDOW):
            window = paths[start : start + WINDOW]
            first_xid = self._xid + 1
            requests = bytearray()
            for path in window:
                encoded = self._full_path(path).encode()
                payload = _REQUEST_HEADER.pack(self._next_xid(), opcode) + INT.pack(len(encoded)) + encoded + b"\0"
                requests += INT.pack(len(payload)) + payload
            self._sock.sendall(requests)
            replies: list[tuple[str, tuple[int, memoryview, int]]] = []
            for i, path in enumerate(window):
                reply = self._read_frame()
                xid, _, err = _REPLY_HEADER.unpack_from(reply)
                if xid != first_xid + i:
                    raise ZooKeeperError(f"ZooKeeper answered xid {xid} where {first_xid + i} was expected")
                replies.append((path, (err, reply, _REPLY_HEADER.size)))
            yield replies

    def _next_xid(self) -> int:
        self._xid += 1
        return self._xid

    def _read_frame(self) -> memoryview:
        while True:
            if len(self._buffer) >= 4:
                (length,) = INT.unpack_from(self._buffer)
                if len(self._buffer) >= 4 + length:
                    frame = memoryview(bytes(self._buffer[4 : 4 + length]))
                    del self._buffer[: 4 + length]
                    return frame
            chunk = self._sock.recv(1 << 20)
            if not chunk:
                raise ZooKeeperError("ZooKeeper closed the connection during a pipelined read")
            self._buffer += chunk


def _results(reply: memoryview, paths: Sequence[str]) -> list[_Result]:
    """Each path's `(path, err, reply, body offset)` in one multiRead answer."""
    offset = _REPLY_HEADER.size
    results: list[_Result] = []
    for path in paths:
        kind, done, _ = MULTI_HEADER.unpack_from(reply, offset)
        offset += MULTI_HEADER.size
        if done:
            raise ZooKeeperError("ZooKeeper's multiRead answer ended early")
        if kind == OP_ERROR:
            (code,) = INT.unpack_from(reply, offset)
            offset += 4
            results.append((path, code, reply, offset))
            continue
        results.append((path, ERR_OK, reply, offset))
        offset = _skip_result(reply, offset, kind)
    return results


def _data_and_versions(reply: memoryview, paths: Sequence[str]) -> list[tuple[bytes, int] | None]:
    """The GetData results of one multiRead answer as `(data, version)`, None for a missing znode."""
    results: list[tuple[bytes, int] | None] = []
    offset = _REPLY_HEADER.size
    header, header_size, stat_size = _MULTI_OP.unpack_from, _MULTI_OP.size, _STAT.size
    version_of = INT.unpack_from
    for path in paths:
        kind, done, _, length = header(reply, offset)
        offset += header_size
        if done:
            raise ZooKeeperError("ZooKeeper's multiRead answer ended early")
        if kind == OP_ERROR:  # `length` is the error code
            if length == ERR_NO_NODE:
                results.append(None)
                continue
            _check(length, path)
        end = offset + max(length, 0)
        results.append((bytes(reply[offset:end]), version_of(reply, end + _STAT_VERSION)[0]))
        offset = end + stat_size
    return results


def _skip_result(reply: memoryview, offset: int, kind: int) -> int:
    """The offset after one multiRead result body (GetData: data + Stat; GetChildren: a string list)."""
    length: int
    if kind == OP_GET_DATA:
        (length,) = INT.unpack_from(reply, offset)
        return offset + 4 + max(length, 0) + _STAT.size
    (count,) = INT.unpack_from(reply, offset)
    offset += 4
    for _ in range(max(count, 0)):
        (length,) = INT.unpack_from(reply, offset)
        offset += 4 + length
    return offset


def _frame(payload: bytes) -> bytes:
    return INT.pack(len(payload)) + payload


def _check(err: int, path: str) -> None:
    if err != ERR_OK:
        raise ZooKeeperError(f"ZooKeeper error {err} reading {path}")


def _recv_exactly(sock: socket.socket, n: int) -> bytes:
    chunks = bytearray()
    while len(chunks) < n:
        chunk = sock.recv(n - len(chunks))
        if not chunk:
            raise ZooKeeperError("ZooKeeper closed the connection during the handshake")
        chunks += chunk
    return bytes(chunks)
