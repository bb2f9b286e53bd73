/*
 * One Spark task of the JVM engine: the splits of a LogPartition read into column batches.
 *
 * It reads what the Python reader (kdump.spark.reader) reads the same way and nothing else: magic-2 batches
 * of a local .log whose CRC matches and whose records decode cleanly (the batch header as Kafka's
 * DefaultRecordBatch lays it out, records as DefaultRecord.readFrom reads them, control records'
 * ControlRecordType key, read_committed as the consumer's Fetcher filters aborted transactions).  At the first
 * thing it does not read (another magic, a CRC mismatch, a record or compressed stream that does not decode,
 * a framing problem, a torn tail, a batch too big for one piece, a codec it was told to leave), it hands the
 * rest of the split to the Python reader (python -m kdump.spark.fallback) and passes on the Arrow batches that
 * reader writes: that reader decides, reports and counts exactly as it does in the Python engine.  A split
 * read from a batch start on is read as the planner's own cut splits are (the read_committed state is rebuilt
 * from the split's aborted transactions, as for any split).
 */
package kdump.spark.jvm;

import java.io.IOException;
import java.io.OutputStream;
import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.util.HashSet;
import java.util.PriorityQueue;
import java.util.zip.CRC32C;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowStreamReader;
import org.apache.spark.sql.connector.read.PartitionReader;
import org.apache.spark.sql.execution.vectorized.ConstantColumnVector;
import org.apache.spark.sql.execution.vectorized.OnHeapColumnVector;
import org.apache.spark.sql.execution.vectorized.WritableColumnVector;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.ArrowUtils;
import org.apache.spark.sql.vectorized.ArrowColumnVector;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarBatch;
import org.apache.spark.unsafe.types.UTF8String;

final class LogReader implements PartitionReader<ColumnarBatch> {
  // Kafka's DefaultRecordBatch header layout
  private static final int LOG_OVERHEAD = 12;
  private static final int HEADER_UP_TO_MAGIC = 17;
  private static final int RECORD_BATCH_OVERHEAD = 61;
  private static final int MAGIC_OFFSET = 16;
  private static final int CRC_OFFSET = 17;
  private static final int ATTRIBUTES_OFFSET = 21;
  /** What the Python reader decodes whole (kdump.storage.record_batch.STREAMED_RECORDS_BYTES); bigger: Python. */
  private static final int MOST_RECORD_BYTES = 16 << 20;
  /** A batch declaring more records goes to the Python reader (it appends such a batch a part at a time). */
  private static final int MOST_RECORDS = 65536;
  /**
   * A column batch is handed to Spark once its batches' record bytes reach this (or rowsPerBatch rows), so a
   * task holds at most this plus one batch's 16 MiB whatever the record sizes (the Python reader's
   * _BYTES_PER_BATCH).
   */
  private static final long BYTES_PER_BATCH = 64L << 20;
  /** kdump.storage.record.MAX_OBJECT_HEADERS: the Python reader reports a record with more headers. */
  private static final int MAX_OBJECT_HEADERS = 100_000;

  // column kinds
  private static final int KEY = 0;
  private static final int VALUE = 1;
  private static final int TOPIC = 2;
  private static final int PARTITION = 3;
  private static final int OFFSET = 4;
  private static final int TIMESTAMP = 5;
  private static final int TIMESTAMP_TYPE = 6;
  private static final int HEADERS = 7;
  private static final int SEGMENT = 8;
  private static final int BATCH_POSITION = 9;
  private static final int BATCH_BASE_OFFSET = 10;
  private static final int MAGIC = 11;
  private static final int PRODUCER_ID = 12;
  private static final int PRODUCER_EPOCH = 13;
  private static final int BASE_SEQUENCE = 14;
  private static final int IS_TRANSACTIONAL = 15;
  private static final int IS_CONTROL = 16;
  private static final int COMPRESSION = 17;
  private static final int CRC_VALID = 18;
  private static final int LEADER_EPOCH = 19;
  private static final String[] KIND_NAMES = {
    "key", "value", "topic", "partition", "offset", "timestamp", "timestampType", "headers", "segment",
    "batchPosition", "batchBaseOffset", "magic", "producerId", "producerEpoch", "baseSequence",
    "isTransactional", "isControl", "compression", "crcValid", "partitionLeaderEpoch"
  };

