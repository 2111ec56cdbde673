"""The Kafka error-code registry: one class per code, registered once, unknown codes fail loudly."""

from __future__ import annotations

import pytest

from kafkaops.cluster.common import errors
from kafkaops.cluster.common.errors import (
    ERRORS,
    BrokerError,
    CorruptMessageError,
    InvalidRequestError,
    KafkaOpsError,
    KafkaProtocolError,
    NotControllerError,
    NotLeaderOrFollowerError,
    StaleBrokerEpochError,
    StaleControllerEpochError,
    UnknownErrorCodeError,
    UnsupportedVersionError,
    check,
    for_code,
)


def test_every_error_is_a_kafkaops_error() -> None:
    assert issubclass(KafkaProtocolError, KafkaOpsError)
    for cls in ERRORS.values():
        assert issubclass(cls, BrokerError) and issubclass(cls, KafkaProtocolError)


def test_registry_covers_kafka_codes_minus_one_to_104_except_none() -> None:
    assert sorted(ERRORS) == [-1, *range(1, 105)]
    assert len({cls.name for cls in ERRORS.values()}) == len(ERRORS)


@pytest.mark.parametrize(
    ("code", "cls", "name", "retriable"),
    [
        (2, CorruptMessageError, "CORRUPT_MESSAGE", True),  # retriable in Java's clients
        (6, NotLeaderOrFollowerError, "NOT_LEADER_OR_FOLLOWER", True),
        (11, StaleControllerEpochError, "STALE_CONTROLLER_EPOCH", False),
        (35, UnsupportedVersionError, "UNSUPPORTED_VERSION", False),
        (41, NotControllerError, "NOT_CONTROLLER", True),
        (42, InvalidRequestError, "INVALID_REQUEST", False),
        (77, StaleBrokerEpochError, "STALE_BROKER_EPOCH", False),
    ],
)
def test_codes_names_and_retriable_flags(code: int, cls: type[BrokerError], name: str, retriable: bool) -> None:
    assert for_code(code) is cls
    assert (cls.code, cls.name, cls.retriable) == (code, name, retriable)


@pytest.mark.parametrize(
    ("code", "retriable"),
    # kafka-protocol.md §14's table with Kafka's flags: the ones our clients act on.
    [
        (1, False),
        (3, True),
        (5, True),
        (7, True),
        (10, False),
        (19, True),
        (20, True),
        (21, False),
        (56, True),
        (70, True),
        (71, True),
        (74, True),
        (75, True),
        (76, False),
        (78, True),
        (87, False),
        (-1, False),
    ],
)
def test_retriable_flags_follow_kafka(code: int, retriable: bool) -> None:
    assert for_code(code).retriable is retriable


@pytest.mark.parametrize("code", [0, 105, 9999, -2])
def test_unknown_codes_fail_loudly(code: int) -> None:
    with pytest.raises(UnknownErrorCodeError, match=f"unknown Kafka error code {code}"):
        for_code(code)


def test_a_code_registers_once() -> None:
    with pytest.raises(TypeError, match="already registered"):

        class Duplicate(BrokerError, code=6, name="AGAIN"):
            pass

    with pytest.raises(TypeError, match="NONE"):

        class NoError(BrokerError, code=0, name="NONE"):
            pass

    assert for_code(6) is NotLeaderOrFollowerError


def test_check_raises_the_registered_error_with_its_message() -> None:
    check(errors.NONE)
    with pytest.raises(NotLeaderOrFollowerError) as caught:
        check(6, "leader moved to 2")
    assert str(caught.value) == "NOT_LEADER_OR_FOLLOWER: leader moved to 2"
    assert str(NotControllerError()) == "NOT_CONTROLLER"
