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
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.Serializable;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
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
import org.apache.spark.sql.connector.read.SupportsPushDownFilters;
import org.apache.spark.sql.connector.read.SupportsPushDownRequiredColumns;
import org.apache.spark.sql.sources.EqualNullSafe;
import org.apache.spark.sql.sources.EqualTo;
import org.apache.spark.sql.sources.Filter;
import org.apache.spark.sql.sources.GreaterThan;
import org.apache.spark.sql.sources.GreaterThanOrEqual;
import org.apache.spark.sql.sources.In;
import org.apache.spark.sql.sources.LessThan;
import org.apache.spark.sql.sources.LessThanOrEqual;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;
import org.apache.spark.sql.vectorized.ColumnarBatch;

/** The table provider: {@code spark.read.format("kdump.spark.jvm.KafkaLogSource")}. */
public final class KafkaLogSource implements TableProvider {
  /** Bumped with every change of what the engine reads; kdump.spark.engine checks it. */
  public static final int REVISION = 4;

  /**
   * Bytes the readers of this JVM read from segment files (batch headers and whole batches; what the Python
   * reader reads for a split handed over is not counted): how much a pushed-down filter saves.
   */
  static final AtomicLong BYTES_READ = new AtomicLong();

  public static long bytesRead() {
    return BYTES_READ.get();
  }

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

  static final class LogScanBuilder
      implements ScanBuilder, SupportsPushDownRequiredColumns, SupportsPushDownFilters {
    private final CaseInsensitiveStringMap options;
    private StructType required;
    private Filter[] pushed = new Filter[0];
    private final ArrayNode described = new ObjectMapper().createArrayNode();

    LogScanBuilder(StructType schema, CaseInsensitiveStringMap options) {
      this.required = schema;
      this.options = options;
    }

    @Override
    public void pruneColumns(StructType requiredSchema) {
      this.required = requiredSchema;
    }

    /**
     * The filters on topic, partition, offset and timestamp the planner can narrow a read by (kdump.spark.options.
     * push_filters decides what each allows, as for the Python source); every filter is handed back, so Spark
     * applies them all to the rows read.
     */
    @Override
    public Filter[] pushFilters(Filter[] filters) {
      List<Filter> used = new ArrayList<>();
      for (Filter f : filters) {
        ObjectNode d = Pushdown.describe(f);
        if (d != null) {
          described.add(d);
          used.add(f);
        }
      }
      pushed = used.toArray(new Filter[0]);
      return filters;
    }

    @Override
    public Filter[] pushedFilters() {
      return pushed;
    }

    @Override
    public Scan build() {
      return new LogScan(required, options, described.isEmpty() ? null : described);
    }
  }

  /** Spark's (V1) filters as the Python planner's push_filters reads them. */
  static final class Pushdown {
    private Pushdown() {}

    /** {"kind": class name, "column": name, "values": [...]}, or null for a filter the planner cannot use. */
    static ObjectNode describe(Filter f) {
      String attribute;
      Object[] values;
      if (f instanceof EqualTo e) {
        attribute = e.attribute();
        values = new Object[] {e.value()};
      } else if (f instanceof EqualNullSafe e) {
        attribute = e.attribute();
        values = new Object[] {e.value()};
      } else if (f instanceof GreaterThan e) {
        attribute = e.attribute();
        values = new Object[] {e.value()};
      } else if (f instanceof GreaterThanOrEqual e) {
        attribute = e.attribute();
        values = new Object[] {e.value()};
      } else if (f instanceof LessThan e) {
        attribute = e.attribute();
        values = new Object[] {e.value()};
      } else if (f instanceof LessThanOrEqual e) {
        attribute = e.attribute();
        values = new Object[] {e.value()};
      } else if (f instanceof In e) {
        attribute = e.attribute();
        values = e.values();
      } else {
        return null;
      }
      String column = attribute.toLowerCase(java.util.Locale.ROOT);
      if (values.length == 0
          || !(column.equals("topic") || column.equals("partition") || column.equals("offset")
              || column.equals("timestamp"))) {
        return null;
      }
      ObjectNode d = new ObjectMapper().createObjectNode();
      d.put("kind", f.getClass().getSimpleName());
      d.put("column", column);
      ArrayNode out = d.putArray("values");
      for (Object v : values) {
        if (v instanceof String text && column.equals("topic")) {
          out.add(text);
        } else if ((v instanceof Integer || v instanceof Long)
            && (column.equals("partition") || column.equals("offset"))) {
          out.add(((Number) v).longValue());
        } else if (v instanceof java.sql.Timestamp t && column.equals("timestamp")) {
          out.addObject().put("micros", Math.floorDiv(t.getTime(), 1000L) * 1_000_000L + t.getNanos() / 1000);
        } else if (v instanceof java.time.Instant t && column.equals("timestamp")) {
          out.addObject().put("micros", t.getEpochSecond() * 1_000_000L + t.getNano() / 1000);
        } else {
          return null; // a null, a cast value, another type: left to Spark
        }
      }
      return d;
    }