  private final KafkaLogSource.SplitSpec[] splits;
  private final KafkaLogSource.ReadSettings settings;
  private final int[] kinds; // per output column
  private final ColumnVector[] columns;
  private final WritableColumnVector[] writable; // by kind (null: not wanted or constant)
  private final ConstantColumnVector[] constants; // by kind: topic, partition, segment
  private final ColumnarBatch batch;
  private final boolean wantRecords;

  private int splitIndex = -1;
  private KafkaLogSource.SplitSpec split;
  private FileChannel channel;
  private RandomAccessFile file;
  private long position;
  private long end;
  private boolean splitDone = true;
  private Committed committed;
  /** Record bytes (decompressed) of the batches appended to the column batch being filled. */
  private long filled;
  private ColumnarBatch current;

  // the batch being read
  private byte[] buf = new byte[1 << 16];
  private final Codecs.Out decompressed = new Codecs.Out();
  private final CRC32C crc = new CRC32C();
  private final ByteBuffer header = ByteBuffer.allocate(RECORD_BATCH_OVERHEAD).order(ByteOrder.BIG_ENDIAN);
  // per record of the batch being read: where its fields lie
  private int[] keyOff = new int[256];
  private int[] keyLen = new int[256];
  private int[] valOff = new int[256];
  private int[] valLen = new int[256];
  private long[] tsDelta = new long[256];
  private int[] offDelta = new int[256];
  private int[] hdrFirst = new int[257];
  private int[] hKeyOff = new int[256];
  private int[] hKeyLen = new int[256];
  private int[] hValOff = new int[256];
  private int[] hValLen = new int[256];
  private int parsePos;

  // the fallback: the Python reader's Arrow stream for the rest of a split
  private Process fallback;
  private BufferAllocator allocator;
  private ArrowStreamReader arrow;
  private ColumnarBatch arrowBatch;

  LogReader(KafkaLogSource.SplitSpec[] splits, KafkaLogSource.ReadSettings settings) {
    this.splits = splits;
    this.settings = settings;
    StructType required = settings.required;
    int n = required.fields().length;
    kinds = new int[n];
    columns = new ColumnVector[n];
    writable = new WritableColumnVector[KIND_NAMES.length];
    constants = new ConstantColumnVector[KIND_NAMES.length];
    int capacity = Math.max(1, settings.rowsPerBatch);
    boolean records = false;
    for (int i = 0; i < n; i++) {
      StructField f = required.fields()[i];
      int kind = kindOf(f.name());
      kinds[i] = kind;
      if (kind < 0) {
        // a column only the Python reader fills (decoded, decodedKey...): every split is handed to it
        columns[i] = new OnHeapColumnVector(1, f.dataType());
        continue;
      }
      if (kind == TOPIC || kind == PARTITION || kind == SEGMENT) {
        constants[kind] = new ConstantColumnVector(capacity, f.dataType());
        columns[i] = constants[kind];
      } else {
        writable[kind] = new OnHeapColumnVector(capacity, f.dataType());
        columns[i] = writable[kind];
        records = true;
      }
    }
    wantRecords = records;
    batch = new ColumnarBatch(columns);
  }

  private static int kindOf(String name) {
    for (int k = 0; k < KIND_NAMES.length; k++) {
      if (KIND_NAMES[k].equals(name)) {
        return k;
      }
    }
    return -1;
  }

  // ------------------------------------------------------------------------------------------ iteration

  @Override
  public boolean next() throws IOException {
    closeArrowBatch();
    while (true) {
      if (arrow != null) {
        ColumnarBatch b = nextArrowBatch();
        if (b != null) {
          current = b;
          return true;
        }
        continue; // the fallback ended: on with the next split
      }
      if (splitDone) {
        closeSplit();
        splitIndex++;
        if (splitIndex >= splits.length) {
          return false;
        }
        if (splits[splitIndex].python) {
          // whole splits the Python reader reads (decoders, objects in a store): one process for the run of them
          int last = splitIndex;
          while (last + 1 < splits.length && splits[last + 1].python) {
            last++;
          }
          split = splits[splitIndex];
          startFallbackWhole(splitIndex, last);
          splitIndex = last;
          splitDone = true;
          continue;
        }
        openSplit(splits[splitIndex]);
        continue;
      }
      int rows = fill();
      if (rows > 0) {
        batch.setNumRows(rows);
        current = batch;
        return true;
      }
    }
  }

