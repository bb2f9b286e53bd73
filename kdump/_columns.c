/*
 * kdump._columns: an optional accelerator that builds the Spark source's Arrow columns (kdump.spark.reader)
 * straight from the bytes of v2 record batches, without a Python object per record.
 *
 * Builder(include_headers, decode_key, header_cost=0) keeps growing buffers (bytearrays, handed to pyarrow
 * without a copy by finish()) for the per-record columns: offset (int64), timestamp (int64 microseconds), the
 * index of the record's Kafka batch in the output batch (int32), key and value (Arrow binary: validity bitmap,
 * int32 offsets, data) and, with include_headers, headers (list<struct<key string, value binary>>).
 *
 * append(buf, pos, end, count, batch_no, position, base_offset, base_timestamp, base_sequence, log_append_time,
 *        lo, hi, done, max_rows, max_bytes, check_rest) -> (pos, done, rows) | None
 *   walks records ``done``..``count`` of buf[pos:end] (the v2 record format: Kafka's DefaultRecord.readFrom:
 *   length varint, attributes, timestamp delta varlong, offset delta varint, key, value, header count and
 *   headers, each length a zigzag varint, -1 for null) and appends those whose offset lies in [lo, hi) (None:
 *   no bound).  It stops before a record when the builder holds max_rows rows or max_bytes bytes (``bytes``:
 *   the records' own, plus header_cost for each header of the headers column: a header of two bytes on disk
 *   costs more than two in the columns).
 *   It returns None, with nothing appended, whenever anything is unusual -- a malformed or out-of-range field,
 *   bytes left over after the last record, an offset or timestamp leaving the 64-bit range, a record of more
 *   headers than MAX_OBJECT_HEADERS -- and the caller then decodes the batch with the storage core, which
 *   gives Kafka's error messages.  When it stops early and ``check_rest`` is true, the rest of the batch is
 *   walked (nothing appended) first: a batch whose rest would be declined is declined whole, so no row of a
 *   batch that fails to decode is ever handed out.
 *
 * No length or count read from disk sizes an allocation: every buffer grows by what has really been read.
 *
 * The batch-level columns that differ from batch to batch in ordinary data (position, base offset, base
 * sequence) are filled row by row too; the others are expanded in Arrow by the caller.
 *
 * append_records(records, batch_no, position, base_offset, base_sequence) appends Record objects decoded by
 * the storage core (the fallback), and finish() hands out the buffers and starts empty ones (as big as the
 * last ones were).  Build is optional (setup.py); KDUMP_PURE_PYTHON=1 turns it off at run time.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#include "_batch_walk.h"
#include "_varint.h"

/* kdump.storage.record.MAX_OBJECT_HEADERS: a record with more headers is the storage core's to report. */
#define MAX_OBJECT_HEADERS 100000
#define INT32_LIMIT 2147483647LL

/* -- growing buffers ---------------------------------------------------------------------------------- */

typedef struct {
    PyObject *ba; /* a bytearray whose size is the capacity */
    Py_ssize_t len;
    Py_ssize_t hint; /* the length handed out last: the next buffer starts that big */
} Buf;

static int buf_init(Buf *b)
{
    b->len = 0;
    b->ba = PyByteArray_FromStringAndSize(NULL, b->hint);
    return b->ba == NULL ? -1 : 0;
}

static int buf_reserve(Buf *b, Py_ssize_t extra)
{
    Py_ssize_t cap = PyByteArray_GET_SIZE(b->ba);
    if (extra <= cap - b->len)
        return 0;
    if (extra > PY_SSIZE_T_MAX / 4 - b->len) {
        PyErr_NoMemory();
        return -1;
    }
    Py_ssize_t want = b->len + extra;
    Py_ssize_t grown = cap < 4096 ? 4096 : cap * 2;
    if (grown < want)
        grown = want;
    return PyByteArray_Resize(b->ba, grown);
}

static inline char *buf_at(Buf *b) { return PyByteArray_AS_STRING(b->ba) + b->len; }

static int buf_put(Buf *b, const void *data, Py_ssize_t n)
{
    if (buf_reserve(b, n) < 0)
        return -1;
    if (n)
        memcpy(buf_at(b), data, (size_t)n);
    b->len += n;
    return 0;
}

static inline int buf_i64(Buf *b, int64_t v) { return buf_put(b, &v, 8); }
static inline int buf_i32(Buf *b, int32_t v) { return buf_put(b, &v, 4); }

/* Bit ``i`` of a validity bitmap (Arrow's order: least significant bit first); the bitmap's len is in bytes. */
static int bit_set(Buf *b, Py_ssize_t i, int valid)
{
    Py_ssize_t need = i / 8 + 1;
    if (need > b->len) {
        if (buf_reserve(b, need - b->len) < 0)
            return -1;
        memset(buf_at(b), 0, (size_t)(need - b->len));
        b->len = need;
    }
    unsigned char *p = (unsigned char *)PyByteArray_AS_STRING(b->ba) + i / 8;
    if (valid)
        *p |= (unsigned char)(1u << (i % 8));
    else
        *p &= (unsigned char)~(1u << (i % 8));
    return 0;
}

/* Hand the buffer out (shrunk to its length) and start an empty one; a new reference, or NULL. */
static PyObject *buf_take(Buf *b)
{
    if (PyByteArray_Resize(b->ba, b->len) < 0)
        return NULL;
    PyObject *out = b->ba;
    b->hint = b->len + b->len / 8;
    if (buf_init(b) < 0) {
        b->ba = out;
        return NULL;
    }
    return out;
}

