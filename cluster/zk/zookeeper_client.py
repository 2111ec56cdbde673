"""The kazoo session wrapper (Kafka's `ZooKeeperClient`): a started session on one connect string, its
reads and writes of raw znodes, and the waiting out of a lost connection.

Reads of many znodes are pipelined (all requests sent, then all answers awaited), so reading a thousand
znodes costs one round trip's latency, not a thousand. A connection lost under a request (the ZooKeeper
server the session talks to went away) is waited out and the request made again, as Kafka's
`retryRequestUntilConnected`, for reads and for the writes whose lost answer is told apart
(`until_connected`); the other writes raise it to their caller. `client.KafkaZkClient` puts Kafka's layout
on top.

Threading: a client may be used from any thread; kazoo serialises requests on its own thread.
"""

from __future__ import annotations

import dataclasses
import functools
import logging
import warnings
from collections.abc import Callable, Iterable, Sequence
from contextlib import suppress
from typing import Any, Self, TypeVar

from kazoo.client import KazooClient
from kazoo.exceptions import NodeExistsError, NoNodeError, RolledBackError
from kazoo.handlers.threading import KazooTimeoutError
from kazoo.protocol.states import WatchedEvent, ZnodeStat
from kazoo.retry import KazooRetry
from kazoo.security import ACL

from kafkaops.cluster.common import errors
from kafkaops.cluster.zk import znodes
from kafkaops.cluster.zk.acls import DigestCredentials, acls_for
from kafkaops.cluster.zk.handler import PollingHandler
from kafkaops.cluster.zk.pipelined import parse_connect_string

DEFAULT_SESSION_TIMEOUT_MS = 30_000
DEFAULT_CONNECTION_TIMEOUT_MS = 15_000

_T = TypeVar("_T")
_V = TypeVar("_V")


@dataclasses.dataclass(frozen=True)
class Op:
    """One operation of a ZooKeeper multi."""

    kind: str  # "create", "set", "delete", "check"
    path: str
    data: bytes = b""
    version: int = -1
    mode: znodes.CreateMode = znodes.CreateMode.PERSISTENT

    @staticmethod
    def create(path: str, data: bytes, mode: znodes.CreateMode = znodes.CreateMode.PERSISTENT) -> Op:
        return Op("create", path, data, mode=mode)

    @staticmethod
    def set(path: str, data: bytes, version: int = -1) -> Op:
        return Op("set", path, data, version)

    @staticmethod
    def delete(path: str, version: int = -1) -> Op:
        return Op("delete", path, version=version)

    @staticmethod
    def check(path: str, version: int) -> Op:
        return Op("check", path, version=version)


