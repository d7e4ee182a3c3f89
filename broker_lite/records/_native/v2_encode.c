/*
 * Arrow columns into a v2 records section: the compiled twin of arrow_to_batch() in
 * broker_lite/records/arrow/encode.py, which is the reference. The batch header, compression
 * and CRC stay with assemble_batch() (broker_lite/records/record_batch.py).
 *
 * Record i is written as Kafka's DefaultRecord writes it (every integer a zigzag varint):
 *
 *     length          varint    bytes after this field
 *     attributes      int8      0
 *     timestampDelta  varlong   timestamp[i] - baseTimestamp
 *     offsetDelta     varint    i
 *     keyLength       varint    -1: null key
 *     key             keyLength bytes
 *     valueLength     varint    -1: null value
 *     value           valueLength bytes
 *     headers         headerCount varint and the headers, as the reference encoded them
 *                     (the header column); one 0 byte (no headers) without it
 *
 * One pass sizes every record, the second writes them into one bytearray, after headroom bytes
 * left unset: the caller writes the batch header there, so the batch is never copied whole
 * (assemble_batch(header_room=True)). The records are byte for byte the reference's (the tests
 * compare them).
 *
 * record_sizes() is the compiled twin of broker_lite/records/arrow/sizes.py: the size of each
 * row's record before any is encoded, which a producer cuts batches by.
 */
#include "codec.h"
#include "varint.h"

#include <string.h>

const char kpy_encode_v2_doc[] =
    "encode_v2(n, key, value, timestamps, base_timestamp, headers, headroom) -> bytearray\n\n"
    "headroom unset bytes, then the records section of n records. key, value and headers are\n"
    "binary columns as (validity or None, offsets, data, array offset), or None (key: every\n"
    "key null; headers: none); timestamps the int64 milliseconds of each row. See\n"
    "broker_lite/records/arrow/encode.py.";

const char kpy_record_sizes_doc[] =
    "record_sizes(out, key, value, timestamp_spans, header_bytes)\n\n"
    "Write into out (int64, one per row) each row's record size: key and value binary\n"
    "columns as encode_v2 takes them (key None: every key null); timestamp_spans (int64 per\n"
    "row, or None: all 0) bound each timestamp delta; header_bytes (int64 per row, or None:\n"
    "1 each) are the headers' bytes. See broker_lite/records/arrow/sizes.py.";

/* One Arrow binary column (validity bitmap, int32 offsets, data), as buffers. */
typedef struct {
    Py_buffer validity; /* validity.obj NULL: no nulls */
    Py_buffer offsets;
    Py_buffer data;
    int64_t first;      /* the array's offset into its buffers */
    int present;        /* 0: the column was None */
} binary_column;

static void column_release(binary_column *c)
{
    if (c->validity.obj != NULL)
        PyBuffer_Release(&c->validity);
    if (c->offsets.obj != NULL)
        PyBuffer_Release(&c->offsets);
    if (c->data.obj != NULL)
        PyBuffer_Release(&c->data);
}

/* Take the buffers of a (validity, offsets, data, offset) tuple, checking that they hold n
 * rows from the offset and that every row lies inside the data: nothing below reads past a
 * buffer whatever it is given. */
static int column_from(PyObject *arg, int64_t n, const char *name, binary_column *c)
{
    PyObject *validity;
    long long first;
    memset(c, 0, sizeof *c);
    if (arg == Py_None)
        return 1;
    c->present = 1;
    if (!PyArg_ParseTuple(arg, "Oy*y*L", &validity, &c->offsets, &c->data, &first))
        return 0;
    c->first = first;
    if (validity != Py_None && PyObject_GetBuffer(validity, &c->validity, PyBUF_SIMPLE) < 0)
        return 0;
    if (first < 0 || c->offsets.len < (Py_ssize_t)((first + n + 1) * sizeof(int32_t)) ||
        (c->validity.obj != NULL && c->validity.len < kpy_bitmap_bytes(first + n))) {
        PyErr_Format(PyExc_ValueError, "column %s is shorter than its %lld rows", name,
                     (long long)n);
        return 0;
    }
    const int32_t *offsets = (const int32_t *)c->offsets.buf + first;
    for (int64_t i = 0; i < n; i++) {
        if (offsets[i] < 0 || offsets[i + 1] < offsets[i] || offsets[i + 1] > c->data.len) {
            PyErr_Format(PyExc_ValueError, "column %s has row %lld outside its data", name,
                         (long long)i);
            return 0;
        }
    }
    return 1;
}

