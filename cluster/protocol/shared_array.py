"""An array value several requests carry, encoded once (not in the codec's compiled modules: mypyc compiles
no subclass of a builtin type)."""

from __future__ import annotations

from typing import Any


class SharedArray(list[Any]):
    """An array value that several requests carry (an UpdateMetadata's partition states, the same for
    every broker): the first encode of it at a version is kept and the others reuse those bytes. It must
    not change once a request holding it is queued."""

    __slots__ = ("encoded",)

    def __init__(self, items: Any = ()) -> None:
        super().__init__(items)
        self.encoded: dict[Any, bytes] = {}
        """The bytes of each array type (a version's element schema) it was encoded as."""
