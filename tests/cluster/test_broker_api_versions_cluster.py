"""`kafkaops broker-api-versions` against real broker processes: each broker's block in Kafka's form, the
versions as kafka-python's admin client reads them from the same brokers, racks, a broker that is down."""

from __future__ import annotations

import re
import subprocess
import sys

from kafkaops.cluster.local.waiting import wait_for
from kafkaops.cluster.protocol.schemas import SUPPORTED_VERSIONS
from tests.cluster.clients_util import all_bootstraps

API_LINE = re.compile(
    r"\t(?P<name>\w+)\((?P<key>\d+)\): (?:(?P<low>\d+)(?: to (?P<high>\d+))?(?: \[usable: (?P<usable>\d+)\])?|UNSUPPORTED)"
)


def broker_api_versions(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kafkaops.cli", "broker-api-versions", *args],
        capture_output=True,
        text=True,
        check=False,
    )


def blocks(stdout: str) -> dict[str, list[str]]:
    """Each broker's header line and its API lines."""
    found: dict[str, list[str]] = {}
    header = None
    for line in stdout.splitlines():
        if line.endswith(" -> ("):
            header = line.removesuffix(" -> (")
            found[header] = []
        elif line == ")":
            header = None
        else:
            assert header is not None, f"a line outside a broker's block: {line!r}"
            found[header].append(line)
    return found


def kafka_python_versions(bootstrap: str, broker_id: int) -> dict[int, tuple[int, int]]:
    from kafka import KafkaAdminClient

    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        return {int(k): tuple(v) for k, v in admin.get_broker_version_data(broker_id).api_versions.items()}  # type: ignore[misc]
    finally:
        admin.close()


def test_broker_api_versions_against_brokers(cluster, tmp_path) -> None:  # type: ignore[no-untyped-def]
    local = cluster(brokers=2, racks={0: "rack-a"})
    endpoints = {b.broker_id: b.endpoint.removeprefix("PLAINTEXT://") for b in local.status().brokers}
    result = broker_api_versions("--bootstrap-server", endpoints[1])
    assert result.returncode == 0, result.stderr
    found = blocks(result.stdout)
    assert sorted(found) == sorted([f"{endpoints[0]} (id: 0 rack: rack-a)", f"{endpoints[1]} (id: 1 rack: null)"])
    for broker_id in (0, 1):
        lines = found[next(h for h in found if f"(id: {broker_id} " in h)]
        assert all(line.endswith(",") for line in lines[:-1]) and not lines[-1].endswith(",")
        parsed = [API_LINE.fullmatch(line.rstrip(",")) for line in lines]
        assert all(parsed), [line for line, m in zip(lines, parsed, strict=True) if not m]
        keys = [int(m["key"]) for m in parsed if m]
        assert keys == sorted(keys)
        advertised = {int(m["key"]): (int(m["low"]), int(m["high"] or m["low"])) for m in parsed if m and m["low"]}
        assert advertised == kafka_python_versions(all_bootstraps(local), broker_id)
        for m in parsed:
            if m and m["low"]:
                ours = SUPPORTED_VERSIONS.get(int(m["key"]))  # type: ignore[call-overload]
                assert int(m["usable"]) == min(ours[1], int(m["high"] or m["low"]))
        assert "\tProduce(0): " in "\n".join(lines)

    # a client properties file as Kafka's tools take it: the same answer
    config = tmp_path / "admin.properties"
    config.write_text("# plain\nsecurity.protocol=PLAINTEXT\nrequest.timeout.ms = 5000\nclient.id=ops\n")
    configured = broker_api_versions("--bootstrap-server", endpoints[1], "--command-config", str(config))
    assert (configured.returncode, configured.stdout) == (0, result.stdout)

    local.stop_broker(0)
    wait_for(lambda: len(blocks(broker_api_versions("--bootstrap-server", endpoints[1]).stdout)) == 1, timeout_s=30)
    down = broker_api_versions("--bootstrap-server", endpoints[0])
    assert down.returncode == 1
    assert down.stderr == f"Request METADATA failed on brokers List({endpoints[0]} (id: -1 rack: null))\n"
