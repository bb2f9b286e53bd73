/*
 * kdump._speedups: an optional accelerator for decoding v2 records (kdump.storage.record_batch).
 *
 * read_records(record_type, header_type, buf, pos, end, count, base_offset, base_timestamp, base_sequence,
 *              log_append_time) -> list | None
 *
 * Decodes ``count`` records from buf[pos:end] into record_type(...) objects exactly as the pure-Python
 * decoder does for well-formed input.  It returns None -- and the caller then runs the pure-Python decoder,
 * which produces Kafka's error messages and the records before a bad one -- whenever anything is unusual:
 * a malformed or out-of-range field, bytes left over, a sequence that wraps, an offset or timestamp that would
 * leave the 64-bit range.  So the accelerator never decides what an error says; it only makes the common
 * case fast.  Build is optional (setup.py); KDUMP_PURE_PYTHON=1 turns it off at run time.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>
#include <stdint.h>

#include "_batch_walk.h"
#include "_varint.h"

#define INT32_MAX_ 2147483647LL

/* A record with more headers than this is left to the Python decoder, which keeps them encoded
   (kdump.storage.record.LazyHeaders, MAX_EAGER_HEADERS) instead of building one object per header. */
#define MAX_EAGER_HEADERS 4096

/* A key or value this big is left to the Python decoder, which hands it out as a view of the segment
   (kdump.storage.record_batch.MAX_EAGER_BYTES) instead of a copy. */
#define MAX_EAGER_BYTES (1 << 20)

static PyObject *bytes_or_none(const unsigned char *b, Py_ssize_t *pos, Py_ssize_t limit, int64_t size)
{
    if (size < 0)
        Py_RETURN_NONE;
    if (size > limit - *pos || size >= MAX_EAGER_BYTES)
        return NULL; /* caller treats NULL without an exception as "fall back" */
    PyObject *o = PyBytes_FromStringAndSize((const char *)b + *pos, (Py_ssize_t)size);
    *pos += (Py_ssize_t)size;
    return o;
}

/* Record's 14 slots, in the order of its __init__'s arguments: a record is made by filling them directly, as
   its __init__ would with those 14 arguments given (a Python function of 14 assignments, it cost more than the
   decoding: ~0.6 us a record).  Found once per type; a type whose attributes are not all plain object slots
   (or that has a __dict__) is called instead. */
#define RECORD_SLOTS 14
static const char *const slot_names[RECORD_SLOTS] = {
    "offset", "timestamp", "sequence", "key", "value", "headers", "attributes",
    "key_size", "value_size", "magic", "crc", "valid", "position", "size_in_bytes"};
static PyTypeObject *slots_type = NULL; /* the type slot_offsets belong to (a strong reference) */
static Py_ssize_t slot_offsets[RECORD_SLOTS];

static int find_slots(PyObject *record_type)
{
    if ((PyTypeObject *)record_type == slots_type)
        return 1;
    if (!PyType_Check(record_type))
        return 0;
    PyTypeObject *t = (PyTypeObject *)record_type;
    if (t->tp_dictoffset != 0 || t->tp_alloc == NULL || t->tp_itemsize != 0)
        return 0;
    Py_ssize_t offsets[RECORD_SLOTS];
    for (int k = 0; k < RECORD_SLOTS; k++) {
        PyObject *d = PyObject_GetAttrString(record_type, slot_names[k]); /* the member descriptor itself */
        if (d == NULL) {
            PyErr_Clear();
            return 0;
        }
        int usable = Py_IS_TYPE(d, &PyMemberDescr_Type) && ((PyMemberDescrObject *)d)->d_member->type == T_OBJECT_EX
                     && !(((PyMemberDescrObject *)d)->d_member->flags & READONLY);
        if (usable)
            offsets[k] = ((PyMemberDescrObject *)d)->d_member->offset;
        Py_DECREF(d);
        if (!usable)
            return 0;
    }
    memcpy(slot_offsets, offsets, sizeof offsets);
    Py_INCREF(t);
    Py_XSETREF(slots_type, t);
    return 1;
}

/* record_type(*args) for the 14 arguments: filled slot by slot when find_slots knows the type (new reference). */
static PyObject *make_record(PyObject *record_type, int direct, PyObject *const *args)
{
    if (!direct)
        return PyObject_Vectorcall(record_type, args, RECORD_SLOTS, NULL);
    PyTypeObject *t = (PyTypeObject *)record_type;
    PyObject *record = t->tp_alloc(t, 0);
    if (record == NULL)
        return NULL;
    for (int k = 0; k < RECORD_SLOTS; k++) {
        Py_INCREF(args[k]);
        *(PyObject **)((char *)record + slot_offsets[k]) = args[k];
    }
    return record;
}

