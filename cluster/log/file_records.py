"""A slice of a segment's `.log` file that a Fetch response sends without reading it (Kafka's `FileRecords`
as `FileRecords.slice` returns it, sent by `writeTo` with `FileChannel.transferTo`).

The slice holds its own descriptor, a `dup` of the segment's: the segment may be closed, deleted by
retention or replaced by the cleaner between the read and the send, and the bytes stay readable (the file
lives on until its last descriptor closes), as Kafka's slice keeps its channel. What it does not survive is
a truncation of the file itself (a leader becoming follower and truncating): then fewer bytes are left than
the response promised, and the send fails (`read_bytes` raises CorruptMessageError, a short `sendfile`
too), which closes the connection, as Kafka's `writeTo` fails with "Size of FileRecords ... has been
truncated during write".

The descriptor is closed by `close()`, or when the slice is dropped (a fetch answered empty, a connection
gone before its response): a slice is made only for a response about to be sent, so none lives long.
"""

from __future__ import annotations

import os

from kafkaops.cluster.common.errors import CorruptMessageError
from kafkaops.cluster.protocol.records_send import TransferableRecords


class FileRecords(TransferableRecords):
    """`size` bytes of whole batches at `position` of a segment's file (never empty)."""

    __slots__ = ("_fd", "_position", "size")

    mode = "rb"
    """What asyncio's `loop.sendfile` checks of a file (a binary one)."""

    def __init__(self, fd: int, position: int, size: int) -> None:
        self._fd = -1
        self._fd = os.dup(fd)
        self._position = position
        self.size = size

    @property
    def position(self) -> int:
        return self._position

    def __len__(self) -> int:
        return self.size

    def __repr__(self) -> str:
        return f"FileRecords(position={self._position}, size={self.size})"

    def fileno(self) -> int:
        """Raises ValueError once closed."""
        if self._fd < 0:
            raise ValueError("FileRecords is closed")
        return self._fd

    def seek(self, offset: int, whence: int = 0) -> int:
        """What `loop.sendfile` calls after sending (to move a file object's position): a slice is read by
        position only, so there is nothing to move."""
        return offset

    def read_bytes(self) -> bytes:
        parts: list[bytes] = []
        read = 0
        while read < self.size:
            data = os.pread(self.fileno(), self.size - read, self._position + read)
            if not data:
                raise CorruptMessageError(
                    f"Size of FileRecords has been truncated during write: {read} of {self.size} bytes "
                    f"left at position {self._position}"
                )
            parts.append(data)
            read += len(data)
        return parts[0] if len(parts) == 1 else b"".join(parts)

    def close(self) -> None:
        fd, self._fd = self._fd, -1
        if fd >= 0:
            os.close(fd)

    def __del__(self) -> None:
        self.close()
