"""`kafkaops console-producer`, `console-consumer` and `producer-perf-test`: Kafka 2.8's console tools.

Thin adapters over `kafkaops.admin.console` (Kafka's ConsoleProducer, LineMessageReader, ConsoleConsumer,
DefaultMessageFormatter) and `kafkaops.admin.kafka_client` (the client, the perf test's arithmetic):
parse Kafka's flags and settings, call the library, print Kafka's texts and pick the exit code. What
differs from Kafka, on purpose:

* console-producer has `--partition` (as kcat has `-p`), and `--acks` as a short alias of
  `--request-required-acks`; a record the brokers refused makes it exit 1 (Kafka logs and exits 0).
* console-consumer reads without a consumer group (`--group`, `--whitelist`/`--include` are refused):
  one partition with `--partition`, else every partition of the topic.
* `--property a=b c=d` takes several settings after one flag, as `--producer-props` does (Kafka's
  jopt-simple silently drops all but the first).
"""

from __future__ import annotations

import contextlib
import re
import sys
from collections.abc import Iterator, Sequence
from datetime import datetime
from pathlib import Path
from typing import Annotated, BinaryIO

import typer

from kafkaops.admin.console import (
    ConsoleConsumer,
    DefaultMessageFormatter,
    LineMessageReader,
    StopReason,
    consumer_settings,
    group_id_setting,
    group_offset_reset,
    parse_key_value_args,
    read_line_batches,
    send_lines,
)
from kafkaops.admin.kafka_client import (
    BatchSender,
    KafkaClient,
    PartitionConsumer,
    PerfTotal,
    PerfWindow,
    SendOutcome,
    parse_acks,
    parse_bootstrap_servers,
    parse_isolation_level,
    payloads_from_text,
    perf_payload,
    run_producer_perf,
)
from kafkaops.admin.kafka_client.client_config import channel_from_properties
from kafkaops.admin.kafka_client.group_consumer import GroupConsumer, GroupConsumerConfig
from kafkaops.cli.common import StateDirOption, optional_bootstrap_server
from kafkaops.cli.output import kafka_errors
from kafkaops.cluster.common import log4j
from kafkaops.cluster.common.errors import InvalidArgumentError, KafkaOpsError, UsageError
from kafkaops.cluster.protocol.records import Compression

# --- shared parsing ---------------------------------------------------------------------------------------


def _extra_properties(extra: Sequence[str], flag: str) -> list[str]:
    """Words left after the flags: settings that followed one `--property`/`--producer-props` flag."""
    for word in extra:
        if "=" not in word:
            raise UsageError(f"Found non-option argument '{word}'; settings after {flag} take the form key=value")
    return list(extra)


def _bootstrap(bootstrap_server: str | None, broker_list: str | None) -> str:
    servers = bootstrap_server or broker_list
    if not servers:
        raise UsageError("Missing required option(s) [bootstrap-server]")
    parse_bootstrap_servers(servers)
    return servers


def _compression(codec: str | None) -> Compression:
    # ConsoleProducer: "If specified without value, then it defaults to 'gzip'"
    name = (codec or "none").lower()
    if name in ("none", "gzip"):
        return Compression[name.upper()]
    if name in ("snappy", "lz4", "zstd"):
        raise InvalidArgumentError(f"kafkaops cannot compress with {name} yet: use gzip or none")
    raise InvalidArgumentError(
        f"Invalid value {codec} for configuration compression.type: String must be one of: "
        "none, gzip, snappy, lz4, zstd"
    )


def _int_setting(props: dict[str, str], name: str, default: int) -> int:
    if name not in props:
        return default
    try:
        return int(props[name].strip())
    except ValueError:
        raise InvalidArgumentError(
            f"Invalid value {props[name]} for configuration {name}: Not a number of type INT"
        ) from None


def _log4j(level: str, message: str, logger: str) -> str:
    """A line in the shape of Kafka's tools-log4j.properties: `[date] LEVEL message (logger)`."""
    return f"[{log4j.timestamp(datetime.now())}] {level} {message} ({logger})"


