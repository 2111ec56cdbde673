"""The floor: the shared vocabulary every room may import. It imports nothing of ours.

errors                one error hierarchy, with Kafka's error codes as a registry of its classes
config_types          Kafka's ConfigDef value types, parsing and validators (broker and admin configs)
jvm_text              JVM/Scala text and semantics: parseInt, trim, split, hash codes, collection orders and
                      toString of Java's and Scala 2.13's sets, lists and maps
log4j                 the log4j timestamp, `yyyy-MM-dd HH:mm:ss,SSS`
kafka_principal       KafkaPrincipal (`User:alice`), ANONYMOUS
ssl_factory           TLS contexts from Kafka's `ssl.*` settings (PEM stores), the client certificate's principal
ssl_principal_mapper  `ssl.principal.mapping.rules` (Kafka's SslPrincipalMapper)
client_channel        how a client connects for a security protocol (TCP, TLS, the SASL login): tools,
                      controller, fetchers
scram                 SCRAM-SHA-256/512 (RFC 5802/7677 as Kafka): credentials, messages, server and client
sasl                  PLAIN, `sasl.jaas.config` parsing, the SASL server and client factories
acl                   ACL types and filters (resource patterns, operations, bindings) with Kafka's texts
compiled              whether a hot path built in place runs compiled (KAFKAOPS_PURE_PYTHON, stale builds)
"""
