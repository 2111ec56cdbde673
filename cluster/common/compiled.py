"""The one rule for hot paths built in place with the machine's compiler (the wire codec with mypyc, the
state-change merger's core with Cython; `.ci/setup` builds both): a build runs when it exists, no source is
newer than it (an edit or a checkout since would otherwise run old code), and KAFKAOPS_PURE_PYTHON is not
set. The pure-Python modules are the fallback, and the tests run them too."""

from __future__ import annotations

import os
from collections.abc import Iterable

PURE_PYTHON_VARIABLE = "KAFKAOPS_PURE_PYTHON"


def pure_python_forced() -> bool:
    """Whether KAFKAOPS_PURE_PYTHON asks for the pure-Python modules."""
    return bool(os.environ.get(PURE_PYTHON_VARIABLE))


def build_is_current(built: str, sources: Iterable[str]) -> bool:
    """Whether `built` exists and none of `sources` that exist is newer."""
    try:
        built_at = os.path.getmtime(built)
        return all(os.path.getmtime(source) <= built_at for source in sources if os.path.exists(source))
    except OSError:
        return False


STALE_BUILD = "the build is older than its sources; rebuild it: bash .ci/setup"


def why_pure_python(built: str, sources: Iterable[str]) -> str | None:
    """Why the pure-Python modules run instead of `built` (KAFKAOPS_PURE_PYTHON, no build, `STALE_BUILD`),
    or None when the build runs: said at a broker's start and a benchmark's, since a stale build after a
    checkout otherwise slows everything silently."""
    if pure_python_forced():
        return f"{PURE_PYTHON_VARIABLE} is set"
    if not os.path.exists(built):
        return "not built"
    if not build_is_current(built, sources):
        return STALE_BUILD
    return None


def build_description(compiler: str, reason: str | None) -> str:
    """What runs, as a broker's start and the benchmarks print it: the build, or pure Python and why."""
    return f"compiled ({compiler})" if reason is None else f"pure Python ({reason})"
