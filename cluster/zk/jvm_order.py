# TRANSITIONAL shim: the lead deletes it after rewriting imports
"""Old path of `kafkaops.cluster.common.jvm_text`: re-exports the JVM collection orders;
`/work/floor_rewrite.py` rewrites its importers."""

from kafkaops.cluster.common.jvm_text import hash_map_order as hash_map_order
from kafkaops.cluster.common.jvm_text import java_string_hash as java_string_hash
from kafkaops.cluster.common.jvm_text import properties_order as properties_order
from kafkaops.cluster.common.jvm_text import scala_hash_set_order as scala_hash_set_order
from kafkaops.cluster.common.jvm_text import scala_mutable_hash_order as scala_mutable_hash_order
from kafkaops.cluster.common.jvm_text import scala_set_order as scala_set_order