static PyObject *read_records(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 10) {
        PyErr_SetString(PyExc_TypeError, "read_records takes 10 arguments");
        return NULL;
    }
    PyObject *record_type = args[0], *header_type = args[1];
    int direct = find_slots(record_type);
    Py_ssize_t pos = PyLong_AsSsize_t(args[3]);
    Py_ssize_t end = PyLong_AsSsize_t(args[4]);
    Py_ssize_t count = PyLong_AsSsize_t(args[5]);
    int overflow = 0;
    long long base_offset = PyLong_AsLongLongAndOverflow(args[6], &overflow);
    if (overflow)
        Py_RETURN_NONE;
    long long base_timestamp = PyLong_AsLongLongAndOverflow(args[7], &overflow);
    if (overflow)
        Py_RETURN_NONE;
    long long base_sequence = PyLong_AsLongLongAndOverflow(args[8], &overflow);
    if (overflow)
        Py_RETURN_NONE;
    int has_append_time = args[9] != Py_None;
    long long log_append_time = 0;
    if (has_append_time) {
        log_append_time = PyLong_AsLongLongAndOverflow(args[9], &overflow);
        if (overflow)
            Py_RETURN_NONE;
    }
    if (PyErr_Occurred())
        return NULL;
    if (count < 0 || pos < 0 || end < pos)
        Py_RETURN_NONE;

    Py_buffer view;
    if (PyObject_GetBuffer(args[2], &view, PyBUF_SIMPLE) < 0)
        return NULL;
    if (end > view.len) {
        PyBuffer_Release(&view);
        Py_RETURN_NONE;
    }
    const unsigned char *b = (const unsigned char *)view.buf;
    /* at most one record per byte: never trust count for the allocation */
    PyObject *list = PyList_New(0);
    if (list == NULL) {
        PyBuffer_Release(&view);
        return NULL;
    }
    PyObject *two = PyLong_FromLong(2);
    int ok = 1;
    for (Py_ssize_t i = 0; i < count && ok; i++) {
        Py_ssize_t record_start = pos;
        int64_t size, timestamp_delta, offset_delta, key_size, value_size, header_count;
        PyObject *key = NULL, *value = NULL, *headers = NULL;
        ok = 0;
        if (!read_varint(b, &pos, end, &size) || size < 0 || size > end - pos)
            break;
        Py_ssize_t body_end = pos + (Py_ssize_t)size;
        if (pos >= body_end)
            break;
        long attributes = b[pos++];
        if (!read_varlong(b, &pos, body_end, &timestamp_delta) || !read_varint(b, &pos, body_end, &offset_delta)
            || !read_varint(b, &pos, body_end, &key_size))
            break;
        if ((key = bytes_or_none(b, &pos, body_end, key_size)) == NULL)
            goto decline;
        if (!read_varint(b, &pos, body_end, &value_size))
            goto decline;
        if ((value = bytes_or_none(b, &pos, body_end, value_size)) == NULL)
            goto decline;
        if (!read_varint(b, &pos, body_end, &header_count) || header_count < 0 || header_count > body_end - pos
            || header_count > MAX_EAGER_HEADERS)
            goto decline;
        if ((headers = PyTuple_New((Py_ssize_t)header_count)) == NULL)
            goto decline;
        for (int64_t h = 0; h < header_count; h++) {
            int64_t hk_size, hv_size;
            if (!read_varint(b, &pos, body_end, &hk_size) || hk_size < 0)
                goto decline;
            PyObject *hkey = bytes_or_none(b, &pos, body_end, hk_size);
            if (hkey == NULL)
                goto decline;
            PyObject *hvalue = read_varint(b, &pos, body_end, &hv_size) ? bytes_or_none(b, &pos, body_end, hv_size)
                                                                        : NULL;
            if (hvalue == NULL) {
                Py_DECREF(hkey);
                goto decline;
            }
            PyObject *hargs[2] = {hkey, hvalue};
            PyObject *header = PyObject_Vectorcall(header_type, hargs, 2, NULL);
            Py_DECREF(hkey);
            Py_DECREF(hvalue);
            if (header == NULL)
                goto decline;
            PyTuple_SET_ITEM(headers, (Py_ssize_t)h, header);
        }
        if (pos != body_end)
            goto decline;
        int64_t sequence = -1;
        if (base_sequence >= 0) {
            if (offset_delta < 0 || base_sequence > INT32_MAX_ - offset_delta) /* Java int wrap-around: Python */
                goto decline;
            sequence = base_sequence + offset_delta;
        }
        long long offset, timestamp;
        if (__builtin_add_overflow(base_offset, (long long)offset_delta, &offset))
            goto decline;
        if (has_append_time)
            timestamp = log_append_time;
        else if (__builtin_add_overflow(base_timestamp, (long long)timestamp_delta, &timestamp))
            goto decline;
        PyObject *rargs[14];
        rargs[0] = PyLong_FromLongLong(offset);
        rargs[1] = PyLong_FromLongLong(timestamp);
        rargs[2] = PyLong_FromLongLong(sequence);
        rargs[3] = key;
        rargs[4] = value;
        rargs[5] = headers;
        rargs[6] = PyLong_FromLong(attributes);
        rargs[7] = PyLong_FromLongLong(key_size >= 0 ? key_size : -1);
        rargs[8] = PyLong_FromLongLong(value_size >= 0 ? value_size : -1);
        rargs[9] = two;
        rargs[10] = Py_None;
        rargs[11] = Py_None;
        rargs[12] = PyLong_FromSsize_t(record_start);
        rargs[13] = PyLong_FromSsize_t(pos - record_start);
        PyObject *record = NULL;
        if (rargs[0] && rargs[1] && rargs[2] && rargs[6] && rargs[7] && rargs[8] && rargs[12] && rargs[13])
            record = make_record(record_type, direct, rargs);
        for (int k = 0; k < 14; k++)
            if (k != 9 && k != 10 && k != 11)
                Py_XDECREF(rargs[k]);
        if (record == NULL) {
            Py_DECREF(two);
            Py_DECREF(list);
            PyBuffer_Release(&view);
            return NULL;
        }
        int appended = PyList_Append(list, record);
        Py_DECREF(record);
        if (appended < 0) {
            Py_DECREF(two);
            Py_DECREF(list);
            PyBuffer_Release(&view);
            return NULL;
        }
        ok = 1;
        continue;
    decline: /* let the pure-Python decoder decide (an exception set here is reported below) */
        Py_XDECREF(key);
        Py_XDECREF(value);
        Py_XDECREF(headers);
        break;
    }
    Py_DECREF(two);
    PyBuffer_Release(&view);
    if (PyErr_Occurred()) {
        Py_DECREF(list);
        return NULL;
    }
    if (!ok || pos != end) {
        Py_DECREF(list);
        Py_RETURN_NONE;
    }
    return list;
}


/* ---- batch_lines: the shallow walk's batch lines ------------------------------------------------------- */