/* A binary (or string) column: validity, int32 offsets, data. */
typedef struct {
    Buf valid, offsets, data;
    Py_ssize_t nulls;
} Binary;

static int binary_init(Binary *c)
{
    c->nulls = 0;
    if (buf_init(&c->valid) < 0 || buf_init(&c->offsets) < 0 || buf_init(&c->data) < 0)
        return -1;
    return buf_i32(&c->offsets, 0);
}

static void binary_clear(Binary *c)
{
    Py_CLEAR(c->valid.ba);
    Py_CLEAR(c->offsets.ba);
    Py_CLEAR(c->data.ba);
}

/* Bits 0..n-1 of an empty validity bitmap set (the items before the first null). */
static int bits_fill(Buf *b, Py_ssize_t n)
{
    Py_ssize_t bytes = (n + 7) / 8;
    if (buf_reserve(b, bytes) < 0)
        return -1;
    unsigned char *p = (unsigned char *)PyByteArray_AS_STRING(b->ba);
    memset(p, 0xFF, (size_t)(n / 8));
    if (n % 8)
        p[n / 8] = (unsigned char)((1u << (n % 8)) - 1);
    b->len = bytes;
    return 0;
}

/* Append item ``i`` (data NULL: null).  1 done, 0 the data would pass 2 GiB (Arrow's int32 offsets), -1 error.
   The validity bitmap is written from the first null on (until then it is empty: a column without nulls is
   handed out without one), so ``nulls == 0`` always means an empty bitmap, rollbacks included. */
static int binary_add(Binary *c, Py_ssize_t i, const unsigned char *data, Py_ssize_t n)
{
    if (data == NULL) {
        if ((c->nulls == 0 && bits_fill(&c->valid, i) < 0) || bit_set(&c->valid, i, 0) < 0)
            return -1;
        c->nulls++;
    } else {
        if (n > INT32_LIMIT - c->data.len)
            return 0;
        if ((c->nulls && bit_set(&c->valid, i, 1) < 0) || buf_put(&c->data, data, n) < 0)
            return -1;
    }
    return buf_i32(&c->offsets, (int32_t)c->data.len) < 0 ? -1 : 1;
}

typedef struct {
    Py_ssize_t valid, offsets, data, nulls;
} BinaryMark;

static void binary_mark(Binary *c, BinaryMark *m)
{
    m->valid = c->valid.len;
    m->offsets = c->offsets.len;
    m->data = c->data.len;
    m->nulls = c->nulls;
}

static void binary_rollback(Binary *c, const BinaryMark *m)
{
    c->valid.len = m->valid;
    c->offsets.len = m->offsets;
    c->data.len = m->data;
    c->nulls = m->nulls;
}

/* (validity or None, null count, offsets, data), buffers handed out; a new reference, or NULL. */
static PyObject *binary_take(Binary *c)
{
    PyObject *valid = c->nulls ? buf_take(&c->valid) : (Py_INCREF(Py_None), Py_None);
    PyObject *offsets = buf_take(&c->offsets);
    PyObject *data = buf_take(&c->data);
    PyObject *out = NULL;
    if (valid && offsets && data)
        out = Py_BuildValue("(OnOO)", valid, c->nulls, offsets, data);
    Py_XDECREF(valid);
    Py_XDECREF(offsets);
    Py_XDECREF(data);
    c->valid.len = 0;
    c->nulls = 0;
    if (out != NULL && buf_i32(&c->offsets, 0) < 0)
        Py_CLEAR(out);
    return out;
}

/* -- the builder ------------------------------------------------------------------------------------ */

typedef struct {
    PyObject_HEAD
    int include_headers;
    Py_ssize_t header_cost; /* what a header counts for in ``bytes`` besides its record's bytes */
    PyObject *decode_key; /* decode_utf8_jdk, for a header key that is not valid UTF-8 */
    Py_ssize_t rows, headers, bytes;
    Buf offset, timestamp, batch, position, base_offset, base_sequence;
    Binary key, value;
    Buf list_valid, list_offsets; /* headers: one list per row, null when the record has none */
    Py_ssize_t list_nulls;
    Binary header_key, header_value;
} Builder;

typedef struct {
    Py_ssize_t rows, headers, bytes, offset, timestamp, batch, position, base_offset, base_sequence, list_valid,
        list_offsets, list_nulls;
    BinaryMark key, value, header_key, header_value;
} Mark;

static void builder_mark(Builder *s, Mark *m)
{
    m->rows = s->rows;
    m->headers = s->headers;
    m->bytes = s->bytes;
    m->offset = s->offset.len;
    m->timestamp = s->timestamp.len;
    m->batch = s->batch.len;
    m->position = s->position.len;
    m->base_offset = s->base_offset.len;
    m->base_sequence = s->base_sequence.len;
    m->list_valid = s->list_valid.len;
    m->list_offsets = s->list_offsets.len;
    m->list_nulls = s->list_nulls;
    binary_mark(&s->key, &m->key);
    binary_mark(&s->value, &m->value);
    binary_mark(&s->header_key, &m->header_key);
    binary_mark(&s->header_value, &m->header_value);
}

static void builder_rollback(Builder *s, const Mark *m)
{
    s->rows = m->rows;
    s->headers = m->headers;
    s->bytes = m->bytes;
    s->offset.len = m->offset;
    s->timestamp.len = m->timestamp;
    s->batch.len = m->batch;
    s->position.len = m->position;
    s->base_offset.len = m->base_offset;
    s->base_sequence.len = m->base_sequence;
    s->list_valid.len = m->list_valid;
    s->list_offsets.len = m->list_offsets;
    s->list_nulls = m->list_nulls;
    binary_rollback(&s->key, &m->key);
    binary_rollback(&s->value, &m->value);
    binary_rollback(&s->header_key, &m->header_key);
    binary_rollback(&s->header_value, &m->header_value);
}