class ZkClient:
    """A started kazoo session on one connect string (chroot created if absent, as brokers do)."""

    def __init__(
        self,
        connect: str,
        session_timeout_ms: int = DEFAULT_SESSION_TIMEOUT_MS,
        connection_timeout_ms: int = DEFAULT_CONNECTION_TIMEOUT_MS,
        credentials: DigestCredentials | None = None,
        set_acl: bool = False,
    ) -> None:
        """`credentials` authenticate the session (digest); with `set_acl` every znode this client
        creates is writable by that identity only (acls.py). Raises InvalidArgumentError for `set_acl`
        without credentials."""
        self.connect_string = parse_connect_string(connect)
        self._connection_timeout_s = connection_timeout_ms / 1000
        self._session_timeout_s = session_timeout_ms / 1000
        self.credentials = credentials
        self.set_acl = set_acl
        acls_for("/", credentials, set_acl)  # refuse set_acl without credentials before connecting
        self._zk = self._start(str(self.connect_string))

    def acl(self, path: str) -> list[ACL]:
        """The ACL a znode created at `path` gets."""
        return acls_for(path, self.credentials, self.set_acl)

    def _start(self, hosts: str) -> KazooClient:
        zk = KazooClient(
            hosts=hosts,
            timeout=self._session_timeout_s,
            handler=PollingHandler(),
            auth_data=[self.credentials.auth_data] if self.credentials else None,
            logger=_QUIET_LOGGER,
        )
        try:
            zk.start(timeout=self._connection_timeout_s)
        except KazooTimeoutError:
            zk.stop()
            zk.close()
            # Kafka's ZooKeeperClientTimeoutException text
            raise errors.ZooKeeperUnreachableError(
                "Timed out waiting for connection while in state: CONNECTING"
            ) from None
        chrooted = self.connect_string.chroot and hosts == str(self.connect_string)
        if chrooted and zk.exists("/") is None:
            zk.stop()
            zk.close()
            root = self._start(self.connect_string.hosts)
            try:
                ensure_path(root, self.connect_string.chroot, self.acl)
            finally:
                root.stop()
                root.close()
            return self._start(hosts)
        return zk

    @property
    def kazoo(self) -> KazooClient:
        """The underlying kazoo client, for watches (callbacks must only enqueue, never block)."""
        return self._zk

    def close(self) -> None:
        self._zk.stop()
        self._zk.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def until_connected(self, request: Callable[[], _T], *, through_expiry: bool = False) -> _T:
        """`request()`, tried again while the connection is lost under it, as Kafka's
        `retryRequestUntilConnected`: when the ZooKeeper server this session talks to goes away, the
        requests in flight fail with ConnectionLoss while kazoo moves the session to another server (those
        sent meanwhile wait for it). Waits up to a session and a connection time-out, then raises
        RetryFailedError; a closed client raises at once. `through_expiry`: a request made again on the
        session that replaces an expired one (only for those a new session may make, such as a broker's
        registration); by default SessionExpiredError is the caller's, as in Kafka.
        """
        until_connected = KazooRetry(
            max_tries=-1,
            delay=0.1,
            max_delay=1.0,
            ignore_expire=through_expiry,
            deadline=self._session_timeout_s + self._connection_timeout_s,
            sleep_func=self._zk.handler.sleep_func,
        )
        result: _T = until_connected(request)
        return result

    # --- reads (each tried again until connected: reading twice changes nothing) ---------------

    def get(self, path: str) -> tuple[bytes, ZnodeStat] | None:
        try:
            data, stat = self.until_connected(lambda: self._zk.get(path))
        except NoNodeError:
            return None
        return data or b"", stat

    def exists(self, path: str) -> bool:
        return self.until_connected(lambda: self._zk.exists(path)) is not None

    def get_children(self, path: str) -> list[str] | None:
        try:
            return list(self.until_connected(lambda: self._zk.get_children(path)))
        except NoNodeError:
            return None

    def get_many(
        self, paths: Iterable[str], watch: Callable[[WatchedEvent], object] | None = None
    ) -> dict[str, tuple[bytes, ZnodeStat] | None]:
        """Pipelined reads: every request is sent before any answer is awaited. `watch` (one-shot, called
        on kazoo's thread) is left on each node that exists, set by the read that returns its data."""
        return self._read_many(
            paths, lambda path: self._zk.get_async(path, watch=watch), lambda answer: (answer[0] or b"", answer[1])
        )

    def watch_many(self, paths: Iterable[str], watch: Callable[[WatchedEvent], object]) -> None:
        """Leave the one-shot `watch` (called on kazoo's thread) on each path, whether its node exists or
        not (it then fires when it is created): pipelined `exists` requests, no data read."""
        self._read_many(paths, lambda path: self._zk.exists_async(path, watch=watch), lambda answer: answer)

    def get_children_many(self, paths: Iterable[str]) -> dict[str, list[str] | None]:
        return self._read_many(paths, self._zk.get_children_async, list)

    def _read_many(
        self, paths: Iterable[str], send: Callable[[str], Any], value: Callable[[Any], _V]
    ) -> dict[str, _V | None]:
        """Each path's answer to `send` as `value` makes it (None for a missing znode): every request sent
        before any answer is awaited, all of them again if the connection is lost under them."""
        paths = list(paths)

        def read() -> dict[str, _V | None]:
            pending = [(path, send(path)) for path in paths]
            result: dict[str, _V | None] = {}
            for path, answer in pending:
                try:
                    result[path] = value(answer.get())
                except NoNodeError:
                    result[path] = None
            return result

        return self.until_connected(read)

    # --- writes ------------------------------------------------------------------------------

    def ensure_paths(self, paths: Iterable[str]) -> None:
        """Create persistent container znodes (null data) and their parents if missing (tried again until
        connected: a node created by a lost request is found there)."""
        for path in paths:
            self.until_connected(functools.partial(ensure_path, self._zk, path, self.acl))

    def create(self, path: str, data: bytes, mode: znodes.CreateMode = znodes.CreateMode.PERSISTENT) -> str:
        return str(self._zk.create(path, data, acl=self.acl(path), ephemeral=mode.ephemeral, sequence=mode.sequential))

    def multi(self, ops: Sequence[Op]) -> list[Any]:
        """Run `ops` atomically; raise the kazoo error of the first operation that failed.

        kazoo's transaction does not raise on failure: every result is inspected here.
        """
        transaction = self._zk.transaction()
        for op in ops:
            add_to_transaction(transaction, op, self.acl)
        results: list[Any] = transaction.commit()
        failure = first_failure(results)
        if failure is not None:
            raise failure
        return list(results)


# The chroot is created on connect (as Kafka brokers do), so kazoo's warning about it is noise.
warnings.filterwarnings("ignore", message="No chroot path exists", category=UserWarning)


def call_async(zk: KazooClient, request: Any) -> Any:
    """Send a request kazoo has no method for (a serialized multi, a SetWatches) on the session, as kazoo's
    own `*_async` methods send theirs; returns kazoo's async result."""
    answer = zk.handler.async_result()
    zk._call(request, answer)
    return answer


def ensure_path(zk: KazooClient, path: str, acl: Callable[[str], list[ACL]]) -> None:
    """kazoo's `ensure_path`, but each missing ancestor gets its own path's ACL (sensitive roots differ)."""
    if zk.exists(path) is not None:
        return
    prefix = ""
    for part in path.strip("/").split("/"):
        prefix = f"{prefix}/{part}"
        with suppress(NodeExistsError):
            if zk.exists(prefix) is None:
                zk.create(prefix, b"", acl=acl(prefix))


def add_to_transaction(transaction: Any, op: Op, acl: Callable[[str], list[ACL]]) -> None:
    if op.kind == "create":
        transaction.create(op.path, op.data, acl=acl(op.path), ephemeral=op.mode.ephemeral, sequence=op.mode.sequential)
    elif op.kind == "set":
        transaction.set_data(op.path, op.data, version=op.version)
    elif op.kind == "delete":
        transaction.delete(op.path, version=op.version)
    elif op.kind == "check":
        transaction.check(op.path, op.version)
    else:  # pragma: no cover - Op's constructors only make the four kinds
        raise ValueError(f"unknown multi operation {op.kind}")


def first_failure(results: Sequence[Any]) -> Exception | None:
    """kazoo reports a failed multi as results: the failing op's error, RolledBackError for the rest."""
    for result in results:
        if isinstance(result, Exception) and not isinstance(result, RolledBackError):
            return result
    return None


_QUIET_LOGGER = logging.getLogger("kafkaops.zk.kazoo")
"""kazoo logs every failed connection attempt; an operator only needs the final verdict."""
_QUIET_LOGGER.addHandler(logging.NullHandler())
_QUIET_LOGGER.propagate = False
