"""The one error hierarchy of kafkaops, with Kafka's error codes as a registry of its classes.

Every room raises these classes and `cli` maps them to Kafka's text and exit code in one place. This
module is the floor of the import graph: it imports nothing of ours. The message of an error that a
user can cause is Kafka's own text where Kafka has one: the CLI prints it verbatim.

    KafkaOpsError                        root of every error kafkaops raises on purpose
    ├── UserError                        bad input from an operator: printed without a traceback, exit 1
    │   ├── InvalidArgumentError         Kafka's IllegalArgumentException / AdminCommandFailedException
    │   │   └── NumberFormatError        Java's NumberFormatException (also a ValueError)
    │   ├── UsageError                   Kafka's printUsageAndDie: the message, then the usage text
    │   ├── AdminOperationError, InvalidConfigurationError (UnknownConfigNameError), BrokerIdTakenError,
│   │   TerseReassignmentFailure
    │   └── ZooKeeperUnreachableError    (also a ZooKeeperError)
    ├── ZooKeeperError
    ├── MalformedZNodeError              a znode's bytes that its codec cannot decode
    ├── ControllerMovedError             a controller-epoch-checked write found another controller
    ├── ZNodeVersionConflictError        a conditional znode write lost a race (ZooKeeper's BadVersion)
    ├── LogError                         the partition log's own failures (`cluster/log`)
    │   ├── LogDirFailureError, LogDirLockedError, MalformedCheckpointError, CorruptIndexError,
    │   │   CorruptSnapshotError (the files kafka-dump-log reads)
    │   └── UnexpectedAppendOffsetError, OffsetsOutOfOrderError
    └── KafkaProtocolError               the wire protocol's failures
        ├── BrokerError                  one subclass per Kafka error code: code, name, retriable
        │   ├── CorruptMessageError      (2)  also raised by every decoder for malformed bytes
        │   ├── UnknownTopicOrPartitionError (3), BrokerNotAvailableError (8), InvalidTopicError (17),
        │   │   TopicExistsError (36), InvalidPartitionsError (37), InvalidReplicationFactorError (38),
        │   │   InvalidReplicaAssignmentError (39)      also UserErrors: `admin` raises them for bad input
        │   ├── InvalidRequestError      (42) a request that cannot be parsed: Kafka closes the connection
        │   └── ...
        ├── UnknownErrorCodeError        a code that is not in the registry
        ├── EncodeError                  a value that does not fit its schema (our own bug, never the peer's)
        ├── InvalidFrameError            a size prefix that is negative, too large, or cut short
        └── CorrelationIdMismatchError   a response that does not answer the oldest request in flight

Every Kafka error code (`Errors.java`; kafka-protocol.md §14) is one class, registered once by its
`code` when the class is defined: the broker puts `SomeError.code` in its responses, the clients of our
brokers (followers, the controller, `admin`) turn a code read from a response back into the class with
`for_code`, which fails loudly on a code it does not know rather than guessing. `retriable` is Kafka's
own flag (the Java exception extends `RetriableException`), what clients act on.

Decoders raise `CorruptMessageError` for any malformed input (short buffer, bad length, bad UTF-8,
leftover bytes), so one `except` covers garbage; `messages.decode_request` re-raises it as
`InvalidRequestError`, the error Kafka's broker uses when it drops a connection over a bad request.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import ClassVar

# --- the root and the operator's errors ------------------------------------------------------------


class KafkaOpsError(Exception):
    """Root of every error kafkaops raises on purpose."""


class UserError(KafkaOpsError):
    """Bad input from an operator: printed without a traceback, exit code 1."""


class InvalidArgumentError(UserError):
    """Kafka's IllegalArgumentException / AdminCommandFailedException for bad flags or values."""


class NumberFormatError(InvalidArgumentError, ValueError):
    """Java's NumberFormatException: text that `Integer.parseInt` / `Long.parseLong` refuses, with Java's
    message (`For input string: "x"`). Where Kafka's tools let it reach the operator, so do ours."""


class UsageError(UserError):
    """Kafka's `printUsageAndDie`: the message, then the usage text, exit 1."""


