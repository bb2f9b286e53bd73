/*
 * Decompressing a magic-2 batch's records, as Kafka 4.0's consumer does (org.apache.kafka.common.compress:
 * GzipCompression, SnappyCompression, Lz4Compression/Lz4BlockInputStream, ZstdCompression wrapForInput), with the
 * same libraries where Kafka uses a library's stream (JDK GZIPInputStream with an 8 KiB buffer, xerial
 * SnappyInputStream, zstd-jni ZstdInputStreamNoFinalizer) and Kafka's LZ4 frame rules (independent blocks only,
 * header checksum checked, block checksums checked, content checksum skipped) over lz4-java's block
 * decompressor.  Anything unusual returns null: the caller hands the batch to the Python reader, which decides
 * (and reports) exactly as it always does.
 */
package kdump.spark.jvm;

import com.github.luben.zstd.ZstdDecompressCtx;
import com.github.luben.zstd.ZstdException;
import com.github.luben.zstd.ZstdInputStreamNoFinalizer;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.util.zip.GZIPInputStream;
import net.jpountz.lz4.LZ4Exception;
import net.jpountz.lz4.LZ4Factory;
import net.jpountz.lz4.LZ4SafeDecompressor;
import net.jpountz.xxhash.XXHash32;
import net.jpountz.xxhash.XXHashFactory;
import org.xerial.snappy.SnappyInputStream;

final class Codecs {
  static final int NONE = 0;
  static final int GZIP = 1;
  static final int SNAPPY = 2;
  static final int LZ4 = 3;
  static final int ZSTD = 4;
  static final String[] NAMES = {"none", "gzip", "snappy", "lz4", "zstd"};

  private static final int LZ4_MAGIC = 0x184D2204;

  private Codecs() {}

  static int id(String name) {
    for (int i = 0; i < NAMES.length; i++) {
      if (NAMES[i].equals(name)) {
        return i;
      }
    }
    return -1;
  }

  /** A growable output buffer; {@code length} bytes of {@code data} are the result. */
  static final class Out {
    byte[] data = new byte[1 << 16];
    int length;

    void ensure(int more) {
      if (data.length - length < more) {
        int want = Math.max(data.length * 2, length + more);
        data = java.util.Arrays.copyOf(data, want);
      }
    }
  }

  /**
   * Decompress {@code in[off, off+len)} with {@code codec} into {@code out}; false (the batch is declined) on
   * any error or when the result would pass {@code most} bytes.
   */
  static boolean decompress(int codec, byte[] in, int off, int len, int most, Out out) {
    out.length = 0;
    try {
      switch (codec) {
        case GZIP:
          return drain(new GZIPInputStream(new ByteArrayInputStream(in, off, len), 8 * 1024), most, out);
        case SNAPPY:
          return drain(new SnappyInputStream(new ByteArrayInputStream(in, off, len)), most, out);
        case ZSTD:
          if (zstdWhole(in, off, len, most, out)) {
            return true;
          }
          out.length = 0;
          try (ZstdInputStreamNoFinalizer z =
              new ZstdInputStreamNoFinalizer(new ByteArrayInputStream(in, off, len))) {
            return drain(z, most, out);
          }
        case LZ4:
          return lz4(in, off, len, most, out);
        default:
          return false;
      }
    } catch (IOException | RuntimeException | LinkageError e) {
      return false;
    }
  }

  private static final ThreadLocal<ZstdDecompressCtx> ZSTD_CONTEXT = ThreadLocal.withInitial(ZstdDecompressCtx::new);

