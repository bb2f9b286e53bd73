/*
 * Runs of plain v2 batch headers for kdump's C accelerators: one walk, its consumers in _speedups.c
 * (batch_lines: Kafka's shallow lines; header_run: the one header pass of verify and report) and in _digests.c
 * (batch_headers: diff's headers).  The framing follows kdump.storage.file_records.FileRecords.batches (Kafka's
 * FileLogInputStream.nextBatch) for the batches it can take without Python; every other batch is left to it.
 *
 * Each consumer takes the arguments (source, pos, end, stop, crc_function, ...): batch_walk_from_args reads them.
 * The source is a buffer (a segment's bytes, positions as in the file) or a file descriptor (an int), read with
 * pread: then no page of the file is mapped (a header pass that reads 61 bytes a batch maps none, where each fault
 * of a map maps 64 KiB), and the batches' bodies, when a CRC is checked, are read into a window reused from batch
 * to batch and from call to call.  batch_walk_next frames the batch at the walk's position: it is at least 0 and
 * before ``stop``, its 61-byte v2 header can be read, the size field is 49 (a whole header) to BIG_BATCH, the
 * magic is 2 and the batch ends at or before ``end`` (clamped to a buffer).  Each consumer adds its own conditions
 * (a known codec, a valid CRC, ...) and calls batch_walk_take to move past the batch; where the walk stops (also
 * where a file descriptor's read comes back short: the file ends sooner or shrank), the caller's Python framing
 * goes on, and reads and reports that batch as for any other.
 */
#ifndef KDUMP_BATCH_WALK_H
#define KDUMP_BATCH_WALK_H

#include <Python.h>
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

/* record_batch._CHECKSUM_PIECE: a bigger batch's CRC is summed in pieces by Python */
#define BIG_BATCH (8 << 20)

static inline int64_t be64(const unsigned char *b)
{
    uint64_t v = 0;
    for (int k = 0; k < 8; k++)
        v = (v << 8) | b[k];
    return (int64_t)v;
}

static inline int32_t be32(const unsigned char *b)
{
    return (int32_t)(((uint32_t)b[0] << 24) | ((uint32_t)b[1] << 16) | ((uint32_t)b[2] << 8) | (uint32_t)b[3]);
}

static inline int16_t be16(const unsigned char *b) { return (int16_t)(((uint16_t)b[0] << 8) | (uint16_t)b[1]); }

/* A v2 batch header (DefaultRecordBatch's fields), ``h`` pointing at its first byte in memory (the buffer, or the
   walk's window: valid until the walk reads again). */
typedef struct {
    const unsigned char *h;
    Py_ssize_t position, size; /* in the file; bytes, LOG_OVERHEAD included */
    int64_t base_offset, base_timestamp, max_timestamp, producer_id;
    int32_t leader_epoch, last_offset_delta, base_sequence, records_count;
    uint32_t crc;
    int16_t attributes, producer_epoch;
} BatchHead;

typedef struct {
    const unsigned char *b; /* the bytes read: the buffer, or the window */
    Py_ssize_t base, have;  /* b[0] is the file's byte ``base``; ``have`` bytes are there */
    Py_ssize_t pos, end, stop;
    int fd;                 /* -1: a buffer */
    int bodies;             /* the consumer reads whole batches (a CRC): reads of WALK_WINDOW bytes */
    Py_ssize_t last_size;   /* the previous batch's size: how far to read ahead for headers alone (-1: none yet) */
    Py_buffer view;
    int has_view;
    unsigned char *window; /* an fd walk's bytes: walk_window, or its own when that one is in use */
    Py_ssize_t capacity;
    int owns_window;
} BatchWalk;

/* An fd walk that reads bodies reads this much at a time; a batch crossing the window's end is read again whole. */
#define WALK_WINDOW (1 << 20)
/* Headers alone after a batch smaller than this are read WALK_HEADERS_AHEAD bytes at a time (many headers in
   one read); after a bigger one, 61 bytes (a read ahead would rarely hold the next header). */
#define WALK_SMALL_BATCH 2048
#define WALK_HEADERS_AHEAD (64 << 10)

