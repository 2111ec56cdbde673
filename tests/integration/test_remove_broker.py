"""`cluster remove-broker` reads ZooKeeper before it removes anything: a broker some partition still has, or
a reassignment not yet taken up by the controller moves onto, stays (real ZooKeeper; the broker not running)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from kafkaops.cluster.common.errors import UserError
from kafkaops.cluster.local.cluster import LocalCluster
from kafkaops.cluster.zk import znodes
from kafkaops.cluster.zk.values import TopicPartition
from kafkaops.cluster.zk.zookeeper_client import Op


def state_dir_with_broker(state: Path, zk_connect: str, broker_id: int) -> LocalCluster:
    local = LocalCluster(state)
    state.mkdir(parents=True)
    local.write_broker_config(broker_id, zk_connect, None, None)
    local.config_file.write_text(yaml.safe_dump({"zookeeper.connect": zk_connect, "brokers": [broker_id]}))
    return local


def test_a_pending_reassignment_onto_the_broker_keeps_it(zk, zk_connect, tmp_path):
    local = state_dir_with_broker(tmp_path / "state", zk_connect, 4)
    zk.ensure_paths(znodes.PERSISTENT_PATHS)
    path = znodes.ReassignPartitionsZNode.path()
    zk.create(path, znodes.ReassignPartitionsZNode.encode({TopicPartition("t", 0): [1, 4]}))
    with pytest.raises(UserError, match=r"^Broker 4 still holds replicas of 1 partition\(s\) \(t-0\): "):
        local.remove_broker(4)
    assert local.broker_dir(4).exists()
    zk.multi([Op.delete(path)])
    local.remove_broker(4)
    assert not local.broker_dir(4).exists() and local.broker_ids() == []
    assert yaml.safe_load(local.config_file.read_text())["brokers"] == []
