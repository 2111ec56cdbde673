"""Every znode of Kafka's ZooKeeper layout: path, create mode, encode, decode. The only place that knows them.

Modelled on Kafka 2.8 `kafka.zk.ZkData` (kafka-reference.md §1). Rules:

* paths are built from their parents' paths;
* encoders take every input as an argument (timestamps too) and write keys in an explicit order —
  Kafka's own order, so that partition state and reassignment znodes are byte-identical to Kafka's;
* decoders ignore unknown keys, return plain values, and raise `MalformedZNodeError` on bad bytes
  (a missing znode is the caller's `None`, never an empty default).
"""

from __future__ import annotations

import enum
import json
import os
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any
from urllib.parse import quote, unquote_plus

from kafkaops.cluster.common.errors import MalformedZNodeError, NumberFormatError
from kafkaops.cluster.common.jvm_text import java_parse_int, java_parse_long, properties_order
from kafkaops.cluster.zk.values import (
    AclEntry,
    BrokerRegistration,
    EndPoint,
    LeaderAndIsr,
    LeaderIsrAndControllerEpoch,
    ProducerIdBlock,
    ReplicaAssignment,
    TopicAssignment,
    TopicPartition,
)


class CreateMode(enum.Enum):
    PERSISTENT = "persistent"
    EPHEMERAL = "ephemeral"
    PERSISTENT_SEQUENTIAL = "persistent_sequential"

    @property
    def ephemeral(self) -> bool:
        return self is CreateMode.EPHEMERAL

    @property
    def sequential(self) -> bool:
        return self is CreateMode.PERSISTENT_SEQUENTIAL


# --- JSON helpers -------------------------------------------------------------------------------


def _json_dumps(value: Any) -> bytes:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def _json_loads(data: bytes) -> Any:
    return json.loads(data.decode("utf-8"))


try:
    import orjson

    HAVE_ORJSON = True
except ImportError:  # pragma: no cover - a dependency; the json module does the same, slower
    HAVE_ORJSON = False


def _orjson_dumps(value: Any) -> bytes:
    # the same bytes as json's (compact, UTF-8, keys in order); json's for what orjson refuses (integers
    # past 64 bits, say)
    try:
        return orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS)
    except (orjson.JSONEncodeError, TypeError):
        return _json_dumps(value)


_LONG_DIGITS = re.compile(rb"\d{19}")


def _orjson_loads(data: bytes) -> Any:
    # json's for what orjson refuses (NaN, bad UTF-8): its answer or its error; and for a number of 19
    # digits or more, which orjson reads as a float past 64 bits where json keeps an int
    if _LONG_DIGITS.search(data):
        return _json_loads(data)
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        return _json_loads(data)


_dumps: Callable[[Any], bytes] = _json_dumps
_loads: Callable[[bytes], Any] = _json_loads
if HAVE_ORJSON and not os.environ.get("KAFKAOPS_PURE_PYTHON"):
    _dumps, _loads = _orjson_dumps, _orjson_loads


def to_json_bytes(value: Any) -> bytes:
    """Jackson's default output: compact, no trailing newline, keys in the order given."""
    return _dumps(value)


def _load_object(path: str, data: bytes | None) -> dict[str, Any]:
    if not data:
        raise MalformedZNodeError(path, data, "empty data where a JSON object was expected")
    try:
        value = _loads(data)
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise MalformedZNodeError(path, data, f"not valid JSON ({error})") from None
    if not isinstance(value, dict):
        raise MalformedZNodeError(path, data, "JSON is not an object")
    return value


def _field(path: str, data: bytes | None, obj: Mapping[str, Any], key: str, kind: type | tuple[type, ...]) -> Any:
    if key not in obj:
        raise MalformedZNodeError(path, data, f"missing field '{key}'")
    value = obj[key]
    # bool is an int in Python, never in Kafka's JSON
    if isinstance(value, bool) and bool not in (kind if isinstance(kind, tuple) else (kind,)):
        raise MalformedZNodeError(path, data, f"field '{key}' has the wrong type")
    if not isinstance(value, kind):
        raise MalformedZNodeError(path, data, f"field '{key}' has the wrong type")
    return value


_INT32 = (-(2**31), 2**31 - 1)
_INT64 = (-(2**63), 2**63 - 1)


def _in_range(value: int, bounds: tuple[int, int]) -> bool:
    return bounds[0] <= value <= bounds[1]


def _int_field(path: str, data: bytes | None, obj: Mapping[str, Any], key: str) -> int:
    """A JSON number that fits Java's `int`, as Kafka's `DecodeJson[Int]` requires."""
    value = int(_field(path, data, obj, key, int))
    if not _in_range(value, _INT32):
        raise MalformedZNodeError(path, data, f"field '{key}' does not fit a 32-bit integer")
    return value


