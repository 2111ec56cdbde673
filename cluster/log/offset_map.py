"""The log cleaner's map from a record key's hash to the latest offset seen for it (Kafka's
`SkimpyOffsetMap`).

Kafka hashes each key with MD5 into a 16-byte digest and stores digest + offset (24 bytes) in a fixed
byte buffer of `log.cleaner.dedupe.buffer.size / log.cleaner.threads`; `slots` is what fits. Two keys
with the same digest are one key to it (the chance is MD5's). Here the same digests key a dict, which
grows as entries come and may hold up to `slots` of them: the bound is Kafka's, the memory per entry is
Python's (about 5 times Kafka's 24 bytes). The cleaner stops filling the map at `slots * load factor`
entries, as Kafka does, and cleans only up to the last offset it mapped.

Not thread-safe: one per cleaner thread.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable

_HASH_SIZE = 16  # MD5
_OFFSET_SIZE = 8


class OffsetMap:
    def __init__(self, memory: int, hash_algorithm: str = "MD5") -> None:
        try:
            probe = hashlib.new(hash_algorithm.lower().replace("-", ""))
        except ValueError:
            raise ValueError(f"Unknown hash algorithm {hash_algorithm}") from None
        self.hash_size = probe.digest_size
        self.slots = memory // (self.hash_size + _OFFSET_SIZE)
        self._digest: Callable[[bytes], bytes] = _digester(hash_algorithm)
        self._offsets: dict[bytes, int] = {}
        self.latest_offset = -1
        """The last offset the map was told of (put or update_latest_offset), -1 when cleared."""

    def __len__(self) -> int:
        return len(self._offsets)

    def put(self, key: bytes, offset: int) -> None:
        """Remember `offset` as the latest for `key`. Raises ValueError when every slot is taken."""
        digest = self._digest(key)
        if len(self._offsets) >= self.slots and digest not in self._offsets:
            raise ValueError(f"Attempted to add a new entry to a full offset map, entries: {len(self._offsets)}")
        self._offsets[digest] = offset
        self.latest_offset = offset

    def get(self, key: bytes) -> int:
        """The latest offset put for `key`, or -1."""
        return self._offsets.get(self._digest(key), -1)

    def update_latest_offset(self, offset: int) -> None:
        self.latest_offset = offset

    def clear(self) -> None:
        self._offsets.clear()
        self.latest_offset = -1

    @property
    def utilization(self) -> float:
        return len(self._offsets) / self.slots if self.slots else 1.0


def _digester(hash_algorithm: str) -> Callable[[bytes], bytes]:
    name = hash_algorithm.lower().replace("-", "")
    if name == "md5":
        md5 = hashlib.md5

        def digest(key: bytes) -> bytes:
            return md5(key, usedforsecurity=False).digest()

        return digest

    def generic(key: bytes) -> bytes:
        return hashlib.new(name, key).digest()

    return generic
