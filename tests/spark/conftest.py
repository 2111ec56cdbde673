"""What Spark tests share (starting either costs seconds): one SparkSession, and one standalone cluster
(a master and a worker from the pyspark package, on 127.0.0.1) for the tests that submit to a real one."""

from __future__ import annotations

import os
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pyspark
import pytest
from pyspark.sql import SparkSession

from kafkaops.cluster.local.zookeeper import free_port
from kafkaops.spark.session import build_session

SPARK_HOME = Path(pyspark.__file__).parent


@pytest.fixture(scope="session")
def spark() -> Iterator[SparkSession]:
    session = build_session(
        master="local[2]",
        conf=["spark.sql.shuffle.partitions=4", "spark.driver.host=127.0.0.1", "spark.driver.bindAddress=127.0.0.1"],
    )
    yield session.spark
    session.spark.stop()


def wait_for_port(port: int, process: subprocess.Popen, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"exited with {process.returncode}")
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.2)
    raise TimeoutError(f"nothing listens on {port}")


@pytest.fixture(scope="session")
def spark_home() -> Path:
    """The pyspark package: a Spark distribution (bin/spark-submit, bin/spark-class, jars)."""
    return SPARK_HOME


@pytest.fixture(scope="session")
def standalone_master(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A Spark standalone master and one worker (1 core) on 127.0.0.1, from the pyspark package."""
    work = tmp_path_factory.mktemp("spark-standalone")
    env = {**os.environ, "SPARK_HOME": str(SPARK_HOME), "SPARK_LOCAL_IP": "127.0.0.1", "SPARK_WORKER_DIR": str(work)}
    port, master_ui, worker_ui = free_port(), free_port(), free_port()
    spark_class = str(SPARK_HOME / "bin" / "spark-class")
    log = open(work / "daemons.log", "wb")  # noqa: SIM115 - closed below, after both daemons
    daemons = [
        subprocess.Popen(
            [spark_class, "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1", "--port", str(port), "--webui-port", str(master_ui)],
            env=env, stdout=log, stderr=subprocess.STDOUT,
        )
    ]  # fmt: skip
    try:
        wait_for_port(port, daemons[0])
        daemons.append(
            subprocess.Popen(
                [spark_class, "org.apache.spark.deploy.worker.Worker", f"spark://127.0.0.1:{port}", "--host", "127.0.0.1",
                 "--cores", "1", "--memory", "1g", "--webui-port", str(worker_ui)],
                env=env, stdout=log, stderr=subprocess.STDOUT,
            )
        )  # fmt: skip
        yield f"spark://127.0.0.1:{port}"
    finally:
        for daemon in reversed(daemons):
            daemon.terminate()
            daemon.wait(timeout=30)
        log.close()