# --- console-producer ---------------------------------------------------------------------------------------


def _send_error_lines(topic: str, outcome: SendOutcome) -> list[str]:
    """Kafka's ErrorLoggingCallback line for each record of a failed batch."""
    lines = []
    for key, value, _ in outcome.records:
        key_text = "null" if key is None else f"{len(key)} bytes"
        value_text = "null" if value is None else f"{len(value)} bytes"
        lines.append(
            _log4j(
                "ERROR",
                f"Error when sending message to topic {topic} with key: {key_text}, value: {value_text} with error:",
                "org.apache.kafka.clients.producer.internals.ErrorLoggingCallback",
            )
        )
        lines.append(str(outcome.error))
    return lines


@kafka_errors()
def console_producer_command(
    ctx: typer.Context,
    bootstrap_server: Annotated[
        str | None,
        typer.Option(
            "--bootstrap-server",
            metavar="<String: server to connect to>",
            help="REQUIRED unless --broker-list(deprecated) is specified. The server(s) to connect to. The broker list string in the form HOST1:PORT1,HOST2:PORT2.",
        ),
    ] = None,
    broker_list: Annotated[
        str | None,
        typer.Option(
            "--broker-list",
            metavar="<String: broker-list>",
            help="DEPRECATED, use --bootstrap-server instead; ignored if --bootstrap-server is specified.  The broker list string in the form HOST1:PORT1,HOST2:PORT2.",
        ),
    ] = None,
    topic: Annotated[
        str | None,
        typer.Option("--topic", metavar="<String: topic>", help="REQUIRED: The topic id to produce messages to."),
    ] = None,
    partition: Annotated[
        int | None,
        typer.Option(
            "--partition",
            metavar="<Integer: partition>",
            help="The partition to produce to (beyond Kafka). Default: by key (murmur2), records without a key to one partition per batch.",
        ),
    ] = None,
    request_required_acks: Annotated[
        str | None,
        typer.Option(
            "--request-required-acks",
            "--acks",
            metavar="<String: request required acks>",
            help="The required `acks` of the producer requests (default: -1)",
        ),
    ] = None,
    request_timeout_ms: Annotated[
        int | None,
        typer.Option(
            "--request-timeout-ms",
            metavar="<Integer: request timeout ms>",
            help="The ack timeout of the producer requests. Value must be non-negative and non-zero. (default: 1500)",
        ),
    ] = None,
    message_send_max_retries: Annotated[
        int | None,
        typer.Option(
            "--message-send-max-retries",
            metavar="<Integer>",
            help="Brokers can fail receiving the message for multiple reasons, and being unavailable transiently is just one of them. This property specifies the number of retries before the producer give up and drop this message. (default: 3)",
        ),
    ] = None,
    retry_backoff_ms: Annotated[
        int | None,
        typer.Option(
            "--retry-backoff-ms",
            metavar="<Long>",
            help="Before each retry, the producer refreshes the metadata of relevant topics. Since leader election takes a bit of time, this property specifies the amount of time that the producer waits before refreshing the metadata. (default: 100)",
        ),
    ] = None,
    send_timeout: Annotated[
        int | None,
        typer.Option(
            "--timeout",
            metavar="<Long: timeout_ms>",
            help="If set and the producer is running in asynchronous mode, this gives the maximum amount of time a message will queue awaiting sufficient batch size. The value is given in ms. (default: 1000)",
        ),
    ] = None,
    batch_size: Annotated[
        int | None,
        typer.Option(
            "--batch-size",
            "--max-partition-memory-bytes",
            metavar="<Integer: size>",
            help="The most bytes of input lines to send in a single batch (Kafka's batch.size). (default: 16384)",
        ),
    ] = None,
    sync: Annotated[
        bool,
        typer.Option(
            "--sync",
            help="If set message send requests to the brokers are synchronously, one at a time as they arrive.",
        ),
    ] = False,
    compression_codec: Annotated[
        str | None,
        typer.Option(
            "--compression-codec",
            metavar="<String: compression-codec>",
            help="The compression codec: either 'none' or 'gzip' (snappy, lz4 and zstd are not supported here).",
        ),
    ] = None,
    property_: Annotated[
        list[str] | None,
        typer.Option(
            "--property",
            metavar="<String: prop>",
            help="A mechanism to pass user-defined properties in the form key=value to the message reader: parse.key, key.separator, ignore.error, parse.headers, headers.delimiter, headers.separator, headers.key.separator, null.marker.",
        ),
    ] = None,
    producer_property: Annotated[
        list[str] | None,
        typer.Option(
            "--producer-property",
            metavar="<String: producer_prop>",
            help="A mechanism to pass user-defined properties in the form key=value to the producer.",
        ),
    ] = None,
    state: StateDirOption = None,
) -> None:
    """Read data from standard input and publish it to Kafka, one record per line."""
    extra = _extra_properties(ctx.args, "--property")
    if topic is None:
        raise UsageError('Missing required argument "[topic]"')
    servers = _bootstrap(bootstrap_server or broker_list or optional_bootstrap_server(state), None)
    settings = parse_key_value_args(producer_property or [])
    reader = LineMessageReader.from_properties(parse_key_value_args([*(property_ or []), *extra]))
    acks = parse_acks(request_required_acks if request_required_acks is not None else settings.get("acks", "-1"))
    timeout_ms = (
        request_timeout_ms if request_timeout_ms is not None else _int_setting(settings, "request.timeout.ms", 1500)
    )
    if timeout_ms <= 0:
        raise InvalidArgumentError(
            f"Invalid value {timeout_ms} for configuration request.timeout.ms: Value must be at least 1"
        )
    retries = message_send_max_retries if message_send_max_retries is not None else _int_setting(settings, "retries", 3)
    backoff = retry_backoff_ms if retry_backoff_ms is not None else _int_setting(settings, "retry.backoff.ms", 100)
    linger = send_timeout if send_timeout is not None else _int_setting(settings, "linger.ms", 1000)
    max_bytes = batch_size if batch_size is not None else _int_setting(settings, "batch.size", 16384)
    codec = _compression(compression_codec if compression_codec is not None else settings.get("compression.type"))
    prompt = sys.stdin.isatty()
    with KafkaClient(
        servers,
        client_id=settings.get("client.id", "console-producer"),
        request_timeout_ms=timeout_ms,
        retries=retries,
        retry_backoff_ms=backoff,
        delivery_timeout_ms=_int_setting(settings, "delivery.timeout.ms", 120000),
        channel=channel_from_properties(settings),
    ) as client:
        sender = BatchSender(client, topic, partition=partition, acks=acks, timeout_ms=timeout_ms, compression=codec)
        try:
            failed = _produce_lines(sender, reader, topic, linger, max(max_bytes, 1), sync, prompt)
        except KeyboardInterrupt:
            raise typer.Exit(code=130) from None  # what Kafka's JVM exits with on SIGINT
    if failed:
        raise typer.Exit(code=1)


