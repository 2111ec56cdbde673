"""The server room: one broker process (Kafka's `KafkaServer`, kafka_server.py), building the broker and its
controller candidate; `python -m kafkaops.cluster.server --config broker.yaml` runs one (__main__.py). It
may import the broker and the controller; nothing below imports it."""