def _int_list(path: str, data: bytes | None, value: Any, what: str) -> tuple[int, ...]:
    if not _is_int32_list(value):
        raise MalformedZNodeError(path, data, f"{what} is not a list of 32-bit integers")
    return tuple(value)


def _is_int32_list(value: Any) -> bool:
    """A JSON list of numbers that fit Java's `int` (a JSON `true` is not one). A plain loop: this runs for
    every partition of every topic a controller loads (100,000 at a failover)."""
    if type(value) is not list:
        return False
    for v in value:  # noqa: SIM110 - a loop, not all() over a generator: a third faster
        if type(v) is not int or not -2147483648 <= v <= 2147483647:
            return False
    return True


def _partition_id(path: str, data: bytes | None, text: str) -> int:
    """A partition id key as Java's `toInt` reads it; the usual plain digits without the parser."""
    if text.isascii() and text.isdigit() and len(text) < 10:
        return int(text)
    return _java_number(path, data, text, f"partition id {text!r}")


def _java_number(
    path: str, data: bytes | None, text: str, what: str, parse: Callable[[str], int] = java_parse_int
) -> int:
    """Kafka's `toInt` / `toLong` of a znode's text (`java_parse_int` / `java_parse_long`): what Java
    refuses is malformed."""
    try:
        return parse(text)
    except NumberFormatError:
        raise MalformedZNodeError(path, data, f"{what} is not a number") from None


def _string_int(path: str, data: bytes | None, obj: Mapping[str, Any], key: str) -> int:
    """Kafka writes some numbers as JSON strings (`"timestamp":"1614570663881"`) and reads both forms."""
    value = _field(path, data, obj, key, (str, int))
    if isinstance(value, int):
        if not _in_range(value, _INT64):
            raise MalformedZNodeError(path, data, f"field '{key}' does not fit a 64-bit integer")
        return value
    return _java_number(path, data, value, f"field '{key}'", java_parse_long)


def _ascii_number(path: str, data: bytes | None, parse: Callable[[str], int]) -> int:
    """A znode whose whole content is a decimal number (`/controller_epoch`, old consumer offsets)."""
    try:
        text = (data or b"").decode("ascii")
    except UnicodeDecodeError:
        raise MalformedZNodeError(path, data, "not a decimal integer") from None
    return _java_number(path, data, text, "content", parse)


def _partitions_list(path: str, data: bytes | None, obj: Mapping[str, Any]) -> list[dict[str, Any]]:
    entries: list[dict[str, Any]] = _field(path, data, obj, "partitions", list)
    if any(not isinstance(e, dict) for e in entries):
        raise MalformedZNodeError(path, data, "an entry of 'partitions' is not an object")
    return entries


def _topic_partition(path: str, data: bytes | None, entry: Mapping[str, Any]) -> TopicPartition:
    return TopicPartition(_field(path, data, entry, "topic", str), _int_field(path, data, entry, "partition"))


# --- controller ---------------------------------------------------------------------------------


class ControllerZNode:
    mode = CreateMode.EPHEMERAL

    @staticmethod
    def path() -> str:
        return "/controller"

    @staticmethod
    def encode(broker_id: int, timestamp_ms: int) -> bytes:
        return to_json_bytes({"version": 1, "brokerid": broker_id, "timestamp": str(timestamp_ms)})

    @staticmethod
    def decode(data: bytes | None) -> int:
        """The controller's broker id. 0.8.x wrote a bare integer; read that too."""
        path = ControllerZNode.path()
        if data is not None and not data.lstrip().startswith(b"{"):
            return _ascii_number(path, data, java_parse_int)
        return _int_field(path, data, _load_object(path, data), "brokerid")


class ControllerEpochZNode:
    mode = CreateMode.PERSISTENT
    INITIAL_CONTROLLER_EPOCH = 0

    @staticmethod
    def path() -> str:
        return "/controller_epoch"

    @staticmethod
    def encode(epoch: int) -> bytes:
        return str(epoch).encode("ascii")

    @staticmethod
    def decode(data: bytes | None) -> int:
        return _ascii_number(ControllerEpochZNode.path(), data, java_parse_int)


# --- brokers ------------------------------------------------------------------------------------


class BrokersZNode:
    mode = CreateMode.PERSISTENT

    @staticmethod
    def path() -> str:
        return "/brokers"


class BrokerIdsZNode:
    mode = CreateMode.PERSISTENT

    @staticmethod
    def path() -> str:
        return f"{BrokersZNode.path()}/ids"