def _produce_lines(
    sender: BatchSender, reader: LineMessageReader, topic: str, linger_ms: int, max_bytes: int, sync: bool, prompt: bool
) -> int:
    """Send stdin's lines batch by batch, reporting failed sends as they come; the number of records the
    brokers refused. A line the reader cannot parse is raised after the lines before it were sent."""
    failed = 0
    if prompt:
        _prompt()
    for sent in send_lines(sender, reader, read_line_batches(sys.stdin.buffer, linger_ms / 1000, max_bytes, sync=sync)):
        for outcome in sent.failed:
            failed += len(outcome.records)
            sys.stderr.write("\n".join(_send_error_lines(topic, outcome)) + "\n")
        if sent.error is not None:
            raise sent.error
        if prompt:
            _prompt()
    return failed


def _prompt() -> None:
    sys.stdout.write(">")
    sys.stdout.flush()


# --- console-consumer ---------------------------------------------------------------------------------------


_CONSUMER_LOGGER = "kafka.tools.ConsoleConsumer$"


@kafka_errors()
def console_consumer_command(
    ctx: typer.Context,
    bootstrap_server: Annotated[
        str | None,
        typer.Option(
            "--bootstrap-server",
            metavar="<String: server to connect to>",
            help="REQUIRED: The server(s) to connect to.",
        ),
    ] = None,
    topic: Annotated[
        str | None, typer.Option("--topic", metavar="<String: topic>", help="The topic id to consume on.")
    ] = None,
    whitelist: Annotated[
        str | None,
        typer.Option("--whitelist", "--include", metavar="<String: whitelist>", help="Not available: use --topic."),
    ] = None,
    partition: Annotated[
        int | None,
        typer.Option(
            "--partition",
            metavar="<Integer: partition>",
            help="The partition to consume from. Consumption starts from the end of the partition unless '--offset' is specified.",
        ),
    ] = None,
    offset: Annotated[
        str | None,
        typer.Option(
            "--offset",
            metavar="<String: consume offset>",
            help="The offset id to consume from (a non-negative number), or 'earliest' which means from beginning, or 'latest' which means from end (default: latest)",
        ),
    ] = None,
    from_beginning: Annotated[
        bool,
        typer.Option(
            "--from-beginning",
            help="If the consumer does not already have an established offset to consume from, start with the earliest message present in the log rather than the latest message.",
        ),
    ] = False,
    max_messages: Annotated[
        int | None,
        typer.Option(
            "--max-messages",
            metavar="<Integer: num_messages>",
            help="The maximum number of messages to consume before exiting. If not set, consumption is continual.",
        ),
    ] = None,
    timeout_ms: Annotated[
        int | None,
        typer.Option(
            "--timeout-ms",
            metavar="<Integer: timeout_ms>",
            help="If specified, exit if no message is available for consumption for the specified interval.",
        ),
    ] = None,
    property_: Annotated[
        list[str] | None,
        typer.Option(
            "--property",
            metavar="<String: prop>",
            help="The properties to initialize the message formatter. Default properties include: print.timestamp=true|false print.key=true|false print.offset=true|false print.partition=true|false print.headers=true|false print.value=true|false key.separator=<key.separator> line.separator=<line.separator> headers.separator=<line.separator> null.literal=<null.literal>",
        ),
    ] = None,
    consumer_property: Annotated[
        list[str] | None,
        typer.Option(
            "--consumer-property",
            metavar="<String: consumer_prop>",
            help="A mechanism to pass user-defined properties in the form key=value to the consumer (client.id, fetch.max.wait.ms, fetch.max.bytes, max.partition.fetch.bytes, request.timeout.ms, isolation.level, security.protocol and ssl.*).",
        ),
    ] = None,
    isolation_level: Annotated[
        str | None,
        typer.Option(
            "--isolation-level",
            metavar="<String>",
            help="Set to read_committed in order to filter out transactional messages which are not committed. Set to read_uncommitted to read all messages. (default: read_uncommitted)",
        ),
    ] = None,
    group: Annotated[
        str | None,
        typer.Option(
            "--group",
            metavar="<String: consumer group id>",
            help="The consumer group id of the consumer: it joins the group, reads the partitions assigned to it "
            "from the group's committed offsets and commits what it read.",
        ),
    ] = None,
    skip_message_on_error: Annotated[
        bool,
        typer.Option(
            "--skip-message-on-error",
            help="If there is an error when processing a message, skip it instead of halt.",
        ),
    ] = False,
    state: StateDirOption = None,
) -> None:
    """Read data from Kafka topics and write it to standard output."""
    extra = _extra_properties(ctx.args, "--property")
    bootstrap_server = bootstrap_server or optional_bootstrap_server(state)
    if bootstrap_server is None:
        raise UsageError('Missing required argument "[bootstrap-server]"')
    if whitelist is not None:
        raise InvalidArgumentError("kafkaops console-consumer reads one topic: use --topic instead of --whitelist")
    consumer_props = parse_key_value_args(consumer_property or [])
    group_id = group_id_setting(group, consumer_props)
    if group_id is not None and partition is not None:
        raise InvalidArgumentError(
            "kafkaops console-consumer --group subscribes to the whole topic: leave out --partition"
        )
    settings = consumer_settings(topic, partition, offset, from_beginning, max_messages, timeout_ms)
    level = parse_isolation_level(isolation_level or consumer_props.get("isolation.level", "read_uncommitted"))
    formatter = DefaultMessageFormatter.from_properties(parse_key_value_args([*(property_ or []), *extra]))
    parse_bootstrap_servers(bootstrap_server)
    out = sys.stdout.buffer
    with KafkaClient(
        bootstrap_server,
        client_id=consumer_props.get("client.id", "console-consumer"),
        request_timeout_ms=_int_setting(consumer_props, "request.timeout.ms", 30000),
        channel=channel_from_properties(consumer_props),
    ) as client:
        consumer: PartitionConsumer | GroupConsumer
        if group_id is not None:
            consumer = GroupConsumer(
                client, [settings.topic], _group_config(group_id, consumer_props, from_beginning, level)
            )
        else:
            consumer = PartitionConsumer(
                client,
                settings.topic,
                None if settings.partition is None else [settings.partition],
                settings.start,
                settings.reset,
                max_wait_ms=_int_setting(consumer_props, "fetch.max.wait.ms", 500),
                max_bytes=_int_setting(consumer_props, "fetch.max.bytes", 52428800),
                partition_max_bytes=_int_setting(consumer_props, "max.partition.fetch.bytes", 1048576),
                isolation_level=level,
            )
        console = ConsoleConsumer(consumer, formatter, settings.max_messages, settings.timeout_ms)
        try:
            code = _process(console, out)
        finally:
            if isinstance(consumer, GroupConsumer):
                consumer.close()
    sys.stderr.write(f"Processed a total of {console.message_count} messages\n")
    if code:
        raise typer.Exit(code=code)


