/*
 * broker_lite.records._native._codec: the compiled twin of kpy's record codecs.
 *
 * Python is the reference (DESIGN.md, "Compiled code"): each function here follows a
 * pure-Python one, named in its file, and both pass the same tests. Which one runs is decided
 * in broker_lite/records/_native/__init__.py.
 */
#include "codec.h"

static PyMethodDef methods[] = {
    {"decode_v2", kpy_decode_v2, METH_VARARGS, kpy_decode_v2_doc},
    {"encode_v2", kpy_encode_v2, METH_VARARGS, kpy_encode_v2_doc},
    {"record_sizes", kpy_record_sizes, METH_VARARGS, kpy_record_sizes_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT,
    "_codec",
    "The compiled twin of kpy's v2 record codecs (see broker_lite.records._native).",
    0,
    methods,
};

PyMODINIT_FUNC PyInit__codec(void)
{
    return PyModule_Create(&module);
}