  @Override
  public ColumnarBatch get() {
    return current;
  }

  @Override
  public void close() throws IOException {
    KafkaLogSource.BYTES_READ.addAndGet(bytesRead);
    bytesRead = 0;
    closeArrowBatch();
    closeFallback();
    closeSplit();
    batch.close();
  }

  private void openSplit(KafkaLogSource.SplitSpec s) throws IOException {
    split = s;
    file = new RandomAccessFile(s.path, "r");
    channel = file.getChannel();
    long size = channel.size();
    position = s.startPosition;
    end = s.endPosition < 0 ? size : Math.min(s.endPosition, size);
    splitDone = false;
    committed = null;
    byte[] topic = s.topic.getBytes(StandardCharsets.UTF_8);
    if (constants[TOPIC] != null) {
      constants[TOPIC].setUtf8String(UTF8String.fromBytes(topic));
    }
    if (constants[PARTITION] != null) {
      constants[PARTITION].setInt(s.partition);
    }
    if (constants[SEGMENT] != null) {
      constants[SEGMENT].setUtf8String(UTF8String.fromString(s.path));
    }
  }

  private void closeSplit() throws IOException {
    if (file != null) {
      file.close();
      file = null;
      channel = null;
    }
  }

  // ------------------------------------------------------------------------------------------ batches

  /** Rows of the current split into the column vectors (at most about rowsPerBatch), 0 when it is done. */
  private int fill() throws IOException {
    for (WritableColumnVector v : writable) {
      if (v != null) {
        v.reset();
      }
    }
    int rows = 0;
    int target = Math.max(1, settings.rowsPerBatch);
    filled = 0;
    while (rows < target && filled < BYTES_PER_BATCH) {
      if (position >= end) {
        splitDone = true;
        break;
      }
      int step = readBatch(rows);
      if (step < 0) {
        // declined: the Python reader takes the rest of the split from this batch on
        startFallback(position);
        splitDone = true;
        break;
      }
      rows += step;
    }
    return rows;
  }

  /** Bytes read from segment files, added to KafkaLogSource.BYTES_READ when the reader closes. */
  private long bytesRead;

  private void readFully(ByteBuffer dst, long at) throws IOException {
    bytesRead += dst.remaining();
    while (dst.hasRemaining()) {
      int n = channel.read(dst, at);
      if (n < 0) {
        throw new IOException(split.path + ": file shrank while read");
      }
      at += n;
    }
  }