static char *put_i64(char *o, long long v)
{
    char tmp[24];
    int n = 0;
    unsigned long long u = v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;
    do {
        tmp[n++] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (v < 0)
        *o++ = '-';
    while (n)
        *o++ = tmp[--n];
    return o;
}

static char *put_s(char *o, const char *s)
{
    while (*s)
        *o++ = *s++;
    return o;
}

/* Java int arithmetic (wraps) */
static int32_t jint(int64_t v) { return (int32_t)(uint32_t)(uint64_t)v; }

/* Kafka's DefaultRecordBatch.incrementSequence (kdump.storage.record_batch.increment_sequence). */
static int32_t increment_sequence(int32_t sequence, int32_t increment)
{
    if (sequence > jint((int64_t)INT32_MAX_ - increment))
        return jint((int64_t)increment - jint((int64_t)INT32_MAX_ - sequence) - 1);
    return jint((int64_t)sequence + increment);
}

static const char *const codec_names[5] = {"none", "gzip", "snappy", "lz4", "zstd"};

#define LINE_MAX_CHARS 640 /* one line: ~40 characters of field names a field, 20 digits a number, 20 fields */

/*
 * batch_lines(buf, pos, end, stop, crc32c) -> (str, new_pos) | None
 *
 * Kafka's shallow batch lines (kdump.render.kafka_text.batch_line_head + batch_line_tail, the position printed
 * being the batch's own) for the run of v2 batches that starts at ``pos``: batches are taken while one starts
 * before ``stop`` and is plain -- magic 2, a size field of at least 49 (a whole header), wholly before ``end``
 * and within the buffer, a known compression id, at most BIG_BATCH bytes.  The first batch that is not plain
 * is left to the caller (kdump.storage.file_records.FileRecords.batches), which frames it, and reports its
 * errors, as for any batch; None when the first batch already is.  ``crc32c`` is
 * kdump.storage.checksum.crc32c, called on a memoryview of each batch's checksummed bytes.
 */
static PyObject *batch_lines(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    BatchWalk walk;
    PyObject *crc_function;
    if (batch_walk_from_args("batch_lines", args, nargs, 5, 0, &walk, &crc_function) < 0)
        return NULL;
    Py_ssize_t pos = walk.pos;
    Py_ssize_t start = pos;
    size_t capacity = 1 << 16, used = 0;
    char *text = PyMem_Malloc(capacity);
    if (text == NULL) {
        batch_walk_close(&walk);
        return PyErr_NoMemory();
    }
    int failed = 0;
    BatchHead head;
    while (batch_walk_next(&walk, &head)) {
        int16_t attributes = head.attributes;
        int codec = attributes & 0x07;
        if (codec > 4)
            break;
        int64_t base_offset = head.base_offset;
        int32_t leader_epoch = head.leader_epoch;
        uint32_t crc = head.crc;
        int32_t last_offset_delta = head.last_offset_delta;
        int64_t base_timestamp = head.base_timestamp;
        int64_t max_timestamp = head.max_timestamp;
        int64_t producer_id = head.producer_id;
        int16_t producer_epoch = head.producer_epoch;
        int32_t base_sequence = head.base_sequence;
        int32_t records_count = head.records_count;
        Py_ssize_t size_in_bytes = head.size;
        unsigned long computed;  /* compared with (unsigned long)crc */
        if (!batch_walk_body(&walk, &head)) {
            failed = PyErr_Occurred() != NULL;
            break;
        }
        if (batch_crc(crc_function, &head, &computed) < 0) {
            failed = 1;
            break;
        }

        if (capacity - used < LINE_MAX_CHARS) {
            char *bigger = PyMem_Realloc(text, capacity * 2);
            if (bigger == NULL) {
                PyErr_NoMemory();
                failed = 1;
                break;
            }
            text = bigger;
            capacity *= 2;
        }
        char *o = text + used;
        o = put_s(o, "baseOffset: ");
        o = put_i64(o, base_offset);
        o = put_s(o, " lastOffset: ");
        o = put_i64(o, (int64_t)((uint64_t)base_offset + (uint64_t)(int64_t)last_offset_delta));
        o = put_s(o, " count: ");
        o = put_i64(o, records_count);
        o = put_s(o, " baseSequence: ");
        o = put_i64(o, base_sequence);
        o = put_s(o, " lastSequence: ");
        o = put_i64(o, base_sequence == -1 ? -1 : increment_sequence(base_sequence, last_offset_delta));
        o = put_s(o, " producerId: ");
        o = put_i64(o, producer_id);
        o = put_s(o, " producerEpoch: ");
        o = put_i64(o, producer_epoch);
        o = put_s(o, " partitionLeaderEpoch: ");
        o = put_i64(o, leader_epoch);
        o = put_s(o, (attributes & 0x10) ? " isTransactional: true" : " isTransactional: false");
        o = put_s(o, (attributes & 0x20) ? " isControl: true" : " isControl: false");
        if (attributes & 0x40) {
            o = put_s(o, " deleteHorizonMs: OptionalLong[");
            o = put_i64(o, base_timestamp);
            o = put_s(o, "]");
        } else {
            o = put_s(o, " deleteHorizonMs: OptionalLong.empty");
        }
        o = put_s(o, " position: ");
        o = put_i64(o, head.position);
        o = put_s(o, (attributes & 0x08) ? " LogAppendTime: " : " CreateTime: ");
        o = put_i64(o, max_timestamp);
        o = put_s(o, " size: ");
        o = put_i64(o, size_in_bytes);
        o = put_s(o, " magic: 2 compresscodec: ");
        o = put_s(o, codec_names[codec]);
        o = put_s(o, " crc: ");
        o = put_i64(o, crc);
        o = put_s(o, computed == crc ? " isvalid: true\n" : " isvalid: false\n");
        used = (size_t)(o - text);
        batch_walk_take(&walk, &head);
    }
    pos = walk.pos;
    batch_walk_close(&walk);
    PyObject *result = NULL;
    if (!failed && pos != start) {
        PyObject *lines = PyUnicode_DecodeASCII(text, (Py_ssize_t)used, NULL);
        if (lines != NULL)
            result = Py_BuildValue("(Nn)", lines, pos);
    }
    PyMem_Free(text);
    if (failed || PyErr_Occurred())
        return NULL;
    if (result == NULL)
        Py_RETURN_NONE;
    return result;
}


/* ---- header_run: a run of plain v2 batch headers folded into aggregates (kdump report, kdump verify) ----- */
/*
 * header_run(buf, pos, end, stop, crc32c, limits, offset_pending, time_pending, wanted_last, wanted_base)
 *     -> tuple | None
 *
 * The batches from ``pos`` on, while each is "plain", read in one loop and returned as one set of aggregates,
 * so that the Python readers of the one header pass (kdump.analysis.header_run) work per run, not per batch.
 * The pure-Python twin is kdump.analysis.header_run.header_run_py: the same results, tested against each other.
 * A batch is plain when it starts before ``stop`` and: magic 2, a size field of 49 to BIG_BATCH wholly before
 * ``end``, a valid CRC-32C (``crc32c`` called on a memoryview of its checksummed bytes; not checked when ``crc32c``
 * is None: then no byte past the 61-byte header is read), a known codec, neither
 * control, transactional nor carrying a delete horizon, a last offset delta >= 0 and a record count >= 0, its
 * base offset the previous batch's last + 1 and at least the segment's base offset, the same partition leader
 * epoch, every offset-index entry before its end at its position naming its last offset, every time-index entry
 * up to its last offset naming its last offset with its max timestamp (none earlier larger), not a batch the
 * wanted sets name, not a compressed batch due for the compression sample (at or after ``sample_at``), not a
 * ninth producer id of the run.  The first batch that is not plain is left to the caller (None when the first
 * already is); so is the batch after the one that opened the ``allowance``-th new time bucket.
 *
 * limits: (segment_base, previous_last, epoch, max_so_far, sample_at, per_bucket, fill, allowance,
 *          last_timestamp): the timeline's buckets take ``per_bucket`` batches each, the last one open has
 *          ``fill``; ``last_timestamp`` is the latest max-timestamp >= 0 before ``pos`` (-1: none).
 * offset_pending / time_pending: the index checkers' pending entries as (keys, values, next): int64 arrays of
 *          positions and offsets / offsets and timestamps in the order the log meets them, pending from index
 *          ``next`` on (IndexEntries.columns), or None.
 * Returns (end, batches, records, bytes, last_base, last_offset, last_position, last_size, last_max_timestamp,
 *          last_count, codecs (bit per codec id), min_timestamp (least >= 0, -1 none), max_timestamp, offset
 *          entries used, time entries used, time entries on batches of more than one record, max_so_far,
 *          offset_of_max (-1 if max_so_far did not grow), compressed batches, compressed bytes, last_timestamp,
 *          producers, silences, buckets, continued):
 *   producers: [(pid, first_base, first_last, first_ts, epoch, last_offset, batches, records, min_ts, max_ts)]
 *              in order of first batch (min_ts/max_ts over max-timestamps >= 0, -1 none);
 *   silences: the 3 longest [(start, end, after_offset, before_offset)] (longest first, earliest first on ties);
 *   buckets: [(first_offset, last_offset, min_ts, max_ts, batches, records, bytes, max_batch_bytes)]; the first
 *            one continues the open bucket when ``continued``.
 */
#define RUN_PRODUCERS 8
#define RUN_SILENCES 3

typedef struct {
    int64_t pid, first_base, first_last, first_ts, epoch, last_offset, batches, records, min_ts, max_ts;
} RunProducer;

typedef struct {
    int64_t start, end, after, before;
} RunSilence;

typedef struct {
    int64_t first, last, min_ts, max_ts, batches, records, bytes, max_bytes;
} RunBucket;

/* An index checker's pending entries (kdump.analysis.header_run.IndexEntries.columns): (keys, values, next), two
   arrays of int64 ("q") of one length, the entries from ``next`` on pending; None: no entries. */
typedef struct {
    Py_buffer keys, values;
    int open;
    const int64_t *k, *v; /* the pending entries: k[0] is the next one's key */
    Py_ssize_t n;
} Pending;

static int pending_column(PyObject *column, Py_buffer *view)
{
    if (PyObject_GetBuffer(column, view, PyBUF_FORMAT | PyBUF_C_CONTIGUOUS) < 0)
        return -1;
    if (view->itemsize != 8 || view->format == NULL || strcmp(view->format, "q") != 0) {
        PyBuffer_Release(view);
        PyErr_SetString(PyExc_TypeError, "header_run: pending entries must be arrays of int64 ('q')");
        return -1;
    }
    return 0;
}

/* 0 with ``p`` ready (to be closed by pending_close), -1 with an exception set. */
static int pending_open(PyObject *entries, Pending *p)
{
    p->open = 0;
    p->n = 0;
    p->k = p->v = NULL;
    if (entries == Py_None)
        return 0;
    if (!PyTuple_Check(entries) || PyTuple_GET_SIZE(entries) != 3) {
        PyErr_SetString(PyExc_TypeError, "header_run: pending entries must be (keys, values, next)");
        return -1;
    }
    Py_ssize_t next = PyLong_AsSsize_t(PyTuple_GET_ITEM(entries, 2));
    if (next == -1 && PyErr_Occurred())
        return -1;
    if (pending_column(PyTuple_GET_ITEM(entries, 0), &p->keys) < 0)
        return -1;
    if (pending_column(PyTuple_GET_ITEM(entries, 1), &p->values) < 0) {
        PyBuffer_Release(&p->keys);
        return -1;
    }
    p->open = 1;
    Py_ssize_t count = p->keys.len / 8;
    if (p->values.len / 8 < count)
        count = p->values.len / 8;
    if (next < 0)
        next = 0;
    p->n = next < count ? count - next : 0;
    p->k = (const int64_t *)p->keys.buf + (next < count ? next : count);
    p->v = (const int64_t *)p->values.buf + (next < count ? next : count);
    return 0;
}

static void pending_close(Pending *p)
{
    if (p->open) {
        PyBuffer_Release(&p->keys);
        PyBuffer_Release(&p->values);
        p->open = 0;
    }
}

/* Whether ``value`` is in the set ``set`` (None or empty: no); -1 on an error. */
static int run_named(PyObject *set, int64_t value)
{
    if (set == Py_None || PySet_GET_SIZE(set) == 0)
        return 0;
    PyObject *key = PyLong_FromLongLong(value);
    if (key == NULL)
        return -1;
    int found = PySet_Contains(set, key);
    Py_DECREF(key);
    return found;
}

static PyObject *header_run(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    BatchWalk walk;
    PyObject *crc_function;
    if (batch_walk_from_args("header_run", args, nargs, 10, 1, &walk, &crc_function) < 0)
        return NULL;
    Py_ssize_t pos = walk.pos;
    PyObject *limits = args[5];
    PyObject *offset_pending = args[6], *time_pending = args[7];
    PyObject *wanted_last = args[8], *wanted_base = args[9];
    if (!PyTuple_Check(limits) || PyTuple_GET_SIZE(limits) != 9
        || (wanted_last != Py_None && !PyAnySet_Check(wanted_last))
        || (wanted_base != Py_None && !PyAnySet_Check(wanted_base))) {
        PyErr_SetString(PyExc_TypeError, "header_run: bad limits or wanted sets");
        batch_walk_close(&walk);
        return NULL;
    }
    int64_t lim[9];
    for (int k = 0; k < 9; k++) {
        lim[k] = PyLong_AsLongLong(PyTuple_GET_ITEM(limits, k));
        if (lim[k] == -1 && PyErr_Occurred()) {
            batch_walk_close(&walk);
            return NULL;
        }
    }
    int64_t segment_base = lim[0], previous = lim[1], epoch = lim[2], max_so_far = lim[3], sample_at = lim[4];
    int64_t per_bucket = lim[5], fill = lim[6], allowance = lim[7], last_ts = lim[8];
    Pending off, times;
    if (pending_open(offset_pending, &off) < 0) {
        batch_walk_close(&walk);
        return NULL;
    }
    if (pending_open(time_pending, &times) < 0) {
        pending_close(&off);
        batch_walk_close(&walk);
        return NULL;
    }
    Py_ssize_t off_n = off.n, time_n = times.n;


    int64_t batches = 0, records = 0, bytes = 0, last_base = 0, last_offset = previous, last_size = 0;
    int64_t last_max = 0, last_count = 0, codecs = 0, min_ts = -1, max_ts = INT64_MIN;
    int64_t rules = 0, offset_of_max = -1, compressed = 0, compressed_bytes = 0, opened = 0;
    Py_ssize_t last_position = pos, off_used = 0, time_used = 0;
    RunProducer producers[RUN_PRODUCERS];
    int n_producers = 0;
    RunSilence silences[RUN_SILENCES];
    int n_silences = 0;
    RunBucket *buckets = NULL;
    Py_ssize_t n_buckets = 0, bucket_capacity = 0;
    int continued = fill < per_bucket, failed = 0, fold = 0;

    BatchHead head;
    while (batch_walk_next(&walk, &head)) {
        pos = head.position;
        int16_t attributes = head.attributes;
        int codec = attributes & 0x07;
        if (codec > 4 || (attributes & 0x70))
            break;
        int32_t delta = head.last_offset_delta;
        int32_t count = head.records_count;
        int64_t base = head.base_offset;
        if (delta < 0 || count < 0 || previous == INT64_MAX || base != previous + 1 || base < segment_base
            || base > INT64_MAX - delta || head.leader_epoch != epoch)
            break;
        int64_t last = base + delta;
        int64_t ts = head.max_timestamp;
        int64_t pid = head.producer_id;
        Py_ssize_t size = head.size;
        if (codec != 0 && pos >= sample_at)
            break;
        if (pid >= 0) {
            int named = run_named(wanted_last, last);
            if (named == 0)
                named = run_named(wanted_base, base);
            if (named < 0) {
                failed = 1;
                break;
            }
            if (named)
                break;
        }
        int slot = -1;
        if (pid >= 0) {
            for (int k = 0; k < n_producers; k++)
                if (producers[k].pid == pid) {
                    slot = k;
                    break;
                }
            if (slot < 0 && n_producers == RUN_PRODUCERS)
                break;
        }
        /* the index entries this batch answers */
        Py_ssize_t off_k = off_used, time_k = time_used;
        int plain = 1;
        int64_t ea, ec;
        while (off_k < off_n) {
            ea = off.k[off_k];
            ec = off.v[off_k];
            if (ea >= pos + size)
                break;
            if (ea != pos || ec != last) {
                plain = 0;
                break;
            }
            off_k++;
        }
        int64_t new_max = ts > max_so_far ? ts : max_so_far;
        int64_t new_rules = 0;
        while (plain && time_k < time_n) {
            ea = times.k[time_k];
            ec = times.v[time_k];
            if (ea > last)
                break;
            if (ea != last || ec != ts || new_max > ec) {
                plain = 0;
                break;
            }
            if (last > base)
                new_rules++;
            time_k++;
        }
        if (!plain)
            break;
        if (crc_function != Py_None) { /* None: the CRC is not checked (kdump report's header pass) */
            unsigned long computed;
            if (!batch_walk_body(&walk, &head)) {
                failed = PyErr_Occurred() != NULL;
                break;
            }
            if (batch_crc(crc_function, &head, &computed) < 0) {
                failed = 1;
                break;
            }
            if (computed != (unsigned long)head.crc)
                break;
        }
        /* the bucket this batch goes to */
        RunBucket *bucket;
        if (fill < per_bucket) {
            if (n_buckets == 0) { /* the open bucket, continued */
                if (bucket_capacity == 0) {
                    buckets = PyMem_Malloc(16 * sizeof(RunBucket));
                    if (buckets == NULL) {
                        PyErr_NoMemory();
                        failed = 1;
                        break;
                    }
                    bucket_capacity = 16;
                }
                n_buckets = 1;
                buckets[0] = (RunBucket){base, last, ts, ts, 0, 0, 0, 0};
            }
            bucket = &buckets[n_buckets - 1];
        } else {
            if (n_buckets == bucket_capacity) {
                Py_ssize_t capacity = bucket_capacity ? bucket_capacity * 2 : 16;
                RunBucket *bigger = PyMem_Realloc(buckets, (size_t)capacity * sizeof(RunBucket));
                if (bigger == NULL) {
                    PyErr_NoMemory();
                    failed = 1;
                    break;
                }
                buckets = bigger;
                bucket_capacity = capacity;
            }
            bucket = &buckets[n_buckets++];
            *bucket = (RunBucket){base, last, ts, ts, 0, 0, 0, 0};
            fill = 0;
            if (++opened >= allowance)
                fold = 1;
        }
        /* everything below takes the batch */
        fill++;
        bucket->last = last;
        if (ts >= 0 && (bucket->min_ts < 0 || ts < bucket->min_ts))
            bucket->min_ts = ts;
        if (ts > bucket->max_ts)
            bucket->max_ts = ts;
        bucket->batches++;
        bucket->records += count;
        bucket->bytes += size;
        if (size > bucket->max_bytes)
            bucket->max_bytes = size;
        off_used = off_k;
        time_used = time_k;
        rules += new_rules;
        if (ts > max_so_far) {
            max_so_far = ts;
            offset_of_max = last;
        }
        if (ts >= 0 && last_ts >= 0 && ts > last_ts) {
            RunSilence gap = {last_ts, ts, previous, base};
            int64_t duration = ts - last_ts;
            if (n_silences < RUN_SILENCES
                || duration > silences[n_silences - 1].end - silences[n_silences - 1].start) {
                int at = n_silences;
                while (at > 0 && silences[at - 1].end - silences[at - 1].start < duration)
                    at--;
                int n = n_silences < RUN_SILENCES ? n_silences + 1 : RUN_SILENCES;
                for (int k = n - 1; k > at; k--)
                    silences[k] = silences[k - 1];
                silences[at] = gap;
                n_silences = n;
            }
        }
        if (pid >= 0) {
            RunProducer *p;
            if (slot < 0) {
                p = &producers[n_producers++];
                *p = (RunProducer){pid, base, last, ts, 0, 0, 0, 0, -1, -1};
            } else {
                p = &producers[slot];
            }
            p->epoch = head.producer_epoch;
            p->last_offset = last;
            p->batches++;
            p->records += count;
            if (ts >= 0) {
                if (p->min_ts < 0 || ts < p->min_ts)
                    p->min_ts = ts;
                if (ts > p->max_ts)
                    p->max_ts = ts;
            }
        }
        if (codec != 0) {
            compressed++;
            compressed_bytes += size;
        }
        codecs |= (int64_t)1 << codec;
        if (ts >= 0) {
            if (min_ts < 0 || ts < min_ts)
                min_ts = ts;
            last_ts = ts;
        }
        if (ts > max_ts)
            max_ts = ts;
        batches++;
        records += count;
        bytes += size;
        last_base = base;
        last_offset = last;
        last_position = pos;
        last_size = size;
        last_max = ts;
        last_count = count;
        previous = last;
        batch_walk_take(&walk, &head);
        if (fold)
            break; /* the caller folds its buckets after this one */
    }
    pos = walk.pos;
    if (PyErr_Occurred()) /* a MemoryError of the walk's window */
        failed = 1;
    batch_walk_close(&walk);
    pending_close(&off);
    pending_close(&times);
    PyObject *result = NULL;
    if (!failed && batches > 0) {
        PyObject *ps = PyList_New(n_producers);
        PyObject *ss = PyList_New(n_silences);
        PyObject *bs = PyList_New(n_buckets);
        if (ps != NULL && ss != NULL && bs != NULL) {
            int ok = 1;
            for (int k = 0; k < n_producers && ok; k++) {
                RunProducer *p = &producers[k];
                PyObject *t = Py_BuildValue("(LLLLLLLLLL)", p->pid, p->first_base, p->first_last, p->first_ts,
                                            p->epoch, p->last_offset, p->batches, p->records, p->min_ts,
                                            p->max_ts);
                if (t == NULL)
                    ok = 0;
                else
                    PyList_SET_ITEM(ps, k, t);
            }
            for (int k = 0; k < n_silences && ok; k++) {
                RunSilence *g = &silences[k];
                PyObject *t = Py_BuildValue("(LLLL)", g->start, g->end, g->after, g->before);
                if (t == NULL)
                    ok = 0;
                else
                    PyList_SET_ITEM(ss, k, t);
            }
            for (Py_ssize_t k = 0; k < n_buckets && ok; k++) {
                RunBucket *u = &buckets[k];
                PyObject *t = Py_BuildValue("(LLLLLLLL)", u->first, u->last, u->min_ts, u->max_ts, u->batches,
                                            u->records, u->bytes, u->max_bytes);
                if (t == NULL)
                    ok = 0;
                else
                    PyList_SET_ITEM(bs, k, t);
            }
            if (ok)
                result = Py_BuildValue("(nLLLLLnLLLLLLnnLLLLLLOOOO)", pos, batches, records, bytes, last_base,
                                       last_offset, last_position, last_size, last_max, last_count, codecs,
                                       min_ts, max_ts, off_used, time_used, rules, max_so_far, offset_of_max,
                                       compressed, compressed_bytes, last_ts, ps, ss, bs,
                                       continued ? Py_True : Py_False);
        }
        Py_XDECREF(ps);
        Py_XDECREF(ss);
        Py_XDECREF(bs);
    }
    PyMem_Free(buckets);
    if (result == NULL && (failed || PyErr_Occurred()))
        return NULL;
    if (result == NULL)
        Py_RETURN_NONE;
    return result;
}


/* ---- record_lines: a deep walk's record lines ---------------------------------------------------------- */

typedef struct {
    char *text;
    size_t used, capacity;
} Text;

static int text_reserve(Text *t, size_t more)
{
    if (t->capacity - t->used >= more)
        return 1;
    size_t capacity = t->capacity ? t->capacity : 1 << 16;
    while (capacity - t->used < more) {
        if (capacity > ((size_t)1 << 40))
            return 0;
        capacity *= 2;
    }
    char *bigger = PyMem_Realloc(t->text, capacity);
    if (bigger == NULL)
        return 0;
    t->text = bigger;
    t->capacity = capacity;
    return 1;
}

/* Bound on one batch's text: past it the caller's Python renderer writes the lines in pieces. */
#define MAX_BATCH_TEXT (64 << 20)

/*
 * record_lines(buf, pos, end, count, base_offset, base_timestamp, base_sequence, log_append_time, middle,
 *              print_contents) -> (str, first_offset, last_offset) | None
 *
 * Kafka's deep-iteration record lines of a v2 data batch's records in buf[pos:end] (the fused renderer of
 * kdump.render.kafka_text.record_renderer: ``| offset: ...{middle}timestamp keySize: ... headerKeys: [...]``,
 * with `` key: ``/`` payload: `` and the UTF-8 text of key and value when ``print_contents``), for records whose
 * offsets follow each other, whose decoding read_records would accept and whose header keys, keys and values
 * (when printed) are valid UTF-8; None for anything else (the caller renders the batch record by record).
 */
static PyObject *record_lines(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 10) {
        PyErr_SetString(PyExc_TypeError, "record_lines takes 10 arguments");
        return NULL;
    }
    Py_ssize_t pos = PyLong_AsSsize_t(args[1]);
    Py_ssize_t end = PyLong_AsSsize_t(args[2]);
    Py_ssize_t count = PyLong_AsSsize_t(args[3]);
    int overflow = 0;
    long long base_offset = PyLong_AsLongLongAndOverflow(args[4], &overflow);
    if (overflow)
        Py_RETURN_NONE;
    long long base_timestamp = PyLong_AsLongLongAndOverflow(args[5], &overflow);
    if (overflow)
        Py_RETURN_NONE;
    long long base_sequence = PyLong_AsLongLongAndOverflow(args[6], &overflow);
    if (overflow)
        Py_RETURN_NONE;
    int has_append_time = args[7] != Py_None;
    long long log_append_time = 0;
    if (has_append_time) {
        log_append_time = PyLong_AsLongLongAndOverflow(args[7], &overflow);
        if (overflow)
            Py_RETURN_NONE;
    }
    Py_ssize_t middle_len = 0;
    const char *middle = PyUnicode_Check(args[8]) ? PyUnicode_AsUTF8AndSize(args[8], &middle_len) : NULL;
    int print_contents = PyObject_IsTrue(args[9]);
    if (PyErr_Occurred())
        return NULL;
    if (middle == NULL || count <= 0 || pos < 0 || end < pos)
        Py_RETURN_NONE;
    Py_buffer view;
    if (PyObject_GetBuffer(args[0], &view, PyBUF_SIMPLE) < 0)
        return NULL;
    if (end > view.len) {
        PyBuffer_Release(&view);
        Py_RETURN_NONE;
    }
    const unsigned char *b = (const unsigned char *)view.buf;
    Text t = {NULL, 0, 0};
    int ok = 1;
    long long first_offset = 0, last_offset = 0;
    for (Py_ssize_t i = 0; i < count && ok; i++) {
        int64_t size, timestamp_delta, offset_delta, key_size, value_size, header_count;
        ok = 0;
        if (!read_varint(b, &pos, end, &size) || size < 0 || size > end - pos)
            break;
        Py_ssize_t body_end = pos + (Py_ssize_t)size;
        if (pos >= body_end)
            break;
        pos++; /* attributes */
        if (!read_varlong(b, &pos, body_end, &timestamp_delta) || !read_varint(b, &pos, body_end, &offset_delta)
            || !read_varint(b, &pos, body_end, &key_size))
            break;
        if (key_size >= MAX_EAGER_BYTES || key_size > body_end - pos)
            break;
        Py_ssize_t key_at = pos;
        if (key_size > 0)
            pos += (Py_ssize_t)key_size;
        if (!read_varint(b, &pos, body_end, &value_size) || value_size >= MAX_EAGER_BYTES
            || value_size > body_end - pos)
            break;
        Py_ssize_t value_at = pos;
        if (value_size > 0)
            pos += (Py_ssize_t)value_size;
        if (!read_varint(b, &pos, body_end, &header_count) || header_count < 0 || header_count > body_end - pos
            || header_count > MAX_EAGER_HEADERS)
            break;
        Py_ssize_t headers_at = pos;
        size_t keys_len = 0;
        int headers_ok = 1;
        for (int64_t h = 0; h < header_count && headers_ok; h++) {
            int64_t hk_size, hv_size;
            headers_ok = read_varint(b, &pos, body_end, &hk_size) && hk_size >= 0 && hk_size < MAX_EAGER_BYTES
                         && hk_size <= body_end - pos;
            if (!headers_ok)
                break;
            pos += (Py_ssize_t)hk_size;
            keys_len += (size_t)hk_size + 1;
            headers_ok = read_varint(b, &pos, body_end, &hv_size) && hv_size < MAX_EAGER_BYTES
                         && hv_size <= body_end - pos;
            if (headers_ok && hv_size > 0)
                pos += (Py_ssize_t)hv_size;
        }
        if (!headers_ok || pos != body_end)
            break;
        long long sequence = -1;
        if (base_sequence >= 0) {
            if (offset_delta < 0 || base_sequence > INT32_MAX_ - offset_delta)
                break;
            sequence = base_sequence + offset_delta;
        }
        long long offset, timestamp;
        if (__builtin_add_overflow(base_offset, (long long)offset_delta, &offset))
            break;
        if (has_append_time)
            timestamp = log_append_time;
        else if (__builtin_add_overflow(base_timestamp, (long long)timestamp_delta, &timestamp))
            break;
        if (i == 0)
            first_offset = offset;
        else if (offset != last_offset + 1) /* a gap: the caller's OffsetGaps notes it record by record */
            break;
        last_offset = offset;

        size_t need = 200 + (size_t)middle_len + keys_len
                      + (print_contents ? (size_t)(key_size > 0 ? key_size : 0) + (size_t)(value_size > 0 ? value_size : 0) : 0);
        if (t.used + need > MAX_BATCH_TEXT || !text_reserve(&t, need))
            break;
        char *o = t.text + t.used;
        o = put_s(o, "| offset: ");
        o = put_i64(o, offset);
        memcpy(o, middle, (size_t)middle_len);
        o += middle_len;
        o = put_i64(o, timestamp);
        o = put_s(o, " keySize: ");
        o = put_i64(o, key_size >= 0 ? key_size : -1);
        o = put_s(o, " valueSize: ");
        o = put_i64(o, value_size >= 0 ? value_size : -1);
        o = put_s(o, " sequence: ");
        o = put_i64(o, sequence);
        o = put_s(o, " headerKeys: [");
        Py_ssize_t hp = headers_at; /* the first header (checked above) */
        for (int64_t h = 0; h < header_count; h++) {
            int64_t hk_size = 0, hv_size = 0;
            read_varint(b, &hp, body_end, &hk_size);
            if (h)
                *o++ = ',';
            memcpy(o, b + hp, (size_t)hk_size);
            o += hk_size;
            hp += (Py_ssize_t)hk_size;
            read_varint(b, &hp, body_end, &hv_size);
            if (hv_size > 0)
                hp += (Py_ssize_t)hv_size;
        }
        *o++ = ']';
        if (print_contents) {
            if (key_size >= 0) {
                o = put_s(o, " key: ");
                memcpy(o, b + key_at, (size_t)key_size);
                o += key_size;
            }
            if (value_size >= 0) {
                o = put_s(o, " payload: ");
                memcpy(o, b + value_at, (size_t)value_size);
                o += value_size;
            }
        }
        *o++ = '\n';
        t.used = (size_t)(o - t.text);
        ok = 1;
    }
    PyBuffer_Release(&view);
    PyObject *result = NULL;
    if (ok && pos == end && t.text != NULL) {
        /* strict UTF-8 (what bytes.decode accepts, and where Java's decoder gives the same text); the pieces
           are joined by ASCII, so the whole is valid exactly when every piece is */
        PyObject *lines = PyUnicode_DecodeUTF8(t.text, (Py_ssize_t)t.used, NULL);
        if (lines == NULL) {
            if (PyErr_ExceptionMatches(PyExc_UnicodeDecodeError))
                PyErr_Clear();
        } else {
            result = Py_BuildValue("(NLL)", lines, first_offset, last_offset);
        }
    }
    PyMem_Free(t.text);
    if (result == NULL && PyErr_Occurred())
        return NULL;
    if (result == NULL)
        Py_RETURN_NONE;
    return result;
}