static void builder_clear(Builder *s)
{
    Py_CLEAR(s->decode_key);
    Py_CLEAR(s->offset.ba);
    Py_CLEAR(s->timestamp.ba);
    Py_CLEAR(s->batch.ba);
    Py_CLEAR(s->position.ba);
    Py_CLEAR(s->base_offset.ba);
    Py_CLEAR(s->base_sequence.ba);
    Py_CLEAR(s->list_valid.ba);
    Py_CLEAR(s->list_offsets.ba);
    binary_clear(&s->key);
    binary_clear(&s->value);
    binary_clear(&s->header_key);
    binary_clear(&s->header_value);
}

static int builder_start(Builder *s)
{
    s->rows = s->headers = s->bytes = 0;
    s->list_nulls = 0;
    if (buf_init(&s->offset) < 0 || buf_init(&s->timestamp) < 0 || buf_init(&s->batch) < 0
        || buf_init(&s->position) < 0 || buf_init(&s->base_offset) < 0 || buf_init(&s->base_sequence) < 0
        || buf_init(&s->list_valid) < 0 || buf_init(&s->list_offsets) < 0 || binary_init(&s->key) < 0
        || binary_init(&s->value) < 0 || binary_init(&s->header_key) < 0 || binary_init(&s->header_value) < 0)
        return -1;
    return buf_i32(&s->list_offsets, 0);
}

static void Builder_dealloc(Builder *s)
{
    builder_clear(s);
    Py_TYPE(s)->tp_free((PyObject *)s);
}

static int Builder_init(Builder *s, PyObject *args, PyObject *kwds)
{
    int include_headers;
    PyObject *decode_key;
    Py_ssize_t header_cost = 0;
    static char *names[] = {"include_headers", "decode_key", "header_cost", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "pO|n", names, &include_headers, &decode_key, &header_cost))
        return -1;
    if (header_cost < 0 || header_cost > (1 << 20)) {
        PyErr_SetString(PyExc_ValueError, "header_cost out of range");
        return -1;
    }
    builder_clear(s);
    s->include_headers = include_headers;
    s->header_cost = header_cost;
    Py_INCREF(decode_key);
    s->decode_key = decode_key;
    return builder_start(s);
}

/* Strict UTF-8 (what Python's strict decoder and the JDK both accept unchanged): no overlong forms, no
   surrogates, nothing above U+10FFFF. */
static int valid_utf8(const unsigned char *p, Py_ssize_t n)
{
    Py_ssize_t i = 0;
    while (i < n) {
        unsigned char c = p[i];
        if (c < 0x80) {
            i++;
            continue;
        }
        if (c >= 0xC2 && c <= 0xDF) {
            if (i + 1 >= n || (p[i + 1] & 0xC0) != 0x80)
                return 0;
            i += 2;
        } else if (c >= 0xE0 && c <= 0xEF) {
            if (i + 2 >= n || (p[i + 1] & 0xC0) != 0x80 || (p[i + 2] & 0xC0) != 0x80)
                return 0;
            if (c == 0xE0 && p[i + 1] < 0xA0)
                return 0;
            if (c == 0xED && p[i + 1] > 0x9F)
                return 0;
            i += 3;
        } else if (c >= 0xF0 && c <= 0xF4) {
            if (i + 3 >= n || (p[i + 1] & 0xC0) != 0x80 || (p[i + 2] & 0xC0) != 0x80 || (p[i + 3] & 0xC0) != 0x80)
                return 0;
            if (c == 0xF0 && p[i + 1] < 0x90)
                return 0;
            if (c == 0xF4 && p[i + 1] > 0x8F)
                return 0;
            i += 4;
        } else
            return 0;
    }
    return 1;
}

/* A header key as the JDK decodes it (kdump.jdk.text.decode_utf8_jdk): 1 appended, 0 too big, -1 error. */
static int add_header_key(Builder *s, const unsigned char *p, Py_ssize_t n)
{
    if (valid_utf8(p, n))
        return binary_add(&s->header_key, s->headers, p, n);
    PyObject *raw = PyBytes_FromStringAndSize((const char *)p, n);
    if (raw == NULL)
        return -1;
    PyObject *text = PyObject_CallOneArg(s->decode_key, raw);
    Py_DECREF(raw);
    if (text == NULL)
        return -1;
    Py_ssize_t size;
    const char *utf8 = PyUnicode_Check(text) ? PyUnicode_AsUTF8AndSize(text, &size) : NULL;
    int r = -1;
    if (utf8 != NULL)
        r = binary_add(&s->header_key, s->headers, (const unsigned char *)utf8, size);
    else if (!PyErr_Occurred())
        PyErr_SetString(PyExc_TypeError, "decode_key must return a str");
    Py_DECREF(text);
    return r;
}

typedef struct {
    int64_t base_offset, base_timestamp, log_append_time, lo, hi, position;
    int has_append_time, has_lo, has_hi;
    int32_t batch_no, base_sequence;
} Batch;