  /**
   * The rows of the batch at {@code position} appended after {@code rows} rows (0 for a batch left out), the
   * position moved past it; -1 when this reader declines it (the position stays at the batch).
   */
  private int readBatch(int rows) throws IOException {
    long remaining = end - position;
    if (remaining < RECORD_BATCH_OVERHEAD) {
      return -1; // a torn tail, or a legacy message: the Python reader says which
    }
    header.clear();
    readFully(header, position);
    long baseOffset = header.getLong(0);
    int length = header.getInt(8);
    int magic = header.get(MAGIC_OFFSET);
    if (magic != 2 || length < RECORD_BATCH_OVERHEAD - LOG_OVERHEAD) {
      return -1;
    }
    long size = (long) length + LOG_OVERHEAD;
    if (size > remaining || size > Integer.MAX_VALUE - 16) {
      return -1;
    }
    int lastOffsetDelta = header.getInt(23);
    long lastOffset = baseOffset + lastOffsetDelta;
    if ((baseOffset ^ lastOffset) < 0 && (baseOffset ^ lastOffsetDelta) >= 0) {
      return -1; // past Long.MAX_VALUE: Python's integers do not wrap, let its reader decide
    }
    if (split.hasStartOffset && lastOffset < split.startOffset) {
      position += size;
      return 0;
    }
    if (split.hasEndOffset && baseOffset >= split.endOffset) {
      splitDoneAtRangeEnd();
      return 0;
    }
    int n = (int) size;
    if (buf.length < n) {
      buf = new byte[Math.max(n, buf.length * 2)];
    }
    ByteBuffer whole = ByteBuffer.wrap(buf, 0, n);
    readFully(whole, position);
    crc.reset();
    crc.update(buf, ATTRIBUTES_OFFSET, n - ATTRIBUTES_OFFSET);
    if ((int) crc.getValue() != header.getInt(CRC_OFFSET)) {
      return -1;
    }
    int attributes = header.getShort(ATTRIBUTES_OFFSET);
    int codec = attributes & 0x07;
    boolean logAppendTime = (attributes & 0x08) != 0;
    boolean transactional = (attributes & 0x10) != 0;
    boolean control = (attributes & 0x20) != 0;
    long baseTimestamp = header.getLong(27);
    long maxTimestamp = header.getLong(35);
    long producerId = header.getLong(43);
    short producerEpoch = header.getShort(51);
    int baseSequence = header.getInt(53);
    int count = header.getInt(57);
    int leaderEpoch = header.getInt(12);
    if (!control && (maxTimestamp < settings.minTimestamp
        || logAppendTime && maxTimestamp > settings.maxTimestamp)) {
      // Every record is outside the pushed timestamp filters: a batch's records are at or before its
      // maxTimestamp (Kafka's LogValidator sets it; LogSegment.findOffsetByTimestamp relies on it, as the
      // planner does) and with LogAppendTime each record's timestamp is it.  Left out before it is decompressed;
      // read_committed's state moves on as if it had been read (a data batch's verdict needs its header only).
      if (settings.readCommitted) {
        if (committed == null) {
          committed = new Committed(split, Math.max(baseOffset, split.hasStartOffset ? split.startOffset : 0));
        }
        committed.accept(baseOffset, lastOffset, producerId, transactional, false, buf, 0, 0);
      }
      position += size;
      return 0;
    }
    if (count <= 0 || count > MOST_RECORDS || codec > Codecs.ZSTD || !settings.codecs[codec]) {
      return -1; // (an empty batch: the Python reader's walk decides what it gives)
    }
    byte[] data = buf;
    int from = RECORD_BATCH_OVERHEAD;
    int to = n;
    if (codec != Codecs.NONE) {
      if (!Codecs.decompress(codec, buf, from, n - from, MOST_RECORD_BYTES, decompressed)) {
        return -1;
      }
      data = decompressed.data;
      from = 0;
      to = decompressed.length;
    } else if (n - from > MOST_RECORD_BYTES) {
      return -1;
    }
    if (!parse(data, from, to, count)) {
      return -1;
    }
    // the records decode: now the consumer's rules
    if (settings.readCommitted) {
      if (committed == null) {
        // ReadCommittedFilter's fetch offset: max(base offset, start offset or 0)
        committed = new Committed(split, Math.max(baseOffset, split.hasStartOffset ? split.startOffset : 0));
      }
      Boolean accepted = committed.accept(
          baseOffset, lastOffset, producerId, transactional, control, data, keyOff[0], keyLen[0]);
      if (accepted == null) {
        return -1; // a control record whose key does not parse
      }
      if (!accepted) {
        position += size;
        return 0;
      }
    }
    if (control && !settings.includeControl) {
      position += size;
      return 0;
    }
    // a header costs about 20 bytes of column vectors (offsets, lengths, null flags) however small it is
    filled += to - from + (settings.includeHeaders ? 32L * hdrFirst[count] : 0);
    int appended = append(data, count, baseOffset, logAppendTime ? maxTimestamp : Long.MIN_VALUE,
        baseTimestamp, attributes, position, producerId, producerEpoch, baseSequence, transactional,
        control, codec, leaderEpoch);
    position += size;
    return appended;
  }

  private void splitDoneAtRangeEnd() {
    position = end; // the offset range ends here: not damage, nothing more of this split
  }

  // ------------------------------------------------------------------------------------------ records

