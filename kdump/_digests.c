/*
 * kdump._digests: an optional accelerator for kdump retention's key census and cleaning prediction
 * (kdump.analysis.digest_map).  Keys are held as Kafka's log cleaner holds them: by their 16-byte MD5 digest
 * (SkimpyOffsetMap, hashAlgorithm "MD5": two keys of one digest are one key), in a table of 24-byte slots (a
 * digest and a 64-bit value; a slot of 24 zero bytes is empty, as SkimpyOffsetMap.isEmpty) held in a
 * bytearray the caller sizes.  Slots are found by linear probing from the digest's first 8 bytes (Kafka probes
 * otherwise; which slot holds a digest changes no answer).
 *
 * key_digests(buf, pos, end, count, base_offset, digests) -> bytes | None
 *     The ``count`` v2 records of buf[pos:end] as 25-byte entries: the key's MD5 digest (zeros without a key,
 *     or when ``digests`` is false),
 *     the record's offset (int64, little-endian) and a flags byte (1: it has a key, 2: its value is null).
 *     None whenever anything is unusual (a malformed field, bytes left over, an offset out of range): the
 *     caller then decodes the records in Python, which reports the error as every walk does.
 * table_put(table, entries, size, limit, mode, min_offset) -> (entries used, size)
 *     Puts each keyed entry of offset >= min_offset: value = its offset (mode 0) or 2 | tombstone (mode 1);
 *     stops before a keyed entry when ``size`` (the table's entries) has reached ``limit`` (Kafka's
 *     buildOffsetMapForSegment: ``map.size < maxDesiredMapSize`` before every put).
 * table_judge(table, entries, latest_offset, keep_tombstones) -> (kept, tombstones kept, superseded,
 *     tombstones removed, without key): Cleaner.shouldRetainRecord for each entry of a data batch against the
 *     offsets of mode 0 (``keep_tombstones``: whether the batch's tombstones are still kept).
 * table_count(table, clear) -> (entries, values with bit 0 set), and the table emptied when ``clear``
 * batch_headers(buf, pos, end, stop, crc32c, header_type, path) -> (headers, new position) | None: kdump diff's
 *     batch headers of a run of plain v2 batches (below).
 * table_drain(table, buckets, level) -> list of bytes
 *     The table's entries (mode 1's value as the flags: 1 | tombstone << 1) spread over ``buckets`` lists by
 *     the digest's byte 8 + level, and the table emptied.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "_batch_walk.h"
#include "_varint.h"
#include <stdint.h>
#include <string.h>

#define ENTRY 25
#define SLOT 24

/* ---- MD5 (RFC 1321) ----------------------------------------------------------------------------------- */

static const uint32_t md5_k[64] = {
    0xd76aa478, 0xe8c7b756, 0x242070db, 0xc1bdceee, 0xf57c0faf, 0x4787c62a, 0xa8304613, 0xfd469501,
    0x698098d8, 0x8b44f7af, 0xffff5bb1, 0x895cd7be, 0x6b901122, 0xfd987193, 0xa679438e, 0x49b40821,
    0xf61e2562, 0xc040b340, 0x265e5a51, 0xe9b6c7aa, 0xd62f105d, 0x02441453, 0xd8a1e681, 0xe7d3fbc8,
    0x21e1cde6, 0xc33707d6, 0xf4d50d87, 0x455a14ed, 0xa9e3e905, 0xfcefa3f8, 0x676f02d9, 0x8d2a4c8a,
    0xfffa3942, 0x8771f681, 0x6d9d6122, 0xfde5380c, 0xa4beea44, 0x4bdecfa9, 0xf6bb4b60, 0xbebfbc70,
    0x289b7ec6, 0xeaa127fa, 0xd4ef3085, 0x04881d05, 0xd9d4d039, 0xe6db99e5, 0x1fa27cf8, 0xc4ac5665,
    0xf4292244, 0x432aff97, 0xab9423a7, 0xfc93a039, 0x655b59c3, 0x8f0ccc92, 0xffeff47d, 0x85845dd1,
    0x6fa87e4f, 0xfe2ce6e0, 0xa3014314, 0x4e0811a1, 0xf7537e82, 0xbd3af235, 0x2ad7d2bb, 0xeb86d391};
#define MD5_STEP(f, a, b, c, d, x, k, r)                                                                   \
    a += f(b, c, d) + (x) + (k);                                                                           \
    a = (a << r | a >> (32 - r)) + b;
