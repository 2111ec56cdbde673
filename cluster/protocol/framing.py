"""Frames on a stream: the 4-byte size prefix, its limit, and correlation-id bookkeeping.

    frame = size INT32 (bytes that follow, big-endian) | payload (request or response, messages.py)

What a server and a client need around `asyncio` streams, and nothing of either: the reader checks the
size against a limit *before* reading the body, so a peer cannot make us allocate 2 GiB with four bytes
(Kafka's `socket.request.max.bytes`, default 104857600; Kafka's InvalidReceiveException), and it tells a
clean end of stream (None) from one cut mid-frame (InvalidFrameError). A server echoes each request's
correlation id in its response (messages.encode_response) and answers in request order; a client
numbers its requests and checks that each response answers the oldest one in flight, as
kafka-python does (`kafka/protocol/parser.py`).
"""

from __future__ import annotations

import asyncio
import socket
import struct

from kafkaops.cluster.common.errors import CorrelationIdMismatchError, InvalidFrameError

from .types import Buffer, unpack

DEFAULT_MAX_REQUEST_BYTES = 104_857_600
"""Kafka's `socket.request.max.bytes` default: the largest request a broker reads."""

_SIZE = FRAME_SIZE = struct.Struct(">i")
"""The size prefix (FRAME_SIZE for a writer that sends a frame in parts)."""


def frame(payload: Buffer) -> bytes:
    """`payload` with its size prefix, for a blocking socket's `sendall`."""
    return _SIZE.pack(len(payload)) + bytes(payload)


def write_frame(writer: asyncio.StreamWriter, payload: Buffer) -> None:
    """Queue one frame on `writer` (the caller drains); two writes, so the payload is not copied."""
    writer.write(_SIZE.pack(len(payload)))
    writer.write(payload)


async def read_frame(reader: asyncio.StreamReader, max_size: int = DEFAULT_MAX_REQUEST_BYTES) -> bytes | None:
    """The next frame's payload, or None if the stream ended cleanly before a new frame began.

    Raises InvalidFrameError if the size is negative or above `max_size` (nothing more is read: the
    connection is no longer in a known state and must be closed) or if the stream ends mid-frame.
    """
    try:
        head = await reader.readexactly(4)
    except asyncio.IncompleteReadError as exc:
        if not exc.partial:
            return None
        raise InvalidFrameError(f"stream ended inside a size prefix ({len(exc.partial)} of 4 bytes)") from None
    (size,) = _SIZE.unpack(head)
    if size < 0 or size > max_size:
        raise InvalidFrameError(f"invalid frame size {size} (limit {max_size})")
    try:
        return await reader.readexactly(size)
    except asyncio.IncompleteReadError as exc:
        raise InvalidFrameError(f"stream ended {len(exc.partial)} bytes into a {size}-byte frame") from None


def read_frame_blocking(sock: socket.socket, max_size: int = DEFAULT_MAX_REQUEST_BYTES) -> bytes:
    """The next frame's payload from a blocking socket (our controller's and brokers' own calls).

    Raises InvalidFrameError for a bad size and OSError if the peer closes the connection.
    """
    (size,) = _SIZE.unpack(_recv_exactly(sock, 4))
    if size < 0 or size > max_size:
        raise InvalidFrameError(f"invalid frame size {size} (limit {max_size})")
    return _recv_exactly(sock, size)


def _recv_exactly(sock: socket.socket, n: int) -> bytes:
    chunks = bytearray()
    while len(chunks) < n:
        chunk = sock.recv(n - len(chunks))
        if not chunk:
            raise OSError("connection closed by the peer")
        chunks += chunk
    return bytes(chunks)


def request_correlation_id(payload: Buffer) -> int:
    """A request's correlation id, at payload bytes 4-7 in every header version (readable even when the
    rest of the request is not). Raises CorruptMessageError if the payload is shorter."""
    return int(unpack(_SIZE, payload, 4)[0])


class CorrelationIds:
    """A client connection's correlation ids: 0, 1, 2, ... wrapping at 2**31 (they are INT32)."""

    def __init__(self) -> None:
        self._next = 0

    def next(self) -> int:
        value = self._next
        self._next = (value + 1) & 0x7FFFFFFF
        return value


def check_correlation_id(expected: int, received: int) -> None:
    """Responses come back in request order, so anything but the oldest in-flight id is a protocol
    violation: the connection must be closed and its pending requests failed with this error."""
    if received != expected:
        raise CorrelationIdMismatchError(expected, received)