def _group_config(group_id: str, props: dict[str, str], from_beginning: bool, level: int) -> GroupConsumerConfig:
    """The console consumer's group settings from its consumer properties (Kafka's defaults)."""
    auto_commit = props.get("enable.auto.commit", "true").strip().lower()
    if auto_commit not in ("true", "false"):
        raise InvalidArgumentError(
            f"Invalid value {auto_commit} for configuration enable.auto.commit: Expected value to be either true or false"
        )
    return GroupConsumerConfig(
        group_id,
        session_timeout_ms=_int_setting(props, "session.timeout.ms", 10000),
        rebalance_timeout_ms=_int_setting(props, "max.poll.interval.ms", 300000),
        heartbeat_interval_ms=_int_setting(props, "heartbeat.interval.ms", 3000),
        enable_auto_commit=auto_commit == "true",
        auto_commit_interval_ms=_int_setting(props, "auto.commit.interval.ms", 5000),
        auto_offset_reset=group_offset_reset(from_beginning, props),
        group_instance_id=props.get("group.instance.id"),
        max_wait_ms=_int_setting(props, "fetch.max.wait.ms", 500),
        max_bytes=_int_setting(props, "fetch.max.bytes", 52428800),
        partition_max_bytes=_int_setting(props, "max.partition.fetch.bytes", 1048576),
        isolation_level=level,
    )