class BrokerIdZNode:
    """`/brokers/ids/<id>`: Kafka's v4/v5 registration JSON (Scala 2.12 key order, §1.2)."""

    mode = CreateMode.EPHEMERAL

    @staticmethod
    def path(broker_id: int) -> str:
        return f"{BrokerIdsZNode.path()}/{broker_id}"

    @staticmethod
    def encode(broker: BrokerRegistration) -> bytes:
        plaintext = broker.plaintext_endpoint
        value: dict[str, Any] = {
            "listener_security_protocol_map": dict(broker.listener_security_protocol_map),
            "endpoints": [str(e) for e in broker.endpoints],
        }
        if broker.rack is not None:
            value["rack"] = broker.rack
        value["jmx_port"] = broker.jmx_port
        if broker.version >= 5:
            value["features"] = {
                name: {"min_version": lo, "max_version": hi} for name, (lo, hi) in broker.features.items()
            }
        value["host"] = plaintext.host if plaintext else None
        value["timestamp"] = str(broker.timestamp_ms)
        value["port"] = plaintext.port if plaintext else -1
        value["version"] = broker.version
        return to_json_bytes(value)

    @staticmethod
    def decode(broker_id: int, data: bytes | None) -> BrokerRegistration:
        path = BrokerIdZNode.path(broker_id)
        obj = _load_object(path, data)
        version = _int_field(path, data, obj, "version")
        protocol_map = obj.get("listener_security_protocol_map") or {}
        if not isinstance(protocol_map, dict):
            raise MalformedZNodeError(path, data, "listener_security_protocol_map is not an object")
        endpoints: list[EndPoint] = []
        if "endpoints" in obj:
            for text in _field(path, data, obj, "endpoints", list):
                endpoints.append(_parse_endpoint(path, data, text))
        else:  # v1: host and port only
            endpoints.append(
                EndPoint("PLAINTEXT", _field(path, data, obj, "host", str), _int_field(path, data, obj, "port"))
            )
        features: dict[str, tuple[int, int]] = {}
        raw_features = obj.get("features", {})
        if not isinstance(raw_features, dict):
            raise MalformedZNodeError(path, data, "field 'features' is not an object")
        for name, bounds in raw_features.items():
            if not isinstance(bounds, dict):
                raise MalformedZNodeError(path, data, f"feature '{name}' is not an object")
            features[name] = (
                _int_field(path, data, bounds, "min_version"),
                _int_field(path, data, bounds, "max_version"),
            )
        rack = obj.get("rack")
        if rack is not None and not isinstance(rack, str):
            raise MalformedZNodeError(path, data, "field 'rack' is not a string")
        return BrokerRegistration(
            broker_id=broker_id,
            endpoints=tuple(endpoints),
            timestamp_ms=_string_int(path, data, obj, "timestamp") if "timestamp" in obj else 0,
            rack=rack,
            jmx_port=_int_field(path, data, obj, "jmx_port") if "jmx_port" in obj else -1,
            listener_security_protocol_map={str(k): str(v) for k, v in protocol_map.items()},
            features=features,
            version=version,
        )


def _parse_endpoint(path: str, data: bytes | None, text: Any) -> EndPoint:
    # LISTENER://host:port, where host may be empty or a bracketed IPv6 address
    if not isinstance(text, str) or "://" not in text:
        raise MalformedZNodeError(path, data, f"endpoint {text!r} is not LISTENER://host:port")
    listener, _, address = text.partition("://")
    host, sep, port = address.rpartition(":")
    if not sep or not port.isdigit():
        raise MalformedZNodeError(path, data, f"endpoint {text!r} has no port")
    return EndPoint(listener, host.strip("[]"), int(port))


class BrokerSequenceIdZNode:
    mode = CreateMode.PERSISTENT

    @staticmethod
    def path() -> str:
        return f"{BrokersZNode.path()}/seqid"


class TopicsZNode:
    mode = CreateMode.PERSISTENT

    @staticmethod
    def path() -> str:
        return f"{BrokersZNode.path()}/topics"


