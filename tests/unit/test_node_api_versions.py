"""Kafka's `NodeApiVersions.toString(true)` and `Node.toString`, as kafka-broker-api-versions prints them."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from kafkaops.admin.kafka_client.node_api_versions import (
    NON_ZK_BROKER_APIS,
    api_version_text,
    node_api_versions_text,
    node_text,
)
from kafkaops.cli.app import app


@pytest.fixture(autouse=True)
def no_local_cluster(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Without a broker flag the tools use the local cluster's brokers: this test's state dir has none."""
    monkeypatch.setenv("KAFKAOPS_STATE_DIR", str(tmp_path / "state"))


OURS = {0: (3, 8), 1: (4, 12), 3: (1, 9), 18: (0, 2), 43: (0, 2)}


def test_usable_and_unusable_versions() -> None:
    assert api_version_text(0, (3, 9), OURS) == "Produce(0): 3 to 9 [usable: 8]"
    assert api_version_text(1, (0, 3), OURS) == "Fetch(1): 0 to 3 [unusable: node too old]"
    assert api_version_text(3, (10, 11), OURS) == "Metadata(3): 10 to 11 [unusable: node too new]"
    assert api_version_text(18, (0, 0), OURS) == "ApiVersions(18): 0 [usable: 0]"
    assert api_version_text(70, (0, 1), OURS) == "UNKNOWN(70): 0 to 1"
    # named by Kafka 2.8 but not spoken by this client: the range alone
    assert api_version_text(50, (0, 0), OURS) == "DescribeUserScramCredentials(50): 0"
    assert api_version_text(61, (0, 0), {61: (0, 0)}) == "DescribeProducers(61): 0 [usable: 0]"


def test_whole_text_lists_unsupported_zk_broker_apis_in_key_order() -> None:
    text = node_api_versions_text({18: (0, 3), 0: (3, 9), 70: (0, 1)}, OURS)
    lines = text.split("\n")
    assert lines[0] == "(" and lines[-1] == ")"
    assert lines[1:4] == [
        "\tProduce(0): 3 to 9 [usable: 8],",
        "\tFetch(1): UNSUPPORTED,",
        "\tListOffsets(2): UNSUPPORTED,",
    ]
    assert "\tApiVersions(18): 0 to 3 [usable: 2]," in lines
    assert lines[-2] == "\tUNKNOWN(70): 0 to 1"
    assert lines[-3] == "\tDescribeProducers(61): UNSUPPORTED,"
    # KRaft-only APIs are not "unsupported" by a ZooKeeper broker: Kafka leaves them out
    assert not any(name in text for name in ("Vote", "Envelope", "BrokerRegistration", "UnregisterBroker"))
    assert len(lines) == 2 + (65 - len(NON_ZK_BROKER_APIS)) + 1  # brackets, Kafka 2.8's zkBroker APIs, the unknown one


def test_node_text() -> None:
    assert node_text("localhost", 9092, 0, None) == "localhost:9092 (id: 0 rack: null)"
    assert node_text("b1", 9093, 1, "r1") == "b1:9093 (id: 1 rack: r1)"


def test_command_usage_and_no_broker() -> None:
    runner = CliRunner()
    nothing = runner.invoke(app, ["broker-api-versions"])
    assert nothing.exit_code == 1 and nothing.stderr.startswith(
        "This tool helps to retrieve broker version information.\n"
    )
    missing = runner.invoke(app, ["broker-api-versions", "--command-config", "x"])
    assert missing.exit_code == 1 and missing.stderr.startswith('Missing required argument "[bootstrap-server]"\n')
    down = runner.invoke(app, ["broker-api-versions", "--bootstrap-server", "127.0.0.1:1,127.0.0.1:2"])
    assert (down.exit_code, down.stdout) == (1, "")
    assert down.stderr == (
        "Request METADATA failed on brokers List(127.0.0.1:1 (id: -1 rack: null), 127.0.0.1:2 (id: -1 rack: null))\n"
    )
