"""Values several requests carry, encoded once: an array (`SharedArray`) or a struct (`SharedStruct`). Not in
the codec's compiled modules: mypyc compiles no subclass of a builtin type."""

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


class SharedStruct(dict[str, Any]):
    """A struct value that several requests carry (a LeaderAndIsr's partition state, the same for each
    replica's broker): its first encode with a schema is kept and the other requests reuse those bytes.
    It must not change once a request holding it is queued."""

    __slots__ = ("encoded",)

    def __init__(self, fields: Any = ()) -> None:
        super().__init__(fields)
        self.encoded: dict[Any, bytes] = {}
        """The bytes of each schema (a version's layout of the struct) it was encoded with."""