class TopicZNode:
    """`/brokers/topics/<t>`: the replica assignment, written as Kafka 2.8 does (version 3)."""

    mode = CreateMode.PERSISTENT
    VERSION = 3

    @staticmethod
    def path(topic: str) -> str:
        return f"{TopicsZNode.path()}/{topic}"

    @staticmethod
    def topic_of(path: str) -> str | None:
        """The topic whose znode `path` is, or None for any other path."""
        parts = path.split("/")
        return parts[3] if len(parts) == 4 and parts[1:3] == ["brokers", "topics"] and parts[3] else None

    @staticmethod
    def encode(partitions: Mapping[int, ReplicaAssignment], topic_id: str | None = None) -> bytes:
        def ids(select: str) -> dict[str, list[int]]:
            chosen = {str(p): list(getattr(a, select)) for p, a in sorted(partitions.items())}
            return {p: r for p, r in chosen.items() if r or select == "replicas"}

        value: dict[str, Any] = {"partitions": ids("replicas")}
        if topic_id is not None:
            value["topic_id"] = topic_id
        value["adding_replicas"] = ids("adding_replicas")
        value["removing_replicas"] = ids("removing_replicas")
        value["version"] = TopicZNode.VERSION
        return to_json_bytes(value)

    @staticmethod
    def encode_replicas(replicas: Mapping[int, Sequence[int]], topic_id: str | None = None) -> bytes:
        return TopicZNode.encode({p: ReplicaAssignment(tuple(r)) for p, r in replicas.items()}, topic_id)

    @staticmethod
    def decode(topic: str, data: bytes | None) -> TopicAssignment:
        path = TopicZNode.path(topic)
        obj = _load_object(path, data)

        def partition_map(key: str, required: bool) -> dict[int, tuple[int, ...]]:
            raw = obj.get(key)
            if raw is None:
                if required:
                    raise MalformedZNodeError(path, data, f"missing field '{key}'")
                return {}
            if not isinstance(raw, dict):
                raise MalformedZNodeError(path, data, f"field '{key}' is not an object")
            result = {}
            for p, replicas in raw.items():
                if not _is_int32_list(replicas):
                    _int_list(path, data, replicas, f"replicas of partition {p}")  # raises, with Kafka's words
                result[_partition_id(path, data, p)] = tuple(replicas)
            return result

        replicas = partition_map("partitions", required=True)
        adding = partition_map("adding_replicas", required=False)
        removing = partition_map("removing_replicas", required=False)
        topic_id = obj.get("topic_id")
        if topic_id is not None and not isinstance(topic_id, str):
            raise MalformedZNodeError(path, data, "field 'topic_id' is not a string")
        return TopicAssignment(
            partitions={p: ReplicaAssignment(r, adding.get(p, ()), removing.get(p, ())) for p, r in replicas.items()},
            topic_id=topic_id,
        )


class TopicPartitionsZNode:
    mode = CreateMode.PERSISTENT

    @staticmethod
    def path(topic: str) -> str:
        return f"{TopicZNode.path(topic)}/partitions"


class TopicPartitionZNode:
    mode = CreateMode.PERSISTENT

    @staticmethod
    def path(topic: str, partition: int) -> str:
        return f"{TopicPartitionsZNode.path(topic)}/{partition}"


_DIGITS = rb"-?(?:0|[1-9][0-9]{0,8})"  # 9 digits at most: within 32 bits, so no range check
_STATE_AS_WRITTEN = re.compile(
    rb'\{"controller_epoch":(%(n)b),"leader":(%(n)b),"version":1,"leader_epoch":(%(n)b),'
    rb'"isr":\[((?:%(n)b)(?:,%(n)b)*)?\]\}' % {b"n": _DIGITS}
)


def _decode_state_as_written(data: bytes, zk_version: int) -> LeaderIsrAndControllerEpoch | None:
    """A partition state in the exact layout Kafka and `TopicPartitionStateZNode.encode` write, read by
    one regex: a failover reads one per partition, and the JSON parser with the field checks cost 12 us
    each (1.2 s at 100,000 partitions). None for anything else (spaces, another key order, a number of
    10 digits or more, malformed bytes), which the general decoder reads or refuses with its error."""
    match = _STATE_AS_WRITTEN.fullmatch(data)
    if match is None:
        return None
    controller_epoch, leader, leader_epoch, isr = match.groups()
    return LeaderIsrAndControllerEpoch(
        LeaderAndIsr(int(leader), int(leader_epoch), tuple(map(int, isr.split(b","))) if isr else (), zk_version),
        int(controller_epoch),
    )


class TopicPartitionStateZNode:
    """`/brokers/topics/<t>/partitions/<p>/state`: byte-identical to Kafka (immutable Map5 order)."""

    mode = CreateMode.PERSISTENT

    @staticmethod
    def path(topic: str, partition: int) -> str:
        return f"{TopicPartitionZNode.path(topic, partition)}/state"

    @staticmethod
    def partition_of(path: str) -> TopicPartition | None:
        """The partition whose state znode `path` is, or None for any other path."""
        parts = path.split("/")
        if len(parts) != 7 or parts[1:3] != ["brokers", "topics"] or parts[4] != "partitions" or parts[6] != "state":
            return None
        try:
            return TopicPartition(parts[3], int(parts[5]))
        except ValueError:
            return None

    _STATE = b'{"controller_epoch":%d,"leader":%d,"version":1,"leader_epoch":%d,"isr":[%b]}'

    @staticmethod
    def encode(state: LeaderIsrAndControllerEpoch) -> bytes:
        # a template: an election writes thousands of these, and a dict through the JSON encoder cost
        # 3x as much; the bytes are the encoder's (a property test holds them to it)
        lai = state.leader_and_isr
        isr = ",".join(map(str, lai.isr)).encode()
        return TopicPartitionStateZNode._STATE % (state.controller_epoch, lai.leader, lai.leader_epoch, isr)

    @staticmethod
    def decode(topic: str, partition: int, data: bytes | None, zk_version: int) -> LeaderIsrAndControllerEpoch:
        fast = _decode_state_as_written(data, zk_version) if data else None
        if fast is not None:
            return fast
        path = TopicPartitionStateZNode.path(topic, partition)
        obj = _load_object(path, data)
        return LeaderIsrAndControllerEpoch(
            LeaderAndIsr(
                leader=_int_field(path, data, obj, "leader"),
                leader_epoch=_int_field(path, data, obj, "leader_epoch"),
                isr=_int_list(path, data, _field(path, data, obj, "isr", list), "isr"),
                zk_version=zk_version,
            ),
            controller_epoch=_int_field(path, data, obj, "controller_epoch"),
        )


