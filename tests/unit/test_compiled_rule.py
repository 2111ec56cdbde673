"""The one rule for builds made in place (`cluster/common/compiled.py`): why the pure-Python modules run, which a
broker's start and the benchmarks print (a stale build after a checkout otherwise slows everything silently)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from kafkaops.cluster.common.compiled import PURE_PYTHON_VARIABLE, STALE_BUILD, why_pure_python


def test_why_pure_python(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(PURE_PYTHON_VARIABLE, raising=False)
    source, built = tmp_path / "codec.py", tmp_path / "codec.so"
    source.write_text("")
    assert why_pure_python(str(built), [str(source)]) == "not built"
    built.write_bytes(b"")
    os.utime(source, (1_000, 1_000))
    os.utime(built, (2_000, 2_000))
    assert why_pure_python(str(built), [str(source), str(tmp_path / "gone.py")]) is None
    os.utime(source, (3_000, 3_000))  # a checkout or an edit since the build
    assert why_pure_python(str(built), [str(source)]) == STALE_BUILD
    monkeypatch.setenv(PURE_PYTHON_VARIABLE, "1")
    assert why_pure_python(str(built), [str(source)]) == f"{PURE_PYTHON_VARIABLE} is set"
