"""The one module of error types shared by every room (DESIGN.md: typed errors).

It sits at the bottom of the import graph (it imports nothing of ours) so that `cluster/zk`, the
broker, the controller and `admin` raise the same classes and `cli` maps them to Kafka's text and
exit code in one place. The message of an error that a user can cause is Kafka's own text where
Kafka has one: the CLI prints it verbatim.
"""

from __future__ import annotations


class KafkaOpsError(Exception):
    """Root of every error kafkaops raises on purpose."""


class UserError(KafkaOpsError):
    """Bad input from an operator: printed without a traceback, exit code 1."""


class InvalidArgumentError(UserError):
    """Kafka's IllegalArgumentException / AdminCommandFailedException for bad flags or values."""


class UsageError(UserError):
    """Kafka's `printUsageAndDie`: the message, then the usage text, exit 1."""


class InvalidTopicError(UserError):
    """Kafka's InvalidTopicException."""


class TopicExistsError(UserError):
    """Kafka's TopicExistsException."""


class UnknownTopicOrPartitionError(UserError):
    """Kafka's UnknownTopicOrPartitionException."""


class InvalidPartitionsError(UserError):
    """Kafka's InvalidPartitionsException."""


class InvalidReplicationFactorError(UserError):
    """Kafka's InvalidReplicationFactorException."""


class InvalidReplicaAssignmentError(UserError):
    """Kafka's InvalidReplicaAssignmentException."""


class AdminOperationError(UserError):
    """Kafka's AdminOperationException."""


class InvalidConfigurationError(UserError):
    """Kafka's ConfigException / InvalidConfigurationException."""


class BrokerNotAvailableError(UserError):
    """Kafka's BrokerNotAvailableException: a broker id that is not registered."""


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


class BrokerIdTakenError(UserError):
    """Another live session holds `/brokers/ids/<id>`: two brokers were started with one id."""


class ControllerMovedError(KafkaOpsError):
    """A controller-epoch-checked write failed: another controller has been elected."""


class BadVersionError(KafkaOpsError):
    """A conditional znode write lost a race (ZooKeeper's BadVersion)."""


class LogError(KafkaOpsError):
    """Root of the partition log's own failures (`cluster/log`). The log also raises the protocol room's
    Kafka-coded errors where Kafka answers a client with one (OFFSET_OUT_OF_RANGE, MESSAGE_TOO_LARGE,
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