#define MD5_F(b, c, d) ((d) ^ ((b) & ((c) ^ (d))))
#define MD5_G(b, c, d) ((c) ^ ((d) & ((b) ^ (c))))
#define MD5_H(b, c, d) ((b) ^ (c) ^ (d))
#define MD5_I(b, c, d) ((c) ^ ((b) | ~(d)))

static void md5_block(uint32_t h[4], const unsigned char *p)
{
    uint32_t m[16];
    for (int i = 0; i < 16; i++)
        m[i] = (uint32_t)p[4 * i] | (uint32_t)p[4 * i + 1] << 8 | (uint32_t)p[4 * i + 2] << 16
               | (uint32_t)p[4 * i + 3] << 24;
    uint32_t a = h[0], b = h[1], c = h[2], d = h[3];
    for (int i = 0; i < 16; i += 4) {
        MD5_STEP(MD5_F, a, b, c, d, m[i], md5_k[i], 7)
        MD5_STEP(MD5_F, d, a, b, c, m[i + 1], md5_k[i + 1], 12)
        MD5_STEP(MD5_F, c, d, a, b, m[i + 2], md5_k[i + 2], 17)
        MD5_STEP(MD5_F, b, c, d, a, m[i + 3], md5_k[i + 3], 22)
    }
    for (int i = 16; i < 32; i += 4) {
        MD5_STEP(MD5_G, a, b, c, d, m[(5 * i + 1) & 15], md5_k[i], 5)
        MD5_STEP(MD5_G, d, a, b, c, m[(5 * i + 6) & 15], md5_k[i + 1], 9)
        MD5_STEP(MD5_G, c, d, a, b, m[(5 * i + 11) & 15], md5_k[i + 2], 14)
        MD5_STEP(MD5_G, b, c, d, a, m[(5 * i + 16) & 15], md5_k[i + 3], 20)
    }
    for (int i = 32; i < 48; i += 4) {
        MD5_STEP(MD5_H, a, b, c, d, m[(3 * i + 5) & 15], md5_k[i], 4)
        MD5_STEP(MD5_H, d, a, b, c, m[(3 * i + 8) & 15], md5_k[i + 1], 11)
        MD5_STEP(MD5_H, c, d, a, b, m[(3 * i + 11) & 15], md5_k[i + 2], 16)
        MD5_STEP(MD5_H, b, c, d, a, m[(3 * i + 14) & 15], md5_k[i + 3], 23)
    }
    for (int i = 48; i < 64; i += 4) {
        MD5_STEP(MD5_I, a, b, c, d, m[(7 * i) & 15], md5_k[i], 6)
        MD5_STEP(MD5_I, d, a, b, c, m[(7 * i + 7) & 15], md5_k[i + 1], 10)
        MD5_STEP(MD5_I, c, d, a, b, m[(7 * i + 14) & 15], md5_k[i + 2], 15)
        MD5_STEP(MD5_I, b, c, d, a, m[(7 * i + 21) & 15], md5_k[i + 3], 21)
    }
    h[0] += a;
    h[1] += b;
    h[2] += c;
    h[3] += d;
}

static void md5(const unsigned char *data, size_t n, unsigned char out[16])
{
    uint32_t h[4] = {0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476};
    size_t whole = n & ~(size_t)63;
    for (size_t i = 0; i < whole; i += 64)
        md5_block(h, data + i);
    unsigned char tail[128];
    size_t rest = n - whole;
    memcpy(tail, data + whole, rest);
    tail[rest] = 0x80;
    size_t padded = rest + 1 + 8 <= 64 ? 64 : 128;
    memset(tail + rest + 1, 0, padded - rest - 1);
    uint64_t bits = (uint64_t)n * 8;
    for (int i = 0; i < 8; i++)
        tail[padded - 8 + i] = (unsigned char)(bits >> (8 * i));
    md5_block(h, tail);
    if (padded == 128)
        md5_block(h, tail + 64);
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++)
            out[4 * i + j] = (unsigned char)(h[i] >> (8 * j));
}

/* Little-endian loads and stores (memcpy: any alignment; one instruction on x86 and ARM). */
static uint64_t le64(const unsigned char *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    v = __builtin_bswap64(v);
#endif
    return v;
}

static void put_le64(unsigned char *p, uint64_t v)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    v = __builtin_bswap64(v);
#endif
    memcpy(p, &v, 8);
}