/* ---- index_columns: an offset or time index read as two int64 columns (kdump verify) ---------------------- */
/*
 * index_columns(buf, entry_size, base_offset) -> (first, second, first_increasing, second_order) | None
 *
 * The whole slots of ``buf`` (an index file's bytes, big-endian) as two columns of native int64 (bytes objects
 * for array("q").frombytes), as kdump.analysis.index_verification._columns reads them in Python (its twin):
 * entry_size 8, an offset index (OffsetIndex: relative offset int32, position int32): first = base_offset +
 * relative offset, second = position; entry_size 12, a time index (TimeIndex: timestamp int64, relative offset
 * int32): first = timestamp, second = base_offset + relative offset.  first_increasing: the first column
 * strictly increases; second_order: 2 when the second strictly increases, 1 when it never decreases, else 0.
 * The caller keeps base_offset where no int32 added to it leaves the int64 range; None for another entry size.
 */
static PyObject *index_columns(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "index_columns takes 3 arguments");
        return NULL;
    }
    Py_ssize_t entry = PyLong_AsSsize_t(args[1]);
    long long base = PyLong_AsLongLong(args[2]);
    if (PyErr_Occurred())
        return NULL;
    if (entry != 8 && entry != 12)
        Py_RETURN_NONE;
    if (base < INT64_MIN + 2147483648LL || base > INT64_MAX - 2147483648LL) {
        PyErr_SetString(PyExc_ValueError, "index_columns: a base offset an int32 could wrap");
        return NULL;
    }
    Py_buffer view;
    if (PyObject_GetBuffer(args[0], &view, PyBUF_SIMPLE) < 0)
        return NULL;
    Py_ssize_t n = view.len / entry;
    PyObject *first = PyBytes_FromStringAndSize(NULL, n * 8);
    PyObject *second = first == NULL ? NULL : PyBytes_FromStringAndSize(NULL, n * 8);
    if (second == NULL) {
        Py_XDECREF(first);
        PyBuffer_Release(&view);
        return NULL;
    }
    const unsigned char *b = (const unsigned char *)view.buf;
    char *f = PyBytes_AS_STRING(first), *g = PyBytes_AS_STRING(second);
    int first_increasing = 1, second_strict = 1, second_monotone = 1;
    int64_t x_prev = 0, y_prev = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        const unsigned char *e = b + i * entry;
        int64_t x, y;
        if (entry == 8) {
            x = base + be32(e);
            y = be32(e + 4);
        } else {
            x = be64(e);
            y = base + be32(e + 8);
        }
        if (i > 0) {
            if (x <= x_prev)
                first_increasing = 0;
            if (y <= y_prev) {
                second_strict = 0;
                if (y < y_prev)
                    second_monotone = 0;
            }
        }
        memcpy(f + i * 8, &x, 8);
        memcpy(g + i * 8, &y, 8);
        x_prev = x;
        y_prev = y;
    }
    PyBuffer_Release(&view);
    return Py_BuildValue("(NNOi)", first, second, first_increasing ? Py_True : Py_False,
                         second_strict ? 2 : second_monotone ? 1 : 0);
}

