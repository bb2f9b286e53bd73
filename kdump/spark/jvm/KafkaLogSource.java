/*
 * The JVM engine of kdump's kafka-log Spark source: a DataSource V2 table whose scan hands Spark column batches
 * (no Python worker, no Arrow-to-row conversion).  It does not plan: the Python driver code
 * (kdump.spark.planning.plan) plans the splits and passes them as the "tasks" option (JSON, one list of splits
 * per Spark task); kdump.spark.engine builds that option and the schema.  Compiled on demand by
 * kdump.spark.engine against the jars PySpark ships.
 */
package kdump.spark.jvm;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.Serializable;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.connector.catalog.SupportsRead;
import org.apache.spark.sql.connector.catalog.Table;
import org.apache.spark.sql.connector.catalog.TableCapability;
import org.apache.spark.sql.connector.catalog.TableProvider;
import org.apache.spark.sql.connector.expressions.Transform;
import org.apache.spark.sql.connector.read.Batch;
import org.apache.spark.sql.connector.read.InputPartition;
import org.apache.spark.sql.connector.read.PartitionReader;
import org.apache.spark.sql.connector.read.PartitionReaderFactory;
import org.apache.spark.sql.connector.read.Scan;
import org.apache.spark.sql.connector.read.ScanBuilder;
import org.apache.spark.sql.connector.read.SupportsPushDownRequiredColumns;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;
import org.apache.spark.sql.vectorized.ColumnarBatch;

/** The table provider: {@code spark.read.format("kdump.spark.jvm.KafkaLogSource")}. */
public final class KafkaLogSource implements TableProvider {
  /** Bumped with every change of what the engine reads; kdump.spark.engine checks it. */
  public static final int REVISION = 3;

  @Override
  public StructType inferSchema(CaseInsensitiveStringMap options) {
    String json = options.get("schema");
    if (json == null) {
      throw new IllegalArgumentException("kafka-log (jvm): no schema option; use kdump.spark.read");
    }
    return (StructType) DataType.fromJson(json);
  }

  @Override
  public boolean supportsExternalMetadata() {
    return true;
  }

  @Override
  public Table getTable(StructType schema, Transform[] partitioning, Map<String, String> properties) {
    return new LogTable(schema);
  }

  static final class LogTable implements Table, SupportsRead {
    private final StructType schema;

    LogTable(StructType schema) {
      this.schema = schema;
    }

    @Override
    public String name() {
      return "kafka-log";
    }

    @Override
    public StructType schema() {
      return schema;
    }

    @Override
    public Set<TableCapability> capabilities() {
      return EnumSet.of(TableCapability.BATCH_READ);
    }

    @Override
    public ScanBuilder newScanBuilder(CaseInsensitiveStringMap options) {
      return new LogScanBuilder(schema, options);
    }
  }

  static final class LogScanBuilder implements ScanBuilder, SupportsPushDownRequiredColumns {
    private final CaseInsensitiveStringMap options;
    private StructType required;

    LogScanBuilder(StructType schema, CaseInsensitiveStringMap options) {
      this.required = schema;
      this.options = options;
    }

    @Override
    public void pruneColumns(StructType requiredSchema) {
      this.required = requiredSchema;
    }

    @Override
    public Scan build() {
      return new LogScan(required, options);
    }
  }

  static final class LogScan implements Scan, Batch {
    private final StructType required;
    private final CaseInsensitiveStringMap options;

    LogScan(StructType required, CaseInsensitiveStringMap options) {
      this.required = required;
      this.options = options;
    }

    @Override
    public StructType readSchema() {
      return required;
    }

    @Override
    public String description() {
      return "kafka-log (jvm)";
    }

    @Override
    public Batch toBatch() {
      return this;
    }

    @Override
    public InputPartition[] planInputPartitions() {
      String tasks = options.get("tasks");
      List<InputPartition> out = new ArrayList<>();
      try {
        JsonNode root = new ObjectMapper().readTree(tasks == null ? "[]" : tasks);
        for (JsonNode task : root) {
          List<SplitSpec> splits = new ArrayList<>();
          for (JsonNode split : task) {
            splits.add(SplitSpec.of(split));
          }
          out.add(new LogPartition(splits.toArray(new SplitSpec[0])));
        }
      } catch (IOException e) {
        throw new UncheckedIOException("kafka-log (jvm): bad tasks option", e);
      }
      return out.toArray(new InputPartition[0]);
    }

    @Override
    public PartitionReaderFactory createReaderFactory() {
      return new LogReaderFactory(ReadSettings.of(options, required));
    }
  }

  /** One Spark task: splits read one after the other. */
  static final class LogPartition implements InputPartition {
    private static final long serialVersionUID = 1L;
    final SplitSpec[] splits;