static int empty_slot(const unsigned char *s)
{
    uint64_t a, b, c;
    memcpy(&a, s, 8);
    memcpy(&b, s + 8, 8);
    memcpy(&c, s + 16, 8);
    return (a | b | c) == 0;
}

static int same_digest(const unsigned char *s, const unsigned char *d)
{
    uint64_t a, b, x, y;
    memcpy(&a, s, 8);
    memcpy(&b, s + 8, 8);
    memcpy(&x, d, 8);
    memcpy(&y, d + 8, 8);
    return a == x && b == y;
}

/* ---- v2 records ---------------------------------------------------------------------------------------- */

/* Skips a zigzag varlong of at most 10 bytes; 0 on any problem. */
static int skip_varlong(const unsigned char *b, Py_ssize_t *pos, Py_ssize_t limit)
{
    for (int n = 0; n < 10; n++) {
        if (*pos >= limit)
            return 0;
        if (b[(*pos)++] < 0x80)
            return 1;
    }
    return 0;
}

/* A length field followed by that many bytes (none for a negative one); 0 when they run past ``limit``. */
static int field(const unsigned char *b, Py_ssize_t *pos, Py_ssize_t limit, int64_t *size)
{
    if (!read_varint(b, pos, limit, size))
        return 0;
    if (*size < 0)
        return 1;
    if (*size > limit - *pos)
        return 0;
    *pos += (Py_ssize_t)*size;
    return 1;
}

static PyObject *key_digests(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 6) {
        PyErr_SetString(PyExc_TypeError, "key_digests takes 6 arguments");
        return NULL;
    }
    int digests = PyObject_IsTrue(args[5]);
    if (digests < 0)
        return NULL;
    Py_ssize_t pos = PyLong_AsSsize_t(args[1]);
    Py_ssize_t end = PyLong_AsSsize_t(args[2]);
    Py_ssize_t count = PyLong_AsSsize_t(args[3]);
    int overflow = 0;
    long long base_offset = PyLong_AsLongLongAndOverflow(args[4], &overflow);
    if (PyErr_Occurred())
        return NULL;
    if (overflow || count < 0 || pos < 0 || end < pos || count > end - pos) /* a record takes bytes */
        Py_RETURN_NONE;
    Py_buffer view;
    if (PyObject_GetBuffer(args[0], &view, PyBUF_SIMPLE) < 0)
        return NULL;
    if (end > view.len) {
        PyBuffer_Release(&view);
        Py_RETURN_NONE;
    }
    PyObject *out = PyBytes_FromStringAndSize(NULL, count * ENTRY);
    if (out == NULL) {
        PyBuffer_Release(&view);
        return NULL;
    }
    unsigned char *o = (unsigned char *)PyBytes_AS_STRING(out);
    const unsigned char *b = (const unsigned char *)view.buf;
    int ok = 1;
    for (Py_ssize_t i = 0; i < count; i++) {
        int64_t size, offset_delta, key_size, value_size, header_count, h_size;
        ok = 0;
        if (!read_varint(b, &pos, end, &size) || size <= 0 || size > end - pos)
            break;
        Py_ssize_t body_end = pos + (Py_ssize_t)size;
        pos++; /* attributes */
        if (!skip_varlong(b, &pos, body_end) || !read_varint(b, &pos, body_end, &offset_delta))
            break;
        Py_ssize_t key_at = pos;
        if (!field(b, &pos, body_end, &key_size) || key_size < -1)
            break;
        key_at = pos - (key_size > 0 ? (Py_ssize_t)key_size : 0);
        if (!field(b, &pos, body_end, &value_size) || value_size < -1)
            break;
        if (!read_varint(b, &pos, body_end, &header_count) || header_count < 0 || header_count > body_end - pos)
            break;
        int64_t hh;
        for (hh = 0; hh < header_count; hh++) {
            if (!field(b, &pos, body_end, &h_size) || h_size < 0 || !field(b, &pos, body_end, &h_size)
                || h_size < -1)
                break;
        }
        if (hh < header_count || pos != body_end)
            break;
        long long offset;
        if (__builtin_add_overflow(base_offset, (long long)offset_delta, &offset))
            break;
        if (key_size >= 0 && digests)
            md5(b + key_at, (size_t)key_size, o);
        else
            memset(o, 0, 16);
        put_le64(o + 16, (uint64_t)offset);
        o[24] = (unsigned char)((key_size >= 0 ? 1 : 0) | (value_size < 0 ? 2 : 0));
        o += ENTRY;
        ok = 1;
    }
    PyBuffer_Release(&view);
    if (!ok || pos != end) {
        Py_DECREF(out);
        Py_RETURN_NONE;
    }
    return out;
}

