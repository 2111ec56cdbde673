"""Kafka's `zookeeper-security-migration`: set the cluster's ACLs on an existing tree.

`secure` gives every znode under Kafka's roots the ACL a secure cluster creates it with (cluster/zk/acls.py:
the cluster principal may write, anyone may read except under the sensitive roots); `unsecure` opens them
again (`world:anyone` ALL). With a chroot, the chroot node itself is secured too: ZooKeeper checks a
delete against the *parent's* ACL, so without it anyone could delete `/controller`.
"""

from __future__ import annotations

from dataclasses import dataclass

from kazoo.exceptions import NoNodeError
from kazoo.security import ACL

from kafkaops.cluster.common.errors import InvalidArgumentError
from kafkaops.cluster.zk.acls import SECURE_ROOT_PATHS, acls_for
from kafkaops.cluster.zk.client import KafkaZkClient


@dataclass(frozen=True)
class MigrationResult:
    secure: bool
    znodes: int


def migrate(zk: KafkaZkClient, secure: bool) -> MigrationResult:
    """Set ACLs on the chroot (if any) and every znode below Kafka's secure roots; returns the count.
    Raises InvalidArgumentError for `secure` without credentials."""
    if secure and zk.credentials is None:
        raise InvalidArgumentError(
            "Security isn't enabled: give the cluster's ZooKeeper credentials (user:password) in "
            "$KAFKAOPS_ZK_DIGEST or zookeeper.digest in the tools' config file"
        )
    kazoo = zk.kazoo
    count = 0

    def set_acl(path: str) -> None:
        nonlocal count
        kazoo.set_acls(path, _acl(zk, path, secure))
        count += 1

    if zk.connect_string.chroot:
        set_acl("/")
    for root in SECURE_ROOT_PATHS:
        stack = [root]
        while stack:
            path = stack.pop()
            try:
                set_acl(path)
                children = kazoo.get_children(path)
            except NoNodeError:
                continue  # absent (an optional root) or deleted meanwhile
            stack.extend(f"{path}/{child}" for child in children)
    return MigrationResult(secure, count)


def _acl(zk: KafkaZkClient, path: str, secure: bool) -> list[ACL]:
    return acls_for(path, zk.credentials, secure)
