"""The one SparkSession shared by every Spark test (starting one costs seconds)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from pyspark.sql import SparkSession

from kafkaops.spark.session import build_session


@pytest.fixture(scope="session")
def spark() -> Iterator[SparkSession]:
    session = build_session(
        master="local[2]",
        conf=["spark.sql.shuffle.partitions=4", "spark.driver.host=127.0.0.1", "spark.driver.bindAddress=127.0.0.1"],
    )
    yield session.spark
    session.spark.stop()