/* The batch-level columns of one row: its batch's index, position, base offset and base sequence. */
static int add_batch_columns(Builder *s, const Batch *bt)
{
    if (buf_i32(&s->batch, bt->batch_no) < 0 || buf_i64(&s->position, bt->position) < 0
        || buf_i64(&s->base_offset, bt->base_offset) < 0 || buf_i32(&s->base_sequence, bt->base_sequence) < 0)
        return -1;
    return 0;
}

/* ``n`` copies of a fixed-width value at the end of ``b``. */
static int buf_repeat(Buf *b, const void *value, size_t width, Py_ssize_t n)
{
    if (n > PY_SSIZE_T_MAX / 16 || buf_reserve(b, (Py_ssize_t)width * n) < 0)
        return -1;
    char *p = buf_at(b);
    for (Py_ssize_t k = 0; k < n; k++)
        memcpy(p + (size_t)k * width, value, width);
    b->len += (Py_ssize_t)width * n;
    return 0;
}

/* The batch-level columns of the ``n`` rows a walk appended (add_batch_columns for each, in one go). */
static int fill_batch_columns(Builder *s, const Batch *bt, Py_ssize_t n)
{
    if (n <= 0)
        return 0;
    int64_t position = bt->position, base_offset = bt->base_offset;
    if (buf_repeat(&s->batch, &bt->batch_no, 4, n) < 0 || buf_repeat(&s->position, &position, 8, n) < 0
        || buf_repeat(&s->base_offset, &base_offset, 8, n) < 0
        || buf_repeat(&s->base_sequence, &bt->base_sequence, 4, n) < 0)
        return -1;
    return 0;
}

enum { WALK_DECLINE = 0, WALK_OK = 1, WALK_ERROR = -1 };

/* Walk records *done..count of b[*pos:end]; ``dry``: check only.  Stops (WALK_OK, *done < count) before a record
   when the builder is full.  On WALK_DECLINE/WALK_ERROR the caller rolls back. */
static int walk(Builder *s, const unsigned char *b, Py_ssize_t *ppos, Py_ssize_t end, Py_ssize_t count,
                Py_ssize_t *done, const Batch *bt, int dry, Py_ssize_t max_rows, Py_ssize_t max_bytes)
{
    Py_ssize_t pos = *ppos;
    Py_ssize_t i = *done;
    Py_ssize_t rows_before = s->rows;
    int r;
    for (; i < count; i++) {
        if (!dry && (s->rows >= max_rows || s->bytes >= max_bytes))
            break;
        Py_ssize_t record_start = pos;
        int64_t size, timestamp_delta, offset_delta, key_size, value_size, header_count;
        if (!read_varint(b, &pos, end, &size) || size <= 0 || size > end - pos)
            return WALK_DECLINE;
        Py_ssize_t body_end = pos + (Py_ssize_t)size;
        pos++; /* attributes: unused by every record of the v2 format */
        if (!read_varlong(b, &pos, body_end, &timestamp_delta) || !read_varint(b, &pos, body_end, &offset_delta)
            || !read_varint(b, &pos, body_end, &key_size))
            return WALK_DECLINE;
        long long offset, timestamp;
        if (__builtin_add_overflow((long long)bt->base_offset, (long long)offset_delta, &offset))
            return WALK_DECLINE;
        if (bt->has_append_time)
            timestamp = bt->log_append_time;
        else if (__builtin_add_overflow((long long)bt->base_timestamp, (long long)timestamp_delta, &timestamp))
            return WALK_DECLINE;
        int keep = !dry && (!bt->has_lo || offset >= bt->lo) && (!bt->has_hi || offset < bt->hi);
        const unsigned char *key = NULL;
        if (key_size >= 0) {
            if (key_size > body_end - pos)
                return WALK_DECLINE;
            key = b + pos;
            pos += (Py_ssize_t)key_size;
        }
        if (!read_varint(b, &pos, body_end, &value_size))
            return WALK_DECLINE;
        const unsigned char *value = NULL;
        if (value_size >= 0) {
            if (value_size > body_end - pos)
                return WALK_DECLINE;
            value = b + pos;
            pos += (Py_ssize_t)value_size;
        }
        if (!read_varint(b, &pos, body_end, &header_count) || header_count < 0 || header_count > body_end - pos)
            return WALK_DECLINE;
        if (s->include_headers && header_count > MAX_OBJECT_HEADERS)
            return WALK_DECLINE;
        if (keep) {
            if (buf_i64(&s->offset, offset) < 0 || buf_i64(&s->timestamp, (int64_t)((uint64_t)timestamp * 1000u)) < 0)
                return WALK_ERROR;
            if ((r = binary_add(&s->key, s->rows, key, key_size)) != 1
                || (r = binary_add(&s->value, s->rows, value, value_size)) != 1)
                return r;
        }
        int headers_kept = keep && s->include_headers;
        for (int64_t h = 0; h < header_count; h++) {
            int64_t hk_size, hv_size;
            if (!read_varint(b, &pos, body_end, &hk_size) || hk_size < 0 || hk_size > body_end - pos)
                return WALK_DECLINE;
            const unsigned char *hkey = b + pos;
            pos += (Py_ssize_t)hk_size;
            if (!read_varint(b, &pos, body_end, &hv_size))
                return WALK_DECLINE;
            const unsigned char *hvalue = NULL;
            if (hv_size >= 0) {
                if (hv_size > body_end - pos)
                    return WALK_DECLINE;
                hvalue = b + pos;
                pos += (Py_ssize_t)hv_size;
            }
            if (headers_kept) {
                if ((r = add_header_key(s, hkey, hk_size)) != 1
                    || (r = binary_add(&s->header_value, s->headers, hvalue, hv_size)) != 1)
                    return r;
                s->headers++;
            }
        }
        if (pos != body_end)
            return WALK_DECLINE;
        if (headers_kept) {
            if (s->headers > INT32_LIMIT)
                return WALK_DECLINE;
            if (bit_set(&s->list_valid, s->rows, header_count > 0) < 0
                || buf_i32(&s->list_offsets, (int32_t)s->headers) < 0)
                return WALK_ERROR;
            if (header_count == 0)
                s->list_nulls++;
        }
        if (keep) {
            s->rows++;
            s->bytes += pos - record_start + (s->include_headers ? s->header_cost * (Py_ssize_t)header_count : 0);
        }
    }
    if (i == count && pos != end)
        return WALK_DECLINE; /* records still remaining: Kafka's error, the storage core's to give */
    if (fill_batch_columns(s, bt, s->rows - rows_before) < 0)
        return WALK_ERROR;
    *ppos = pos;
    *done = i;
    return WALK_OK;
}

