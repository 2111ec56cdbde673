"""The chaos runner (issue 8): acknowledged records survive faults, replicas agree, intents complete.

    .venv/bin/python bench/chaos.py --seed 1 --duration 1800 [--brokers 3..5] [--state-dir DIR]
                                    [--security plaintext|ssl|sasl_plaintext|sasl_ssl]

A 3-node ZooKeeper ensemble on loopback ports, a cluster of `--brokers` broker processes on it
(kafkaops.cluster.local), topics with replication factor 3, min.insync.replicas=2 and unclean leader
election off; with `--security MODE` the cluster is set up as `kafkaops cluster up --security MODE` does
(every listener, inter-broker included, speaks that protocol) and every client of the run, the tools given
`--bootstrap-server` included, connects with the cluster's `client.properties` (for sasl_ssl: TLS and a
SCRAM-SHA-512 login as its admin user). For `--duration` seconds an idempotent kafka-python producer per
topic sends with acks=all at a steady rate (values unique: `<topic>/<sequence>`), recording every acknowledged
(topic, partition, offset, value) and when it was acknowledged; a confluent-kafka consumer reads every
partition from the beginning (explicit assignment); another, a member of the group `kafkaops-chaos-commits`,
subscribes to the topics and commits synchronously after every batch it read; and a seeded schedule
injects faults:

    <mode>:<target>    mode clean_shutdown (SIGTERM, down for a while), hard_shutdown (SIGKILL, down for
                       a while), clean_bounce / hard_bounce (stopped and started again, 1-3 times, as
                       Kafka's replication_test); target the leader of a partition, the controller, a
                       random broker, or the coordinator of the group consumer's group (the leader of its
                       `__consumer_offsets` partition)
    zk_node_kill       SIGKILL of one ZooKeeper node (the ensemble's leader half of the time), restarted later
    session_expire     a broker's ZooKeeper session ended from outside (resumed with its id and password,
                       then closed): its registration vanishes while the process runs on
    zombie_freeze      the leader of a partition frozen (SIGSTOP) for longer than the session timeout,
                       then resumed: the zombie leader
    reassignment       `kafkaops reassign-partitions --execute` with a plan generated at that moment
    preferred_election `kafkaops preferred-replica-election` (all partitions)
    topic_deletion     `kafkaops topics --delete` of a topic written to until just before

The schedule (kinds, times, hold times, bounce counts, and the numbers that pick a partition, broker or
node among those found at that moment) is a pure function of the seed and the options: the same seed
replays the same schedule; which broker it hits depends on the cluster's state then. Kinds are drawn
from a shuffled deck, so a long run hits each kind about equally often. Each fault runs as an episode
on its own thread (inject, hold, recover, wait until the broker is back in every ISR, as ZooKeeper
says, written after its new registration), so a slow one does not hold up the schedule. At most
`--max-impaired` brokers are held by episodes at once (down, frozen, expired, or not yet back in
every ISR) and at most one ZooKeeper node is down; a fault that would exceed that waits, and is
counted skipped if it cannot start within 30 s. A broker whose old session still holds its
registration refuses to start (Kafka's "node already exists"); the runner starts it again, as an
operator would.

At the end everything is healed (stopped brokers and nodes started, frozen ones resumed), the runner
waits for the intents to complete and the ISRs to be full, stops the producers, reads every partition
of the surviving topics to its end and checks:

* every acknowledged record is in the log exactly once, at the offset it was acknowledged with (lost:
  not there; moved: there at another offset); no value appears twice (a broker-side duplicate: the
  producer never resends a value itself);
* every record the live consumer read is still in the log at the same offset (a consumer saw it, so
  it was committed);
* the group consumer, once at the high watermarks, read every acknowledged record, never jumped forward in
  a partition, and never resumed before the last commit the coordinator acknowledged (re-reads only after
  it), across the coordinator failovers the faults caused;
* every replica holds the same records (each broker's copy fetched with `KafkaClient.fetch_from_broker`),
  and `kafkaops replica-verification --once` agrees;
* every intent completed or was reported failed: each reassignment is settled with
  `kafkaops reassign-partitions --verify` once its znode is gone (a partition left on other replicas
  counts as reported failed only if a controller logged "Failed reassignment through zk" for it, as
  Kafka does when a target broker is not alive), `/admin/preferred_replica_election` gone, deleted
  topics gone;
* no broker process died without being told to, every broker whose session was ended or that was
  frozen registered again, every restarted broker got back into its ISRs, every partition took acks
  again once healed, and the producers and the consumer ran to the end.

Reported without failing the run: clean stops slower than 20 s (with `--clean-stop-timeout` the
broker then gets a SIGKILL), and a broker answering Metadata with only some of a topic's partitions
(kafka-python then refuses to send to the missing ones; each broker is asked which it lists).

The state-change logs of all brokers are merged into one timeline (`kafkaops state-change-log-merger`),
and a summary table is printed: faults injected by kind, records acked / consumed / lost / duplicated,
the longest gap between successful acks per partition (max unavailability), the checks and the verdict.

Outputs, in the state dir (a new temporary directory unless `--state-dir`): `chaos-events.log` (every
action with wall-clock times comparable with the state-change logs), `chaos-report.json`,
`state-change-timeline.log`, `timeline-<topic>-<partition>.log` for partitions that lost data, and the
cluster's own directories (`brokers/<id>/logs/`; partition data removed after a passing run unless
`--keep-data`).

Exit codes: 0 all checks passed; 1 acknowledged data lost, moved or duplicated, or replicas differ;
2 no data problem but another check failed (an intent did not complete, a broker died on its own or
did not come back, the cluster could not be healed); 3 the run could not be carried out (setup failed);
130 interrupted (Ctrl-C, SIGTERM or SIGHUP, whatever dispositions the runner inherited: it installs its own
handlers). Every process the runner started is stopped at the end, on error and on a signal too, and its
clients are closed.

The parts: `schedule` (kinds, configuration, the seeded schedule; pure), `workload` (the producers and the
live consumer; the cluster tests reuse them), `faults` (the episodes and healing), `checks` (the record
checks, pure, and the end phase that feeds them), `report` (tables and JSON), `context` (what they share:
the cluster, the event log, the bookkeeping), `runner` (the run and the command).
"""
