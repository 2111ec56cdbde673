"""Stand-in broker registrations: `/brokers/ids/<id>` znodes held by one ZooKeeper session.

Until the Python brokers land (the brokers-and-controller issue), the admin tools' reads of
`/brokers/ids` (topic creation, rack-aware assignment, "is this broker running?") are exercised
against registrations that look exactly like a Kafka 2.8 broker's — ephemeral, so they vanish
with the session that holds them. They never stand in for a broker's behaviour.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence

from kafkaops.cluster.zk import znodes
from kafkaops.cluster.zk.values import BrokerRegistration, EndPoint
from kafkaops.cluster.zk.zookeeper_client import ZkClient


def standin_registration(broker_id: int, rack: str | None = None, port: int | None = None) -> BrokerRegistration:
    return BrokerRegistration(
        broker_id=broker_id,
        endpoints=(EndPoint("PLAINTEXT", "127.0.0.1", port if port is not None else 9092 + broker_id),),
        timestamp_ms=int(time.time() * 1000),
        rack=rack,
        listener_security_protocol_map={"PLAINTEXT": "PLAINTEXT"},
    )


def register_standin_brokers(zk: ZkClient, broker_ids: Sequence[int], racks: Mapping[int, str] | None = None) -> None:
    """Register each id as an ephemeral `/brokers/ids/<id>` on `zk`'s session."""
    zk.ensure_paths(znodes.PERSISTENT_PATHS)
    for broker_id in broker_ids:
        registration = standin_registration(broker_id, (racks or {}).get(broker_id))
        zk.create(
            znodes.BrokerIdZNode.path(broker_id), znodes.BrokerIdZNode.encode(registration), znodes.BrokerIdZNode.mode
        )