class AdminOperationError(UserError):
    """Kafka's AdminOperationException."""


class InvalidConfigurationError(UserError):
    """Kafka's ConfigException / InvalidConfigurationException."""


class UnknownConfigNameError(InvalidConfigurationError):
    """Kafka's InvalidConfigurationException for a config name it does not know (`Unknown topic config
    name: x`). Apart from a bad value (a ConfigException) because the Admin API answers them differently:
    INVALID_CONFIG with the text alone, where a bad value in AlterConfigs is an INVALID_REQUEST."""


class TerseReassignmentFailure(UserError):
    """Kafka's `TerseReassignmentFailureException`: printed as is, without Kafka's `Error: ` lead-in."""


class BrokerIdTakenError(UserError):
    """Another live session holds `/brokers/ids/<id>`: two brokers were started with one id."""


# --- ZooKeeper -------------------------------------------------------------------------------------


class ZooKeeperError(KafkaOpsError):
    """ZooKeeper could not be reached or answered with an unexpected error."""


class ZooKeeperUnreachableError(ZooKeeperError, UserError):
    """No ZooKeeper answered at the connect string within the timeout."""


class MalformedZNodeError(KafkaOpsError):
    """A znode held bytes that its codec cannot decode (never silently read as empty)."""

    def __init__(self, path: str, data: bytes | None, reason: str) -> None:
        shown = data[:200] if data is not None else None
        super().__init__(f"Malformed data in znode {path}: {reason} (data: {shown!r})")
        self.path = path
        self.data = data
        self.reason = reason


class ControllerMovedError(KafkaOpsError):
    """A controller-epoch-checked write failed: another controller has been elected."""


class ZNodeVersionConflictError(KafkaOpsError):
    """A conditional znode write lost a race (ZooKeeper's BadVersion), after its retries.

    Named apart from kazoo's `BadVersionError`, which is the ZooKeeper answer itself: code that catches
    kazoo's and raises ours imports both."""


# --- the partition log -----------------------------------------------------------------------------


class LogError(KafkaOpsError):
    """Root of the partition log's own failures (`cluster/log`). The log also raises the Kafka-coded
    errors below where Kafka answers a client with one (OFFSET_OUT_OF_RANGE, MESSAGE_TOO_LARGE,
    RECORD_LIST_TOO_LARGE, CORRUPT_MESSAGE)."""


class LogDirFailureError(LogError):
    """A log dir could not be read or written (an OSError: disk full, read-only, I/O error), or a log in it
    failed that way before. Kafka's KafkaStorageException: clients are answered KAFKA_STORAGE_ERROR and
    the broker stops serving the dir rather than writing on into a log in an unknown state."""

    def __init__(self, log_dir: str, message: str) -> None:
        super().__init__(f"Error in log dir {log_dir}: {message}")
        self.log_dir = log_dir


class LogDirLockedError(LogError):
    """Another process holds the log dir's `.lock`: two brokers were configured with one log dir."""


class UnexpectedAppendOffsetError(LogError):
    """A follower append starts below the log end offset (Kafka's UnexpectedAppendOffsetException); a
    follower whose log is empty answers it by starting its log at `first_offset`."""

    def __init__(self, message: str, first_offset: int, log_end_offset: int) -> None:
        super().__init__(message)
        self.first_offset = first_offset
        self.log_end_offset = log_end_offset


class OffsetsOutOfOrderError(LogError):
    """A follower append whose batches' offsets do not ascend (Kafka's OffsetsOutOfOrderException)."""


class MalformedCheckpointError(LogError):
    """A checkpoint file that does not parse (Kafka's "Malformed line in checkpoint file" IOException)."""


class CorruptIndexError(LogError):
    """An offset, time or transaction index that fails Kafka's checks (Kafka's CorruptIndexException)."""


class CorruptSnapshotError(LogError):
    """A producer state `.snapshot` file that does not read (Kafka's CorruptSnapshotException)."""


# --- the wire protocol and Kafka's error codes -----------------------------------------------------

NONE = 0
"""Kafka's error code for "no error" (Errors.NONE); it has no class."""