def _process(console: ConsoleConsumer, out: BinaryIO) -> int:
    """ConsoleConsumer.process and Kafka's texts for how it ended; the exit code. A timeout ends it as
    Kafka's does (an ERROR line naming TimeoutException, exit 0); a broker error with exit 1; Ctrl-C
    with 130."""
    try:
        if console.process(out) is StopReason.TIMEOUT:
            sys.stderr.write(
                _log4j("ERROR", "Error processing message, terminating consumer process: ", _CONSUMER_LOGGER)
                + "\norg.apache.kafka.common.errors.TimeoutException\n"
            )
    except KafkaOpsError as error:
        sys.stderr.write(
            _log4j("ERROR", "Error processing message, terminating consumer process: ", _CONSUMER_LOGGER)
            + f"\n{error}\n"
        )
        return 1
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        sys.stderr.write("Unable to write to standard out, closing consumer.\n")
        return 1
    return 0


# --- producer-perf-test -------------------------------------------------------------------------------------


@contextlib.contextmanager
def _interruptible() -> Iterator[None]:
    try:
        yield
    except KeyboardInterrupt:
        raise typer.Exit(code=130) from None


def perf_window_line(window: PerfWindow) -> str:
    """ProducerPerformance.Stats.printWindow."""
    return (
        f"{window.count} records sent, {window.records_per_sec:.1f} records/sec ({window.mb_per_sec:.2f} MB/sec), "
        f"{window.avg_latency_ms:.1f} ms avg latency, {window.max_latency_ms:.1f} ms max latency."
    )