/* Row i's length, -1 for null (Kafka's encoding of a null key or value). */
static inline int64_t row_length(const binary_column *c, int64_t i)
{
    if (!c->present)
        return -1;
    int64_t at = c->first + i;
    if (c->validity.obj != NULL && !(((const uint8_t *)c->validity.buf)[at >> 3] >> (at & 7) & 1))
        return -1;
    const int32_t *offsets = c->offsets.buf;
    return offsets[at + 1] - offsets[at];
}

static inline const uint8_t *row_data(const binary_column *c, int64_t i)
{
    return (const uint8_t *)c->data.buf + ((const int32_t *)c->offsets.buf)[c->first + i];
}

/* Bytes after the length prefix of record i. */
static inline int64_t body_length(const binary_column *key, const binary_column *value,
                                  const binary_column *headers, int64_t delta, int64_t i)
{
    int64_t key_length = row_length(key, i), value_length = row_length(value, i);
    int64_t header_bytes = headers->present ? row_length(headers, i) : 1;
    return 1 + kpy_varint_size(delta) + kpy_varint_size(i) + kpy_varint_size(key_length) +
           (key_length > 0 ? key_length : 0) + kpy_varint_size(value_length) +
           (value_length > 0 ? value_length : 0) + (header_bytes > 0 ? header_bytes : 0);
}

static inline uint8_t *put_bytes(uint8_t *out, const binary_column *c, int64_t i, int64_t length)
{
    out += kpy_write_varint(out, length);
    if (length > 0) {
        memcpy(out, row_data(c, i), (size_t)length);
        out += length;
    }
    return out;
}

PyObject *kpy_encode_v2(PyObject *module, PyObject *args)
{
    long long n, base_timestamp;
    Py_ssize_t headroom;
    PyObject *key_arg, *value_arg, *headers_arg;
    Py_buffer timestamps;
    binary_column key = {0}, value = {0}, headers = {0};
    PyObject *result = NULL;
    (void)module;
    if (!PyArg_ParseTuple(args, "LOOy*LOn", &n, &key_arg, &value_arg, &timestamps,
                          &base_timestamp, &headers_arg, &headroom))
        return NULL;
    if (headroom < 0) {
        PyErr_SetString(PyExc_ValueError, "headroom must not be negative");
        goto done;
    }
    if (n < 0 || timestamps.len < (Py_ssize_t)(n * sizeof(int64_t))) {
        PyErr_SetString(PyExc_ValueError, "timestamps are fewer than the rows");
        goto done;
    }
    if (!column_from(key_arg, n, "key", &key) || !column_from(value_arg, n, "value", &value) ||
        !column_from(headers_arg, n, "headers", &headers))
        goto done;
    const int64_t *timestamp = timestamps.buf;
    /* Deltas wrap as numpy's int64 difference does. */
#define DELTA(i) ((int64_t)((uint64_t)timestamp[i] - (uint64_t)base_timestamp))
    int64_t size = 0;
    for (int64_t i = 0; i < n; i++) {
        int64_t body = body_length(&key, &value, &headers, DELTA(i), i);
        size += kpy_varint_size(body) + body;
    }
    result = PyByteArray_FromStringAndSize(NULL, headroom + (Py_ssize_t)size);
    if (result == NULL)
        goto done;
    uint8_t *out = (uint8_t *)PyByteArray_AS_STRING(result) + headroom;
    Py_BEGIN_ALLOW_THREADS
    for (int64_t i = 0; i < n; i++) {
        int64_t delta = DELTA(i);
        out += kpy_write_varint(out, body_length(&key, &value, &headers, delta, i));
        *out++ = 0; /* attributes */
        out += kpy_write_varint(out, delta);
        out += kpy_write_varint(out, i); /* offsetDelta */
        out = put_bytes(out, &key, i, row_length(&key, i));
        out = put_bytes(out, &value, i, row_length(&value, i));
        if (!headers.present) {
            *out++ = 0; /* headerCount 0 */
        } else {
            int64_t length = row_length(&headers, i);
            if (length > 0) {
                memcpy(out, row_data(&headers, i), (size_t)length);
                out += length;
            }
        }
    }
    Py_END_ALLOW_THREADS
#undef DELTA
done:
    column_release(&key);
    column_release(&value);
    column_release(&headers);
    PyBuffer_Release(&timestamps);
    return result;
}

