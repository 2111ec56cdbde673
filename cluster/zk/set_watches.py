"""ZooKeeper's SetWatches request on a kazoo session: many one-shot watches in one request.

A watch is usually left by the read that returns the znode, one request per znode; for thousands of
znodes (a controller watching every moving partition's state) that is kazoo's per-request cost on the
caller's and the connection's threads. Here the znodes are read elsewhere (multiRead on a bulk
connection, `pipelined`), and one SetWatches per multiRead answer leaves the watches, from that answer's
zxid: the server fires at once for a znode changed since (and for a data watch on a znode gone), and
otherwise keeps the watch (ZooKeeper's `DataTree.setWatches`). It is the request ZooKeeper's Java client
sends on reconnect; kazoo has none (it drops its watches on reconnect instead).

    SetWatches := int64 relativeZxid, vector<ustring> dataWatches, existWatches, childWatches  (opcode 101)

The watchers are put in kazoo's table when kazoo's connection thread serializes the request, just before
it is written, so that an event the server fires while it sets them (before its answer) finds them. An
event that pops them earlier (a watch left by an older read of the same znode) calls them too: a watcher
that reads and watches again whenever it is called leaves no znode unwatched.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Sequence
from typing import Any

from kazoo.protocol.states import WatchedEvent

from kafkaops.cluster.zk.pipelined import INT

OP_SET_WATCHES = 101
_ZXID = struct.Struct(">q")


class SetWatchesRequest:
    """A kazoo request (sent with `KazooClient._call`) that leaves `watch` on each path: a data watch on
    `data_paths` (znodes that existed when read), an exists watch on `exist_paths` (znodes that did not).
    Paths are full ones (under the session's chroot), as kazoo keys its watchers."""

    type = OP_SET_WATCHES

    def __init__(
        self,
        client: Any,
        relative_zxid: int,
        data_paths: Sequence[str],
        exist_paths: Sequence[str],
        watch: Callable[[WatchedEvent], object],
    ) -> None:
        self._client = client
        self._relative_zxid = relative_zxid
        self._data_paths = data_paths
        self._exist_paths = exist_paths
        self._watch = watch  # not `watcher`: kazoo would register that one itself, for a `path` this has not

    def serialize(self) -> bytes:  # on kazoo's connection thread, just before the request is written
        watchers = self._client._data_watchers  # kazoo keeps exists and data watchers together
        for path in (*self._data_paths, *self._exist_paths):
            watchers[path].add(self._watch)
        return b"".join(
            [_ZXID.pack(self._relative_zxid), _strings(self._data_paths), _strings(self._exist_paths), _strings(())]
        )

    def deserialize(self, buffer: bytes, offset: int) -> bool:
        return True  # the answer is its header only

    def __repr__(self) -> str:
        return f"SetWatches({len(self._data_paths)} data, {len(self._exist_paths)} exists)"


def _strings(paths: Sequence[str]) -> bytes:
    parts = [INT.pack(len(paths))]
    for path in paths:
        encoded = path.encode()
        parts.append(INT.pack(len(encoded)))
        parts.append(encoded)
    return b"".join(parts)