# --- admin intents ------------------------------------------------------------------------------


class AdminZNode:
    mode = CreateMode.PERSISTENT

    @staticmethod
    def path() -> str:
        return "/admin"


class DeleteTopicsZNode:
    mode = CreateMode.PERSISTENT

    @staticmethod
    def path() -> str:
        return f"{AdminZNode.path()}/delete_topics"


class DeleteTopicsTopicZNode:
    """`/admin/delete_topics/<t>`: its existence is the intent; no data."""

    mode = CreateMode.PERSISTENT

    @staticmethod
    def path(topic: str) -> str:
        return f"{DeleteTopicsZNode.path()}/{topic}"

    @staticmethod
    def encode() -> bytes:
        return b""


class ReassignPartitionsZNode:
    """`/admin/reassign_partitions`: byte-identical to Kafka 2.8's Jackson bean output (§1.5)."""

    mode = CreateMode.PERSISTENT

    @staticmethod
    def path() -> str:
        return f"{AdminZNode.path()}/reassign_partitions"

    @staticmethod
    def encode(reassignment: Mapping[TopicPartition, Sequence[int]]) -> bytes:
        """Partitions in the iteration order of `reassignment`, as Kafka writes them."""
        return to_json_bytes(
            {
                "version": 1,
                "partitions": [
                    {"topic": tp.topic, "partition": tp.partition, "replicas": list(replicas)}
                    for tp, replicas in reassignment.items()
                ],
            }
        )

    @staticmethod
    def decode(data: bytes | None) -> dict[TopicPartition, tuple[int, ...]]:
        path = ReassignPartitionsZNode.path()
        obj = _load_object(path, data)
        result: dict[TopicPartition, tuple[int, ...]] = {}
        for entry in _partitions_list(path, data, obj):
            tp = _topic_partition(path, data, entry)
            result[tp] = _int_list(path, data, _field(path, data, entry, "replicas", list), f"replicas of {tp}")
        return result


class PreferredReplicaElectionZNode:
    """`/admin/preferred_replica_election`: a set of partitions (the decoder dedups, as Kafka's Set does)."""

    mode = CreateMode.PERSISTENT

    @staticmethod
    def path() -> str:
        return f"{AdminZNode.path()}/preferred_replica_election"

    @staticmethod
    def encode(partitions: Iterable[TopicPartition]) -> bytes:
        return to_json_bytes(_partitions_document(partitions))

    @staticmethod
    def decode(data: bytes | None) -> set[TopicPartition]:
        return _decode_partitions_document(PreferredReplicaElectionZNode.path(), data)


def _partitions_document(partitions: Iterable[TopicPartition]) -> dict[str, Any]:
    unique = dict.fromkeys(partitions)
    return {"version": 1, "partitions": [{"topic": tp.topic, "partition": tp.partition} for tp in unique]}


def _decode_partitions_document(path: str, data: bytes | None) -> set[TopicPartition]:
    obj = _load_object(path, data)
    return {_topic_partition(path, data, entry) for entry in _partitions_list(path, data, obj)}


# --- notifications ------------------------------------------------------------------------------


class IsrChangeNotificationZNode:
    mode = CreateMode.PERSISTENT

    @staticmethod
    def path() -> str:
        return "/isr_change_notification"


class IsrChangeNotificationSequenceZNode:
    mode = CreateMode.PERSISTENT_SEQUENTIAL
    PREFIX = "isr_change_"

    @staticmethod
    def path(sequence: str = "") -> str:
        return f"{IsrChangeNotificationZNode.path()}/{IsrChangeNotificationSequenceZNode.PREFIX}{sequence}"

    @staticmethod
    def encode(partitions: Iterable[TopicPartition]) -> bytes:
        return to_json_bytes(_partitions_document(partitions))

    @staticmethod
    def decode(data: bytes | None) -> set[TopicPartition]:
        return _decode_partitions_document(IsrChangeNotificationZNode.path(), data)


class LogDirEventNotificationZNode:
    mode = CreateMode.PERSISTENT

    @staticmethod
    def path() -> str:
        return "/log_dir_event_notification"