/* The window of this module's fd walks (one at a time under the GIL; a walk that finds it in use makes its own):
   a fresh allocation per call would fault its pages in each time. */
static unsigned char *walk_window = NULL;
static Py_ssize_t walk_window_capacity = 0;
static int walk_window_busy = 0;

/* The walk of args (source, pos, end, stop, crc_function, ...) of ``name`` (which takes ``expected`` of them):
   0 with ``w`` ready (to be closed by batch_walk_close) and *crc_function set; -1 with an exception set.  A
   crc_function of None (no CRC checked) is taken only when ``crc_optional``; an fd walk then reads headers alone. */
static int batch_walk_from_args(const char *name, PyObject *const *args, Py_ssize_t nargs, Py_ssize_t expected,
                                int crc_optional, BatchWalk *w, PyObject **crc_function)
{
    if (nargs != expected) {
        PyErr_Format(PyExc_TypeError, "%s takes %zd arguments", name, expected);
        return -1;
    }
    Py_ssize_t pos = PyLong_AsSsize_t(args[1]);
    Py_ssize_t end = PyLong_AsSsize_t(args[2]);
    Py_ssize_t stop = PyLong_AsSsize_t(args[3]);
    if (PyErr_Occurred())
        return -1;
    *crc_function = args[4];
    if (*crc_function == Py_None && !crc_optional) {
        PyErr_Format(PyExc_TypeError, "%s: a CRC function is required", name);
        return -1;
    }
    memset(w, 0, sizeof *w);
    w->fd = -1;
    w->last_size = -1;
    w->pos = pos;
    w->end = end;
    w->stop = stop;
    w->bodies = *crc_function != Py_None;
    if (PyLong_Check(args[0])) {
        long fd = PyLong_AsLong(args[0]);
        if (fd == -1 && PyErr_Occurred())
            return -1;
        if (fd < 0 || fd > INT32_MAX) {
            PyErr_Format(PyExc_ValueError, "%s: bad file descriptor %ld", name, fd);
            return -1;
        }
        w->fd = (int)fd;
        return 0;
    }
    if (PyObject_GetBuffer(args[0], &w->view, PyBUF_SIMPLE) < 0)
        return -1;
    w->has_view = 1;
    w->b = (const unsigned char *)w->view.buf;
    w->have = w->view.len;
    if (w->end > w->view.len)
        w->end = w->view.len;
    return 0;
}

static void batch_walk_close(BatchWalk *w)
{
    if (w->has_view) {
        PyBuffer_Release(&w->view);
        w->has_view = 0;
    }
    if (w->owns_window)
        PyMem_Free(w->window);
    else if (w->window != NULL)
        walk_window_busy = 0;
    w->window = NULL;
    w->owns_window = 0;
    w->b = NULL;
    w->have = 0;
}

