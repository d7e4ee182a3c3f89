/*
 * v2 records sections into Arrow buffers: the compiled twin of _v2_to_arrow() in
 * broker_lite/records/arrow/decode.py, with the record walk and field checks of
 * broker_lite/records/arrow/fields.py. Those are the reference; this file follows them.
 *
 * A records section is a chain of records (every integer a zigzag varint, see varint.h):
 *
 *     length          varint    bytes after this field
 *     attributes      int8      unused
 *     timestampDelta  varlong   from the batch's baseTimestamp
 *     offsetDelta     varint    from the batch's baseOffset
 *     keyLength       varint    -1: null key
 *     key             keyLength bytes
 *     valueLength     varint    -1: null value
 *     value           valueLength bytes
 *     headerCount     varint
 *     headers         headerCount x (keyLength varint >= 0, key, valueLength varint, value)
 *
 * decode_v2() walks every record of every section once, checking all that the reference
 * checks, and writes the columns as it goes: the fixed-width ones (offset, timestamp,
 * timestampType), and each key and value copied into the contiguous buffers of Arrow's binary
 * layout (validity bitmap, int32 offsets, data), whose room is bounded by the sections' size.
 * Header entries, whose number is known only at the end, are gathered as spans and copied
 * after the walk.
 *
 * It does not explain faults: on any (a record past its section, a bad varint, a length
 * below -1, a timestamp Spark cannot hold, a column past 2 GiB) it returns None, and the
 * caller decodes the same bytes with the reference, which raises the error. So both paths
 * name every fault the same way, and this one need only accept exactly what the reference
 * accepts, which the tests check on random and corrupt batches.
 */
#include "codec.h"
#include "varint.h"

#include <string.h>

/* Spark holds timestamps as int64 microseconds: the milliseconds it can represent. */
#define MAX_TIMESTAMP_MS (INT64_MAX / 1000)
/* A record takes at least a byte for each of its seven varint/int8 fields up to headerCount. */
#define MIN_RECORD_BYTES 7
/* A header takes at least its key length and value length varints. */
#define MIN_HEADER_BYTES 2

const char kpy_decode_v2_doc[] =
    "decode_v2(data, regions, include_headers, allocate) -> dict | None\n\n"
    "The records sections of v2 batches in ``data`` as Arrow buffers. ``regions`` holds one\n"
    "tuple per batch: (start, end, recordCount, baseOffset, baseTimestamp, maxTimestamp,\n"
    "timestampType), in ``data``, or in ``data[i]`` for region i where ``data`` is a list of\n"
    "buffers (decompressed sections, not joined); ``allocate(size)`` returns a writable,\n"
    "resizable buffer (a resizable pyarrow.Buffer). None where any record is malformed: the\n"
    "reference decoder then reports it. See broker_lite/records/arrow/decode.py.";

/* One batch's records section and what its records take from its header. */
typedef struct {
    const uint8_t *data;    /* the buffer the section lies in */
    int64_t start;          /* where the section starts in data */
    int64_t end;            /* where it ends (exclusive) */
    int64_t count;          /* recordCount */
    int64_t base_offset;    /* baseOffset: plus offsetDelta, each record's offset */
    int64_t base_timestamp; /* baseTimestamp: plus timestampDelta, each CreateTime timestamp */
    int64_t max_timestamp;  /* maxTimestamp: every record's timestamp under LogAppendTime */
    int timestamp_type;     /* 0 CreateTime, 1 LogAppendTime */
} region;

/* Where the values of one binary column lie (the header keys, or their values), gathered
 * during the walk and copied after it, while the buffers are still held. */
typedef struct {
    const uint8_t **at; /* where each value starts */
    int32_t *length;  /* its length, -1 for null */
    int64_t count;    /* values so far */
    int64_t capacity; /* values at and length have room for */
    int64_t bytes;    /* total length of the non-null values */
    int64_t nulls;    /* values of length -1 */
} spans;

static int spans_init(spans *s, int64_t capacity)
{
    memset(s, 0, sizeof *s);
    s->capacity = capacity > 0 ? capacity : 1;
    s->at = PyMem_RawMalloc((size_t)s->capacity * sizeof *s->at);
    s->length = PyMem_RawMalloc((size_t)s->capacity * sizeof *s->length);
    if (s->at == NULL || s->length == NULL) {
        PyErr_NoMemory();
        return 0;
    }
    return 1;
}