class LogDirEventNotificationSequenceZNode:
    mode = CreateMode.PERSISTENT_SEQUENTIAL
    PREFIX = "log_dir_event_"
    LOG_DIR_FAILURE = 1

    @staticmethod
    def path(sequence: str = "") -> str:
        return f"{LogDirEventNotificationZNode.path()}/{LogDirEventNotificationSequenceZNode.PREFIX}{sequence}"

    @staticmethod
    def encode(broker_id: int, event: int = LOG_DIR_FAILURE) -> bytes:
        return to_json_bytes({"version": 1, "broker": broker_id, "event": event})

    @staticmethod
    def decode(data: bytes | None) -> int:
        """The id of the broker whose log dir failed."""
        path = LogDirEventNotificationZNode.path()
        return _int_field(path, data, _load_object(path, data), "broker")


# --- configs ------------------------------------------------------------------------------------


class ConfigType:
    """Kafka's `ConfigType`: the entity types under `/config` (`ips` exists from 2.8)."""

    TOPIC = "topics"
    CLIENT = "clients"
    USER = "users"
    BROKER = "brokers"
    IP = "ips"
    ALL = (TOPIC, CLIENT, USER, BROKER, IP)


DEFAULT_ENTITY_NAME = "<default>"
"""`ConfigEntityName.Default`: the entity that holds cluster-wide defaults."""


def sanitize_entity_name(name: str) -> str:
    """Kafka's `Sanitizer.sanitize`: URL-encode user and client ids so they are valid znode names.

    Kafka uses Java's URLEncoder, then replaces `+` by `%20` and `*` by `%2A`. A user or client literally
    named `<default>` is `%3Cdefault%3E`: the default entity is not a sanitized name.
    """
    # Python's quote keeps "~" unreserved; Java's URLEncoder does not
    return quote(name, safe="-_.").replace("~", "%7E")


def desanitize_entity_name(name: str) -> str:
    """Kafka's `Sanitizer.desanitize` (Java's URLDecoder: `+` is a space too)."""
    return unquote_plus(name)


def user_client_entity_path(sanitized_user: str, sanitized_client_id: str | None = None) -> str:
    """A <user, client-id> quota entity's path under `/config/users`: `<user>/clients/<client-id>`, or
    `<user>/clients` (the parent of a user's client entities) without a client id."""
    clients = f"{sanitized_user}/{ConfigType.CLIENT}"
    return clients if sanitized_client_id is None else f"{clients}/{sanitized_client_id}"


class ConfigZNode:
    mode = CreateMode.PERSISTENT

    @staticmethod
    def path() -> str:
        return "/config"


class ConfigEntityTypeZNode:
    mode = CreateMode.PERSISTENT

    @staticmethod
    def path(entity_type: str) -> str:
        return f"{ConfigZNode.path()}/{entity_type}"


class ConfigEntityZNode:
    """`/config/<type>/<name>`: `{"version":1,"config":{…}}`, values always strings."""

    mode = CreateMode.PERSISTENT

    @staticmethod
    def path(entity_type: str, entity_path: str) -> str:
        """`entity_path` is the sanitized name (`alice/clients/c1` for a user's client quota)."""
        return f"{ConfigEntityTypeZNode.path(entity_type)}/{entity_path}"

    @staticmethod
    def encode(config: Mapping[str, str]) -> bytes:
        """Keys in `java.util.Properties` order (Java 9+), as Kafka serialises them."""
        return to_json_bytes({"version": 1, "config": {k: str(config[k]) for k in properties_order(config)}})

    @staticmethod
    def decode(path: str, data: bytes | None) -> dict[str, str]:
        """A config znode with no data means no overrides (`{}`); a document without `config` is malformed."""
        if not data:
            return {}
        obj = _load_object(path, data)
        config = _field(path, data, obj, "config", dict)
        if not isinstance(config, dict) or any(not isinstance(v, str) for v in config.values()):
            raise MalformedZNodeError(path, data, "field 'config' is not an object of strings")
        return dict(config)


class ConfigEntityChangeNotificationZNode:
    mode = CreateMode.PERSISTENT

    @staticmethod
    def path() -> str:
        return f"{ConfigZNode.path()}/changes"


class ConfigEntityChangeNotificationSequenceZNode:
    mode = CreateMode.PERSISTENT_SEQUENTIAL
    PREFIX = "config_change_"

    @staticmethod
    def path(sequence: str = "") -> str:
        return (
            f"{ConfigEntityChangeNotificationZNode.path()}/"
            f"{ConfigEntityChangeNotificationSequenceZNode.PREFIX}{sequence}"
        )

    @staticmethod
    def encode(entity_path: str) -> bytes:
        return to_json_bytes({"version": 2, "entity_path": entity_path})

    @staticmethod
    def decode(data: bytes | None) -> str:
        """The changed entity's path (`topics/foo`), from a version 1 or version 2 notification."""
        path = ConfigEntityChangeNotificationZNode.path()
        obj = _load_object(path, data)
        version = _int_field(path, data, obj, "version")
        if version == 1:
            entity_type = _field(path, data, obj, "entity_type", str)
            return f"{entity_type}/{_field(path, data, obj, 'entity_name', str)}"
        if version == 2:
            return str(_field(path, data, obj, "entity_path", str))
        raise MalformedZNodeError(path, data, f"unknown config change notification version {version}")