    LogPartition(SplitSpec[] splits) {
      this.splits = splits;
    }
  }

  static final class LogReaderFactory implements PartitionReaderFactory {
    private static final long serialVersionUID = 1L;
    private final ReadSettings settings;

    LogReaderFactory(ReadSettings settings) {
      this.settings = settings;
    }

    @Override
    public boolean supportColumnarReads(InputPartition partition) {
      return true;
    }

    @Override
    public PartitionReader<ColumnarBatch> createColumnarReader(InputPartition partition) {
      return new LogReader(((LogPartition) partition).splits, settings);
    }

    @Override
    public PartitionReader<InternalRow> createReader(InputPartition partition) {
      throw new UnsupportedOperationException("kafka-log (jvm) reads column batches only");
    }
  }

  /** One split as the Python planner made it (kdump.spark.planning.Split), plus its JSON for the fallback. */
  static final class SplitSpec implements Serializable {
    private static final long serialVersionUID = 1L;
    String json;
    String path;
    String topic;
    int partition;
    long startPosition;
    long endPosition; // -1: to the end of the file
    long startOffset; // Long.MIN_VALUE: unbounded
    long endOffset; // exclusive, when hasEndOffset
    boolean hasStartOffset;
    boolean hasEndOffset;
    long[] abortedPid;
    long[] abortedFirst;
    long[] abortedLast;
    boolean hasLastStable;
    long lastStable;

    static SplitSpec of(JsonNode n) {
      SplitSpec s = new SplitSpec();
      s.json = n.toString();
      s.path = n.get("path").asText();
      s.topic = n.get("topic").asText();
      s.partition = n.get("partition").asInt();
      s.startPosition = n.get("start_position").asLong();
      JsonNode end = n.get("end_position");
      s.endPosition = end == null || end.isNull() ? -1 : end.asLong();
      JsonNode lo = n.get("start_offset");
      s.hasStartOffset = lo != null && !lo.isNull();
      s.startOffset = s.hasStartOffset ? lo.asLong() : Long.MIN_VALUE;
      JsonNode hi = n.get("end_offset");
      s.hasEndOffset = hi != null && !hi.isNull();
      s.endOffset = s.hasEndOffset ? hi.asLong() : Long.MAX_VALUE;
      JsonNode aborted = n.get("aborted");
      int k = aborted == null ? 0 : aborted.size();
      s.abortedPid = new long[k];
      s.abortedFirst = new long[k];
      s.abortedLast = new long[k];
      for (int i = 0; i < k; i++) {
        JsonNode t = aborted.get(i); // [version, producer_id, first_offset, last_offset, last_stable_offset]
        s.abortedPid[i] = t.get(1).asLong();
        s.abortedFirst[i] = t.get(2).asLong();
        s.abortedLast[i] = t.get(3).asLong();
      }
      JsonNode lso = n.get("last_stable_offset");
      s.hasLastStable = lso != null && !lso.isNull();
      s.lastStable = s.hasLastStable ? lso.asLong() : 0;
      return s;
    }
  }

  /** What every task of a read needs to know. */
  static final class ReadSettings implements Serializable {
    private static final long serialVersionUID = 1L;
    boolean includeHeaders;
    boolean readCommitted;
    boolean includeControl;
    int rowsPerBatch;
    String[] columns;
    StructType required;
    /** The Python reader for what this one declines: interpreter, PYTHONPATH, ReadOptions as JSON. */
    String python;
    String pythonPath;
    String readOptions;
    /** KDUMP_FALLBACK_LOG for the Python reader (the tests' record of what was handed over), or null. */
    String fallbackLog;
    /** Codecs this engine decodes (the others go to the Python reader), by Kafka's id. */
    boolean[] codecs;

    static ReadSettings of(CaseInsensitiveStringMap o, StructType required) {
      ReadSettings r = new ReadSettings();
      r.includeHeaders = o.getBoolean("includeHeaders", false);
      r.readCommitted = o.getBoolean("readCommitted", false);
      r.includeControl = o.getBoolean("includeControl", false);
      r.rowsPerBatch = o.getInt("jvmRowsPerBatch", 4096);
      r.required = required;
      r.columns = required.fieldNames();
      r.python = o.get("python");
      r.pythonPath = o.get("pythonPath");
      r.readOptions = o.get("readOptions");
      r.fallbackLog = o.get("fallbackLog");
      r.codecs = new boolean[8];
      String codecs = o.getOrDefault("codecs", "none,gzip,snappy,lz4,zstd");
      for (String c : codecs.split(",")) {
        int id = Codecs.id(c.trim());
        if (id >= 0) {
          r.codecs[id] = true;
        }
      }
      return r;
    }
  }
}