static int int64_arg(PyObject *o, int64_t *out, int *present)
{
    if (o == Py_None) {
        *present = 0;
        *out = 0;
        return 1;
    }
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
    if (v == -1 && PyErr_Occurred())
        return -1;
    *present = 1;
    *out = v;
    return overflow ? 0 : 1;
}

/* The batch-level arguments: batch_no, position, base_offset, base_timestamp, base_sequence, log_append_time.
   1 read, 0 a value out of range (the storage core's to decide), -1 error. */
static int batch_args(PyObject *const *args, Batch *bt, int with_timestamps)
{
    int present, r;
    int64_t v;
    if ((r = int64_arg(args[0], &v, &present)) != 1 || !present || v < 0 || v > INT32_LIMIT)
        return r == -1 ? -1 : 0;
    bt->batch_no = (int32_t)v;
    if ((r = int64_arg(args[1], &bt->position, &present)) != 1 || !present)
        return r == -1 ? -1 : 0;
    if ((r = int64_arg(args[2], &bt->base_offset, &present)) != 1 || !present)
        return r == -1 ? -1 : 0;
    if ((r = int64_arg(args[4], &v, &present)) != 1 || !present || v < -INT32_LIMIT - 1 || v > INT32_LIMIT)
        return r == -1 ? -1 : 0;
    bt->base_sequence = (int32_t)v;
    if (!with_timestamps)
        return 1;
    if ((r = int64_arg(args[3], &bt->base_timestamp, &present)) != 1 || !present)
        return r == -1 ? -1 : 0;
    if ((r = int64_arg(args[5], &bt->log_append_time, &bt->has_append_time)) != 1)
        return r == -1 ? -1 : 0;
    return 1;
}

static PyObject *Builder_append(Builder *s, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 16) {
        PyErr_SetString(PyExc_TypeError, "append takes 16 arguments");
        return NULL;
    }
    Py_ssize_t pos = PyLong_AsSsize_t(args[1]);
    Py_ssize_t end = PyLong_AsSsize_t(args[2]);
    Py_ssize_t count = PyLong_AsSsize_t(args[3]);
    Py_ssize_t done = PyLong_AsSsize_t(args[12]);
    Py_ssize_t max_rows = PyLong_AsSsize_t(args[13]);
    Py_ssize_t max_bytes = PyLong_AsSsize_t(args[14]);
    int check_rest = PyObject_IsTrue(args[15]);
    if (PyErr_Occurred() || check_rest < 0)
        return NULL;
    Batch bt;
    int r = batch_args(args + 4, &bt, 1);
    if (r == 1)
        r = int64_arg(args[10], &bt.lo, &bt.has_lo);
    if (r == 1)
        r = int64_arg(args[11], &bt.hi, &bt.has_hi);
    if (r == -1)
        return NULL;
    if (r == 0)
        Py_RETURN_NONE; /* a value outside the 64-bit range: the storage core's to decide */
    if (count < 0 || pos < 0 || end < pos || done < 0 || done > count)
        Py_RETURN_NONE;
    Py_buffer view;
    if (PyObject_GetBuffer(args[0], &view, PyBUF_SIMPLE) < 0)
        return NULL;
    if (end > view.len) {
        PyBuffer_Release(&view);
        Py_RETURN_NONE;
    }
    const unsigned char *b = (const unsigned char *)view.buf;
    Mark mark;
    builder_mark(s, &mark);
    Py_ssize_t rows_before = s->rows;
    r = walk(s, b, &pos, end, count, &done, &bt, 0, max_rows, max_bytes);
    if (r == WALK_OK && done < count && check_rest) {
        Py_ssize_t rest_pos = pos, rest_done = done;
        r = walk(s, b, &rest_pos, end, count, &rest_done, &bt, 1, 0, 0);
    }
    PyBuffer_Release(&view);
    if (r != WALK_OK) {
        builder_rollback(s, &mark);
        if (r == WALK_ERROR)
            return NULL;
        Py_RETURN_NONE;
    }
    return Py_BuildValue("(nnn)", pos, done, s->rows - rows_before);
}

/* -- runs of batches (append_run) ------------------------------------------------------------------------ */

/* Flags of append_run. */
#define RUN_READ_COMMITTED 1