  private int readVarint(byte[] b, int limit) {
    int value = 0;
    int shift = 0;
    int p = parsePos;
    for (int i = 0; i < 5; i++) {
      if (p >= limit) {
        throw Decline.INSTANCE;
      }
      int x = b[p++];
      value |= (x & 0x7f) << shift;
      if (x >= 0) {
        parsePos = p;
        return (value >>> 1) ^ -(value & 1);
      }
      shift += 7;
    }
    throw Decline.INSTANCE;
  }

  private long readVarlong(byte[] b, int limit) {
    long value = 0;
    int shift = 0;
    int p = parsePos;
    for (int i = 0; i < 10; i++) {
      if (p >= limit) {
        throw Decline.INSTANCE;
      }
      int x = b[p++];
      value |= (long) (x & 0x7f) << shift;
      if (x >= 0) {
        parsePos = p;
        return (value >>> 1) ^ -(value & 1);
      }
      shift += 7;
    }
    throw Decline.INSTANCE;
  }

  /** Thrown inside the record parser when the batch is declined (no stack trace: it is a plain outcome). */
  static final class Decline extends RuntimeException {
    private static final long serialVersionUID = 1L;
    static final Decline INSTANCE = new Decline();

    private Decline() {
      super(null, null, false, false);
    }
  }

  private void grow(int count) {
    if (keyOff.length < count) {
      int m = Math.max(count, keyOff.length * 2);
      keyOff = new int[m];
      keyLen = new int[m];
      valOff = new int[m];
      valLen = new int[m];
      tsDelta = new long[m];
      offDelta = new int[m];
      hdrFirst = new int[m + 1];
    }
  }

  private void growHeaders(int count) {
    if (hKeyOff.length < count) {
      int m = Math.max(count, hKeyOff.length * 2);
      hKeyOff = java.util.Arrays.copyOf(hKeyOff, m);
      hKeyLen = java.util.Arrays.copyOf(hKeyLen, m);
      hValOff = java.util.Arrays.copyOf(hValOff, m);
      hValLen = java.util.Arrays.copyOf(hValLen, m);
    }
  }

  /**
   * Where each of the {@code count} records of {@code b[from, to)} lies (DefaultRecord.readFrom: length,
   * attributes, timestamp delta, offset delta, key, value, headers, and the length must match what was read);
   * false when they do not decode exactly so, with no byte left over.
   */
  private boolean parse(byte[] b, int from, int to, int count) {
    grow(count);
    parsePos = from;
    int headers = 0;
    try {
      for (int i = 0; i < count; i++) {
        int length = readVarint(b, to);
        int start = parsePos;
        if (length < 0 || length > to - start) {
          return false;
        }
        int limit = start + length;
        parsePos++; // attributes
        tsDelta[i] = readVarlong(b, limit);
        offDelta[i] = readVarint(b, limit);
        int k = readVarint(b, limit);
        if (k < -1 || k > limit - parsePos) {
          return false;
        }
        keyOff[i] = parsePos;
        keyLen[i] = k;
        if (k > 0) {
          parsePos += k;
        }
        int v = readVarint(b, limit);
        if (v < -1 || v > limit - parsePos) {
          return false;
        }
        valOff[i] = parsePos;
        valLen[i] = v;
        if (v > 0) {
          parsePos += v;
        }
        int h = readVarint(b, limit);
        if (h < 0 || h > MAX_OBJECT_HEADERS || h > limit - parsePos) {
          return false;
        }
        hdrFirst[i] = headers;
        growHeaders(headers + h);
        for (int j = 0; j < h; j++) {
          int hk = readVarint(b, limit);
          if (hk < 0 || hk > limit - parsePos) {
            return false;
          }
          hKeyOff[headers] = parsePos;
          hKeyLen[headers] = hk;
          parsePos += hk;
          int hv = readVarint(b, limit);
          if (hv < -1 || hv > limit - parsePos) {
            return false;
          }
          hValOff[headers] = parsePos;
          hValLen[headers] = hv;
          if (hv > 0) {
            parsePos += hv;
          }
          headers++;
        }
        if (parsePos != limit) {
          return false;
        }
      }
      hdrFirst[count] = headers;
    } catch (Decline e) {
      return false;
    }
    return parsePos == to;
  }

