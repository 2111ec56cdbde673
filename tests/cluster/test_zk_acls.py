"""ZooKeeper ACLs (`zookeeper.set.acl`): a secured cluster's znodes are writable only by its principal,
the tools authenticate with the same credentials, and the migration command secures an existing tree."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid

import pytest
from kazoo.exceptions import NoAuthError

from kafkaops.admin.zk_security import migrate
from kafkaops.cluster.local.cluster import LocalCluster
from kafkaops.cluster.local.waiting import wait_for
from kafkaops.cluster.zk import znodes
from kafkaops.cluster.zk.acls import DigestCredentials
from kafkaops.cluster.zk.client import KafkaZkClient
from kafkaops.cluster.zk.values import TopicPartition
from tests.cluster.conftest import FAST

CREDENTIALS = DigestCredentials("kafka", "s3cret:with-colon")
SECURE_BROKER = {
    "zookeeper.set.acl": True,
    "zookeeper.digest.username": CREDENTIALS.username,
    "zookeeper.digest.password": CREDENTIALS.password,
}


def _cli(zk_connect: str, tmp_path, *args: str, digest: str | None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "KAFKAOPS_ZOOKEEPER": zk_connect, "KAFKAOPS_STATE_DIR": str(tmp_path / "cli-state")}
    env.pop("KAFKAOPS_CONFIG", None)
    env.pop("KAFKAOPS_ZK_DIGEST", None)
    if digest is not None:
        env["KAFKAOPS_ZK_DIGEST"] = digest
    return subprocess.run(
        [sys.executable, "-m", "kafkaops.cli", *args], env=env, capture_output=True, text=True, check=False, timeout=60
    )


def test_a_secured_cluster_refuses_anonymous_writes_and_serves_its_own_tools(zookeeper_server, tmp_path):
    # A chroot of its own (the fixtures' chroots are created open).
    zk_connect = f"{zookeeper_server.connect_string}/acl-{uuid.uuid4().hex[:12]}"
    local = LocalCluster(tmp_path / "cluster")
    anonymous = None
    try:
        # The chroot must be the cluster's too: ZooKeeper checks a delete against the parent's ACL.
        KafkaZkClient(zk_connect, credentials=CREDENTIALS, set_acl=True).close()
        local.up(brokers=1, zookeeper_connect=zk_connect, broker_overrides={**FAST, **SECURE_BROKER})
        wait_for(lambda: local.status().controller_id == 0)
        anonymous = KafkaZkClient(zk_connect)
        # Anyone may read the cluster's state...
        assert anonymous.get(znodes.BrokerIdZNode.path(0)) is not None
        # ...but not write it, nor read the sensitive roots.
        with pytest.raises(NoAuthError):
            anonymous.create(znodes.ReassignPartitionsZNode.path(), b'{"version":1,"partitions":[]}')
        with pytest.raises(NoAuthError):
            anonymous.kazoo.delete(znodes.ControllerZNode.path())
        with pytest.raises(NoAuthError):
            anonymous.create(znodes.ConfigEntityZNode.path("topics", "x"), b'{"version":1,"config":{}}')
        with pytest.raises(NoAuthError):
            anonymous.kazoo.get(znodes.ConfigEntityTypeZNode.path("brokers"))
        assert anonymous.get_controller_id() == 0

        refused = _cli(
            zk_connect,
            tmp_path,
            "topics",
            "--create",
            "--topic",
            "t",
            "--partitions",
            "1",
            "--replication-factor",
            "1",
            digest=None,
        )
        assert refused.returncode == 1
        assert "NoAuth" in refused.stderr and "Traceback" not in refused.stderr
        created = _cli(
            zk_connect,
            tmp_path,
            "topics",
            "--create",
            "--topic",
            "t",
            "--partitions",
            "2",
            "--replication-factor",
            "1",
            digest=f"{CREDENTIALS.username}:{CREDENTIALS.password}",
        )
        assert created.returncode == 0, created.stderr
        # The controller (the same principal) brings it online; strangers still cannot change it.
        wait_for(
            lambda: all(
                s is not None
                for s in anonymous.get_partition_states([TopicPartition("t", 0), TopicPartition("t", 1)]).values()
            )
        )
        with pytest.raises(NoAuthError):
            anonymous.kazoo.set(znodes.TopicZNode.path("t"), b"{}")
    finally:
        if anonymous is not None:
            anonymous.close()
        for broker_id in local.broker_ids():
            local.stop_broker(broker_id, hard=True)


def test_the_migration_secures_an_existing_tree_and_opens_it_again(zk_connect, zk):
    zk.ensure_paths(znodes.PERSISTENT_PATHS)
    zk.create(znodes.TopicZNode.path("old"), znodes.TopicZNode.encode_replicas({0: [0]}))
    with KafkaZkClient(zk_connect, credentials=CREDENTIALS, set_acl=True) as owner:
        result = migrate(owner, secure=True)
        assert result.znodes > len(znodes.PERSISTENT_PATHS)
    with pytest.raises(NoAuthError):
        zk.kazoo.set(znodes.TopicZNode.path("old"), b"{}")
    with pytest.raises(NoAuthError):
        zk.create(znodes.DeleteTopicsTopicZNode.path("old"), b"")
    assert zk.get(znodes.TopicZNode.path("old")) is not None  # still readable
    with KafkaZkClient(zk_connect, credentials=CREDENTIALS) as owner:
        migrate(owner, secure=False)
    zk.create(znodes.DeleteTopicsTopicZNode.path("old"), b"")  # open again


def test_the_migration_command_needs_credentials_for_secure(zk_connect, zk, tmp_path):
    zk.ensure_paths(znodes.PERSISTENT_PATHS)
    refused = _cli(
        zk_connect,
        tmp_path,
        "zookeeper-security-migration",
        "--zookeeper.acl",
        "secure",
        "--zookeeper.connect",
        zk_connect,
        digest=None,
    )
    assert refused.returncode == 1 and "Security isn't enabled" in refused.stderr
    bad = _cli(
        zk_connect,
        tmp_path,
        "zookeeper-security-migration",
        "--zookeeper.acl",
        "sometimes",
        "--zookeeper.connect",
        zk_connect,
        digest=None,
    )
    assert bad.returncode == 1 and "ZooKeeper Migration Tool Help" in bad.stderr
    done = _cli(
        zk_connect,
        tmp_path,
        "zookeeper-security-migration",
        "--zookeeper.acl",
        "secure",
        "--zookeeper.connect",
        zk_connect,
        digest=f"{CREDENTIALS.username}:{CREDENTIALS.password}",
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("Set secure ACLs on ")
    with pytest.raises(NoAuthError):
        zk.create(znodes.ReassignPartitionsZNode.path(), b"{}")
