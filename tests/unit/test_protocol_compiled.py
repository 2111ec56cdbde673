"""The codec both ways: compiled by mypyc (setup_codec_compiled.py, run by .ci/setup) and pure Python
(KAFKAOPS_PURE_PYTHON=1, or no build). This process runs whichever is in place, like the rest of the suite;
the other way runs in a subprocess: the codec's core test files, and the same bytes and values for
messages of every API and for the big controller requests.

Run as a script, this file prints the digest the comparison is made of (see `digest`).
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest

from kafkaops.cluster import protocol
from kafkaops.cluster.common.compiled import PURE_PYTHON_VARIABLE
from kafkaops.cluster.protocol.records import Record, build_batch, iter_batches
from kafkaops.cluster.protocol.schemas import REQUESTS, RESPONSES, ApiKey
from tests.unit.test_protocol_fuzz import _minimal

ROOT = Path(__file__).resolve().parents[2]
PURE_RUN_FILES = [
    "tests/unit/test_protocol_types.py",
    "tests/unit/test_protocol_messages.py",
    "tests/unit/test_protocol_records.py",
    "tests/unit/test_protocol_framing.py",
]
"""The files the other way runs (their hypothesis-heavy mutation tests left out: the error paths are the
same code both ways, and the suite runs them the first way)."""


def _run(argv: list[str], pure: bool) -> subprocess.CompletedProcess[str]:
    # not this process's pytest-xdist worker identity, nor its switch
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_XDIST", "PYTEST_CURRENT_TEST"))}
    env.pop(PURE_PYTHON_VARIABLE, None)
    if pure:
        env[PURE_PYTHON_VARIABLE] = "1"
    return subprocess.run(
        [sys.executable, *argv], check=False, env=env, cwd=ROOT, capture_output=True, text=True, timeout=600
    )


def _partition_states(count: int, extra: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {
            "partition_index": p,
            "controller_epoch": 7,
            "leader": p % 3,
            "leader_epoch": p,
            "isr": [p % 3, (p + 1) % 3],
            "zk_version": p * 3,
            "replicas": [p % 3, (p + 1) % 3, (p + 2) % 3],
            **extra,
        }
        for p in range(count)
    ]


def _big_bodies() -> list[tuple[ApiKey, int, bool, dict[str, Any]]]:
    """(api, version, is request, body): the controller's big requests and the data path's."""
    topics = [(f"tøpic-{t}", uuid.UUID(int=t + 1)) for t in range(5)]
    leader_and_isr = {
        "controller_id": 1,
        "controller_epoch": 7,
        "broker_epoch": 2**40,
        "topic_states": [
            {
                "topic_name": name,
                "topic_id": topic_id,
                "partition_states": _partition_states(
                    50, {"adding_replicas": [], "removing_replicas": [2], "is_new": True}
                ),
            }
            for name, topic_id in topics
        ],
        "live_leaders": [{"broker_id": b, "host_name": "127.0.0.1", "port": 9092 + b} for b in range(3)],
    }
    update_metadata = {
        "controller_id": 1,
        "controller_epoch": 7,
        "broker_epoch": -1,
        "topic_states": [
            {
                "topic_name": name,
                "topic_id": topic_id,
                "partition_states": _partition_states(50, {"offline_replicas": [1]}),
            }
            for name, topic_id in topics
        ],
        "live_brokers": [
            {
                "id": b,
                "endpoints": [{"port": 9092 + b, "host": "127.0.0.1", "listener": "PLAINTEXT", "security_protocol": 0}],
                "rack": None if b else "rack-a",
            }
            for b in range(3)
        ],
    }
    records = build_batch([Record(i, 1_700_000_000_000 + i, b"k", b"v" * i) for i in range(5)])
    fetch = {
        "session_id": 3,
        "responses": [
            {
                "topic": "t",
                "partition_responses": [
                    {
                        "partition": p,
                        "error_code": 0,
                        "high_watermark": 10,
                        "last_stable_offset": 10,
                        "log_start_offset": 0,
                        "aborted_transactions": [{"producer_id": 5, "first_offset": 2}] if p else None,
                        "preferred_read_replica": -1,
                        "record_set": records,
                        "current_leader": {"leader_id": 1, "leader_epoch": p},
                    }
                    for p in range(20)
                ],
            }
        ],
    }
    produce = {
        "transactional_id": None,
        "acks": -1,
        "timeout_ms": 1000,
        "topic_data": [{"name": "t", "partition_data": [{"index": p, "records": records} for p in range(20)]}],
    }
    return [
        *((ApiKey.LEADER_AND_ISR, v, True, leader_and_isr) for v in range(5)),
        *((ApiKey.UPDATE_METADATA, v, True, update_metadata) for v in range(8)),
        *((ApiKey.FETCH, v, False, fetch) for v in range(4, 13)),
        *((ApiKey.PRODUCE, v, True, produce) for v in range(3, 10)),
    ]


def digest() -> dict[str, str]:
    """Per message, a hash of its encoding and of the repr of its decoding: every request and response of
    every API at every version (minimal bodies), the big bodies above, and a walk over record batches."""
    out: dict[str, str] = {}
    for kind, messages in (("request", REQUESTS), ("response", RESPONSES)):
        for key, message in messages.items():
            for version, schema in message.schemas.items():
                data = message.encode(_minimal(schema), version)
                out[f"{key.name} {kind} v{version}"] = _hash(data, message.decode(data, version))
    for key, version, is_request, body in _big_bodies():
        message = (REQUESTS if is_request else RESPONSES)[key]
        data = message.encode(body, version)
        out[f"{key.name} big v{version}"] = _hash(data, message.decode(data, version))
    batches = b"".join(build_batch([Record(i, i, None, b"x" * i)]) for i in range(50))
    out["walk"] = _hash(batches, [(b.header, bytes(b.data)) for b in iter_batches(batches)])
    return out


def _hash(data: bytes, decoded: object) -> str:
    return hashlib.sha256(data + repr(_plain(decoded)).encode()).hexdigest()


def _plain(value: object) -> object:
    """`value` with views as bytes (RECORDS decode as views of the frame; a view's repr is its address)."""
    if isinstance(value, memoryview):
        return bytes(value)
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def test_the_build_compiles_the_modules_the_package_names() -> None:
    spec = importlib.util.spec_from_file_location("setup_codec_compiled", ROOT / "setup_codec_compiled.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.MODULES == protocol.COMPILED


def test_the_environment_forces_pure_python() -> None:
    code = "from kafkaops.cluster import protocol; print(protocol.PURE_PYTHON, protocol.compiled_modules())"
    result = _run(["-c", code], pure=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["True", "[]"]


def test_the_build_runs_compiled_when_current() -> None:
    if protocol.PURE_PYTHON:
        pytest.skip("pure Python in this process (KAFKAOPS_PURE_PYTHON, or no current build: setup_codec_compiled.py)")
    assert protocol.compiled_modules() == list(protocol.COMPILED)


def test_the_same_bytes_and_values_both_ways() -> None:
    result = _run(["-m", "tests.unit.test_protocol_compiled"], pure=not protocol.PURE_PYTHON)
    assert result.returncode == 0, result.stderr
    theirs = json.loads(result.stdout)
    ours = digest()
    assert sorted(ours) == sorted(theirs)
    assert [name for name in ours if ours[name] != theirs[name]] == []


def test_the_codec_tests_pass_pure() -> None:
    if protocol.PURE_PYTHON:
        pytest.skip("this run is the pure one already")
    result = _run(["-m", "pytest", "-q", "-p", "no:cacheprovider", "-k", "not mutated", *PURE_RUN_FILES], pure=True)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]


if __name__ == "__main__":
    print(json.dumps(digest()))