    /**
     * Milliseconds no wanted row is before ({@code lo}) and after ({@code hi}) by the timestamp filters (Long.MIN_VALUE
     * and Long.MAX_VALUE: unbounded); the reader leaves out batches whose records are all outside.
     */
    static long[] timestampBounds(JsonNode filters) {
      long lo = Long.MIN_VALUE;
      long hi = Long.MAX_VALUE;
      if (filters == null) {
        return new long[] {lo, hi};
      }
      for (JsonNode d : filters) {
        if (!d.get("column").asText().equals("timestamp")) {
          continue;
        }
        String kind = d.get("kind").asText();
        long least = Long.MAX_VALUE;
        long most = Long.MIN_VALUE;
        for (JsonNode v : d.get("values")) {
          long micros = v.get("micros").asLong();
          least = Math.min(least, micros);
          most = Math.max(most, micros);
        }
        // a record's timestamp column is its milliseconds * 1000
        boolean below = kind.equals("EqualTo") || kind.equals("EqualNullSafe") || kind.equals("In")
            || kind.startsWith("GreaterThan");
        boolean above = kind.equals("EqualTo") || kind.equals("EqualNullSafe") || kind.equals("In")
            || kind.startsWith("LessThan");
        if (below) {
          lo = Math.max(lo, -Math.floorDiv(-least, 1000L)); // ms * 1000 >= least
        }
        if (above) {
          hi = Math.min(hi, Math.floorDiv(most, 1000L)); // ms * 1000 <= most
        }
      }
      return new long[] {lo, hi};
    }
  }

  static final class LogScan implements Scan, Batch {
    private final StructType required;
    private final CaseInsensitiveStringMap options;
    /** The pushed filters the planner narrows the read by (null: none). */
    private final JsonNode filters;

    LogScan(StructType required, CaseInsensitiveStringMap options, JsonNode filters) {
      this.required = required;
      this.options = options;
      this.filters = filters;
    }

    @Override
    public StructType readSchema() {
      return required;
    }

    @Override
    public String description() {
      return filters == null ? "kafka-log (jvm)" : "kafka-log (jvm) pushed " + filters;
    }

    @Override
    public Batch toBatch() {
      return this;
    }

    @Override
    public InputPartition[] planInputPartitions() {
      String tasks = filters == null ? options.get("tasks") : replan();
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

    /**
     * The tasks planned again with the pushed filters: the Python planner (python -m kdump.spark.jvm_planner,
     * kdump.spark.planning.plan with push_filters' narrowing, the Python source's own) on the driver; its
     * problems go to standard error.
     */
    private String replan() {
      String python = options.get("python");
      String request = options.get("plan");
      if (python == null || request == null) {
        return options.get("tasks"); // (a read not made by kdump.spark.engine: the tasks as given)
      }
      ProcessBuilder pb = new ProcessBuilder(python, "-m", "kdump.spark.jvm_planner");
      String path = options.get("pythonPath");
      if (path != null) {
        String old = System.getenv("PYTHONPATH");
        pb.environment().put("PYTHONPATH",
            old == null || old.isEmpty() ? path : path + java.io.File.pathSeparator + old);
      }
      pb.redirectError(ProcessBuilder.Redirect.INHERIT);
      try {
        Process p = pb.start();
        ObjectMapper mapper = new ObjectMapper();
        ObjectNode message = (ObjectNode) mapper.readTree(request);
        message.set("filters", filters);
        try (OutputStream in = p.getOutputStream()) {
          in.write(mapper.writeValueAsBytes(message));
        }
        ByteArrayOutputStream got = new ByteArrayOutputStream();
        try (InputStream out = p.getInputStream()) {
          out.transferTo(got);
        }
        int status = p.waitFor();
        if (status != 0) {
          throw new IllegalStateException("kafka-log (jvm): planning with the pushed filters failed (exit status "
              + status + "; its message is on standard error)");
        }
        return got.toString(StandardCharsets.UTF_8);
      } catch (IOException e) {
        throw new UncheckedIOException("kafka-log (jvm): planning with the pushed filters", e);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("kafka-log (jvm): interrupted while planning", e);
      }
    }

    @Override
    public PartitionReaderFactory createReaderFactory() {
      return new LogReaderFactory(ReadSettings.of(options, required, filters));
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
    /** Milliseconds outside which no row is wanted (pushed timestamp filters; see LogReader.readBatch). */
    long minTimestamp = Long.MIN_VALUE;
    long maxTimestamp = Long.MAX_VALUE;

    static ReadSettings of(CaseInsensitiveStringMap o, StructType required, JsonNode filters) {
      ReadSettings r = new ReadSettings();
      long[] bounds = Pushdown.timestampBounds(filters);
      r.minTimestamp = bounds[0];
      r.maxTimestamp = bounds[1];
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