static void spans_free(spans *s)
{
    PyMem_RawFree((void *)s->at);
    PyMem_RawFree(s->length);
}

/* Room for one more value (header entries, whose number is not known up front). */
static int spans_reserve(spans *s)
{
    if (s->count < s->capacity)
        return 1;
    int64_t capacity = s->capacity * 2;
    const uint8_t **at = PyMem_RawRealloc(s->at, (size_t)capacity * sizeof *at);
    if (at == NULL)
        return 0;
    s->at = at;
    int32_t *length = PyMem_RawRealloc(s->length, (size_t)capacity * sizeof *length);
    if (length == NULL)
        return 0;
    s->length = length;
    s->capacity = capacity;
    return 1;
}

/* Record a value; 0 where the column would pass the 2 GiB that Arrow's int32 offsets reach
 * (the reference fails there too, in Arrow's cast). */
static inline int spans_add(spans *s, const uint8_t *at, int64_t length)
{
    s->at[s->count] = at;
    s->length[s->count] = (int32_t)length; /* -1 .. INT32_MAX: a varint field */
    s->count++;
    if (s->count > INT32_MAX) /* a list column's int32 offsets */
        return 0;
    if (length < 0) {
        s->nulls++;
        return 1;
    }
    s->bytes += length;
    return s->bytes <= INT32_MAX;
}

/* An output buffer from the caller's allocator (Arrow's memory pool, which keeps freed memory
 * for the next batch rather than returning it to the system and faulting it in again), held
 * writable while it is filled. */
typedef struct {
    PyObject *object; /* what allocate(size) returned: a resizable pyarrow.Buffer */
    Py_buffer view;   /* its bytes, writable; view.obj NULL once released */
} out_buffer;

static void *out_new(out_buffer *b, PyObject *allocate, Py_ssize_t size)
{
    b->object = PyObject_CallFunction(allocate, "n", size);
    if (b->object == NULL)
        return NULL;
    if (PyObject_GetBuffer(b->object, &b->view, PyBUF_WRITABLE) < 0) {
        Py_CLEAR(b->object);
        return NULL;
    }
    if (b->view.len < size) {
        PyBuffer_Release(&b->view);
        Py_CLEAR(b->object);
        PyErr_SetString(PyExc_ValueError, "the allocator gave a buffer smaller than asked");
        return NULL;
    }
    return b->view.buf;
}

static void out_release(out_buffer *b)
{
    if (b->view.obj != NULL)
        PyBuffer_Release(&b->view);
}

static void out_free(out_buffer *b)
{
    out_release(b);
    Py_CLEAR(b->object);
}

/* The buffer, its view released, cut to size bytes (resize(size)); a new reference. */
static PyObject *out_finish(out_buffer *b, Py_ssize_t size)
{
    out_release(b);
    if (size >= 0) {
        PyObject *done = PyObject_CallMethod(b->object, "resize", "n", size);
        if (done == NULL)
            return NULL;
        Py_DECREF(done);
    }
    Py_INCREF(b->object);
    return b->object;
}

/* The Arrow buffers of the column: (validity or None, null count, offsets, data). */
static PyObject *spans_to_arrow(const spans *s, PyObject *allocate)
{
    out_buffer validity_out = {0}, offsets_out = {0}, data_out = {0};
    PyObject *result = NULL;
    uint8_t *validity = NULL;
    if (s->nulls) {
        validity = out_new(&validity_out, allocate, kpy_bitmap_bytes(s->count));
        if (validity == NULL)
            goto done;
        memset(validity, 0, (size_t)kpy_bitmap_bytes(s->count));
    }
    int32_t *offsets = out_new(&offsets_out, allocate,
                               (Py_ssize_t)((s->count + 1) * sizeof(int32_t)));
    uint8_t *values = offsets ? out_new(&data_out, allocate, (Py_ssize_t)s->bytes) : NULL;
    if (values == NULL)
        goto done;
    Py_BEGIN_ALLOW_THREADS
    int32_t position = 0;
    offsets[0] = 0;
    for (int64_t i = 0; i < s->count; i++) {
        int32_t length = s->length[i];
        if (length > 0) {
            memcpy(values + position, s->at[i], (size_t)length);
            position += length;
        }
        if (validity != NULL && length >= 0)
            validity[i >> 3] |= (uint8_t)(1u << (i & 7));
        offsets[i + 1] = position;
    }
    Py_END_ALLOW_THREADS
    result = Py_BuildValue("(NLNN)", validity ? out_finish(&validity_out, -1) : Py_NewRef(Py_None),
                           (long long)s->nulls, out_finish(&offsets_out, -1),
                           out_finish(&data_out, -1));
done:
    out_free(&validity_out);
    out_free(&offsets_out);
    out_free(&data_out);
    return result;
}

