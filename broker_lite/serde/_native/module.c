/*
 * broker_lite.serde._native._serde: the compiled twin of kpy's payload codecs.
 *
 * Python is the reference (DESIGN.md, "Compiled code"): each function here follows a
 * pure-Python one, named in its file, and both pass the same tests. Which one runs is decided
 * in broker_lite/serde/_native/__init__.py.
 */
#include "serde.h"

static PyMethodDef methods[] = {
    {"avro_program", kpy_avro_program, METH_VARARGS, kpy_avro_program_doc},
    {"avro_decode", kpy_avro_decode, METH_VARARGS, kpy_avro_decode_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT,
    "_serde",
    "The compiled twin of kpy's payload codecs (see broker_lite.serde._native).",
    0,
    methods,
};

PyMODINIT_FUNC PyInit__serde(void)
{
    return PyModule_Create(&module);
}
