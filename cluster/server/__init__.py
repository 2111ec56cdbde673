"""The server room: one broker process (Kafka's `KafkaServer`, kafka_server.py), building the broker and its
controller candidate; `python -m kafkaops.cluster.server --config broker.yaml` runs one (__main__.py). It
may import the broker and the controller; nothing below imports it."""

import signal

SIGNAL_STOP_UNCONTROLLED = signal.SIGUSR1
"""Stop a broker process cleanly without a controlled shutdown (see `__main__`): the whole cluster is going.
Here rather than in kafka_server.py, so that whoever sends it (`cluster down`) need not import the broker."""