/* ---- the table ----------------------------------------------------------------------------------------- */

/* The slot holding ``digest``, or the empty slot where it would go (the table is never full: callers keep
   its size below its slots). */
static unsigned char *find(unsigned char *t, Py_ssize_t slots, const unsigned char *digest)
{
    Py_ssize_t i = (Py_ssize_t)(le64(digest) % (uint64_t)slots);
    for (;;) {
        unsigned char *s = t + i * SLOT;
        if (same_digest(s, digest) || empty_slot(s))
            return s;
        if (++i == slots)
            i = 0;
    }
}

/* Asks for the first slot of each keyed entry's digest ahead of the probes (a table of megabytes is out of the
   caches: the misses overlap instead of coming one after another). */
static void prefetch(const unsigned char *t, Py_ssize_t slots, const unsigned char *e, Py_ssize_t n)
{
#if defined(__GNUC__)
    for (Py_ssize_t i = 0; i < n; i++, e += ENTRY)
        if (e[24] & 1)
            __builtin_prefetch(t + (Py_ssize_t)(le64(e) % (uint64_t)slots) * SLOT);
#endif
}

static int table_of(PyObject *o, Py_buffer *view, Py_ssize_t *slots)
{
    if (PyObject_GetBuffer(o, view, PyBUF_WRITABLE) < 0)
        return 0;
    *slots = view->len / SLOT;
    if (*slots < 2) {
        PyBuffer_Release(view);
        PyErr_SetString(PyExc_ValueError, "a table needs at least 2 slots");
        return 0;
    }
    return 1;
}

static PyObject *table_put(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 6) {
        PyErr_SetString(PyExc_TypeError, "table_put takes 6 arguments");
        return NULL;
    }
    Py_ssize_t size = PyLong_AsSsize_t(args[2]);
    Py_ssize_t limit = PyLong_AsSsize_t(args[3]);
    long mode = PyLong_AsLong(args[4]);
    long long min_offset = PyLong_AsLongLong(args[5]);
    if (PyErr_Occurred())
        return NULL;
    Py_buffer tv, ev;
    Py_ssize_t slots;
    if (!table_of(args[0], &tv, &slots))
        return NULL;
    if (PyObject_GetBuffer(args[1], &ev, PyBUF_SIMPLE) < 0) {
        PyBuffer_Release(&tv);
        return NULL;
    }
    if (limit > slots - 1)
        limit = slots - 1;
    unsigned char *t = (unsigned char *)tv.buf;
    const unsigned char *e = (const unsigned char *)ev.buf;
    Py_ssize_t n = ev.len / ENTRY, i;
    prefetch(t, slots, e, n);
    for (i = 0; i < n; i++, e += ENTRY) {
        if (!(e[24] & 1) || (long long)le64(e + 16) < min_offset)
            continue;
        if (size >= limit)
            break;
        unsigned char *s = find(t, slots, e);
        uint64_t value = mode == 0 ? le64(e + 16) : (uint64_t)(2 | (e[24] >> 1 & 1));
        if (empty_slot(s)) {
            memcpy(s, e, 16);
            size++;
        }
        put_le64(s + 16, value);
    }
    PyBuffer_Release(&ev);
    PyBuffer_Release(&tv);
    return Py_BuildValue("(nn)", i, size);
}

