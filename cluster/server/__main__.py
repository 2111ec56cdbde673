"""`python -m kafkaops.cluster.server --config broker.yaml`: run one broker process (the broker and its
controller candidate) until SIGTERM (controlled shutdown) or SIGINT; SIGKILL is the hard path.

SIGUSR1 stops it cleanly without a controlled shutdown (logs checkpointed and closed, the session closed, no
leaderships handed over): the local cluster's `down` sends it to every broker at once, since a controlled
shutdown asks brokers that are stopping too to take over, and the last ones can only fail and retry.

Once the server has shut down (every log checkpointed and closed, the session and the state-change log closed,
the loop's executor drained), the process exits at once (`exit_now`) rather than through the interpreter's
teardown, as a JVM's exit does not free its heap: at 10,000 partitions that teardown (a broker's ~380,000
objects collected and freed one by one) took 0.45 s after the server had shut down, over 2 s on a loaded
machine."""

from __future__ import annotations

import argparse
import contextlib
import gc
import logging
import os
import signal
import sys
import threading
from typing import NoReturn

from kafkaops.cluster.broker.config import load_broker_config
from kafkaops.cluster.common.collector import full_collections_on_a_timer
from kafkaops.cluster.common.errors import KafkaOpsError
from kafkaops.cluster.server import SIGNAL_STOP_UNCONTROLLED
from kafkaops.cluster.server.kafka_server import KafkaServer


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="kafkaops cluster broker", description="Run one kafkaops broker.")
    parser.add_argument("--config", required=True, help="broker.yaml with Kafka's property names")
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.INFO, format="[%(asctime)s] %(levelname)s %(message)s (%(name)s)", stream=sys.stderr
    )
    logging.getLogger("kazoo").setLevel(logging.WARNING)
    # The layout shows none of the caller's file, thread or process: the logging docs' "Optimization"
    # switches skip finding them for every record (a controller moving 10,000 partitions logs some 60,000
    # lines, Kafka's per partition: 6.6 -> 5.1 us a line)
    logging._srcfile = None
    logging.logThreads = False
    logging.logProcesses = False
    logging.logMultiprocessing = False
    # installed before start-up, so a stop asked for while the broker starts is honoured once it has started
    stop = threading.Event()
    controlled = [True]

    def stop_without_controlled_shutdown(*_: object) -> None:
        controlled[0] = False
        stop.set()

    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    signal.signal(SIGNAL_STOP_UNCONTROLLED, stop_without_controlled_shutdown)
    stop_collection_timer = full_collections_on_a_timer()
    try:
        config = load_broker_config(args.config)
        server = KafkaServer(config)
        server.startup()
    except KafkaOpsError as error:
        sys.stderr.write(f"kafkaops broker: {error}\n")
        return 1
    stop.wait()
    # What lives now lives until the exit: no full collection need walk it again (one took 0.25 s of the
    # log manager's shutdown at 10,000 partitions), while the garbage the shutdown makes is still collected.
    stop_collection_timer()
    gc.freeze()
    server.shutdown(controlled=controlled[0])
    exit_now(0)


def exit_now(code: int) -> NoReturn:
    """Flush what is buffered (the log handlers, stdout and stderr), then end the process without the
    interpreter's teardown: no atexit hooks, no freeing of objects, no joins of threads still running (the
    server has stopped its own; what is left is daemon threads, which an ordinary exit abandons too)."""
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(code)


if __name__ == "__main__":
    sys.exit(main())
