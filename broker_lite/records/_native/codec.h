/*
 * The compiled twin of kpy's record codecs: what the module's C files share.
 *
 * Each function follows a pure-Python reference and cites it; the reference decides every
 * question of format and error (see broker_lite/records/_native/__init__.py).
 */
#ifndef KPY_CODEC_H
#define KPY_CODEC_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>

/* v2_decode.c: records sections of v2 batches into Arrow buffers. */
PyObject *kpy_decode_v2(PyObject *module, PyObject *args);
extern const char kpy_decode_v2_doc[];

/* v2_encode.c: Arrow buffers into a v2 records section. */
PyObject *kpy_encode_v2(PyObject *module, PyObject *args);
extern const char kpy_encode_v2_doc[];
PyObject *kpy_record_sizes(PyObject *module, PyObject *args);
extern const char kpy_record_sizes_doc[];

/* Bytes of an Arrow validity bitmap for n values (one bit each, least significant first). */
static inline Py_ssize_t kpy_bitmap_bytes(int64_t n)
{
    return (Py_ssize_t)((n + 7) / 8);
}

#endif
