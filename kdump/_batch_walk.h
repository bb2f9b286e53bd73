/*
 * Runs of plain v2 batch headers for kdump's C accelerators: one walk, its consumers in _speedups.c
 * (batch_lines: Kafka's shallow lines; header_run: the one header pass of verify and report) and in _digests.c
 * (batch_headers: diff's headers).  The framing follows kdump.storage.file_records.FileRecords.batches (Kafka's
 * FileLogInputStream.nextBatch) for the batches it can take without Python; every other batch is left to it.
 *
 * A walk reads ``buf`` (a segment's bytes, positions as in the file) from ``pos``.  batch_walk_next frames the
 * batch at the walk's position: it is at least 0 and before ``stop``, the 61-byte v2 header is in the buffer, the
 * size field is 49 (a whole header) to BIG_BATCH, the magic is 2 and the batch ends at or before ``end``
 * (clamped to the buffer).  Each consumer adds its own conditions (a known codec, a valid CRC, ...) and calls
 * batch_walk_take to move past the batch; where the walk stops, the caller's Python framing goes on.
 */
#ifndef KDUMP_BATCH_WALK_H
#define KDUMP_BATCH_WALK_H

#include <Python.h>
#include <stdint.h>

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

/* A v2 batch header (DefaultRecordBatch's fields), ``h`` pointing at its first byte in the buffer. */
typedef struct {
    const unsigned char *h;
    Py_ssize_t position, size; /* in the buffer; bytes, LOG_OVERHEAD included */
    int64_t base_offset, base_timestamp, max_timestamp, producer_id;
    int32_t leader_epoch, last_offset_delta, base_sequence, records_count;
    uint32_t crc;
    int16_t attributes, producer_epoch;
} BatchHead;

typedef struct {
    const unsigned char *b;
    Py_ssize_t pos, end, stop;
} BatchWalk;

/* A walk of ``view`` from ``pos``: batches starting before ``stop`` and ending by ``end`` (clamped to the buffer). */
static inline void batch_walk_init(BatchWalk *w, const Py_buffer *view, Py_ssize_t pos, Py_ssize_t end,
                                   Py_ssize_t stop)
{
    w->b = (const unsigned char *)view->buf;
    w->pos = pos;
    w->end = end > view->len ? view->len : end;
    w->stop = stop;
}

/* 1 and ``head`` filled when the batch at the walk's position is framed as above; 0 otherwise. */
static inline int batch_walk_next(const BatchWalk *w, BatchHead *head)
{
    Py_ssize_t pos = w->pos;
    if (pos < 0 || pos >= w->stop || w->end - pos < 61)
        return 0;
    const unsigned char *h = w->b + pos;
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

static inline void batch_walk_take(BatchWalk *w, const BatchHead *head) { w->pos += head->size; }

/* The batch's CRC-32C (of its bytes from the attributes on) through ``crc_function``
   (kdump.storage.checksum.crc32c, called on a memoryview of them) into *computed, to compare with
   ``(unsigned long)head->crc``; -1 with an exception set. */
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