/* One binary column (a record's key or value) written as the records are read: the value
 * bytes go straight to their place, while the record is in cache. */
typedef struct {
    out_buffer validity; /* one bit per record, set where not null; dropped when none is */
    out_buffer offsets;  /* int32, n + 1: where each value starts in data */
    out_buffer data;     /* room for capacity bytes, cut to what was written */
    uint8_t *bits, *out; /* validity's and data's bytes */
    int32_t *offset;     /* offsets' */
    int64_t capacity;    /* no records section holds more value bytes than this */
    int64_t written;     /* bytes written so far */
    int64_t nulls;       /* null values so far */
} column_writer;

static int writer_init(column_writer *w, int64_t n, int64_t room, PyObject *allocate)
{
    memset(w, 0, sizeof *w);
    /* Arrow's int32 offsets reach 2 GiB: a column that would pass them fails as the
     * reference's does (in Arrow's cast), so no more room is needed */
    w->capacity = room < INT32_MAX ? room : INT32_MAX;
    w->bits = out_new(&w->validity, allocate, kpy_bitmap_bytes(n));
    w->offset = w->bits ? out_new(&w->offsets, allocate,
                                  (Py_ssize_t)((n + 1) * sizeof(int32_t))) : NULL;
    w->out = w->offset ? out_new(&w->data, allocate, (Py_ssize_t)w->capacity) : NULL;
    if (w->out == NULL)
        return 0;
    memset(w->bits, 0xFF, (size_t)kpy_bitmap_bytes(n)); /* valid until found null */
    if (n & 7) /* the bits past the last record are 0, as Arrow writes them */
        w->bits[n >> 3] = (uint8_t)((1u << (n & 7)) - 1);
    w->offset[0] = 0;
    return 1;
}

static void writer_free(column_writer *w)
{
    out_free(&w->validity);
    out_free(&w->offsets);
    out_free(&w->data);
}

/* Set value i (length -1: null); 0 where the column would pass its room. */
static inline int writer_add(column_writer *w, int64_t i, const uint8_t *source, int64_t length)
{
    if (length < 0) {
        w->nulls++;
        w->bits[i >> 3] &= (uint8_t)~(1u << (i & 7));
    } else {
        if (length > w->capacity - w->written)
            return 0;
        memcpy(w->out + w->written, source, (size_t)length);
        w->written += length;
    }
    w->offset[i + 1] = (int32_t)w->written;
    return 1;
}

/* The column's buffers, (validity or None, null count, offsets, data), the data cut to what
 * was written. */
static PyObject *writer_to_arrow(column_writer *w)
{
    PyObject *data = out_finish(&w->data, (Py_ssize_t)w->written);
    if (data == NULL)
        return NULL;
    return Py_BuildValue("(NLNN)", w->nulls ? out_finish(&w->validity, -1) : Py_NewRef(Py_None),
                         (long long)w->nulls, out_finish(&w->offsets, -1), data);
}

/* Everything the walk writes and gathers. */
typedef struct {
    int64_t n;               /* records in all regions */
    /* The fixed-width columns, written in place in the buffers that Arrow will wrap. */
    out_buffer offset_out, timestamp_out, timestamp_type_out;
    int64_t *offset;         /* per record: baseOffset + offsetDelta */
    int64_t *timestamp_us;   /* per record: its timestamp in microseconds */
    int32_t *timestamp_type; /* per record: its batch's timestampType */
    PyObject *allocate;      /* the caller's allocator: allocate(size) -> writable buffer */
    column_writer keys, values;
    int include_headers;
    int32_t *header_counts;  /* per record, when include_headers */
    spans header_keys, header_values; /* per header entry, when include_headers */
} columns;

/* The headers of one record, from *pos (its headerCount) to its end; as _headers() of
 * decode.py checks them. */