/*
 * append_run(buf, pos, end, stop, crc32c, per_batch, codec_names, lo, hi, last_stable_offset, flags, max_rows,
 *            max_bytes, decompress) -> end of the run | None
 *   appends the records of the v2 batches of buf from ``pos`` (framed by _batch_walk.h: starting before
 *   ``stop``, ending by ``end``) for as long as each batch is one the reader (kdump.spark.reader._read) would
 *   hand whole to append(): a valid CRC-32C (``crc32c`` called on a memoryview of its checksummed bytes), at
 *   least one record, not a control batch, not past ``hi`` (its base offset below it) nor before ``lo`` (its
 *   last offset at or above it), with RUN_READ_COMMITTED neither transactional nor at or past
 *   ``last_stable_offset`` (None: none), uncompressed or decompressed by ``decompress(codec, memoryview)``
 *   (bytes, or None: the reader's own path decides), and whose records append() takes whole within max_rows
 *   and max_bytes.  For each batch that gave rows, the tuple of its batch-level columns (the reader's
 *   note_batch) is appended to the list ``per_batch``, whose length is the batch's index.  The first batch
 *   that is not such a batch is left, untouched, to the reader, which reads it as before (it reports, skips,
 *   filters, or cuts it into output batches); None when that is the first.  The rows are those append() gives
 *   batch by batch (the same walk, lo and hi applied record by record).
 */
static PyObject *Builder_append_run(Builder *s, PyObject *const *args, Py_ssize_t nargs)
{
    BatchWalk w;
    PyObject *crc_function;
    if (batch_walk_from_args("append_run", args, nargs, 14, 0, &w, &crc_function) < 0)
        return NULL;
    if (w.fd >= 0) {
        batch_walk_close(&w);
        PyErr_SetString(PyExc_TypeError, "append_run reads a buffer, not a file descriptor");
        return NULL;
    }
    Py_ssize_t pos = w.pos;
    long flags = PyLong_AsLong(args[10]);
    Py_ssize_t max_rows = PyLong_AsSsize_t(args[11]);
    Py_ssize_t max_bytes = PyLong_AsSsize_t(args[12]);
    if (PyErr_Occurred()) {
        batch_walk_close(&w);
        return NULL;
    }
    PyObject *per_batch = args[5], *names = args[6], *decompress = args[13];
    if (!PyList_Check(per_batch) || !PyTuple_Check(names) || PyTuple_GET_SIZE(names) < 5) {
        batch_walk_close(&w);
        PyErr_SetString(PyExc_TypeError, "append_run: per_batch must be a list, codec_names a tuple of 5");
        return NULL;
    }
    int64_t lo, hi, lso;
    int has_lo, has_hi, has_lso, r;
    if ((r = int64_arg(args[7], &lo, &has_lo)) != 1 || (r = int64_arg(args[8], &hi, &has_hi)) != 1
        || (r = int64_arg(args[9], &lso, &has_lso)) != 1) {
        batch_walk_close(&w);
        if (r == -1)
            return NULL;
        Py_RETURN_NONE; /* a bound outside the 64-bit range: the reader's own path */
    }
    if (pos < 0 || w.end < pos) {
        batch_walk_close(&w);
        Py_RETURN_NONE;
    }
    BatchHead head;
    int failed = 0; /* an exception is set */
    while (batch_walk_next(&w, &head)) {
        int16_t a = head.attributes;
        int codec = a & 7;
        int64_t last_offset;
        /* A batch of more records than the output batch has room for is cut by the reader (it may fit when the
           offset range leaves some out: the reader's path gives the same rows), before it is decompressed. */
        if (head.records_count <= 0 || (a & 0x20) || codec > 4 || head.records_count > max_rows - s->rows)
            break;
        if (__builtin_add_overflow(head.base_offset, (int64_t)head.last_offset_delta, &last_offset))
            break;
        if ((has_hi && head.base_offset >= hi) || (has_lo && last_offset < lo))
            break;
        if ((flags & RUN_READ_COMMITTED) && ((a & 0x10) || (has_lso && head.base_offset >= lso)))
            break;
        unsigned long computed;
        if (batch_crc(crc_function, &head, &computed) < 0) {
            failed = 1;
            break;
        }
        if (computed != (unsigned long)head.crc)
            break;
        Batch bt;
        bt.base_offset = head.base_offset;
        bt.base_timestamp = head.base_timestamp;
        bt.has_append_time = (a & 0x08) != 0;
        bt.log_append_time = head.max_timestamp;
        bt.lo = lo;
        bt.hi = hi;
        bt.has_lo = has_lo;
        bt.has_hi = has_hi;
        bt.position = head.position;
        bt.base_sequence = head.base_sequence;
        Py_ssize_t batch_no = PyList_GET_SIZE(per_batch);
        if (batch_no > INT32_LIMIT)
            break;
        bt.batch_no = (int32_t)batch_no;
        PyObject *records = NULL; /* the decompressed records, when compressed */
        const unsigned char *b = head.h;
        Py_ssize_t rpos = 61, rend = head.size;
        if (codec != 0) {
            PyObject *payload = PyMemoryView_FromMemory((char *)head.h + 61, head.size - 61, PyBUF_READ);
            if (payload == NULL) {
                failed = 1;
                break;
            }
            PyObject *codec_id = PyLong_FromLong(codec);
            records = codec_id == NULL ? NULL : PyObject_CallFunctionObjArgs(decompress, codec_id, payload, NULL);
            Py_XDECREF(codec_id);
            Py_DECREF(payload);
            if (records == NULL) {
                failed = 1;
                break;
            }
            if (records == Py_None || !PyBytes_Check(records)) {
                int wrong = records != Py_None;
                Py_DECREF(records);
                if (wrong) {
                    PyErr_SetString(PyExc_TypeError, "decompress must return bytes or None");
                    failed = 1;
                }
                break;
            }
            b = (const unsigned char *)PyBytes_AS_STRING(records);
            rpos = 0;
            rend = PyBytes_GET_SIZE(records);
        }
        Mark mark;
        builder_mark(s, &mark);
        Py_ssize_t rows_before = s->rows, done = 0;
        r = walk(s, b, &rpos, rend, head.records_count, &done, &bt, 0, max_rows, max_bytes);
        Py_XDECREF(records);
        if (r != WALK_OK || done < head.records_count) {
            builder_rollback(s, &mark);
            if (r == WALK_ERROR)
                failed = 1;
            break;
        }
        if (s->rows > rows_before) {
            PyObject *row = Py_BuildValue("(inLiLiiOOOOi)", (a & 0x08) >> 3, head.position, (long long)head.base_offset, 2,
                                          (long long)head.producer_id, (int)head.producer_epoch, (int)head.base_sequence,
                                          (a & 0x10) ? Py_True : Py_False, Py_False, PyTuple_GET_ITEM(names, codec),
                                          Py_True, (int)head.leader_epoch);
            if (row == NULL || PyList_Append(per_batch, row) < 0) {
                Py_XDECREF(row);
                builder_rollback(s, &mark);
                failed = 1;
                break;
            }
            Py_DECREF(row);
        }
        batch_walk_take(&w, &head);
    }
    Py_ssize_t reached = w.pos;
    batch_walk_close(&w);
    if (failed || PyErr_Occurred()) /* batch_walk_next may stop with MemoryError set */
        return NULL;
    if (reached == pos)
        Py_RETURN_NONE;
    return PyLong_FromSsize_t(reached);
}

