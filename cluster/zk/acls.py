"""ZooKeeper ACLs on the cluster's znodes (Kafka's `zookeeper.set.acl`, `ZkData.defaultAcls`).

With ACLs on, every znode the cluster or its tools create is writable only by the cluster's principal
(the digest identity the session authenticated with: ZooKeeper's CREATOR_ALL_ACL) and readable by anyone,
except under the sensitive roots (user and broker configs may hold secrets, delegation tokens are
secrets), which nobody else may even read. Without ACLs, znodes are open (`world:anyone` ALL), as
Kafka's default is.

Credentials are digest `user:password` pairs: ours come from the broker config
(`zookeeper.digest.username` / `.password`) and, for the command-line tools, `$KAFKAOPS_ZK_DIGEST`
(or `zookeeper.digest` in the tools' YAML config). Kafka does the same with a JAAS `DigestLoginModule`.
"""

from __future__ import annotations

from dataclasses import dataclass

from kazoo.security import ACL, OPEN_ACL_UNSAFE, READ_ACL_UNSAFE, make_digest_acl

from kafkaops.cluster.common.errors import InvalidArgumentError

SENSITIVE_ROOT_PATHS = ("/config/users", "/config/brokers", "/delegation_token")
"""Kafka's `ZkData.SensitiveRootPaths`: no world read below these."""

SECURE_ROOT_PATHS = (
    "/admin",
    "/brokers",
    "/cluster",
    "/config",
    "/controller",
    "/controller_epoch",
    "/isr_change_notification",
    "/latest_producer_id_block",
    "/log_dir_event_notification",
    "/delegation_token",
    "/feature",
    "/kafka-acl",
    "/kafka-acl-changes",
    "/kafka-acl-extended",
    "/kafka-acl-extended-changes",
    "/consumers",
)
"""The trees the security migration walks (Kafka's `ZkData.SecureRootPaths` + `/consumers`)."""


@dataclass(frozen=True)
class DigestCredentials:
    username: str
    password: str

    @classmethod
    def parse(cls, text: str, source: str) -> DigestCredentials:
        """`user:password` (the password may contain `:`)."""
        username, colon, password = text.partition(":")
        if not colon or not username or not password:
            raise InvalidArgumentError(f"{source} must be user:password, got {text!r}")
        return cls(username, password)

    @property
    def auth_data(self) -> tuple[str, str]:
        """What kazoo's `add_auth` / `auth_data` take."""
        return ("digest", f"{self.username}:{self.password}")


def is_sensitive(path: str) -> bool:
    return any(path == root or path.startswith(root + "/") for root in SENSITIVE_ROOT_PATHS)


def acls_for(path: str, credentials: DigestCredentials | None, secure: bool) -> list[ACL]:
    """The ACL a new znode at `path` gets (`ZkData.defaultAcls`)."""
    if not secure:
        return list(OPEN_ACL_UNSAFE)
    if credentials is None:
        raise InvalidArgumentError("zookeeper.set.acl is true but no ZooKeeper digest credentials were given")
    acl = [make_digest_acl(credentials.username, credentials.password, all=True)]
    if not is_sensitive(path):
        acl.extend(READ_ACL_UNSAFE)
    return acl
