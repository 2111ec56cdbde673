"""The floor's one error hierarchy: Kafka's error codes map onto it, no name is defined twice, and each
error prints what its raise site printed before (the CLI prints Kafka's texts verbatim; the broker logs
`NAME: message`)."""

from __future__ import annotations

import pickle

import kazoo.exceptions
import pytest

from kafkaops.cluster.common import errors
from kafkaops.cluster.common.errors import (
    BrokerError,
    BrokerNotAvailableError,
    InvalidPartitionsError,
    InvalidReplicaAssignmentError,
    InvalidReplicationFactorError,
    InvalidTopicError,
    KafkaOpsError,
    KafkaProtocolError,
    NotLeaderOrFollowerError,
    TopicExistsError,
    UnknownTopicOrPartitionError,
    UserError,
    ZNodeVersionConflictError,
    for_code,
    from_code,
)

ADMIN_INPUT_ERRORS = [
    (UnknownTopicOrPartitionError, 3, "UNKNOWN_TOPIC_OR_PARTITION"),
    (BrokerNotAvailableError, 8, "BROKER_NOT_AVAILABLE"),
    (InvalidTopicError, 17, "INVALID_TOPIC_EXCEPTION"),
    (TopicExistsError, 36, "TOPIC_ALREADY_EXISTS"),
    (InvalidPartitionsError, 37, "INVALID_PARTITIONS"),
    (InvalidReplicationFactorError, 38, "INVALID_REPLICATION_FACTOR"),
    (InvalidReplicaAssignmentError, 39, "INVALID_REPLICA_ASSIGNMENT"),
]


@pytest.mark.parametrize(("cls", "code", "name"), ADMIN_INPUT_ERRORS)
def test_admin_input_errors_carry_their_kafka_code_and_are_user_errors(
    cls: type[BrokerError], code: int, name: str
) -> None:
    assert issubclass(cls, BrokerError) and issubclass(cls, UserError)
    assert (cls.code, cls.name) == (code, name)
    assert for_code(code) is cls


def test_no_class_name_is_defined_twice() -> None:
    classes = [v for v in vars(errors).values() if isinstance(v, type) and issubclass(v, BaseException)]
    mine = [c for c in classes if c.__module__ == errors.__name__]
    assert len({c.__name__ for c in mine}) == len(mine)
    assert all(c.__name__ == name for name, c in vars(errors).items() if c in mine)


def test_the_admin_validation_errors_print_their_message_alone() -> None:
    # the admin library's texts, printed by the CLI verbatim (Kafka's getMessage)
    for cls in (InvalidTopicError, TopicExistsError, InvalidPartitionsError, InvalidReplicationFactorError):
        assert str(cls("Replication factor must be larger than 0.")) == "Replication factor must be larger than 0."
    assert str(InvalidReplicaAssignmentError("Partition replica list cannot be empty")) == (
        "Partition replica list cannot be empty"
    )


def test_errors_answered_by_brokers_print_their_name_first() -> None:
    # the broker's log form: `Controlled shutdown attempt 1 failed: BROKER_NOT_AVAILABLE: ...`
    assert (
        str(BrokerNotAvailableError("Broker id 5 does not exist."))
        == "BROKER_NOT_AVAILABLE: Broker id 5 does not exist."
    )
    assert str(UnknownTopicOrPartitionError("Topic t not present in metadata")) == (
        "UNKNOWN_TOPIC_OR_PARTITION: Topic t not present in metadata"
    )
    assert str(NotLeaderOrFollowerError()) == "NOT_LEADER_OR_FOLLOWER"


def test_one_instance_chooses_its_form() -> None:
    assert str(UnknownTopicOrPartitionError("Topic c not found.", named=False)) == "Topic c not found."
    error = InvalidTopicError("The topic is being deleted", named=True)
    assert str(error) == "INVALID_TOPIC_EXCEPTION: The topic is being deleted"
    assert error.message == "The topic is being deleted"


def test_codes_read_from_the_wire_print_the_broker_form() -> None:
    assert (
        str(from_code(17))
        == "INVALID_TOPIC_EXCEPTION: The request attempted to perform an operation on an invalid topic."
    )
    with pytest.raises(InvalidReplicationFactorError) as caught:
        errors.check(38, "bad")
    assert str(caught.value) == "INVALID_REPLICATION_FACTOR: bad"


@pytest.mark.parametrize("named", [True, False])
def test_pickling_keeps_the_form(named: bool) -> None:
    error = UnknownTopicOrPartitionError("Topic c not found.", named=named)
    copy = pickle.loads(pickle.dumps(error))
    assert type(copy) is UnknownTopicOrPartitionError and str(copy) == str(error)


def test_one_except_catches_both_roles() -> None:
    with pytest.raises(KafkaProtocolError):
        raise InvalidReplicationFactorError("x")
    with pytest.raises(UserError):
        raise UnknownTopicOrPartitionError("y")


def test_our_version_conflict_is_not_kazoos() -> None:
    assert ZNodeVersionConflictError.__name__ != kazoo.exceptions.BadVersionError.__name__
    assert not issubclass(ZNodeVersionConflictError, kazoo.exceptions.KazooException)
    assert issubclass(ZNodeVersionConflictError, KafkaOpsError)


def test_number_format_error_is_a_value_error_and_a_user_error() -> None:
    assert issubclass(errors.NumberFormatError, ValueError) and issubclass(
        errors.NumberFormatError, errors.InvalidArgumentError
    )
