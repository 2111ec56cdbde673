# TRANSITIONAL shim: the lead deletes it after rewriting imports
"""Old path of `kafkaops.cluster.common.errors`: re-exports its error types;
`/work/floor_rewrite.py` rewrites its importers."""

from kafkaops.cluster.common.errors import AdminOperationError as AdminOperationError
from kafkaops.cluster.common.errors import BrokerIdTakenError as BrokerIdTakenError
from kafkaops.cluster.common.errors import BrokerNotAvailableError as BrokerNotAvailableError
from kafkaops.cluster.common.errors import ControllerMovedError as ControllerMovedError
from kafkaops.cluster.common.errors import InvalidArgumentError as InvalidArgumentError
from kafkaops.cluster.common.errors import InvalidConfigurationError as InvalidConfigurationError
from kafkaops.cluster.common.errors import InvalidPartitionsError as InvalidPartitionsError
from kafkaops.cluster.common.errors import InvalidReplicaAssignmentError as InvalidReplicaAssignmentError
from kafkaops.cluster.common.errors import InvalidReplicationFactorError as InvalidReplicationFactorError
from kafkaops.cluster.common.errors import InvalidTopicError as InvalidTopicError
from kafkaops.cluster.common.errors import KafkaOpsError as KafkaOpsError
from kafkaops.cluster.common.errors import LogDirFailureError as LogDirFailureError
from kafkaops.cluster.common.errors import LogDirLockedError as LogDirLockedError
from kafkaops.cluster.common.errors import LogError as LogError
from kafkaops.cluster.common.errors import MalformedCheckpointError as MalformedCheckpointError
from kafkaops.cluster.common.errors import MalformedZNodeError as MalformedZNodeError
from kafkaops.cluster.common.errors import OffsetsOutOfOrderError as OffsetsOutOfOrderError
from kafkaops.cluster.common.errors import TopicExistsError as TopicExistsError
from kafkaops.cluster.common.errors import UnexpectedAppendOffsetError as UnexpectedAppendOffsetError
from kafkaops.cluster.common.errors import UnknownTopicOrPartitionError as UnknownTopicOrPartitionError
from kafkaops.cluster.common.errors import UsageError as UsageError
from kafkaops.cluster.common.errors import UserError as UserError
from kafkaops.cluster.common.errors import ZNodeVersionConflictError as ZNodeVersionConflictError
from kafkaops.cluster.common.errors import ZooKeeperError as ZooKeeperError
from kafkaops.cluster.common.errors import ZooKeeperUnreachableError as ZooKeeperUnreachableError

BadVersionError = ZNodeVersionConflictError