  /**
   * zstd in one call with this thread's context (no stream set up per batch): true when the payload is whole
   * frames that decode to at most {@code most} bytes, which is then exactly what zstd-jni's stream gives;
   * false for anything else (an error, a bigger result, an empty or tiny payload), and the stream decides.
   */
  private static boolean zstdWhole(byte[] in, int off, int len, int most, Out out) {
    if (len < 9) {
      return false;
    }
    int capacity = (int) Math.min((long) most + 1, Math.max((long) out.data.length, 8L * len));
    if (out.data.length < capacity) {
      out.data = new byte[capacity];
    }
    try {
      ZstdDecompressCtx ctx = ZSTD_CONTEXT.get();
      ctx.reset();
      int n = ctx.decompressByteArray(out.data, 0, capacity, in, off, len);
      if (n <= 0 || n > most) {
        return false;
      }
      out.length = n;
      return true;
    } catch (ZstdException e) {
      return false;
    }
  }

  private static boolean drain(InputStream stream, int most, Out out) throws IOException {
    try (InputStream s = stream) {
      while (true) {
        out.ensure(1 << 16);
        int room = Math.min(out.data.length - out.length, most + 1 - out.length);
        if (room <= 0) {
          return false;
        }
        int n = s.read(out.data, out.length, room);
        if (n < 0) {
          return true;
        }
        out.length += n;
        if (out.length > most) {
          return false;
        }
      }
    }
  }

  private static int le32(byte[] b, int p) {
    return (b[p] & 0xff) | (b[p + 1] & 0xff) << 8 | (b[p + 2] & 0xff) << 16 | (b[p + 3] & 0xff) << 24;
  }

  private static LZ4SafeDecompressor lz4Decompressor;
  private static XXHash32 xxhash;

  /** Kafka's LZ4 frame (Lz4BlockInputStream of a magic-2 batch): see the class comment. */
  private static boolean lz4(byte[] in, int off, int len, int most, Out out) {
    if (lz4Decompressor == null) {
      lz4Decompressor = LZ4Factory.fastestInstance().safeDecompressor();
      xxhash = XXHashFactory.fastestInstance().hash32();
    }
    int end = off + len;
    if (len < 7 || le32(in, off) != LZ4_MAGIC) {
      return false;
    }
    int flg = in[off + 4] & 0xff;
    int bd = in[off + 5] & 0xff;
    if ((flg & 0x03) != 0 || (flg & 0x20) == 0 || (flg >> 6) != 1 || (bd & 0x8f) != 0) {
      return false;
    }
    int code = (bd >> 4) & 7;
    if (code < 4) {
      return false;
    }
    int maxBlock = 1 << (2 * code + 8);
    boolean blockChecksum = (flg & 0x10) != 0;
    boolean contentChecksum = (flg & 0x04) != 0;
    int pos = off + 6;
    if ((flg & 0x08) != 0) {
      pos += 8;
    }
    if (pos >= end) {
      return false;
    }
    int hc = (xxhash.hash(in, off + 4, pos - off - 4, 0) >> 8) & 0xff;
    if ((in[pos] & 0xff) != hc) {
      return false;
    }
    pos++;
    out.length = 0;
    while (true) {
      if (end - pos < 4) {
        return false;
      }
      int word = le32(in, pos);
      int length = word & 0x7fffffff;
      pos += 4;
      if (length == 0) {
        return !contentChecksum || end - pos >= 4;
      }
      if (length > maxBlock || end - pos < length) {
        return false;
      }
      if (out.length + maxBlock > most + maxBlock) {
        return false;
      }
      out.ensure(maxBlock);
      int n;
      if ((word & 0x80000000) != 0) {
        System.arraycopy(in, pos, out.data, out.length, length);
        n = length;
      } else {
        try {
          n = lz4Decompressor.decompress(in, pos, length, out.data, out.length, maxBlock);
        } catch (LZ4Exception e) {
          return false;
        }
      }
      if (blockChecksum) {
        if (end - (pos + length) < 4 || le32(in, pos + length) != xxhash.hash(in, pos, length, 0)) {
          return false;
        }
        pos += 4;
      }
      pos += length;
      out.length += n;
      if (out.length > most) {
        return false;
      }
    }
  }
}