static int read_headers(const uint8_t *data, int64_t *pos, int64_t end, columns *c,
                        int64_t record)
{
    int64_t count, p = *pos;
    if (!kpy_read_varint(data, &p, end, &count) || count < 0)
        return 0;
    if (count * MIN_HEADER_BYTES > end - p) /* bounds what is gathered below */
        return 0;
    c->header_counts[record] = (int32_t)count;
    for (int64_t h = 0; h < count; h++) {
        int64_t key_length, value_length;
        if (!kpy_read_varint(data, &p, end, &key_length) || key_length < 0)
            return 0; /* a null header key is refused */
        int64_t key_at = p;
        p += key_length;
        if (!kpy_read_varint(data, &p, end, &value_length) || value_length < -1)
            return 0;
        int64_t value_at = p;
        p += value_length > 0 ? value_length : 0;
        if (p > end)
            return 0;
        if (!spans_reserve(&c->header_keys) || !spans_reserve(&c->header_values))
            return -1;
        if (!spans_add(&c->header_keys, data + key_at, key_length) ||
            !spans_add(&c->header_values, data + value_at, value_length))
            return 0;
    }
    *pos = p;
    return p == end; /* the fields must fill the record's declared length */
}

/* The pass over one region's records: 1 when every record is well formed, 0 when one is not,
 * -1 with an exception set (out of memory). */
static int read_region(const region *r, columns *c, int64_t *record)
{
    const uint8_t *data = r->data;
    /* The writers and columns are worked on in locals: the value copies (memcpy) could write
     * anywhere the compiler cannot rule out, so fields reached through c would be read again
     * after each. */
    column_writer keys = c->keys, values = c->values;
    int64_t *offsets = c->offset, *timestamps_us = c->timestamp_us;
    int32_t *timestamp_types = c->timestamp_type;
    const int64_t base_offset = r->base_offset, base_timestamp = r->base_timestamp;
    const int log_append_time = r->timestamp_type == 1;
    int64_t p = r->start, i = *record;
    int well_formed = 0;
    for (int64_t k = 0; k < r->count; k++, i++) {
        int64_t length, timestamp_delta, offset_delta, key_length, value_length;
        /* walk(): the length prefix, and the record inside its section */
        if (!kpy_read_varint(data, &p, r->end, &length) || length < 0 || length > r->end - p)
            goto out;
        int64_t end = p + length;
        p++; /* attributes: unused; the reads below check that the byte was there */
        /* _fields_one_by_one(): each field inside the record */
        if (!kpy_read_varlong(data, &p, end, &timestamp_delta) ||
            !kpy_read_varint(data, &p, end, &offset_delta) ||
            !kpy_read_varint(data, &p, end, &key_length) || key_length < -1)
            goto out;
        int64_t key_at = p;
        p += key_length > 0 ? key_length : 0;
        if (!kpy_read_varint(data, &p, end, &value_length) || value_length < -1)
            goto out;
        int64_t value_at = p;
        p += value_length > 0 ? value_length : 0;
        if (p >= end) /* the value overruns the record or leaves no header count */
            goto out;
        if (!writer_add(&keys, i, data + key_at, key_length) ||
            !writer_add(&values, i, data + value_at, value_length))
            goto out;
        if (c->include_headers) {
            int headers = read_headers(data, &p, end, c, i);
            if (headers <= 0) {
                well_formed = headers;
                goto out;
            }
        }
        /* _v2_to_arrow(): the offset wraps as numpy's int64 sum does */
        offsets[i] = (int64_t)((uint64_t)base_offset + (uint64_t)offset_delta);
        /* _timestamps(): LogAppendTime takes the batch's maxTimestamp; a sum that overflows,
         * or a timestamp beyond Spark's range, is refused */
        int64_t timestamp;
        if (log_append_time)
            timestamp = r->max_timestamp;
        else if (__builtin_add_overflow(base_timestamp, timestamp_delta, &timestamp))
            goto out;
        if (timestamp > MAX_TIMESTAMP_MS || timestamp < -MAX_TIMESTAMP_MS)
            goto out;
        timestamps_us[i] = timestamp * 1000;
        timestamp_types[i] = r->timestamp_type;
        p = end;
    }
    well_formed = p == r->end; /* check_sections_filled(): the records fill the section */
out:
    c->keys = keys;
    c->values = values;
    *record = i;
    return well_formed;
}