static PyObject *table_judge(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 4) {
        PyErr_SetString(PyExc_TypeError, "table_judge takes 4 arguments");
        return NULL;
    }
    long long latest = PyLong_AsLongLong(args[2]);
    int keep_tombs = PyObject_IsTrue(args[3]);
    if (PyErr_Occurred())
        return NULL;
    Py_buffer tv, ev;
    Py_ssize_t slots;
    if (!table_of(args[0], &tv, &slots))
        return NULL;
    if (PyObject_GetBuffer(args[1], &ev, PyBUF_SIMPLE) < 0) {
        PyBuffer_Release(&tv);
        return NULL;
    }
    unsigned char *t = (unsigned char *)tv.buf;
    const unsigned char *e = (const unsigned char *)ev.buf;
    Py_ssize_t n = ev.len / ENTRY;
    prefetch(t, slots, e, n);
    long long kept = 0, tombs_kept = 0, superseded = 0, tombs_removed = 0, without_key = 0;
    for (Py_ssize_t i = 0; i < n; i++, e += ENTRY) {
        long long offset = (long long)le64(e + 16);
        int keyed = e[24] & 1, tomb = e[24] & 2;
        if (offset > latest) {
            kept++;
            tombs_kept += keyed && tomb;
            continue;
        }
        if (!keyed) {
            without_key++;
            continue;
        }
        unsigned char *s = find(t, slots, e);
        long long mapped = empty_slot(s) ? -1 : (long long)le64(s + 16);
        if (offset < mapped) {
            superseded++;
            continue;
        }
        if (tomb) {
            if (!keep_tombs) {
                tombs_removed++;
                continue;
            }
            tombs_kept++;
        }
        kept++;
    }
    PyBuffer_Release(&ev);
    PyBuffer_Release(&tv);
    return Py_BuildValue("(LLLLL)", kept, tombs_kept, superseded, tombs_removed, without_key);
}

static PyObject *table_count(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "table_count takes 2 arguments");
        return NULL;
    }
    int clear = PyObject_IsTrue(args[1]);
    if (clear < 0)
        return NULL;
    Py_buffer tv;
    Py_ssize_t slots;
    if (!table_of(args[0], &tv, &slots))
        return NULL;
    const unsigned char *t = (const unsigned char *)tv.buf;
    long long entries = 0, odd = 0;
    for (Py_ssize_t i = 0; i < slots; i++, t += SLOT)
        if (!empty_slot(t)) {
            entries++;
            odd += t[16] & 1;
        }
    if (clear)
        memset(tv.buf, 0, (size_t)slots * SLOT);
    PyBuffer_Release(&tv);
    return Py_BuildValue("(LL)", entries, odd);
}

static PyObject *table_drain(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "table_drain takes 3 arguments");
        return NULL;
    }
    Py_ssize_t buckets = PyLong_AsSsize_t(args[1]);
    Py_ssize_t level = PyLong_AsSsize_t(args[2]);
    if (PyErr_Occurred())
        return NULL;
    if (buckets < 1 || buckets > 256 || level < 0 || level > 7) {
        PyErr_SetString(PyExc_ValueError, "1 to 256 buckets, level 0 to 7");
        return NULL;
    }
    Py_buffer tv;
    Py_ssize_t slots;
    if (!table_of(args[0], &tv, &slots))
        return NULL;
    unsigned char *t = (unsigned char *)tv.buf;
    Py_ssize_t counts[256] = {0};
    for (Py_ssize_t i = 0; i < slots; i++)
        if (!empty_slot(t + i * SLOT))
            counts[t[i * SLOT + 8 + level] % buckets]++;
    PyObject *list = PyList_New(buckets);
    unsigned char *at[256];
    for (Py_ssize_t k = 0; list != NULL && k < buckets; k++) {
        PyObject *b = PyBytes_FromStringAndSize(NULL, counts[k] * ENTRY);
        if (b == NULL) {
            Py_CLEAR(list);
            break;
        }
        at[k] = (unsigned char *)PyBytes_AS_STRING(b);
        PyList_SET_ITEM(list, k, b);
    }
    if (list != NULL) {
        for (Py_ssize_t i = 0; i < slots; i++) {
            unsigned char *s = t + i * SLOT;
            if (empty_slot(s))
                continue;
            unsigned char *o = at[s[8 + level] % buckets];
            memcpy(o, s, SLOT);
            o[24] = (unsigned char)(1 | (s[16] & 1) << 1);
            at[s[8 + level] % buckets] = o + ENTRY;
        }
        memset(t, 0, (size_t)slots * SLOT);
    }
    PyBuffer_Release(&tv);
    return list;
}

/* ---- batch_headers: runs of plain v2 batch headers (kdump diff) ------------------------------------------- */

/*
 * batch_headers(buf, pos, end, stop, crc32c, header_type, path) -> ([header_type(base offset, last offset, leader
 *     epoch, crc, record count, path, position, valid)], new position) | None
 *
 * The headers of the run of v2 batches that starts at ``pos``, as kdump.commands.diff reads them from each
 * RecordBatch (``valid``: Kafka's isValid, the stored CRC-32C equal to crc32c(bytes from the attributes on)):
 * batches are taken while one starts before ``stop`` and is plain -- magic 2, a size field of at least 49 (a
 * whole header), wholly before ``end``, at most BIG_BATCH bytes.  The first batch that is not plain is left to
 * the caller's framing (FileRecords.batches), which reports its errors; None when the first already is.
 */