def perf_total_line(total: PerfTotal) -> str:
    """ProducerPerformance.Stats.printTotal (Java's %f is six decimals, as Python's)."""
    return (
        f"{total.count} records sent, {total.records_per_sec:f} records/sec ({total.mb_per_sec:.2f} MB/sec), "
        f"{total.avg_latency_ms:.2f} ms avg latency, {total.max_latency_ms:.2f} ms max latency, "
        f"{total.p50_ms} ms 50th, {total.p95_ms} ms 95th, {total.p99_ms} ms 99th, {total.p999_ms} ms 99.9th."
    )


def perf_producer_props(
    producer_props: Sequence[str], config_file: Path | None, local_bootstrap: str | None = None
) -> dict[str, str]:
    """`--producer.config` (a Java properties file) overlaid with `--producer-props`, as Kafka merges them;
    `local_bootstrap` (the local cluster's brokers) when neither names `bootstrap.servers`.

    Raises UsageError when neither is given and InvalidArgumentError for a property without '=' (Kafka's
    "Invalid property: ...") or a config file that cannot be read.
    """
    if not producer_props and config_file is None and local_bootstrap is None:
        raise UsageError("Either --producer-props or --producer.config must be specified.")
    props: dict[str, str] = {}
    if config_file is not None:
        try:
            text = config_file.read_text()
        except OSError as error:
            raise InvalidArgumentError(f"Cannot read {config_file}: {error.strerror}") from None
        for raw in text.splitlines():
            line = raw.strip()
            if not line or line.startswith(("#", "!")):
                continue
            # java.util.Properties: the key ends at '=', ':' or white space (no escapes handled here)
            parsed = re.match(r"([^=:\s]*)\s*[=:]?\s*(.*)", line)
            if parsed is not None:
                props[parsed.group(1)] = parsed.group(2).strip()
    for prop in producer_props:
        pieces = prop.split("=")
        if len(pieces) != 2:
            raise InvalidArgumentError(f"Invalid property: {prop}")
        props[pieces[0]] = pieces[1]
    if not props.get("bootstrap.servers") and local_bootstrap is not None:
        props["bootstrap.servers"] = local_bootstrap
    if not props.get("bootstrap.servers"):
        raise InvalidArgumentError('Missing required configuration "bootstrap.servers" which has no default value.')
    return props