/* The regions argument, as given: its bounds are checked by place_regions(). */
static region *parse_regions(PyObject *sequence, Py_ssize_t *count)
{
    PyObject *fast = PySequence_Fast(sequence, "regions must be a sequence");
    if (fast == NULL)
        return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
    region *regions = PyMem_RawMalloc((size_t)(n > 0 ? n : 1) * sizeof *regions);
    if (regions == NULL) {
        Py_DECREF(fast);
        PyErr_NoMemory();
        return NULL;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        region *r = &regions[i];
        long long start, end, count, base_offset, base_timestamp, max_timestamp;
        int timestamp_type;
        if (!PyArg_ParseTuple(PySequence_Fast_GET_ITEM(fast, i), "LLLLLLi", &start, &end,
                              &count, &base_offset, &base_timestamp, &max_timestamp,
                              &timestamp_type)) {
            Py_DECREF(fast);
            PyMem_RawFree(regions);
            return NULL;
        }
        *r = (region){NULL, start, end, count, base_offset, base_timestamp, max_timestamp,
                      timestamp_type};
    }
    Py_DECREF(fast);
    *count = n;
    return regions;
}

/* The buffers the regions lie in: data itself for all, or data[i] for region i. */
typedef struct {
    Py_buffer *views;
    Py_ssize_t held; /* views taken, released by buffers_release() */
} buffers;

static void buffers_release(buffers *b)
{
    for (Py_ssize_t i = 0; i < b->held; i++)
        PyBuffer_Release(&b->views[i]);
    PyMem_RawFree(b->views);
}

static int buffers_hold(PyObject *data, Py_ssize_t region_count, buffers *b)
{
    int one = PyObject_CheckBuffer(data);
    PyObject *fast = one ? NULL : PySequence_Fast(data, "data must be a buffer or a list of them");
    if (!one && fast == NULL)
        return 0;
    Py_ssize_t n = one ? 1 : PySequence_Fast_GET_SIZE(fast);
    if (!one && n != region_count) {
        PyErr_Format(PyExc_ValueError, "%zd buffers for %zd regions", n, region_count);
        Py_DECREF(fast);
        return 0;
    }
    b->views = PyMem_RawMalloc((size_t)(n > 0 ? n : 1) * sizeof *b->views);
    if (b->views == NULL) {
        Py_XDECREF(fast);
        PyErr_NoMemory();
        return 0;
    }
    for (; b->held < n; b->held++) {
        PyObject *item = one ? data : PySequence_Fast_GET_ITEM(fast, b->held);
        if (PyObject_GetBuffer(item, &b->views[b->held], PyBUF_SIMPLE) < 0) {
            Py_XDECREF(fast);
            return 0;
        }
    }
    Py_XDECREF(fast);
    return 1;
}

/* Check each region against the bounds of its buffer and point it there; count the records
 * and bound the bytes their keys and values can take. */
static int place_regions(region *regions, Py_ssize_t n, const buffers *b, int64_t *records,
                         int64_t *room, int *plausible)
{
    *records = 0;
    *room = 0;
    *plausible = 1;
    for (Py_ssize_t i = 0; i < n; i++) {
        region *r = &regions[i];
        const Py_buffer *view = &b->views[b->held == 1 ? 0 : i];
        if (r->start < 0 || r->end < r->start || r->end > view->len) {
            PyErr_Format(PyExc_ValueError, "region %zd [%lld, %lld) lies outside the buffer",
                         i, (long long)r->start, (long long)r->end);
            return 0;
        }
        r->data = view->buf;
        /* A negative count, or more records than the section has room for, is corrupt: the
         * reference raises, and nothing is allocated for such a count. */
        if (r->count < 0 || r->count > (r->end - r->start) / MIN_RECORD_BYTES)
            *plausible = 0;
        else {
            *records += r->count;
            /* a record's key and value take at most its size less its seven other fields */
            *room += (r->end - r->start) - r->count * MIN_RECORD_BYTES;
        }
    }
    return 1;
}

static void columns_free(columns *c)
{
    out_free(&c->offset_out);
    out_free(&c->timestamp_out);
    out_free(&c->timestamp_type_out);
    PyMem_RawFree(c->header_counts);
    writer_free(&c->keys);
    writer_free(&c->values);
    spans_free(&c->header_keys);
    spans_free(&c->header_values);
}

/* The headers column's buffers: (list validity or None, its null count, list offsets,
 * keys, values), keys and values as spans_to_arrow() gives them. */