/* A bytes-like attribute of a record (None: null): 1 appended, 0 too big, -1 error. */
static int add_object(Binary *c, Py_ssize_t i, PyObject *o)
{
    if (o == Py_None)
        return binary_add(c, i, NULL, 0);
    Py_buffer view;
    if (PyObject_GetBuffer(o, &view, PyBUF_SIMPLE) < 0)
        return -1;
    int r = binary_add(c, i, (const unsigned char *)view.buf, view.len);
    PyBuffer_Release(&view);
    return r;
}

static int append_record(Builder *s, PyObject *record, const Batch *bt)
{
    PyObject *offset = NULL, *timestamp = NULL, *key = NULL, *value = NULL, *headers = NULL, *size = NULL;
    PyObject *it = NULL, *header = NULL, *hkey = NULL, *hvalue = NULL;
    int r = -1;
    if (!(offset = PyObject_GetAttrString(record, "offset")) || !(timestamp = PyObject_GetAttrString(record, "timestamp"))
        || !(key = PyObject_GetAttrString(record, "key")) || !(value = PyObject_GetAttrString(record, "value"))
        || !(size = PyObject_GetAttrString(record, "size_in_bytes")))
        goto out;
    long long o = PyLong_AsLongLong(offset), t = PyLong_AsLongLong(timestamp);
    Py_ssize_t n = PyLong_AsSsize_t(size);
    if (PyErr_Occurred())
        goto out;
    if (buf_i64(&s->offset, o) < 0 || buf_i64(&s->timestamp, (int64_t)((uint64_t)t * 1000u)) < 0
        || add_batch_columns(s, bt) < 0)
        goto out;
    if ((r = add_object(&s->key, s->rows, key)) != 1 || (r = add_object(&s->value, s->rows, value)) != 1)
        goto out;
    r = -1;
    Py_ssize_t had = s->headers;
    if (s->include_headers) {
        if (!(headers = PyObject_GetAttrString(record, "headers")) || !(it = PyObject_GetIter(headers)))
            goto out;
        while ((header = PyIter_Next(it)) != NULL) {
            if (!(hkey = PyObject_GetAttrString(header, "key")) || !(hvalue = PyObject_GetAttrString(header, "value")))
                goto out;
            Py_buffer view;
            if (PyObject_GetBuffer(hkey, &view, PyBUF_SIMPLE) < 0)
                goto out;
            r = add_header_key(s, (const unsigned char *)view.buf, view.len);
            PyBuffer_Release(&view);
            if (r != 1 || (r = add_object(&s->header_value, s->headers, hvalue)) != 1)
                goto out;
            r = -1;
            s->headers++;
            Py_CLEAR(header);
            Py_CLEAR(hkey);
            Py_CLEAR(hvalue);
        }
        if (PyErr_Occurred())
            goto out;
        if (s->headers > INT32_LIMIT) {
            r = 0;
            goto out;
        }
        if (bit_set(&s->list_valid, s->rows, s->headers > had) < 0 || buf_i32(&s->list_offsets, (int32_t)s->headers) < 0)
            goto out;
        if (s->headers == had)
            s->list_nulls++;
    }
    s->rows++;
    s->bytes += n + s->header_cost * (s->headers - had);
    r = 1;
out:
    Py_XDECREF(offset);
    Py_XDECREF(timestamp);
    Py_XDECREF(key);
    Py_XDECREF(value);
    Py_XDECREF(headers);
    Py_XDECREF(size);
    Py_XDECREF(it);
    Py_XDECREF(header);
    Py_XDECREF(hkey);
    Py_XDECREF(hvalue);
    return r;
}

