/*
 * The compiled twin of kpy's payload codecs (broker_lite/serde/): what its C files share.
 *
 * Each function follows a pure-Python reference and cites it; the reference decides every
 * question of format and error (see broker_lite/serde/_native/__init__.py).
 */
#ifndef KPY_SERDE_H
#define KPY_SERDE_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>

/* Avro, Arrow and the int32 programs are little-endian: values are copied as they lie. A
 * big-endian machine does not build this module and runs the Python codecs. */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the compiled payload codecs assume a little-endian machine"
#endif

/* avro_decode.c: Avro payloads into Arrow buffers, by a compiled program. */
PyObject *kpy_avro_program(PyObject *module, PyObject *args);
extern const char kpy_avro_program_doc[];
PyObject *kpy_avro_decode(PyObject *module, PyObject *args);
extern const char kpy_avro_decode_doc[];

#endif