# --- cluster-wide -------------------------------------------------------------------------------


class ClusterZNode:
    mode = CreateMode.PERSISTENT

    @staticmethod
    def path() -> str:
        return "/cluster"


class ClusterIdZNode:
    mode = CreateMode.PERSISTENT

    @staticmethod
    def path() -> str:
        return f"{ClusterZNode.path()}/id"

    @staticmethod
    def encode(cluster_id: str) -> bytes:
        return to_json_bytes({"version": "1", "id": cluster_id})

    @staticmethod
    def decode(data: bytes | None) -> str:
        path = ClusterIdZNode.path()
        return str(_field(path, data, _load_object(path, data), "id", str))


class ProducerIdBlockZNode:
    mode = CreateMode.PERSISTENT
    BLOCK_SIZE = 1000

    @staticmethod
    def path() -> str:
        return "/latest_producer_id_block"

    @staticmethod
    def encode(block: ProducerIdBlock) -> bytes:
        return to_json_bytes(
            {
                "version": 1,
                "broker": block.broker_id,
                "block_start": str(block.block_start),
                "block_end": str(block.block_end),
            }
        )

    @staticmethod
    def decode(data: bytes | None) -> ProducerIdBlock:
        path = ProducerIdBlockZNode.path()
        obj = _load_object(path, data)
        return ProducerIdBlock(
            broker_id=_int_field(path, data, obj, "broker"),
            block_start=_string_int(path, data, obj, "block_start"),
            block_end=_string_int(path, data, obj, "block_end"),
        )


class FeatureZNode:
    """`/feature` (2.7+); written in Scala 2.13's mutable-map order `features,version,status`."""

    mode = CreateMode.PERSISTENT
    DISABLED = 0
    ENABLED = 1

    @staticmethod
    def path() -> str:
        return "/feature"

    @staticmethod
    def encode(status: int, features: Mapping[str, tuple[int, int]]) -> bytes:
        return to_json_bytes(
            {
                "features": {
                    name: {"min_version_level": lo, "max_version_level": hi} for name, (lo, hi) in features.items()
                },
                "version": 1,
                "status": status,
            }
        )

    @staticmethod
    def decode(data: bytes | None) -> tuple[int, dict[str, tuple[int, int]]]:
        path = FeatureZNode.path()
        obj = _load_object(path, data)
        features = {}
        for name, levels in _field(path, data, obj, "features", dict).items():
            if not isinstance(levels, dict):
                raise MalformedZNodeError(path, data, f"feature '{name}' is not an object")
            features[name] = (
                _int_field(path, data, levels, "min_version_level"),
                _int_field(path, data, levels, "max_version_level"),
            )
        return _int_field(path, data, obj, "status"), features


class ConsumerPathZNode:
    mode = CreateMode.PERSISTENT

    @staticmethod
    def path() -> str:
        return "/consumers"


class ConsumerOffsetZNode:
    """`/consumers/<group>/offsets/<t>/<p>`: the old consumer's committed offset, a decimal string."""

    mode = CreateMode.PERSISTENT

    @staticmethod
    def path(group: str, topic: str, partition: int) -> str:
        return f"{ConsumerPathZNode.path()}/{group}/offsets/{topic}/{partition}"

    @staticmethod
    def encode(offset: int) -> bytes:
        return str(offset).encode("ascii")

    @staticmethod
    def decode(group: str, topic: str, partition: int, data: bytes | None) -> int:
        return _ascii_number(ConsumerOffsetZNode.path(group, topic, partition), data, java_parse_long)


# --- ACLs and delegation tokens -----------------------------------------------------------------


class AclZNode:
    """`/kafka-acl/<ResourceType>/<name>` (literal patterns) and `/kafka-acl-extended/prefixed/...`."""

    mode = CreateMode.PERSISTENT
    LITERAL_ROOT = "/kafka-acl"
    PREFIXED_ROOT = "/kafka-acl-extended/prefixed"

    @staticmethod
    def path(resource_type: str, name: str, pattern_type: str = "LITERAL") -> str:
        root = AclZNode.LITERAL_ROOT if pattern_type == "LITERAL" else AclZNode.PREFIXED_ROOT
        return f"{root}/{resource_type}/{name}"

    @staticmethod
    def encode(acls: Iterable[AclEntry]) -> bytes:
        return to_json_bytes(
            {
                "version": 1,
                "acls": [
                    {
                        "principal": a.principal,
                        "permissionType": a.permission_type,
                        "operation": a.operation,
                        "host": a.host,
                    }
                    for a in acls
                ],
            }
        )

    @staticmethod
    def decode(path: str, data: bytes | None) -> list[AclEntry]:
        obj = _load_object(path, data)
        result = []
        for entry in _field(path, data, obj, "acls", list):
            if not isinstance(entry, dict):
                raise MalformedZNodeError(path, data, "an ACL is not an object")
            result.append(
                AclEntry(
                    principal=_field(path, data, entry, "principal", str),
                    permission_type=_field(path, data, entry, "permissionType", str),
                    operation=_field(path, data, entry, "operation", str),
                    host=_field(path, data, entry, "host", str),
                )
            )
        return result


