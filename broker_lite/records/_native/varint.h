/*
 * Zigzag varints of v2 records, read within a bound.
 *
 * The reference is broker_lite/records/varint.py (and the vectorized varints() of
 * broker_lite/records/arrow/fields.py, whose acceptance this follows exactly): seven bits per
 * byte, least significant group first, the high bit set while another byte follows; a "varint"
 * (int32 field) takes at most 5 bytes and its value must fit in 32 bits, a "varlong" (int64
 * field) at most 10 bytes, bits past the 64th dropped. Signed values are zigzag-mapped:
 * 0 -> 0, -1 -> 1, 1 -> 2, ...
 *
 * Every reader takes the position to read at and the limit it must stay below, and returns 0
 * (reading nothing past the limit) where the varint runs past it or is too long.
 */
#ifndef KPY_VARINT_H
#define KPY_VARINT_H

#include <stdint.h>

#define KPY_VARINT_BYTES 5   /* int32 fields */
#define KPY_VARLONG_BYTES 10 /* int64 fields */

/* The unsigned varint of at most max_bytes at data[*pos], below limit; *pos moves past it. */
static inline int kpy_read_uvarint(const uint8_t *data, int64_t *pos, int64_t limit,
                                   int max_bytes, uint64_t *out)
{
    int64_t p = *pos;
    if (p >= limit)
        return 0;
    uint8_t byte = data[p++];
    if (byte < 0x80) { /* one byte: most lengths and deltas */
        *pos = p;
        *out = byte;
        return 1;
    }
    uint64_t value = byte & 0x7F;
    for (int i = 1; i < max_bytes; i++) {
        if (p >= limit)
            return 0;
        byte = data[p++];
        value |= (uint64_t)(byte & 0x7F) << (7 * i); /* at most 63: defined for uint64 */
        if (byte < 0x80) {
            *pos = p;
            *out = value;
            return 1;
        }
    }
    return 0; /* a continuation bit on the last byte the field allows */
}

static inline int64_t kpy_unzigzag(uint64_t raw)
{
    return (int64_t)(raw >> 1) ^ -(int64_t)(raw & 1);
}

/* A signed int32 field (varint). */
static inline int kpy_read_varint(const uint8_t *data, int64_t *pos, int64_t limit, int64_t *out)
{
    uint64_t raw;
    if (!kpy_read_uvarint(data, pos, limit, KPY_VARINT_BYTES, &raw) || (raw >> 32) != 0)
        return 0;
    *out = kpy_unzigzag(raw);
    return 1;
}

/* A signed int64 field (varlong). */
static inline int kpy_read_varlong(const uint8_t *data, int64_t *pos, int64_t limit, int64_t *out)
{
    uint64_t raw;
    if (!kpy_read_uvarint(data, pos, limit, KPY_VARLONG_BYTES, &raw))
        return 0;
    *out = kpy_unzigzag(raw);
    return 1;
}

/* Bytes the zigzag varint of value takes (1 to 10). */
static inline int kpy_varint_size(int64_t value)
{
    uint64_t raw = ((uint64_t)value << 1) ^ (uint64_t)(value >> 63);
    int size = 1;
    while (raw >= 0x80) {
        raw >>= 7;
        size++;
    }
    return size;
}

/* Write the zigzag varint of value at out; return the bytes written. */
static inline int kpy_write_varint(uint8_t *out, int64_t value)
{
    uint64_t raw = ((uint64_t)value << 1) ^ (uint64_t)(value >> 63);
    int size = 0;
    while (raw >= 0x80) {
        out[size++] = (uint8_t)(raw | 0x80);
        raw >>= 7;
    }
    out[size++] = (uint8_t)raw;
    return size;
}

#endif
