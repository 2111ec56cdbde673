"""The one place a SparkSession is made: embedded `local[*]` by default, any cluster with --master/--conf.

Quiet unless verbose: no progress bar, no web UI, log level ERROR, and the JVM's own stderr (its
start-up banner and warnings, which log4j settings cannot silence) goes to a log file whose path is
given when a job fails. Under `spark-submit` the JVM already exists: its master and settings stand,
and only the log level is set here.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Sequence
from typing import NamedTuple

from pyspark import SparkConf, SparkContext
from pyspark.java_gateway import launch_gateway
from pyspark.sql import SparkSession

from kafkaops.cluster.common.errors import InvalidArgumentError

QUIET_CONF = {"spark.ui.showConsoleProgress": "false", "spark.ui.enabled": "false"}
EMBEDDED_MASTER = "local[*]"


def parse_conf(items: Sequence[str]) -> dict[str, str]:
    """`--conf key=value` items. Raises InvalidArgumentError."""
    conf: dict[str, str] = {}
    for item in items:
        key, equals, value = item.partition("=")
        if not equals or not key.strip():
            raise InvalidArgumentError(f'Invalid --conf "{item}": expected key=value')
        conf[key.strip()] = value
    return conf


class Session(NamedTuple):
    spark: SparkSession
    log_path: str | None
    """Where the JVM's stderr goes, or None: this process's stderr (verbose, or a JVM started elsewhere)."""
    owned: bool
    """Whether this call started the SparkContext (then its caller stops it; a test's shared one stays)."""


def build_session(
    *, master: str | None = None, conf: Sequence[str] = (), verbose: bool = False, app_name: str = "kafkaops"
) -> Session:
    """The active session if there is one, else a new one.

    `conf` items override the quiet defaults; `master` overrides a master set by `conf` or spark-submit.
    Raises InvalidArgumentError for a malformed --conf.
    """
    settings = {} if verbose else dict(QUIET_CONF)
    settings.update(parse_conf(conf))
    spark_conf = SparkConf().setAppName(app_name).setAll(list(settings.items()))
    if master is not None:
        spark_conf.setMaster(master)
    elif not spark_conf.contains("spark.master"):
        spark_conf.setMaster(EMBEDDED_MASTER)
    log_path = None
    owned = SparkContext._active_spark_context is None
    if owned and "PYSPARK_GATEWAY_PORT" not in os.environ:
        # Our own JVM: start it ourselves to decide where its stderr goes.
        popen_kwargs = {}
        if not verbose:
            handle, log_path = tempfile.mkstemp(prefix="kafkaops-spark-", suffix=".log")
            popen_kwargs["stderr"] = handle
        SparkContext(conf=spark_conf, gateway=launch_gateway(spark_conf, popen_kwargs=popen_kwargs))
        if log_path is not None:
            os.close(handle)
    spark = SparkSession.builder.config(conf=spark_conf).getOrCreate()
    spark.sparkContext.setLogLevel("WARN" if verbose else "ERROR")
    return Session(spark, log_path, owned)
