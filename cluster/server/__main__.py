"""`python -m kafkaops.cluster.server --config broker.yaml`: run one broker process (the broker and its
controller candidate) until SIGTERM (controlled shutdown) or SIGINT; SIGKILL is the hard path."""

from __future__ import annotations

import argparse
import logging
import signal
import sys
import threading

from kafkaops.cluster.broker.config import load_broker_config
from kafkaops.cluster.common.errors import KafkaOpsError
from kafkaops.cluster.server.kafka_server import KafkaServer


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="kafkaops cluster broker", description="Run one kafkaops broker.")
    parser.add_argument("--config", required=True, help="broker.yaml with Kafka's property names")
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.INFO, format="[%(asctime)s] %(levelname)s %(message)s (%(name)s)", stream=sys.stderr
    )
    logging.getLogger("kazoo").setLevel(logging.WARNING)
    try:
        config = load_broker_config(args.config)
        server = KafkaServer(config)
        server.startup()
    except KafkaOpsError as error:
        sys.stderr.write(f"kafkaops broker: {error}\n")
        return 1
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    stop.wait()
    server.shutdown(controlled=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