class KafkaProtocolError(KafkaOpsError):
    """Root of the wire protocol's errors (`kafkaops.cluster.protocol`) and of Kafka's error codes."""


_REGISTRY: dict[int, type[BrokerError]] = {}


class BrokerError(KafkaProtocolError):
    """An error that travels on the wire as a Kafka error code.

    Subclasses declare `code`, `name` (Kafka's `Errors` constant, as printed in Kafka's logs) and
    `retriable` as class keywords; defining a second class for a code already taken is a TypeError at
    import time, so the registry cannot hold two answers for one code.

    `str()` is `NAME: message`, the broker's log form. An error that `admin` raises for bad input prints
    its message alone, as Kafka's tools print an exception's `getMessage`: `named=False` as a class
    keyword makes that the class's default (the errors of Kafka's admin validation), and as a
    constructor keyword chooses it for one instance. `message` is the text without the name either way.
    """

    code: ClassVar[int]
    name: ClassVar[str]
    retriable: ClassVar[bool]
    named_by_default: ClassVar[bool] = True

    def __init_subclass__(cls, *, code: int, name: str, retriable: bool = False, named: bool = True) -> None:
        super().__init_subclass__()
        if code == NONE or code in _REGISTRY:
            raise TypeError(f"error code {code} ({name}) is NONE or already registered")
        cls.code, cls.name, cls.retriable, cls.named_by_default = code, name, retriable, named
        _REGISTRY[code] = cls

    def __init__(self, message: str = "", *, named: bool | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.named = self.named_by_default if named is None else named

    def __str__(self) -> str:
        if not self.named:
            return self.message
        return f"{self.name}: {self.message}" if self.message else self.name

    def __reduce__(self) -> tuple[object, ...]:
        # pickled across processes (Spark) with the instance's form, which `args` alone would lose
        return _rebuild, (type(self), self.message, self.named)


def _rebuild(cls: type[BrokerError], message: str, named: bool) -> BrokerError:
    return cls(message, named=named)


class UnknownErrorCodeError(KafkaProtocolError):
    """A peer sent an error code that this registry does not know: never mapped to a guess."""

    def __init__(self, code: int) -> None:
        super().__init__(f"unknown Kafka error code {code}")
        self.code = code


class EncodeError(KafkaProtocolError):
    """A value could not be encoded: a missing field, a number out of range, a wrong type.

    Encoders only see values built by our own code, so this is a bug on our side, not the peer's.
    """


class InvalidFrameError(KafkaProtocolError):
    """A frame's 4-byte size is negative or above the limit, or the peer closed mid-frame.

    Kafka's InvalidReceiveException: the connection is closed without an answer.
    """


class CorrelationIdMismatchError(KafkaProtocolError):
    """A response's correlation id is not the one of the oldest request in flight on its connection."""

    def __init__(self, expected: int, received: int) -> None:
        super().__init__(f"expected a response to correlation id {expected}, received {received}")
        self.expected = expected
        self.received = received


def for_code(code: int) -> type[BrokerError]:
    """The class registered for a non-zero Kafka error code.

    Raises UnknownErrorCodeError for NONE (0, which is no error) and for codes Kafka 3.0 did not define.
    """
    try:
        return _REGISTRY[code]
    except KeyError:
        raise UnknownErrorCodeError(code) from None


def check(code: int, message: str | None = None) -> None:
    """Raise the error for `code` unless it is NONE; how our clients read an error_code field."""
    if code != NONE:
        raise for_code(code)(message or "", named=True)


# --- the registry: one class per Kafka error code (Errors.java), in code order ---------------------


class UnknownServerError(BrokerError, code=-1, name="UNKNOWN_SERVER_ERROR"):
    """The server experienced an unexpected error when processing the request."""


class OffsetOutOfRangeError(BrokerError, code=1, name="OFFSET_OUT_OF_RANGE"):
    """The requested offset is outside the range the server keeps (below the log start offset or past the log end)."""


class CorruptMessageError(BrokerError, code=2, name="CORRUPT_MESSAGE", retriable=True):
    """Bytes that fail their CRC, exceed their declared size or cannot be parsed."""


class UnknownTopicOrPartitionError(BrokerError, UserError, code=3, name="UNKNOWN_TOPIC_OR_PARTITION", retriable=True):
    """This server does not host this topic-partition; Kafka's UnknownTopicOrPartitionException, also raised
    by `admin` for a topic that does not exist (with `named=False`: the tools print the message alone)."""


class InvalidFetchSizeError(BrokerError, code=4, name="INVALID_FETCH_SIZE"):
    """The requested fetch size is invalid."""


class LeaderNotAvailableError(BrokerError, code=5, name="LEADER_NOT_AVAILABLE", retriable=True):
    """The partition has no leader right now (an election is in progress or the topic was just created)."""


class NotLeaderOrFollowerError(BrokerError, code=6, name="NOT_LEADER_OR_FOLLOWER", retriable=True):
    """This broker is not the leader (or, for replica requests, not a replica) of the partition; Kafka before 2.7
    called it NOT_LEADER_FOR_PARTITION.
    """


class RequestTimedOutError(BrokerError, code=7, name="REQUEST_TIMED_OUT", retriable=True):
    """The request timed out (acks=-1 not satisfied within timeout_ms)."""


class BrokerNotAvailableError(BrokerError, UserError, code=8, name="BROKER_NOT_AVAILABLE"):
    """The broker is not available; Kafka's BrokerNotAvailableException, also raised by `admin` for a broker
    id that is not registered (with `named=False`: the tools print the message alone)."""


class ReplicaNotAvailableError(BrokerError, code=9, name="REPLICA_NOT_AVAILABLE", retriable=True):
    """A replica of the partition is not available (Metadata v0 with offline replicas)."""


class MessageTooLargeError(BrokerError, code=10, name="MESSAGE_TOO_LARGE"):
    """A batch is larger than the topic's max.message.bytes."""


class StaleControllerEpochError(BrokerError, code=11, name="STALE_CONTROLLER_EPOCH"):
    """A controller request came from an old controller, or carried an old leader epoch."""


class OffsetMetadataTooLargeError(BrokerError, code=12, name="OFFSET_METADATA_TOO_LARGE"):
    """The metadata of an offset commit was too large."""


class NetworkExceptionError(BrokerError, code=13, name="NETWORK_EXCEPTION", retriable=True):
    """The server disconnected before a response was received."""


class CoordinatorLoadInProgressError(BrokerError, code=14, name="COORDINATOR_LOAD_IN_PROGRESS", retriable=True):
    """The coordinator is loading and cannot answer yet."""


class CoordinatorNotAvailableError(BrokerError, code=15, name="COORDINATOR_NOT_AVAILABLE", retriable=True):
    """The coordinator is not available."""


class NotCoordinatorError(BrokerError, code=16, name="NOT_COORDINATOR", retriable=True):
    """This is not the correct coordinator."""


class InvalidTopicError(BrokerError, UserError, code=17, name="INVALID_TOPIC_EXCEPTION", named=False):
    """The request named an invalid topic; Kafka's InvalidTopicException (`Topic.validate`'s texts)."""


class RecordListTooLargeError(BrokerError, code=18, name="RECORD_LIST_TOO_LARGE"):
    """A batch is larger than the segment size."""


class NotEnoughReplicasError(BrokerError, code=19, name="NOT_ENOUGH_REPLICAS", retriable=True):
    """acks=-1 with fewer in-sync replicas than min.insync.replicas: nothing was appended."""


class NotEnoughReplicasAfterAppendError(BrokerError, code=20, name="NOT_ENOUGH_REPLICAS_AFTER_APPEND", retriable=True):
    """Appended, but the ISR shrank below min.insync.replicas before the batch was replicated."""


class InvalidRequiredAcksError(BrokerError, code=21, name="INVALID_REQUIRED_ACKS"):
    """acks was not -1, 0 or 1."""


class IllegalGenerationError(BrokerError, code=22, name="ILLEGAL_GENERATION"):
    """The group generation id is not valid."""


class InconsistentGroupProtocolError(BrokerError, code=23, name="INCONSISTENT_GROUP_PROTOCOL"):
    """The member's protocols are incompatible with the group's."""


class InvalidGroupIdError(BrokerError, code=24, name="INVALID_GROUP_ID"):
    """The group id is invalid."""


class UnknownMemberIdError(BrokerError, code=25, name="UNKNOWN_MEMBER_ID"):
    """The coordinator does not know this member."""


class InvalidSessionTimeoutError(BrokerError, code=26, name="INVALID_SESSION_TIMEOUT"):
    """The session timeout is outside the broker's allowed range."""


class RebalanceInProgressError(BrokerError, code=27, name="REBALANCE_IN_PROGRESS"):
    """The group is rebalancing."""


class InvalidCommitOffsetSizeError(BrokerError, code=28, name="INVALID_COMMIT_OFFSET_SIZE"):
    """The committed offset data size is not valid."""


class TopicAuthorizationFailedError(BrokerError, code=29, name="TOPIC_AUTHORIZATION_FAILED"):
    """Topic authorization failed."""


class GroupAuthorizationFailedError(BrokerError, code=30, name="GROUP_AUTHORIZATION_FAILED"):
    """Group authorization failed."""


class ClusterAuthorizationFailedError(BrokerError, code=31, name="CLUSTER_AUTHORIZATION_FAILED"):
    """Cluster authorization failed."""


class InvalidTimestampError(BrokerError, code=32, name="INVALID_TIMESTAMP"):
    """A record timestamp is out of the acceptable range."""


class UnsupportedSaslMechanismError(BrokerError, code=33, name="UNSUPPORTED_SASL_MECHANISM"):
    """The broker does not support the requested SASL mechanism."""


class IllegalSaslStateError(BrokerError, code=34, name="ILLEGAL_SASL_STATE"):
    """The request is not valid in the current SASL state."""


class UnsupportedVersionError(BrokerError, code=35, name="UNSUPPORTED_VERSION"):
    """The API version is not supported."""


class TopicExistsError(BrokerError, UserError, code=36, name="TOPIC_ALREADY_EXISTS", named=False):
    """A topic with this name already exists; Kafka's TopicExistsException."""


class InvalidPartitionsError(BrokerError, UserError, code=37, name="INVALID_PARTITIONS", named=False):
    """The number of partitions is invalid; Kafka's InvalidPartitionsException."""


class InvalidReplicationFactorError(BrokerError, UserError, code=38, name="INVALID_REPLICATION_FACTOR", named=False):
    """The replication factor is invalid; Kafka's InvalidReplicationFactorException."""


class InvalidReplicaAssignmentError(BrokerError, UserError, code=39, name="INVALID_REPLICA_ASSIGNMENT", named=False):
    """The replica assignment is invalid; Kafka's InvalidReplicaAssignmentException."""


class InvalidConfigError(BrokerError, code=40, name="INVALID_CONFIG"):
    """The configuration is invalid."""


class NotControllerError(BrokerError, code=41, name="NOT_CONTROLLER", retriable=True):
    """This broker is not the controller of the cluster."""


class InvalidRequestError(BrokerError, code=42, name="INVALID_REQUEST"):
    """The request is malformed or was sent to an incompatible broker."""


class UnsupportedForMessageFormatError(BrokerError, code=43, name="UNSUPPORTED_FOR_MESSAGE_FORMAT"):
    """The message format version does not support the request."""


class PolicyViolationError(BrokerError, code=44, name="POLICY_VIOLATION"):
    """The request violates the configured policy."""


class OutOfOrderSequenceNumberError(BrokerError, code=45, name="OUT_OF_ORDER_SEQUENCE_NUMBER"):
    """The broker received an out-of-order sequence number."""


class DuplicateSequenceNumberError(BrokerError, code=46, name="DUPLICATE_SEQUENCE_NUMBER"):
    """The broker received a duplicate sequence number."""


class InvalidProducerEpochError(BrokerError, code=47, name="INVALID_PRODUCER_EPOCH"):
    """The producer used an old epoch."""


class InvalidTxnStateError(BrokerError, code=48, name="INVALID_TXN_STATE"):
    """A transactional operation was attempted in an invalid state."""


class InvalidProducerIdMappingError(BrokerError, code=49, name="INVALID_PRODUCER_ID_MAPPING"):
    """The producer id is not assigned to its transactional id."""


class InvalidTransactionTimeoutError(BrokerError, code=50, name="INVALID_TRANSACTION_TIMEOUT"):
    """The transaction timeout exceeds max.transaction.timeout.ms."""


class ConcurrentTransactionsError(BrokerError, code=51, name="CONCURRENT_TRANSACTIONS", retriable=True):
    """Another operation on the same transaction is in progress."""


class TransactionCoordinatorFencedError(BrokerError, code=52, name="TRANSACTION_COORDINATOR_FENCED"):
    """The transaction coordinator is no longer current."""


class TransactionalIdAuthorizationFailedError(BrokerError, code=53, name="TRANSACTIONAL_ID_AUTHORIZATION_FAILED"):
    """Transactional id authorization failed."""


class SecurityDisabledError(BrokerError, code=54, name="SECURITY_DISABLED"):
    """Security features are disabled."""


class OperationNotAttemptedError(BrokerError, code=55, name="OPERATION_NOT_ATTEMPTED"):
    """The broker did not attempt this operation."""


class KafkaStorageError(BrokerError, code=56, name="KAFKA_STORAGE_ERROR", retriable=True):
    """A disk error on the broker (Produce v4+, Fetch v6+)."""


class LogDirNotFoundError(BrokerError, code=57, name="LOG_DIR_NOT_FOUND"):
    """The log directory does not exist."""


class SaslAuthenticationFailedError(BrokerError, code=58, name="SASL_AUTHENTICATION_FAILED"):
    """SASL authentication failed."""


class UnknownProducerIdError(BrokerError, code=59, name="UNKNOWN_PRODUCER_ID"):
    """The broker has no state for this producer id."""


class ReassignmentInProgressError(BrokerError, code=60, name="REASSIGNMENT_IN_PROGRESS"):
    """A partition reassignment is in progress."""


class DelegationTokenAuthDisabledError(BrokerError, code=61, name="DELEGATION_TOKEN_AUTH_DISABLED"):
    """Delegation token authentication is disabled."""


class DelegationTokenNotFoundError(BrokerError, code=62, name="DELEGATION_TOKEN_NOT_FOUND"):
    """The delegation token was not found."""


class DelegationTokenOwnerMismatchError(BrokerError, code=63, name="DELEGATION_TOKEN_OWNER_MISMATCH"):
    """The delegation token owner does not match."""


class DelegationTokenRequestNotAllowedError(BrokerError, code=64, name="DELEGATION_TOKEN_REQUEST_NOT_ALLOWED"):
    """Delegation token requests are not allowed on this channel."""


class DelegationTokenAuthorizationFailedError(BrokerError, code=65, name="DELEGATION_TOKEN_AUTHORIZATION_FAILED"):
    """Delegation token authorization failed."""


class DelegationTokenExpiredError(BrokerError, code=66, name="DELEGATION_TOKEN_EXPIRED"):
    """The delegation token has expired."""


class InvalidPrincipalTypeError(BrokerError, code=67, name="INVALID_PRINCIPAL_TYPE"):
    """The principal type is not supported."""


class NonEmptyGroupError(BrokerError, code=68, name="NON_EMPTY_GROUP"):
    """The group is not empty."""


class GroupIdNotFoundError(BrokerError, code=69, name="GROUP_ID_NOT_FOUND"):
    """The group id does not exist."""


class FetchSessionIdNotFoundError(BrokerError, code=70, name="FETCH_SESSION_ID_NOT_FOUND", retriable=True):
    """The fetch session id was not found (clients go back to full fetches)."""


class InvalidFetchSessionEpochError(BrokerError, code=71, name="INVALID_FETCH_SESSION_EPOCH", retriable=True):
    """The fetch session epoch is invalid."""


class ListenerNotFoundError(BrokerError, code=72, name="LISTENER_NOT_FOUND", retriable=True):
    """The leader has no endpoint for the listener the request came in on."""


class TopicDeletionDisabledError(BrokerError, code=73, name="TOPIC_DELETION_DISABLED"):
    """Topic deletion is disabled (delete.topic.enable=false)."""


class FencedLeaderEpochError(BrokerError, code=74, name="FENCED_LEADER_EPOCH", retriable=True):
    """The request's leader epoch is older than the broker's."""


class UnknownLeaderEpochError(BrokerError, code=75, name="UNKNOWN_LEADER_EPOCH", retriable=True):
    """The request's leader epoch is newer than the broker's."""


class UnsupportedCompressionTypeError(BrokerError, code=76, name="UNSUPPORTED_COMPRESSION_TYPE"):
    """The compression codec is not allowed at this API version, or not supported here."""


class StaleBrokerEpochError(BrokerError, code=77, name="STALE_BROKER_EPOCH"):
    """A controller request carried an old broker epoch."""


class OffsetNotAvailableError(BrokerError, code=78, name="OFFSET_NOT_AVAILABLE", retriable=True):
    """The leader's high watermark has not yet reached the start of its epoch."""


class MemberIdRequiredError(BrokerError, code=79, name="MEMBER_ID_REQUIRED"):
    """The group member needs a valid member id."""


class PreferredLeaderNotAvailableError(BrokerError, code=80, name="PREFERRED_LEADER_NOT_AVAILABLE", retriable=True):
    """The preferred leader was not available."""


class GroupMaxSizeReachedError(BrokerError, code=81, name="GROUP_MAX_SIZE_REACHED"):
    """The group has reached its maximum size."""


class FencedInstanceIdError(BrokerError, code=82, name="FENCED_INSTANCE_ID"):
    """Another member with the same group.instance.id fenced this one."""


class EligibleLeadersNotAvailableError(BrokerError, code=83, name="ELIGIBLE_LEADERS_NOT_AVAILABLE", retriable=True):
    """No eligible leader is available for the election."""


class ElectionNotNeededError(BrokerError, code=84, name="ELECTION_NOT_NEEDED", retriable=True):
    """The leader election is not needed."""


class NoReassignmentInProgressError(BrokerError, code=85, name="NO_REASSIGNMENT_IN_PROGRESS"):
    """No partition reassignment is in progress."""


class GroupSubscribedToTopicError(BrokerError, code=86, name="GROUP_SUBSCRIBED_TO_TOPIC"):
    """The group is subscribed to the topic."""


class InvalidRecordError(BrokerError, code=87, name="INVALID_RECORD"):
    """A batch failed validation (one v2 batch per partition, count = lastOffsetDelta + 1, no control batch, ...)."""


class UnstableOffsetCommitError(BrokerError, code=88, name="UNSTABLE_OFFSET_COMMIT", retriable=True):
    """There are unstable offsets that need to be cleared."""


class ThrottlingQuotaExceededError(BrokerError, code=89, name="THROTTLING_QUOTA_EXCEEDED", retriable=True):
    """The throttling quota has been exceeded."""


class ProducerFencedError(BrokerError, code=90, name="PRODUCER_FENCED"):
    """A newer producer with the same transactional id fenced this one."""


class ResourceNotFoundError(BrokerError, code=91, name="RESOURCE_NOT_FOUND"):
    """A request illegally referred to a resource that does not exist."""


class DuplicateResourceError(BrokerError, code=92, name="DUPLICATE_RESOURCE"):
    """A request illegally referred to the same resource twice."""


class UnacceptableCredentialError(BrokerError, code=93, name="UNACCEPTABLE_CREDENTIAL"):
    """The requested credential would not meet the criteria for acceptability."""


class InconsistentVoterSetError(BrokerError, code=94, name="INCONSISTENT_VOTER_SET"):
    """The voter set of the request is inconsistent."""


class InvalidUpdateVersionError(BrokerError, code=95, name="INVALID_UPDATE_VERSION"):
    """The given update version was invalid."""


class FeatureUpdateFailedError(BrokerError, code=96, name="FEATURE_UPDATE_FAILED"):
    """Updating finalized features failed."""


class PrincipalDeserializationFailureError(BrokerError, code=97, name="PRINCIPAL_DESERIALIZATION_FAILURE"):
    """The request principal could not be deserialized."""


class SnapshotNotFoundError(BrokerError, code=98, name="SNAPSHOT_NOT_FOUND"):
    """The requested snapshot was not found."""


class PositionOutOfRangeError(BrokerError, code=99, name="POSITION_OUT_OF_RANGE"):
    """The requested position is outside the snapshot."""


class UnknownTopicIdError(BrokerError, code=100, name="UNKNOWN_TOPIC_ID", retriable=True):
    """This server does not host this topic id."""


class DuplicateBrokerRegistrationError(BrokerError, code=101, name="DUPLICATE_BROKER_REGISTRATION"):
    """This broker id is already registered."""


class BrokerIdNotRegisteredError(BrokerError, code=102, name="BROKER_ID_NOT_REGISTERED"):
    """The given broker id was not registered."""


class InconsistentTopicIdError(BrokerError, code=103, name="INCONSISTENT_TOPIC_ID", retriable=True):
    """The log's topic id does not match the topic id in the request."""


class InconsistentClusterIdError(BrokerError, code=104, name="INCONSISTENT_CLUSTER_ID"):
    """The cluster id in the request does not match the server's."""


ERRORS: Mapping[int, type[BrokerError]] = MappingProxyType(_REGISTRY)
"""Every registered code and its class (read-only)."""


KAFKA_MESSAGES: Mapping[int, str] = MappingProxyType(
    {
        -1: "The server experienced an unexpected error when processing the request.",
        1: "The requested offset is not within the range of offsets maintained by the server.",
        2: "This message has failed its CRC checksum, exceeds the valid size, has a null key for a compacted topic, "
        "or is otherwise corrupt.",
        3: "This server does not host this topic-partition.",
        4: "The requested fetch size is invalid.",
        5: "There is no leader for this topic-partition as we are in the middle of a leadership election.",
        6: "For requests intended only for the leader, this error indicates that the broker is not the current "
        "leader. For requests intended for any replica, this error indicates that the broker is not a replica of "
        "the topic partition.",
        7: "The request timed out.",
        8: "The broker is not available.",
        9: "The replica is not available for the requested topic-partition. Produce/Fetch requests and other "
        "requests intended only for the leader or follower return NOT_LEADER_OR_FOLLOWER if the broker is not a "
        "replica of the topic-partition.",
        10: "The request included a message larger than the max message size the server will accept.",
        13: "The server disconnected before a response was received.",
        17: "The request attempted to perform an operation on an invalid topic.",
        18: "The request included message batch larger than the configured segment size on the server.",
        19: "Messages are rejected since there are fewer in-sync replicas than required.",
        20: "Messages are written to the log, but to fewer in-sync replicas than required.",
        21: "Produce request specified an invalid value for required acks.",
        29: "Topic authorization failed.",
        32: "The timestamp of the message is out of acceptable range.",
        35: "The version of API is not supported.",
        42: "This most likely occurs because of a request being malformed by the client library or the message was "
        "sent to an incompatible broker. See the broker logs for more details.",
        43: "The message format version on the broker does not support the request.",
        56: "Disk error when trying to access log file on the disk.",
        70: "The fetch session ID was not found.",
        71: "The fetch session epoch is invalid.",
        74: "The leader epoch in the request is older than the epoch on the broker.",
        75: "The leader epoch in the request is newer than the epoch on the broker.",
        76: "The requesting client does not support the compression type of given partition.",
        78: "The leader high watermark has not caught up from a recent leader election so the offsets cannot be "
        "guaranteed to be monotonically increasing.",
        87: "This record has failed the validation on broker and hence will be rejected.",
    }
)
"""Kafka's own text (`Errors.java`) for the codes a produce/fetch client meets, as its clients print them."""


def from_code(code: int, message: str | None = None) -> BrokerError:
    """The error for a non-zero code read from a response: the response's own message if it carried one,
    else Kafka's text for the code; `NAME: message` in its str(), as a broker's answer. Raises
    UnknownErrorCodeError for a code the registry does not know."""
    return for_code(code)(message or KAFKA_MESSAGES.get(code, ""), named=True)