  /** The parsed records appended to the column vectors; the rows appended (those inside the offset range). */
  private int append(byte[] b, int count, long baseOffset, long logAppendTime, long baseTimestamp,
      int attributes, long batchPosition, long producerId, short producerEpoch, int baseSequence,
      boolean transactional, boolean control, int codec, int leaderEpoch) {
    long lo = split.startOffset; // Long.MIN_VALUE when unbounded: every offset is at or above it
    boolean bounded = split.hasEndOffset;
    long hi = split.endOffset;
    // record by record, as the Python reader filters (offsets need not rise in a damaged batch)
    int rows = 0;
    WritableColumnVector keys = writable[KEY];
    WritableColumnVector values = writable[VALUE];
    WritableColumnVector offsets = writable[OFFSET];
    WritableColumnVector timestamps = writable[TIMESTAMP];
    WritableColumnVector headerColumn = writable[HEADERS];
    for (int i = 0; i < count; i++) {
      long offset = baseOffset + offDelta[i];
      if (offset < lo || bounded && offset >= hi) {
        continue;
      }
      rows++;
      if (!wantRecords) {
        continue;
      }
      if (keys != null) {
        if (keyLen[i] < 0) {
          keys.appendNull();
        } else {
          keys.appendByteArray(b, keyOff[i], keyLen[i]);
        }
      }
      if (values != null) {
        if (valLen[i] < 0) {
          values.appendNull();
        } else {
          values.appendByteArray(b, valOff[i], valLen[i]);
        }
      }
      if (offsets != null) {
        offsets.appendLong(offset);
      }
      if (timestamps != null) {
        long ms = logAppendTime != Long.MIN_VALUE ? logAppendTime : baseTimestamp + tsDelta[i];
        timestamps.appendLong(ms * 1000L);
      }
      if (headerColumn != null) {
        appendHeaders(headerColumn, b, hdrFirst[i], hdrFirst[i + 1]);
      }
    }
    if (rows == 0 || !wantRecords) {
      return rows;
    }
    appendInts(TIMESTAMP_TYPE, rows, (attributes & 0x08) >> 3);
    appendLongs(BATCH_POSITION, rows, batchPosition);
    appendLongs(BATCH_BASE_OFFSET, rows, baseOffset);
    appendInts(MAGIC, rows, 2);
    appendLongs(PRODUCER_ID, rows, producerId);
    appendInts(PRODUCER_EPOCH, rows, producerEpoch);
    appendInts(BASE_SEQUENCE, rows, baseSequence);
    appendBooleans(IS_TRANSACTIONAL, rows, transactional);
    appendBooleans(IS_CONTROL, rows, control);
    appendBooleans(CRC_VALID, rows, true);
    appendInts(LEADER_EPOCH, rows, leaderEpoch);
    WritableColumnVector compression = writable[COMPRESSION];
    if (compression != null) {
      byte[] name = CODEC_BYTES[codec];
      for (int i = 0; i < rows; i++) {
        compression.appendByteArray(name, 0, name.length);
      }
    }
    return rows;
  }

  private static final byte[][] CODEC_BYTES = new byte[Codecs.NAMES.length][];

  static {
    for (int i = 0; i < Codecs.NAMES.length; i++) {
      CODEC_BYTES[i] = Codecs.NAMES[i].getBytes(StandardCharsets.US_ASCII);
    }
  }

  private void appendInts(int kind, int rows, int value) {
    if (writable[kind] != null) {
      writable[kind].appendInts(rows, value);
    }
  }

  private void appendLongs(int kind, int rows, long value) {
    if (writable[kind] != null) {
      writable[kind].appendLongs(rows, value);
    }
  }

  private void appendBooleans(int kind, int rows, boolean value) {
    if (writable[kind] != null) {
      writable[kind].appendBooleans(rows, value);
    }
  }

  /** A record's headers: null when it has none; keys as the JVM decodes them (new String(bytes, UTF_8)). */
  private void appendHeaders(WritableColumnVector column, byte[] b, int first, int last) {
    if (first == last) {
      column.appendNull();
      return;
    }
    column.appendArray(last - first);
    WritableColumnVector entries = column.arrayData();
    WritableColumnVector keys = entries.getChild(0);
    WritableColumnVector values = entries.getChild(1);
    for (int h = first; h < last; h++) {
      entries.appendStruct(false);
      int off = hKeyOff[h];
      int len = hKeyLen[h];
      if (ascii(b, off, len)) {
        keys.appendByteArray(b, off, len);
      } else {
        byte[] jvm = new String(b, off, len, StandardCharsets.UTF_8).getBytes(StandardCharsets.UTF_8);
        keys.appendByteArray(jvm, 0, jvm.length);
      }
      if (hValLen[h] < 0) {
        values.appendNull();
      } else {
        values.appendByteArray(b, hValOff[h], hValLen[h]);
      }
    }
  }

