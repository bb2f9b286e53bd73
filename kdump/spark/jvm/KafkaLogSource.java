/*
 * The JVM engine of kdump's kafka-log Spark source: a DataSource V2 table whose scan hands Spark column batches
 * (no Python worker, no Arrow-to-row conversion).  It does not plan: the Python planner (kdump.spark.planning.plan)
 * does, on the driver.  Read by its name (spark.read.format("kafka-log"), this class being a DataSourceRegister)
 * or its class name (kdump.spark.engine.read), the source asks python -m kdump.spark.jvm_planner for the schema,
 * the readers' settings and the tasks (JSON, one list of splits per Spark task) when the DataFrame is loaded,
 * and again when a query pushes filters down.  Compiled on demand by
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
import org.apache.spark.sql.sources.DataSourceRegister;
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

/**
 * The table provider: {@code spark.read.format("kafka-log")} (the service file names it) or {@code
 * spark.read.format("kdump.spark.jvm.KafkaLogSource")}.
 */
public final class KafkaLogSource implements TableProvider, DataSourceRegister {
  /** Bumped with every change of what the engine reads; kdump.spark.engine checks it. */
  public static final int REVISION = 5;

  /** The name this source answers to, unless a Python data source already has it. */
  public static final String NAME = "kafka-log";

  /**
   * "kafka-log", or "kafka-log-jvm" when a Python data source is registered under "kafka-log" in the active
   * session (Spark refuses a name that is both a JVM and a Python source: FOUND_MULTIPLE_DATA_SOURCES): then
   * that source keeps the name (kdump.spark.register and pyspark_kafka_log leave it to this one when its jar is
   * loaded).
   */
  @Override
  public String shortName() {
    return pythonHas(NAME) ? NAME + "-jvm" : NAME;
  }

  /**
   * Whether the active (or default) session has a Python data source named {@code name} (false when it cannot
   * be told).
   */
  static boolean pythonHas(String name) {
    try {
      scala.Option<org.apache.spark.sql.SparkSession> active =
          org.apache.spark.sql.SparkSession.getActiveSession();
      if (active.isEmpty()) {
        active = org.apache.spark.sql.SparkSession.getDefaultSession();
      }
      if (active.isEmpty()) {
        return false;
      }
      Object state = active.get().getClass().getMethod("sessionState").invoke(active.get());
      Object manager = state.getClass().getMethod("dataSourceManager").invoke(state);
      Object found = manager.getClass().getMethod("dataSourceExists", String.class).invoke(manager, name);
      return Boolean.TRUE.equals(found);
    } catch (Throwable e) { // Spark Connect, another Spark: no Python source to give way to
      return false;
    }
  }

  /**
   * Bytes the readers of this JVM read from segment files (batch headers and whole batches; what the Python
   * reader reads for a split handed over is not counted): how much a pushed-down filter saves.
   */
  static final AtomicLong BYTES_READ = new AtomicLong();

  public static long bytesRead() {
    return BYTES_READ.get();
  }

  /** The planner's answer when the DataFrame was loaded (inferSchema), and the options it was given. */
  private JsonNode loaded;
  private Map<String, String> loadedOptions;

  @Override
  public StructType inferSchema(CaseInsensitiveStringMap options) {
    // the options' schema, from the Python planner, which plans the read too: the plan of the table getTable
    // makes of these options (what a query without pushed filters reads)
    loaded = Planner.ask(options, null);
    loadedOptions = options.asCaseSensitiveMap();
    return (StructType) DataType.fromJson(loaded.get("schema").asText());
  }

  @Override
  public boolean supportsExternalMetadata() {
    return true;
  }

  @Override
  public Table getTable(StructType schema, Transform[] partitioning, Map<String, String> properties) {
    return new LogTable(schema, properties.equals(loadedOptions) ? loaded : null);
  }

  static final class LogTable implements Table, SupportsRead {
    private final StructType schema;

    /** The plan made when the DataFrame was loaded (null: none; the scans ask the planner). */
    private final JsonNode loaded;

    LogTable(StructType schema, JsonNode loaded) {
      this.loaded = loaded;
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
      return new LogScanBuilder(schema, options, loaded);
    }
  }