static PyObject *headers_to_arrow(const columns *c)
{
    out_buffer validity_out = {0}, offsets_out = {0};
    PyObject *result = NULL, *keys = NULL, *values = NULL;
    int64_t empty = 0;
    uint8_t *validity = out_new(&validity_out, c->allocate, kpy_bitmap_bytes(c->n));
    int32_t *offsets = validity ? out_new(&offsets_out, c->allocate,
                                          (Py_ssize_t)((c->n + 1) * sizeof(int32_t))) : NULL;
    if (offsets == NULL)
        goto done;
    memset(validity, 0, (size_t)kpy_bitmap_bytes(c->n));
    offsets[0] = 0;
    for (int64_t i = 0; i < c->n; i++) {
        int32_t count = c->header_counts[i];
        offsets[i + 1] = offsets[i] + count;
        if (count) /* a record without headers has null headers, as in Spark */
            validity[i >> 3] |= (uint8_t)(1u << (i & 7));
        else
            empty++;
    }
    keys = spans_to_arrow(&c->header_keys, c->allocate);
    values = keys ? spans_to_arrow(&c->header_values, c->allocate) : NULL;
    if (values != NULL)
        result = Py_BuildValue("(NLNOO)", out_finish(&validity_out, -1), (long long)empty,
                               out_finish(&offsets_out, -1), keys, values);
done:
    Py_XDECREF(keys);
    Py_XDECREF(values);
    out_free(&validity_out);
    out_free(&offsets_out);
    return result;
}

static PyObject *columns_to_dict(columns *c)
{
    PyObject *headers = Py_None;
    Py_INCREF(Py_None);
    if (c->include_headers) {
        Py_DECREF(Py_None);
        headers = headers_to_arrow(c);
        if (headers == NULL)
            return NULL;
    }
    return Py_BuildValue(
        "{s:L,s:N,s:N,s:N,s:N,s:N,s:N}", "records", (long long)c->n,
        "offset", out_finish(&c->offset_out, -1), "timestamp", out_finish(&c->timestamp_out, -1),
        "timestamp_type", out_finish(&c->timestamp_type_out, -1),
        "key", writer_to_arrow(&c->keys),
        "value", writer_to_arrow(&c->values),
        "headers", headers);
}

PyObject *kpy_decode_v2(PyObject *module, PyObject *args)
{
    PyObject *data_arg, *regions_arg, *allocate, *result = NULL;
    int include_headers;
    (void)module;
    if (!PyArg_ParseTuple(args, "OOpO", &data_arg, &regions_arg, &include_headers, &allocate))
        return NULL;
    Py_ssize_t region_count;
    region *regions = parse_regions(regions_arg, &region_count);
    if (regions == NULL)
        return NULL;
    buffers held = {0};
    int64_t n, room;
    int plausible;
    columns c = {.include_headers = include_headers, .allocate = allocate};
    if (!buffers_hold(data_arg, region_count, &held) ||
        !place_regions(regions, region_count, &held, &n, &room, &plausible))
        goto done;
    if (!plausible) {
        result = Py_NewRef(Py_None);
        goto done;
    }
    c.n = n;
    c.offset = out_new(&c.offset_out, allocate, (Py_ssize_t)(n * sizeof(int64_t)));
    c.timestamp_us = c.offset ? out_new(&c.timestamp_out, allocate,
                                        (Py_ssize_t)(n * sizeof(int64_t))) : NULL;
    c.timestamp_type = c.timestamp_us ? out_new(&c.timestamp_type_out, allocate,
                                                (Py_ssize_t)(n * sizeof(int32_t))) : NULL;
    int ok = c.timestamp_type && writer_init(&c.keys, n, room, allocate) &&
             writer_init(&c.values, n, room, allocate);
    if (ok && include_headers) {
        c.header_counts = PyMem_RawMalloc((size_t)(n > 0 ? n : 1) * sizeof *c.header_counts);
        ok = c.header_counts && spans_init(&c.header_keys, n) && spans_init(&c.header_values, n);
    }
    if (!ok) {
        if (!PyErr_Occurred())
            PyErr_NoMemory();
        goto done;
    }
    int64_t record = 0;
    int well_formed = 1;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = 0; i < region_count && well_formed == 1; i++)
        well_formed = read_region(&regions[i], &c, &record);
    Py_END_ALLOW_THREADS
    if (well_formed < 0) {
        PyErr_NoMemory();
        goto done;
    }
    if (!well_formed) {
        result = Py_NewRef(Py_None);
        goto done;
    }
    result = columns_to_dict(&c);
done:
    columns_free(&c);
    buffers_release(&held);
    PyMem_RawFree(regions);
    return result;
}
