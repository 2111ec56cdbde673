"""The console tools' library: Kafka's `ConsoleProducer` with its `LineMessageReader`, and
`ConsoleConsumer` with its `DefaultMessageFormatter`, on the blocking client of
`kafkaops.admin.kafka_client`. It never prints: the console consumer writes records to the stream its
caller passes in, the producer hands back each batch's outcome, and `kafkaops.cli.console` renders
Kafka's texts and exit codes.
"""

from kafkaops.admin.console.console_consumer import (
    ConsoleConsumer,
    ConsumerSettings,
    StopReason,
    consumer_settings,
    group_id_setting,
    group_offset_reset,
)
from kafkaops.admin.console.console_producer import SentLines, send_lines
from kafkaops.admin.console.line_message_reader import LineMessageReader, read_line_batches
from kafkaops.admin.console.message_formatter import DefaultMessageFormatter
from kafkaops.admin.console.properties import bool_property, parse_key_value_args

__all__ = [
    "ConsoleConsumer",
    "ConsumerSettings",
    "DefaultMessageFormatter",
    "LineMessageReader",
    "SentLines",
    "StopReason",
    "bool_property",
    "consumer_settings",
    "group_id_setting",
    "group_offset_reset",
    "parse_key_value_args",
    "read_line_batches",
    "send_lines",
]
