// Kafka's own answers for kdump's reading of __remote_log_metadata (tests/test_remote_log_metadata.py):
// RemoteLogMetadataTopicPartitioner's partition of seeded topic-id partitions, and a seeded sequence of metadata
// events serialized by RemoteLogMetadataSerde and applied to RemoteLogMetadataCache, with the segments it holds
// at the end. Run with the Kafka 4.0 distribution's libs on the class path:
//   java -cp 'KAFKA/libs/*' tests/remote_metadata_oracle/RemoteMetadataOracle.java SEED > FIXTURE
import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.server.log.remote.metadata.storage.RemoteLogMetadataCache;
import org.apache.kafka.server.log.remote.metadata.storage.RemoteLogMetadataTopicPartitioner;
import org.apache.kafka.server.log.remote.metadata.storage.serialization.RemoteLogMetadataSerde;
import org.apache.kafka.server.log.remote.storage.RemoteLogMetadata;
import org.apache.kafka.server.log.remote.storage.RemoteLogSegmentId;
import org.apache.kafka.server.log.remote.storage.RemoteLogSegmentMetadata;
import org.apache.kafka.server.log.remote.storage.RemoteLogSegmentMetadata.CustomMetadata;
import org.apache.kafka.server.log.remote.storage.RemoteLogSegmentMetadataUpdate;
import org.apache.kafka.server.log.remote.storage.RemoteLogSegmentState;

import java.util.ArrayList;
import java.util.HexFormat;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.TreeMap;

public class RemoteMetadataOracle {
    public static void main(String[] args) throws Exception {
        Random random = new Random(Long.parseLong(args[0]));
        RemoteLogMetadataTopicPartitioner p50 = new RemoteLogMetadataTopicPartitioner(50);
        RemoteLogMetadataTopicPartitioner p7 = new RemoteLogMetadataTopicPartitioner(7);
        for (int i = 0; i < 300; i++) {
            Uuid id = new Uuid(random.nextLong(), random.nextLong());
            int partition = random.nextInt(5000);
            TopicIdPartition tip = new TopicIdPartition(id, new TopicPartition("t", partition));
            System.out.println("P " + id + " " + partition + " " + p50.metadataPartition(tip) + " " + p7.metadataPartition(tip));
        }
        RemoteLogMetadataSerde serde = new RemoteLogMetadataSerde();
        RemoteLogMetadataCache cache = new RemoteLogMetadataCache();
        cache.markInitialized();
        TopicIdPartition tip = new TopicIdPartition(new Uuid(random.nextLong(), random.nextLong()), new TopicPartition("orders", 3));
        List<RemoteLogSegmentId> ids = new ArrayList<>();
        for (int i = 0; i < 12; i++) {
            ids.add(new RemoteLogSegmentId(tip, new Uuid(random.nextLong(), random.nextLong())));
        }
        RemoteLogSegmentState[] states = RemoteLogSegmentState.values();
        for (int i = 0; i < 200; i++) {
            RemoteLogSegmentId id = ids.get(random.nextInt(ids.size()));
            RemoteLogMetadata event;
            Optional<CustomMetadata> custom = random.nextInt(4) == 0
                ? Optional.of(new CustomMetadata(new byte[]{(byte) random.nextInt(256), 7}))
                : Optional.empty();
            long eventTs = 1700000000000L + i;
            int broker = random.nextInt(3);
            if (random.nextInt(3) == 0) {
                long start = random.nextInt(100000);
                long end = start + random.nextInt(1000);
                Map<Integer, Long> epochs = new TreeMap<>();
                epochs.put(random.nextInt(5), start);
                if (end > start && random.nextBoolean()) {
                    epochs.put(10 + random.nextInt(5), start + 1 + random.nextInt((int) (end - start)));
                }
                RemoteLogSegmentState state = random.nextInt(5) == 0 ? states[random.nextInt(states.length)] : RemoteLogSegmentState.COPY_SEGMENT_STARTED;
                event = new RemoteLogSegmentMetadata(id, start, end, eventTs - 5, broker, eventTs,
                    random.nextInt(1 << 20), custom, state, epochs, random.nextBoolean());
            } else {
                event = new RemoteLogSegmentMetadataUpdate(id, eventTs, custom, states[random.nextInt(states.length)], broker);
            }
            System.out.println("E " + HexFormat.of().formatHex(serde.serialize(event)));
            try {
                if (event instanceof RemoteLogSegmentMetadata m) {
                    cache.addCopyInProgressSegment(m);
                } else {
                    cache.updateRemoteLogSegmentMetadata((RemoteLogSegmentMetadataUpdate) event);
                }
            } catch (Exception e) {
                // Kafka's consumer task logs and drops such an event
            }
        }
        Iterator<RemoteLogSegmentMetadata> it = cache.listAllRemoteLogSegments();
        List<String> lines = new ArrayList<>();
        while (it.hasNext()) {
            RemoteLogSegmentMetadata m = it.next();
            lines.add("S " + m.remoteLogSegmentId().id() + " " + m.state() + " " + m.startOffset() + " " + m.endOffset()
                + " " + m.brokerId() + " " + m.eventTimestampMs() + " " + m.segmentSizeInBytes() + " "
                + m.customMetadata().map(c -> HexFormat.of().formatHex(c.value())).orElse("-") + " "
                + m.segmentLeaderEpochs() .toString().replace(" ", "") + " " + m.isTxnIdxEmpty());
        }
        lines.sort(null);
        lines.forEach(System.out::println);
    }
}