/* An int64 buffer of n values, or None (buffer->obj stays NULL). */
static int int64s_from(PyObject *arg, int64_t n, const char *name, Py_buffer *buffer)
{
    memset(buffer, 0, sizeof *buffer);
    if (arg == Py_None)
        return 1;
    if (PyObject_GetBuffer(arg, buffer, PyBUF_SIMPLE) < 0)
        return 0;
    if (buffer->len != (Py_ssize_t)(n * sizeof(int64_t))) {
        PyErr_Format(PyExc_ValueError, "%s hold %zd bytes, not %lld int64s", name, buffer->len,
                     (long long)n);
        return 0;
    }
    return 1;
}

PyObject *kpy_record_sizes(PyObject *module, PyObject *args)
{
    PyObject *key_arg, *value_arg, *spans_arg, *headers_arg;
    Py_buffer out, spans = {0}, header_bytes = {0};
    binary_column key = {0}, value = {0};
    PyObject *result = NULL;
    (void)module;
    if (!PyArg_ParseTuple(args, "w*OOOO", &out, &key_arg, &value_arg, &spans_arg, &headers_arg))
        return NULL;
    int64_t n = (int64_t)(out.len / (Py_ssize_t)sizeof(int64_t));
    if (out.len % (Py_ssize_t)sizeof(int64_t) != 0) {
        PyErr_SetString(PyExc_ValueError, "out must hold int64s");
        goto done;
    }
    if (!column_from(key_arg, n, "key", &key) || !column_from(value_arg, n, "value", &value) ||
        !int64s_from(spans_arg, n, "timestamp spans", &spans) ||
        !int64s_from(headers_arg, n, "header bytes", &header_bytes))
        goto done;
    int64_t *size = out.buf;
    const int64_t *span = spans.obj != NULL ? spans.buf : NULL;
    const int64_t *headers = header_bytes.obj != NULL ? header_bytes.buf : NULL;
    for (int64_t i = 0; i < n; i++) {
        int64_t key_length = row_length(&key, i), value_length = row_length(&value, i);
        int64_t body = 1 /* attributes */ + kpy_varint_size(span != NULL ? span[i] : 0) +
                       kpy_varint_size(i) /* offsetDelta: at most the row's index */ +
                       kpy_varint_size(key_length) + (key_length > 0 ? key_length : 0) +
                       kpy_varint_size(value_length) + (value_length > 0 ? value_length : 0) +
                       (headers != NULL ? headers[i] : 1);
        size[i] = kpy_varint_size(body) + body;
    }
    result = Py_NewRef(Py_None);
done:
    column_release(&key);
    column_release(&value);
    if (spans.obj != NULL)
        PyBuffer_Release(&spans);
    if (header_bytes.obj != NULL)
        PyBuffer_Release(&header_bytes);
    PyBuffer_Release(&out);
    return result;
}