static PyObject *Builder_append_records(Builder *s, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 5) {
        PyErr_SetString(PyExc_TypeError, "append_records takes 5 arguments");
        return NULL;
    }
    Batch bt;
    PyObject *batch_level[6] = {args[1], args[2], args[3], Py_None, args[4], Py_None};
    int r = batch_args(batch_level, &bt, 0);
    if (r != 1) {
        if (r == 0)
            PyErr_SetString(PyExc_ValueError, "a batch-level value out of range");
        return NULL;
    }
    PyObject *seq = PySequence_Fast(args[0], "append_records takes a sequence of records");
    if (seq == NULL)
        return NULL;
    Mark mark;
    builder_mark(s, &mark);
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    for (Py_ssize_t i = 0; i < n; i++) {
        r = append_record(s, PySequence_Fast_GET_ITEM(seq, i), &bt);
        if (r != 1) {
            builder_rollback(s, &mark);
            Py_DECREF(seq);
            if (r == 0)
                PyErr_SetString(PyExc_OverflowError, "more than 2 GiB of keys, values or headers in one batch");
            return NULL;
        }
    }
    Py_DECREF(seq);
    Py_RETURN_NONE;
}

/* (rows, offset, timestamp, batch, key, value, headers) with key/value/header key/header value as
   (validity or None, null count, offsets, data) and headers as None or (validity or None, null count, offsets,
   header count, header key, header value); the builder starts empty. */
static PyObject *Builder_finish(Builder *s, PyObject *Py_UNUSED(ignored))
{
    PyObject *offset = buf_take(&s->offset), *timestamp = buf_take(&s->timestamp), *batch = buf_take(&s->batch);
    PyObject *position = buf_take(&s->position), *base_offset = buf_take(&s->base_offset);
    PyObject *base_sequence = buf_take(&s->base_sequence);
    PyObject *key = binary_take(&s->key), *value = binary_take(&s->value), *headers = NULL, *out = NULL;
    if (s->include_headers) {
        PyObject *valid = s->list_nulls ? buf_take(&s->list_valid) : (Py_INCREF(Py_None), Py_None);
        PyObject *offsets = buf_take(&s->list_offsets);
        PyObject *hkey = binary_take(&s->header_key), *hvalue = binary_take(&s->header_value);
        if (valid && offsets && hkey && hvalue)
            headers = Py_BuildValue("(OnOnOO)", valid, s->list_nulls, offsets, s->headers, hkey, hvalue);
        Py_XDECREF(valid);
        Py_XDECREF(offsets);
        Py_XDECREF(hkey);
        Py_XDECREF(hvalue);
    } else
        headers = (Py_INCREF(Py_None), Py_None);
    if (offset && timestamp && batch && position && base_offset && base_sequence && key && value && headers)
        out = Py_BuildValue("(nOOOOOOOOO)", s->rows, offset, timestamp, key, value, headers, batch, position,
                            base_offset, base_sequence);
    Py_XDECREF(position);
    Py_XDECREF(base_offset);
    Py_XDECREF(base_sequence);
    Py_XDECREF(offset);
    Py_XDECREF(timestamp);
    Py_XDECREF(batch);
    Py_XDECREF(key);
    Py_XDECREF(value);
    Py_XDECREF(headers);
    s->rows = s->headers = s->bytes = 0;
    s->list_nulls = 0;
    s->list_valid.len = 0;
    s->list_offsets.len = 0;
    if (out != NULL && buf_i32(&s->list_offsets, 0) < 0)
        Py_CLEAR(out);
    return out;
}

static PyObject *Builder_get_rows(Builder *s, void *closure) { return PyLong_FromSsize_t(s->rows); }
static PyObject *Builder_get_bytes(Builder *s, void *closure) { return PyLong_FromSsize_t(s->bytes); }

static PyMethodDef Builder_methods[] = {
    {"append", (PyCFunction)(void (*)(void))Builder_append, METH_FASTCALL,
     "Append the records of a v2 batch's bytes; (pos, done, rows), or None when the storage core must decide."},
    {"append_run", (PyCFunction)(void (*)(void))Builder_append_run, METH_FASTCALL,
     "Append the records of a run of batches the reader takes whole; the end of the run, or None."},
    {"append_records", (PyCFunction)(void (*)(void))Builder_append_records, METH_FASTCALL,
     "Append Record objects decoded by the storage core."},
    {"finish", (PyCFunction)Builder_finish, METH_NOARGS, "Hand out the column buffers and start empty ones."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef Builder_getset[] = {
    {"rows", (getter)Builder_get_rows, NULL, "rows appended since the last finish()", NULL},
    {"bytes", (getter)Builder_get_bytes, NULL, "record bytes appended since the last finish()", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject BuilderType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "kdump._columns.Builder",
    .tp_basicsize = sizeof(Builder),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Arrow column buffers of the kafka-log source, filled from v2 record batches.",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Builder_init,
    .tp_dealloc = (destructor)Builder_dealloc,
    .tp_methods = Builder_methods,
    .tp_getset = Builder_getset,
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "kdump._columns", NULL, -1, NULL};

/* Bumped with every change of behaviour: kdump ignores a build whose REVISION differs (a stale build). */
#define COLUMNS_REVISION 3

PyMODINIT_FUNC PyInit__columns(void)
{
    if (PyType_Ready(&BuilderType) < 0)
        return NULL;
    PyObject *m = PyModule_Create(&module);
    if (m == NULL)
        return NULL;
    Py_INCREF(&BuilderType);
    if (PyModule_AddObject(m, "Builder", (PyObject *)&BuilderType) < 0
        || PyModule_AddIntConstant(m, "REVISION", COLUMNS_REVISION) < 0
        || PyModule_AddIntConstant(m, "MAX_OBJECT_HEADERS", MAX_OBJECT_HEADERS) < 0) {
        Py_DECREF(&BuilderType);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