  private static boolean ascii(byte[] b, int off, int len) {
    for (int i = off; i < off + len; i++) {
      if (b[i] < 0) {
        return false;
      }
    }
    return true;
  }

  // ------------------------------------------------------------------------------------------ fallback

  private long fallbackFrom;
  private ErrTail fallbackErr;

  /**
   * The Python reader's standard error passed on to this one's, line by line, its last lines kept: the
   * message of the task's error when that reader fails (corruptBatches=fail's line among them).
   */
  static final class ErrTail extends Thread {
    private final java.io.InputStream in;
    private final java.util.ArrayDeque<String> last = new java.util.ArrayDeque<>();

    ErrTail(java.io.InputStream in) {
      super("kafka-log fallback stderr");
      this.in = in;
      setDaemon(true);
      start();
    }

    @Override
    public void run() {
      try (java.io.BufferedReader r =
          new java.io.BufferedReader(new java.io.InputStreamReader(in, StandardCharsets.UTF_8))) {
        for (String line = r.readLine(); line != null; line = r.readLine()) {
          System.err.println(line);
          synchronized (last) {
            last.addLast(line.length() > 2000 ? line.substring(0, 2000) : line);
            if (last.size() > 5) {
              last.removeFirst();
            }
          }
        }
      } catch (IOException e) {
        // the process is gone; its exit status says what happened
      }
    }

    String tail() throws InterruptedException {
      join(10_000);
      synchronized (last) {
        return String.join("\n", last);
      }
    }
  }

  /** The Python reader started on the rest of the current split, from the batch at {@code at}. */
  private void startFallback(long at) throws IOException {
    StringBuilder request = new StringBuilder();
    request.append("{\"split\": ").append(split.json).append(", \"start\": ").append(at);
    startPython(request, at);
  }

  /** The Python reader given {@code request} (its splits, still open: options and columns are added here). */
  private void startPython(StringBuilder request, long at) throws IOException {
    if (settings.python == null) {
      throw new IOException("kafka-log (jvm): " + split.path + ": byte " + at
          + ": a batch this engine does not read and no Python reader to hand it to");
    }
    ProcessBuilder pb = new ProcessBuilder(settings.python, "-m", "kdump.spark.fallback");
    if (settings.pythonPath != null) {
      String old = System.getenv("PYTHONPATH");
      pb.environment().put("PYTHONPATH",
          old == null || old.isEmpty() ? settings.pythonPath : settings.pythonPath + java.io.File.pathSeparator + old);
    }
    if (settings.fallbackLog != null) {
      pb.environment().put("KDUMP_FALLBACK_LOG", settings.fallbackLog);
    }
    fallback = pb.start();
    fallbackFrom = at;
    fallbackErr = new ErrTail(fallback.getErrorStream());
    if (settings.pickledOptions != null) {
      request.append(", \"pickled_options\": \"").append(settings.pickledOptions).append('"');
    }
    request.append(", \"options\": ").append(settings.readOptions == null ? "{}" : settings.readOptions);
    request.append(", \"columns\": [");
    String[] wanted = settings.columns.length == 0 ? new String[] {"offset"} : settings.columns;
    for (int i = 0; i < wanted.length; i++) {
      request.append(i == 0 ? "\"" : ", \"").append(wanted[i]).append('"');
    }
    request.append("]}");
    try (OutputStream in = fallback.getOutputStream()) {
      in.write(request.toString().getBytes(StandardCharsets.UTF_8));
    }
    allocator = ArrowUtils.rootAllocator().newChildAllocator("kdump kafka-log fallback", 0, Long.MAX_VALUE);
    arrow = new ArrowStreamReader(fallback.getInputStream(), allocator);
  }