/* An fd walk's window of at least ``size`` bytes: 0, or -1 with MemoryError set. */
static int walk_reserve(BatchWalk *w, Py_ssize_t size)
{
    if (w->window != NULL && w->capacity >= size)
        return 0;
    if (w->window == NULL && walk_window_busy) { /* another walk holds the module's window: one of its own */
        w->window = PyMem_Malloc((size_t)size);
        if (w->window == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        w->owns_window = 1;
        w->capacity = size;
        return 0;
    }
    if (w->owns_window) {
        unsigned char *bigger = PyMem_Realloc(w->window, (size_t)size);
        if (bigger == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        w->window = bigger;
        w->capacity = size;
        return 0;
    }
    if (walk_window_capacity < size) { /* the module's window, grown (nothing in it is kept: it is read anew) */
        unsigned char *bigger = PyMem_Realloc(walk_window, (size_t)size);
        if (bigger == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        walk_window = bigger;
        walk_window_capacity = size;
    }
    walk_window_busy = 1;
    w->window = walk_window;
    w->capacity = walk_window_capacity;
    return 0;
}

/* The file's bytes [pos, pos + n), reading ``want`` (at least n) from ``pos`` when they are not in memory yet: a
   pointer into the buffer or the window, valid until the walk reads again.  NULL when they cannot all be had (a
   buffer that ends sooner; a file that ends sooner or shrank, or a failed read: the walk stops there, and the
   caller's framing reads that batch and reports what it finds), or with MemoryError set. */
static const unsigned char *walk_bytes(BatchWalk *w, Py_ssize_t pos, Py_ssize_t n, Py_ssize_t want)
{
    if (pos >= w->base && n <= w->have - (pos - w->base))
        return w->b + (pos - w->base);
    if (w->fd < 0)
        return NULL;
    if (want < n)
        want = n;
    w->b = NULL;
    w->have = 0;
    if (walk_reserve(w, want) < 0)
        return NULL;
    Py_ssize_t got = 0;
    while (got < want) {
        ssize_t r = pread(w->fd, w->window + got, (size_t)(want - got), (off_t)(pos + got));
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        got += r;
    }
    w->b = w->window;
    w->base = pos;
    w->have = got;
    return got >= n ? w->b : NULL;
}

/* 1 and ``head`` filled when the batch at the walk's position is framed as above; 0 otherwise (then perhaps with
   MemoryError set: the caller looks at PyErr_Occurred). */
static inline int batch_walk_next(BatchWalk *w, BatchHead *head)
{
    Py_ssize_t pos = w->pos;
    if (pos < 0 || pos >= w->stop || w->end - pos < 61)
        return 0;
    Py_ssize_t ahead = w->bodies                                           ? WALK_WINDOW
                       : w->last_size >= 0 && w->last_size < WALK_SMALL_BATCH ? WALK_HEADERS_AHEAD
                                                                               : 61;
    const unsigned char *h = walk_bytes(w, pos, 61, ahead);
    if (h == NULL)
        return 0;
    int32_t length = be32(h + 8);
    if (length < 49 || length > BIG_BATCH || h[16] != 2 || (Py_ssize_t)length > w->end - pos - 12)
        return 0;
    head->h = h;
    head->position = pos;
    head->size = 12 + (Py_ssize_t)length;
    head->base_offset = be64(h);
    head->leader_epoch = be32(h + 12);
    head->crc = (uint32_t)be32(h + 17);
    head->attributes = be16(h + 21);
    head->last_offset_delta = be32(h + 23);
    head->base_timestamp = be64(h + 27);
    head->max_timestamp = be64(h + 35);
    head->producer_id = be64(h + 43);
    head->producer_epoch = be16(h + 51);
    head->base_sequence = be32(h + 53);
    head->records_count = be32(h + 57);
    return 1;
}

/* The whole batch of ``head`` in memory, ``head->h`` moved to it: 1; 0 when it cannot be read (the walk stops
   there; perhaps with MemoryError set).  A buffer walk has it already. */
static inline int batch_walk_body(BatchWalk *w, BatchHead *head)
{
    Py_ssize_t want = head->size > WALK_WINDOW ? head->size : WALK_WINDOW;
    const unsigned char *h = walk_bytes(w, head->position, head->size, want);
    if (h == NULL)
        return 0;
    head->h = h;
    return 1;
}

static inline void batch_walk_take(BatchWalk *w, const BatchHead *head)
{
    w->pos += head->size;
    w->last_size = head->size;
}

/* The batch's CRC-32C (of its bytes from the attributes on, which must be in memory: batch_walk_body) through
   ``crc_function`` (kdump.storage.checksum.crc32c, called on a memoryview of them) into *computed, to compare
   with ``(unsigned long)head->crc``; -1 with an exception set. */
static inline int batch_crc(PyObject *crc_function, const BatchHead *head, unsigned long *computed)
{
    PyObject *piece = PyMemoryView_FromMemory((char *)head->h + 21, head->size - 21, PyBUF_READ);
    if (piece == NULL)
        return -1;
    PyObject *sum = PyObject_CallOneArg(crc_function, piece);
    Py_DECREF(piece);
    if (sum == NULL)
        return -1;
    unsigned long value = PyLong_AsUnsignedLong(sum);
    Py_DECREF(sum);
    if (value == (unsigned long)-1 && PyErr_Occurred())
        return -1;
    *computed = value;
    return 0;
}

#endif
