# TRANSITIONAL shim: the lead deletes it after rewriting imports
"""Old path of `kafkaops.cluster.common.config_types`: re-exports the config value types; `/work/floor_rewrite.py`
rewrites its importers."""

from kafkaops.cluster.common.config_types import INT_MAX as INT_MAX
from kafkaops.cluster.common.config_types import KNOWN_API_VERSIONS as KNOWN_API_VERSIONS
from kafkaops.cluster.common.config_types import LATEST_API_VERSION as LATEST_API_VERSION
from kafkaops.cluster.common.config_types import LONG_MAX as LONG_MAX
from kafkaops.cluster.common.config_types import SHORT_MAX as SHORT_MAX
from kafkaops.cluster.common.config_types import ConfigKey as ConfigKey
from kafkaops.cluster.common.config_types import ConfigType as ConfigType
from kafkaops.cluster.common.config_types import Validator as Validator
from kafkaops.cluster.common.config_types import api_version as api_version
from kafkaops.cluster.common.config_types import at_least as at_least
from kafkaops.cluster.common.config_types import between as between
from kafkaops.cluster.common.config_types import config_error as config_error
from kafkaops.cluster.common.config_types import each_one_of as each_one_of
from kafkaops.cluster.common.config_types import java_double_string as java_double_string
from kafkaops.cluster.common.config_types import one_of as one_of
from kafkaops.cluster.common.config_types import parse_value as parse_value