  /** The Python reader started on splits {@code first} to {@code last} whole, each from its own start. */
  private void startFallbackWhole(int first, int last) throws IOException {
    StringBuilder request = new StringBuilder("{\"splits\": [");
    for (int i = first; i <= last; i++) {
      request.append(i == first ? "" : ", ").append(splits[i].json);
    }
    request.append("]");
    startPython(request, splits[first].startPosition);
  }

  /** The next batch of the Python reader, or null (its stream ended; it is then closed). */
  private ColumnarBatch nextArrowBatch() throws IOException {
    if (arrow.loadNextBatch()) {
      VectorSchemaRoot root = arrow.getVectorSchemaRoot();
      ColumnVector[] cols = new ColumnVector[settings.columns.length];
      for (int i = 0; i < cols.length; i++) {
        FieldVector v = root.getVector(settings.columns[i]);
        cols[i] = new ArrowColumnVector(v);
      }
      arrowBatch = new ColumnarBatch(cols, root.getRowCount());
      return arrowBatch;
    }
    closeFallback();
    return null;
  }

  private void closeArrowBatch() {
    arrowBatch = null; // its vectors are the Arrow reader's own, reused for its next batch
  }

  private void closeFallback() throws IOException {
    if (arrow == null) {
      return;
    }
    try {
      arrow.close();
    } finally {
      arrow = null;
      allocator.close();
      allocator = null;
    }
    int status;
    try {
      status = fallback.waitFor();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      fallback.destroy();
      throw new IOException("kafka-log (jvm): interrupted", e);
    } finally {
      fallback = null;
    }
    if (status != 0) {
      String said;
      try {
        said = fallbackErr.tail();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        said = "";
      }
      throw new IOException("kafka-log (jvm): " + split.path + ": the Python reader of the split from byte "
          + fallbackFrom + " failed (exit status " + status + "): " + said);
    }
  }

  /** The consumer's read_committed filter (kdump.analysis.consumer_view.ReadCommittedFilter). */
  static final class Committed {
    private final PriorityQueue<long[]> pending =
        new PriorityQueue<>((a, b) -> a[0] != b[0] ? Long.compare(a[0], b[0])
            : a[1] != b[1] ? Long.compare(a[1], b[1]) : Long.compare(a[2], b[2]));
    private final HashSet<Long> abortedProducers = new HashSet<>();
    private final boolean hasLastStable;
    private final long lastStable;

    Committed(KafkaLogSource.SplitSpec s, long fetch) {
      for (int i = 0; i < s.abortedPid.length; i++) {
        if (s.abortedLast[i] >= fetch) {
          pending.add(new long[] {s.abortedFirst[i], s.abortedLast[i], s.abortedPid[i]});
        }
      }
      hasLastStable = s.hasLastStable;
      lastStable = s.lastStable;
    }

    private void consumeUpTo(long offset) {
      while (!pending.isEmpty() && pending.peek()[0] <= offset) {
        abortedProducers.add(pending.poll()[2]);
      }
    }

    /**
     * Whether a read_committed consumer returns the batch's records (ReadCommittedFilter.accept; the state
     * moves on); null when its control record's key does not parse (ControlRecordType.parseTypeId throws).
     */
    Boolean accept(long baseOffset, long lastOffset, long producerId, boolean transactional,
        boolean control, byte[] data, int keyOffset, int keyLength) {
      if (hasLastStable && baseOffset >= lastStable) {
        return Boolean.FALSE;
      }
      if (producerId >= 0) {
        consumeUpTo(lastOffset);
        if (control) {
          // the first record's key: int16 version (>= 0), int16 type (0: ABORT)
          if (keyLength < 4) {
            return null;
          }
          short version = (short) ((data[keyOffset] & 0xff) << 8 | (data[keyOffset + 1] & 0xff));
          if (version < 0) {
            return null;
          }
          short type = (short) ((data[keyOffset + 2] & 0xff) << 8 | (data[keyOffset + 3] & 0xff));
          if (type == 0) {
            abortedProducers.remove(producerId);
          }
        } else if (transactional && abortedProducers.contains(producerId)) {
          return Boolean.FALSE;
        }
      }
      return !control;
    }
  }
}
