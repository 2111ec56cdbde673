"""Record sets a response carries by reference, and a response as the parts the network layer writes
(Kafka's `TransferableRecords`, and its `MultiRecordsSend` of a Fetch response).

A Fetch response is mostly record bytes already on disk. Kafka never copies them through the JVM: the
response's fields are serialized into buffers and each partition's records go out with
`FileChannel.transferTo` (sendfile) from the segment, in order between them. Here the same: a RECORDS field
may hold a `TransferableRecords` (the log's `FileRecords`); the codec puts it in its output list as is
(types.py), and `response_parts` gives the encoded response as bytes joined between such slices. The
network layer sends the slices with `sendfile` where it can, and where it cannot (TLS) it reads them:
`materialize`.

    parts = [ header + fields ... size of records ][ slice of 00000000000000000000.log ][ fields ... ]

Threads: values are used by one thread at a time (the broker's event loop).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence


class TransferableRecords:
    """Whole record batches of a file, sent by the network layer without passing through Python: what a
    `sendfile` needs (`fileno()`, `position`, `len()`) and, where it cannot be used, `read_bytes()`.

    An empty slice is never made (a RECORDS field without records holds b"")."""

    __slots__ = ()

    @property
    def position(self) -> int:
        """Where the slice starts in the file."""
        raise NotImplementedError

    def __len__(self) -> int:
        raise NotImplementedError

    def fileno(self) -> int:
        raise NotImplementedError

    def read_bytes(self) -> bytes:
        """The slice's bytes (the copying path). Raises CorruptMessageError if the file no longer holds
        them all (it was truncated since the slice was taken)."""
        raise NotImplementedError

    def close(self) -> None:
        """Let go of the file once sent (idempotent)."""
        raise NotImplementedError


ResponsePart = bytes | TransferableRecords
"""A piece of an encoded response: bytes, or records sent from their file."""


def response_parts(out: Iterable[bytes | TransferableRecords]) -> list[ResponsePart]:
    """The codec's output list as parts: runs of bytes joined, each slice on its own."""
    parts: list[ResponsePart] = []
    run: list[bytes] = []
    for piece in out:
        if isinstance(piece, TransferableRecords):
            if run:
                parts.append(b"".join(run))
                run = []
            parts.append(piece)
        else:
            run.append(piece)
    if run:
        parts.append(b"".join(run))
    return parts


def has_transferable(parts: Sequence[ResponsePart]) -> bool:
    return any(isinstance(part, TransferableRecords) for part in parts)


def parts_size(parts: Iterable[ResponsePart]) -> int:
    return sum(len(part) for part in parts)


def close_parts(parts: Iterable[ResponsePart]) -> None:
    for part in parts:
        if isinstance(part, TransferableRecords):
            part.close()


def materialize(parts: Iterable[ResponsePart]) -> bytes:
    """The response as one buffer, slices read from their files (TLS, or a caller that wants bytes).
    Raises CorruptMessageError as `TransferableRecords.read_bytes`."""
    return b"".join(part if isinstance(part, bytes) else part.read_bytes() for part in parts)