  static final class LogScanBuilder
      implements ScanBuilder, SupportsPushDownRequiredColumns, SupportsPushDownFilters {
    private final CaseInsensitiveStringMap options;
    private StructType required;
    private Filter[] pushed = new Filter[0];
    private final ArrayNode described = new ObjectMapper().createArrayNode();

    private final JsonNode loaded;

    LogScanBuilder(StructType schema, CaseInsensitiveStringMap options, JsonNode loaded) {
      this.loaded = loaded;
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
      // a query with pushed filters is planned again with them; one without reads the plan made at load
      return described.isEmpty() ? new LogScan(required, options, null, loaded) : new LogScan(required, options, described, null);
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

    LogScan(StructType required, CaseInsensitiveStringMap options, JsonNode filters, JsonNode planned) {
      this.planned = planned;
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

    /** The planner's answer for this scan (schema, settings and tasks): the load's, or asked once. */
    private JsonNode planned;

    private synchronized JsonNode planned() {
      if (planned == null) {
        planned = Planner.ask(options, filters);
      }
      return planned;
    }

    @Override
    public InputPartition[] planInputPartitions() {
      List<InputPartition> out = new ArrayList<>();
      for (JsonNode task : planned().get("tasks")) {
        List<SplitSpec> splits = new ArrayList<>();
        for (JsonNode split : task) {
          splits.add(SplitSpec.of(split));
        }
        out.add(new LogPartition(splits.toArray(new SplitSpec[0])));
      }
      return out.toArray(new InputPartition[0]);
    }

    @Override
    public PartitionReaderFactory createReaderFactory() {
      return new LogReaderFactory(ReadSettings.of(options, required, filters, planned()));
    }
  }

  /** python -m kdump.spark.jvm_planner on the driver. */
  static final class Planner {
    private Planner() {}

    /**
     * The planner's answer for a read (see jvm_planner.source_read): the options as given (path or paths among
     * them) and the pushed filters (null: none).  A bad option (status 2) is an IllegalArgumentException carrying
     * the planner's message.
     */
    static JsonNode ask(CaseInsensitiveStringMap options, JsonNode filters) {
      ObjectMapper mapper = new ObjectMapper();
      ObjectNode message = mapper.createObjectNode();
      ObjectNode given = message.putObject("options");
      for (Map.Entry<String, String> e : options.asCaseSensitiveMap().entrySet()) {
        given.put(e.getKey(), e.getValue());
      }
      if (filters != null) {
        message.set("filters", filters);
      }
      try {
        return mapper.readTree(run(python(options), options.get("pythonPath"), mapper.writeValueAsBytes(message)));
      } catch (IOException e) {
        throw new UncheckedIOException("kafka-log (jvm): planning", e);
      }
    }

    /** The driver's Python: the python option, Spark's spark.pyspark.(driver.)python, PySpark's variables. */
    static String python(CaseInsensitiveStringMap options) {
      String given = options.get("python");
      if (given != null) {
        return given;
      }
      try {
        org.apache.spark.SparkEnv env = org.apache.spark.SparkEnv.get();
        if (env != null) {
          for (String key : new String[] {"spark.pyspark.driver.python", "spark.pyspark.python"}) {
            scala.Option<String> v = env.conf().getOption(key);
            if (v.isDefined()) {
              return v.get();
            }
          }
        }
      } catch (RuntimeException e) {
        // no conf to ask
      }
      for (String name : new String[] {"PYSPARK_DRIVER_PYTHON", "PYSPARK_PYTHON"}) {
        String v = System.getenv(name);
        if (v != null && !v.isEmpty()) {
          return v;
        }
      }
      return "python3";
    }

    /**
     * The planner's standard output for {@code request}; what it writes on standard error is passed on (its
     * problems), or, when it fails, is the exception's message.
     */
    static String run(String python, String pythonPath, byte[] request) throws IOException {
      ProcessBuilder pb = new ProcessBuilder(python, "-m", "kdump.spark.jvm_planner");
      if (pythonPath != null) {
        String old = System.getenv("PYTHONPATH");
        pb.environment().put("PYTHONPATH",
            old == null || old.isEmpty() ? pythonPath : pythonPath + java.io.File.pathSeparator + old);
      }
      Process p = pb.start();
      ByteArrayOutputStream err = new ByteArrayOutputStream();
      Thread drain = new Thread(() -> {
        try (InputStream e = p.getErrorStream()) {
          e.transferTo(err);
        } catch (IOException ignored) {
          // the process is gone; its status says what happened
        }
      }, "kafka-log planner stderr");
      drain.setDaemon(true);
      drain.start();
      try (OutputStream in = p.getOutputStream()) {
        in.write(request);
      }
      ByteArrayOutputStream got = new ByteArrayOutputStream();
      try (InputStream out = p.getInputStream()) {
        out.transferTo(got);
      }
      int status;
      try {
        status = p.waitFor();
        drain.join();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        p.destroy();
        throw new IllegalStateException("kafka-log (jvm): interrupted while planning", e);
      }
      String message = err.toString(StandardCharsets.UTF_8);
      if (status == 2) {
        throw new IllegalArgumentException(message.strip());
      }
      if (status != 0) {
        throw new IllegalStateException("kafka-log (jvm): the planner (" + python
            + " -m kdump.spark.jvm_planner) failed with exit status " + status + ": " + message.strip());
      }
      System.err.print(message);
      System.err.flush();
      return got.toString(StandardCharsets.UTF_8);
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
    /** Read whole by the Python reader (a read with decoders, an object in a store). */
    boolean python;

    static SplitSpec of(JsonNode n) {
      SplitSpec s = new SplitSpec();
      s.json = n.toString();
      s.python = n.path("python").asBoolean(false);
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
    /** A read with decoders: its ReadOptions pickled by the planner, for the Python reader (null: none). */
    String pickledOptions;

    /** From the read's options, the columns Spark wants, the pushed filters and the planner's answer. */
    static ReadSettings of(CaseInsensitiveStringMap o, StructType required, JsonNode filters, JsonNode planned) {
      ReadSettings r = new ReadSettings();
      JsonNode s = planned.get("settings"); // (jvm_planner.source_read)
      r.includeHeaders = s.get("includeHeaders").asBoolean();
      r.readCommitted = s.get("readCommitted").asBoolean();
      r.includeControl = s.get("includeControl").asBoolean();
      r.readOptions = s.get("readOptions").asText();
      r.pickledOptions = s.hasNonNull("pickledOptions") ? s.get("pickledOptions").asText() : null;
      r.python = s.get("python").asText();
      r.pythonPath = s.get("pythonPath").asText();
      long[] bounds = Pushdown.timestampBounds(filters);
      r.minTimestamp = bounds[0];
      r.maxTimestamp = bounds[1];
      r.rowsPerBatch = o.getInt("jvmRowsPerBatch", 4096);
      r.required = required;
      r.columns = required.fieldNames();
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