static PyMethodDef methods[] = {
    {"header_run", (PyCFunction)(void (*)(void))header_run, METH_FASTCALL,
     "A run of plain v2 batch headers folded into aggregates (kdump.analysis.header_run), or None."},
    {"index_columns", (PyCFunction)(void (*)(void))index_columns, METH_FASTCALL,
     "An offset or time index's slots as two int64 columns and whether they increase, or None."},
    {"read_records", (PyCFunction)(void (*)(void))read_records, METH_FASTCALL,
     "Decode v2 records into Record objects; None when the pure-Python decoder must decide."},
    {"batch_lines", (PyCFunction)(void (*)(void))batch_lines, METH_FASTCALL,
     "Kafka's shallow lines for a run of plain v2 batches: (text, next position), or None."},
    {"record_lines", (PyCFunction)(void (*)(void))record_lines, METH_FASTCALL,
     "Kafka's record lines of a v2 data batch: (text, first offset, last offset), or None."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "kdump._speedups", NULL, -1, methods};

/* Bumped with every change of behaviour: kdump ignores a build whose REVISION differs (a stale build). */
#define SPEEDUPS_REVISION 9

PyMODINIT_FUNC PyInit__speedups(void) {
    PyObject *m = PyModule_Create(&module);
    if (m != NULL && PyModule_AddIntConstant(m, "REVISION", SPEEDUPS_REVISION) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