@kafka_errors()
def producer_perf_test_command(
    ctx: typer.Context,
    topic: Annotated[
        str | None, typer.Option("--topic", metavar="TOPIC", help="produce messages to this topic")
    ] = None,
    num_records: Annotated[
        int | None, typer.Option("--num-records", metavar="NUM-RECORDS", help="number of messages to produce")
    ] = None,
    record_size: Annotated[
        int | None,
        typer.Option(
            "--record-size",
            metavar="RECORD-SIZE",
            help="message size in bytes. Note that you must provide exactly one of --record-size or --payload-file.",
        ),
    ] = None,
    payload_file: Annotated[
        Path | None,
        typer.Option(
            "--payload-file",
            metavar="PAYLOAD-FILE",
            help="file to read the message payloads from. This works only for UTF-8 encoded text files. Payloads will be read from this file and a payload will be randomly selected when sending messages. Note that you must provide exactly one of --record-size or --payload-file.",
        ),
    ] = None,
    payload_delimiter: Annotated[
        str,
        typer.Option(
            "--payload-delimiter",
            metavar="PAYLOAD-DELIMITER",
            help="provides delimiter to be used when --payload-file is provided. Defaults to new line. Note that this parameter will be ignored if --payload-file is not provided.",
        ),
    ] = "\\n",
    throughput: Annotated[
        float | None,
        typer.Option(
            "--throughput",
            metavar="THROUGHPUT",
            help="throttle maximum message throughput to *approximately* THROUGHPUT messages/sec. Set this to -1 to disable throttling.",
        ),
    ] = None,
    producer_props: Annotated[
        list[str] | None,
        typer.Option(
            "--producer-props",
            metavar="PROP-NAME=PROP-VALUE",
            help="kafka producer related configuration properties like bootstrap.servers,client.id etc. These configs take precedence over those passed via --producer.config.",
        ),
    ] = None,
    producer_config: Annotated[
        Path | None,
        typer.Option("--producer.config", metavar="CONFIG-FILE", help="producer config properties file."),
    ] = None,
    print_metrics: Annotated[
        bool, typer.Option("--print-metrics", help="print out metrics at the end of the test (not available here).")
    ] = False,
    transactional_id: Annotated[
        str | None, typer.Option("--transactional-id", metavar="TRANSACTIONAL-ID", help="Not available here.")
    ] = None,
    transaction_duration_ms: Annotated[
        int, typer.Option("--transaction-duration-ms", metavar="TRANSACTION-DURATION", help="Not available here.")
    ] = 0,
    state: StateDirOption = None,
) -> None:
    """This tool is used to verify the producer performance."""
    extra = _extra_properties(ctx.args, "--producer-props")
    if topic is None:
        raise UsageError("argument --topic is required")
    if num_records is None:
        raise UsageError("argument --num-records is required")
    if record_size is not None and payload_file is not None:
        raise UsageError("argument --payload-file: not allowed with argument --record-size")
    if record_size is None and payload_file is None:
        raise UsageError("one of the arguments --record-size --payload-file is required")
    if throughput is None:
        raise UsageError("argument --throughput is required")
    if transactional_id is not None or transaction_duration_ms > 0:
        raise InvalidArgumentError("kafkaops producer-perf-test does not support transactions")
    props = perf_producer_props([*(producer_props or []), *extra], producer_config, optional_bootstrap_server(state))
    if payload_file is None:
        if record_size is None or record_size < 0:
            raise InvalidArgumentError(f"Invalid record size {record_size}")
        payloads = [perf_payload(record_size)]
    else:
        delimiter = "\n" if payload_delimiter == "\\n" else payload_delimiter
        sys.stdout.write(f"Reading payloads from: {payload_file.absolute()}\n")
        try:
            text = payload_file.read_text(encoding="utf-8")
        except OSError:
            text = ""
        if not text:
            raise InvalidArgumentError("File does not exist or empty file provided.")
        payloads = payloads_from_text(text, delimiter)
        sys.stdout.write(f"Number of messages read: {len(payloads)}\n")
    if print_metrics:
        sys.stderr.write("kafkaops producer-perf-test has no client metrics to print\n")
    acks = parse_acks(props.get("acks", "-1"))
    with (
        KafkaClient(
            props["bootstrap.servers"],
            client_id=props.get("client.id", "perf-producer-client"),
            request_timeout_ms=_int_setting(props, "request.timeout.ms", 30000),
            retries=_int_setting(props, "retries", 2147483647),
            retry_backoff_ms=_int_setting(props, "retry.backoff.ms", 100),
            delivery_timeout_ms=_int_setting(props, "delivery.timeout.ms", 120000),
            channel=channel_from_properties(props),
        ) as client,
        _interruptible(),
    ):
        total, failed = run_producer_perf(
            client,
            topic,
            num_records,
            payloads,
            throughput,
            acks=acks,
            batch_size=max(_int_setting(props, "batch.size", 16384), 1),
            on_window=lambda window: print(perf_window_line(window), flush=True),
        )
    for outcome in failed:
        sys.stderr.write(f"{len(outcome.records)} records to partition {outcome.partition} failed: {outcome.error}\n")
    sys.stdout.write(perf_total_line(total) + "\n")
    if failed:
        raise typer.Exit(code=1)
