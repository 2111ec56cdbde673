"""Kafka wire protocol: primitive types, headers, request/response schemas, record batch v2, framing.

A pure codec library (no sockets, no clocks): the broker, the controller and `admin` build and read
Kafka frames with it. It imports nothing of ours except `kafkaops.cluster.errors`, whose root error
its error registry extends. The facts it encodes are in `shared/kafka-protocol.md`.
"""
