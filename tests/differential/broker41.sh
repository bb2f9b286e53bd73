#!/usr/bin/env bash
# A Kafka 4.1 single-node KRaft broker, its workloads, then a clean stop (by pid).
# Made tests/fixtures/broker-4.1 (tests/differential/broker_release.py): run on an empty directory, then copy the
# partition files (.log .index .timeindex .snapshot, three of the .checkpoint snapshots, bootstrap.checkpoint).
set -euo pipefail
K=/work/shared/kafka-4.1.0/kafka
D=${1:?usage: broker41.sh DATA_DIR}
B=127.0.0.1:39092
rm -rf "$D"; mkdir -p "$D/logs"
export KAFKA_HEAP_OPTS="-Xmx384m -Xms128m" LOG_DIR="$D/logs"
cat > "$D/kraft.properties" <<CFG
process.roles=broker,controller
node.id=1
controller.quorum.bootstrap.servers=127.0.0.1:39093
listeners=PLAINTEXT://127.0.0.1:39092,CONTROLLER://127.0.0.1:39093
advertised.listeners=PLAINTEXT://127.0.0.1:39092
controller.listener.names=CONTROLLER
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT
log.dirs=$D/data
num.partitions=1
auto.create.topics.enable=false
offsets.topic.replication.factor=1
offsets.topic.num.partitions=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
transaction.state.log.num.partitions=1
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.num.partitions=1
share.coordinator.state.topic.min.isr=1
group.initial.rebalance.delay.ms=0
log.cleaner.backoff.ms=500
metadata.log.max.snapshot.interval.ms=5000
log.retention.hours=-1
CFG
cid=$($K kafka-storage.sh random-uuid)
$K kafka-storage.sh format --standalone -t "$cid" -c "$D/kraft.properties" --feature share.version=1 > "$D/format.out" 2>&1 || \
  $K kafka-storage.sh format --standalone -t "$cid" -c "$D/kraft.properties" > "$D/format.out" 2>&1
nohup $K kafka-server-start.sh "$D/kraft.properties" > "$D/broker.out" 2>&1 &
echo $! > "$D/broker.pid"
for i in $(seq 1 120); do (echo > /dev/tcp/127.0.0.1/39092) 2>/dev/null && break; sleep 1; done
sleep 3
T="$K kafka-topics.sh --bootstrap-server $B"
$T --create --topic plain --partitions 1 --replication-factor 1
$T --create --topic txn41 --partitions 1 --replication-factor 1
$T --create --topic compacted --partitions 1 --replication-factor 1 --config cleanup.policy=compact \
   --config segment.ms=1500 --config min.cleanable.dirty.ratio=0.01 --config delete.retention.ms=100 --config min.compaction.lag.ms=0
$K kafka-features.sh --bootstrap-server $B describe > "$D/features.out" 2>&1 || true
$K kafka-features.sh --bootstrap-server $B upgrade --feature share.version=1 >> "$D/features.out" 2>&1 || true
# plain records with keys
seq 1 40 | sed 's/.*/k&:v&/' | $K kafka-console-producer.sh --bootstrap-server $B --topic plain --property parse.key=true --property key.separator=:
# compacted: keys overwritten, tombstones (null.marker), several segments over time
for round in 1 2 3; do
  (seq 1 10 | sed "s/.*/key&:r$round-&/"; echo "key3:NULL"; echo "key7:NULL") | \
    $K kafka-console-producer.sh --bootstrap-server $B --topic compacted --property parse.key=true --property key.separator=: --property null.marker=NULL
  sleep 2
done
# transactions of transaction.version 2 (the 4.1 Java producer against a 4.1 broker)
$K kafka-producer-perf-test.sh --topic txn41 --num-records 120 --record-size 40 --throughput -1 \
  --producer-props bootstrap.servers=$B --transactional-id kdump-tv2 --transaction-duration-ms 50 > "$D/txn.out" 2>&1
# a consumer-protocol group and a classic group
$K kafka-console-consumer.sh --bootstrap-server $B --topic plain --group cg-consumer --consumer-property group.protocol=consumer --from-beginning --max-messages 10 > /dev/null 2>&1 || true
$K kafka-console-consumer.sh --bootstrap-server $B --topic plain --group cg-classic --from-beginning --max-messages 10 > /dev/null 2>&1 || true
# a share group
$K kafka-share-groups.sh --bootstrap-server $B --group sg41 --reset-offsets --to-earliest --topic plain --execute > "$D/share.out" 2>&1 || true
timeout 40 $K kafka-console-share-consumer.sh --bootstrap-server $B --topic plain --group sg41 --max-messages 10 > /dev/null 2>>"$D/share.out" || true
seq 41 60 | sed 's/.*/k&:v&/' | $K kafka-console-producer.sh --bootstrap-server $B --topic compacted --property parse.key=true --property key.separator=:
sleep 12   # KRaft snapshots (metadata.log.max.snapshot.interval.ms), the cleaner
kill -TERM "$(cat "$D/broker.pid")"
for i in $(seq 1 90); do kill -0 "$(cat "$D/broker.pid")" 2>/dev/null || break; sleep 1; done
echo done