static PyObject *batch_headers(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    BatchWalk walk;
    PyObject *crc_function;
    if (batch_walk_from_args("batch_headers", args, nargs, 7, 0, &walk, &crc_function) < 0)
        return NULL;
    PyObject *header_type = args[5], *path = args[6];
    Py_ssize_t pos;
    PyObject *list = PyList_New(0);
    if (list == NULL) {
        batch_walk_close(&walk);
        return NULL;
    }
    BatchHead head;
    while (batch_walk_next(&walk, &head)) {
        int64_t base_offset = head.base_offset;
        int64_t last_offset = (int64_t)((uint64_t)base_offset + (uint64_t)(int64_t)head.last_offset_delta); /* Java long */
        uint32_t crc = head.crc;
        unsigned long computed;
        if (!batch_walk_body(&walk, &head)) {
            if (PyErr_Occurred())
                goto fail;
            break;
        }
        if (batch_crc(crc_function, &head, &computed) < 0)
            goto fail;
        PyObject *fields[8];
        fields[0] = PyLong_FromLongLong((long long)base_offset);
        fields[1] = PyLong_FromLongLong((long long)last_offset);
        fields[2] = PyLong_FromLong((long)head.leader_epoch);
        fields[3] = PyLong_FromUnsignedLong((unsigned long)crc);
        fields[4] = PyLong_FromLong((long)head.records_count);
        fields[5] = path;
        fields[6] = PyLong_FromSsize_t(head.position);
        fields[7] = computed == crc ? Py_True : Py_False;
        PyObject *t = NULL;
        if (fields[0] && fields[1] && fields[2] && fields[3] && fields[4] && fields[6])
            t = PyObject_Vectorcall(header_type, fields, 8, NULL);
        for (int k = 0; k < 7; k++)
            if (k != 5)
                Py_XDECREF(fields[k]);
        if (t == NULL)
            goto fail;
        int appended = PyList_Append(list, t);
        Py_DECREF(t);
        if (appended < 0)
            goto fail;
        batch_walk_take(&walk, &head);
    }
    pos = walk.pos;
    batch_walk_close(&walk);
    if (PyErr_Occurred()) { /* a MemoryError of the walk's window */
        Py_DECREF(list);
        return NULL;
    }
    if (PyList_GET_SIZE(list) == 0) {
        Py_DECREF(list);
        Py_RETURN_NONE;
    }
    PyObject *result = Py_BuildValue("(Nn)", list, pos);
    return result;
fail:
    batch_walk_close(&walk);
    Py_DECREF(list);
    return NULL;
}

static PyMethodDef methods[] = {
    {"key_digests", (PyCFunction)(void (*)(void))key_digests, METH_FASTCALL,
     "The records of a v2 batch as (MD5 of the key, offset, flags) entries; None when Python must decide."},
    {"table_put", (PyCFunction)(void (*)(void))table_put, METH_FASTCALL,
     "Put keyed entries into a digest table: (entries used, size)."},
    {"table_judge", (PyCFunction)(void (*)(void))table_judge, METH_FASTCALL,
     "Cleaner.shouldRetainRecord over entries: (kept, tombstones kept, superseded, tombstones removed, no key)."},
    {"table_count", (PyCFunction)(void (*)(void))table_count, METH_FASTCALL,
     "(entries, entries whose value has bit 0 set), the table emptied when asked."},
    {"table_drain", (PyCFunction)(void (*)(void))table_drain, METH_FASTCALL,
     "The table's entries by bucket of the digest's byte 8 + level, and the table emptied."},
    {"batch_headers", (PyCFunction)(void (*)(void))batch_headers, METH_FASTCALL,
     "The headers of a run of plain v2 batches: ([header_type(...)], end), or None."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "kdump._digests", NULL, -1, methods};

/* Bumped with every change of behaviour: kdump ignores a build whose REVISION differs (a stale build). */
#define REVISION 3

PyMODINIT_FUNC PyInit__digests(void)
{
    PyObject *m = PyModule_Create(&module);
    if (m != NULL && PyModule_AddIntConstant(m, "REVISION", REVISION) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
