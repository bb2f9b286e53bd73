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

#define INT32_MAX_ 2147483647LL

/* A record with more headers than this is left to the Python decoder, which keeps them encoded
   (kdump.storage.record.LazyHeaders, MAX_EAGER_HEADERS) instead of building one object per header. */
#define MAX_EAGER_HEADERS 4096

/* A key or value this big is left to the Python decoder, which hands it out as a view of the segment
   (kdump.storage.record_batch.MAX_EAGER_BYTES) instead of a copy. */
#define MAX_EAGER_BYTES (1 << 20)

/* Zigzag varint of at most 5 bytes, 32 bits kept (Kafka's ByteUtils.readVarint); 0 on any problem. */
static int read_varint(const unsigned char *b, Py_ssize_t *pos, Py_ssize_t limit, int64_t *out)
{
    uint64_t value = 0;
    int shift = 0;
    for (;;) {
        if (*pos >= limit)
            return 0;
        unsigned char c = b[(*pos)++];
        value |= (uint64_t)(c & 0x7F) << shift;
        if (c < 0x80)
            break;
        shift += 7;
        if (shift > 28)
            return 0;
    }
    uint32_t v = (uint32_t)(value & 0xFFFFFFFFu);
    *out = (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
    return 1;
}

/* Zigzag varlong of at most 10 bytes, 64 bits kept; 0 on any problem. */
static int read_varlong(const unsigned char *b, Py_ssize_t *pos, Py_ssize_t limit, int64_t *out)
{
    uint64_t value = 0;
    int shift = 0;
    for (;;) {
        if (*pos >= limit)
            return 0;
        unsigned char c = b[(*pos)++];
        if (shift < 64)
            value |= (uint64_t)(c & 0x7F) << shift;
        if (c < 0x80)
            break;
        shift += 7;
        if (shift > 63)
            return 0;
    }
    *out = (int64_t)(value >> 1) ^ -(int64_t)(value & 1);
    return 1;
}

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

static int64_t be64(const unsigned char *b) {
    uint64_t v = 0;
    for (int k = 0; k < 8; k++)
        v = (v << 8) | b[k];
    return (int64_t)v;
}
static int32_t be32(const unsigned char *b) {
    return (int32_t)(((uint32_t)b[0] << 24) | ((uint32_t)b[1] << 16) | ((uint32_t)b[2] << 8) | (uint32_t)b[3]);
}
static int16_t be16(const unsigned char *b) { return (int16_t)(((uint16_t)b[0] << 8) | (uint16_t)b[1]); }

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
#define BIG_BATCH (8 << 20) /* record_batch._CHECKSUM_PIECE: a bigger batch's CRC is summed in pieces by Python */

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
    if (nargs != 5) {
        PyErr_SetString(PyExc_TypeError, "batch_lines takes 5 arguments");
        return NULL;
    }
    Py_ssize_t pos = PyLong_AsSsize_t(args[1]);
    Py_ssize_t end = PyLong_AsSsize_t(args[2]);
    Py_ssize_t stop = PyLong_AsSsize_t(args[3]);
    PyObject *crc_function = args[4];
    if (PyErr_Occurred())
        return NULL;
    Py_buffer view;
    if (PyObject_GetBuffer(args[0], &view, PyBUF_SIMPLE) < 0)
        return NULL;
    if (end > view.len)
        end = view.len;
    const unsigned char *b = (const unsigned char *)view.buf;
    Py_ssize_t start = pos;
    size_t capacity = 1 << 16, used = 0;
    char *text = PyMem_Malloc(capacity);
    if (text == NULL) {
        PyBuffer_Release(&view);
        return PyErr_NoMemory();
    }
    int failed = 0;
    while (pos >= 0 && pos < stop && end - pos >= 61) {
        const unsigned char *h = b + pos;
        int32_t length = be32(h + 8);
        if (length < 49 || length > BIG_BATCH || h[16] != 2 || (Py_ssize_t)length > end - pos - 12)
            break;
        int16_t attributes = be16(h + 21);
        int codec = attributes & 0x07;
        if (codec > 4)
            break;
        int64_t base_offset = be64(h);
        int32_t leader_epoch = be32(h + 12);
        uint32_t crc = (uint32_t)be32(h + 17);
        int32_t last_offset_delta = be32(h + 23);
        int64_t base_timestamp = be64(h + 27);
        int64_t max_timestamp = be64(h + 35);
        int64_t producer_id = be64(h + 43);
        int16_t producer_epoch = be16(h + 51);
        int32_t base_sequence = be32(h + 53);
        int32_t records_count = be32(h + 57);
        Py_ssize_t size_in_bytes = 12 + (Py_ssize_t)length;

        PyObject *piece = PyMemoryView_FromMemory((char *)h + 21, size_in_bytes - 21, PyBUF_READ);
        if (piece == NULL) {
            failed = 1;
            break;
        }
        PyObject *sum = PyObject_CallOneArg(crc_function, piece);
        Py_DECREF(piece);
        if (sum == NULL) {
            failed = 1;
            break;
        }
        unsigned long computed = PyLong_AsUnsignedLong(sum);
        Py_DECREF(sum);
        if (computed == (unsigned long)-1 && PyErr_Occurred()) {
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
        o = put_i64(o, pos);
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
        pos += size_in_bytes;
    }
    PyBuffer_Release(&view);
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

static PyMethodDef methods[] = {
    {"read_records", (PyCFunction)(void (*)(void))read_records, METH_FASTCALL,
     "Decode v2 records into Record objects; None when the pure-Python decoder must decide."},
    {"batch_lines", (PyCFunction)(void (*)(void))batch_lines, METH_FASTCALL,
     "Kafka's shallow lines for a run of plain v2 batches: (text, next position), or None."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "kdump._speedups", NULL, -1, methods};

/* Bumped with every change of behaviour: kdump ignores a build whose REVISION differs (a stale build). */
#define SPEEDUPS_REVISION 5

PyMODINIT_FUNC PyInit__speedups(void) {
    PyObject *m = PyModule_Create(&module);
    if (m != NULL && PyModule_AddIntConstant(m, "REVISION", SPEEDUPS_REVISION) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
