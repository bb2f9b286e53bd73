/*
 * Kafka's zigzag varints (ByteUtils.readVarint, readVarlong) for kdump's C accelerators (_speedups.c, _columns.c,
 * _digests.c): one definition, included by each.  Each reads at b[*pos] without passing ``limit``, moves *pos past
 * what it read and returns 1, or returns 0 on any problem (the caller then leaves the bytes to the pure-Python
 * decoder, which says what is wrong).
 */
#ifndef KDUMP_VARINT_H
#define KDUMP_VARINT_H

#include <Python.h>
#include <stdint.h>

/* Zigzag varint of at most 5 bytes, 32 bits kept (Kafka's ByteUtils.readVarint); 0 on any problem. */
static inline int read_varint(const unsigned char *b, Py_ssize_t *pos, Py_ssize_t limit, int64_t *out)
{
    if (*pos < limit && b[*pos] < 0x80) {  /* one byte: most lengths, deltas and counts */
        unsigned v = b[(*pos)++];
        *out = (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
        return 1;
    }
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

/* Zigzag varlong of at most 10 bytes, 64 bits kept (ByteUtils.readVarlong); 0 on any problem. */
static inline int read_varlong(const unsigned char *b, Py_ssize_t *pos, Py_ssize_t limit, int64_t *out)
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

#endif
