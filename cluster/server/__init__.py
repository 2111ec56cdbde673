"""The server room: one broker process (Kafka's `KafkaServer`), building the broker and its controller
candidate. It may import the broker and the controller; nothing below imports it."""