class AclChangeNotificationSequenceZNode:
    """`/kafka-acl-changes/acl_changes_<seq>`: the changed resource as plain text, `Topic:foo`."""

    mode = CreateMode.PERSISTENT_SEQUENTIAL
    ROOT = "/kafka-acl-changes"
    PREFIX = "acl_changes_"

    @staticmethod
    def path(sequence: str = "") -> str:
        return f"{AclChangeNotificationSequenceZNode.ROOT}/{AclChangeNotificationSequenceZNode.PREFIX}{sequence}"

    @staticmethod
    def encode(resource_type: str, name: str) -> bytes:
        return f"{resource_type}:{name}".encode()

    @staticmethod
    def decode(data: bytes | None) -> tuple[str, str]:
        try:
            text = (data or b"").decode("utf-8")
        except UnicodeDecodeError:
            raise MalformedZNodeError(AclChangeNotificationSequenceZNode.path(), data, "not UTF-8 text") from None
        resource_type, sep, name = text.partition(":")
        if not sep:
            raise MalformedZNodeError(AclChangeNotificationSequenceZNode.path(), data, "not <ResourceType>:<name>")
        return resource_type, name


class ExtendedAclChangeNotificationSequenceZNode:
    """`/kafka-acl-extended-changes/acl_changes_<seq>` (2.0+, prefixed ACLs)."""

    mode = CreateMode.PERSISTENT_SEQUENTIAL
    ROOT = "/kafka-acl-extended-changes"
    PREFIX = "acl_changes_"

    @staticmethod
    def path(sequence: str = "") -> str:
        root = ExtendedAclChangeNotificationSequenceZNode.ROOT
        return f"{root}/{ExtendedAclChangeNotificationSequenceZNode.PREFIX}{sequence}"

    @staticmethod
    def encode(resource_type: str, name: str, pattern_type: str) -> bytes:
        return to_json_bytes({"version": 1, "resourceType": resource_type, "name": name, "patternType": pattern_type})

    @staticmethod
    def decode(data: bytes | None) -> tuple[str, str, str]:
        path = ExtendedAclChangeNotificationSequenceZNode.ROOT
        obj = _load_object(path, data)
        return (
            _field(path, data, obj, "resourceType", str),
            _field(path, data, obj, "name", str),
            _field(path, data, obj, "patternType", str),
        )


class DelegationTokenZNode:
    """`/delegation_token/tokens/<id>` (1.1+). kafkaops issues no tokens; the path is reserved."""

    mode = CreateMode.PERSISTENT
    ROOT = "/delegation_token"

    @staticmethod
    def path(token_id: str) -> str:
        return f"{DelegationTokenZNode.ROOT}/tokens/{token_id}"


class DelegationTokenChangeNotificationSequenceZNode:
    """`/delegation_token/token_changes/token_change_<seq>`: the token id as plain text."""

    mode = CreateMode.PERSISTENT_SEQUENTIAL
    PREFIX = "token_change_"

    @staticmethod
    def path(sequence: str = "") -> str:
        prefix = DelegationTokenChangeNotificationSequenceZNode.PREFIX
        return f"{DelegationTokenZNode.ROOT}/token_changes/{prefix}{sequence}"

    @staticmethod
    def encode(token_id: str) -> bytes:
        return token_id.encode()

    @staticmethod
    def decode(data: bytes | None) -> str:
        return (data or b"").decode("utf-8")


PERSISTENT_PATHS: tuple[str, ...] = (
    ConsumerPathZNode.path(),
    BrokerIdsZNode.path(),
    TopicsZNode.path(),
    ConfigEntityChangeNotificationZNode.path(),
    DeleteTopicsZNode.path(),
    BrokerSequenceIdZNode.path(),
    IsrChangeNotificationZNode.path(),
    ProducerIdBlockZNode.path(),
    LogDirEventNotificationZNode.path(),
    *(ConfigEntityTypeZNode.path(t) for t in ConfigType.ALL),
)
"""Kafka 2.8 `ZkData.PersistentZkPaths`: created (with null data) by every broker at start-up."""

SEQUENCE_WIDTH = 10
"""ZooKeeper appends a 10-digit zero-padded counter to sequential znodes."""
