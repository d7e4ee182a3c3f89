/*
 * Avro payloads into Arrow buffers: the compiled twin of the interpreter in
 * broker_lite/serde/avro/decode.py (_Interpreter), running the programs that
 * broker_lite/serde/avro/program.py compiles. Those are the reference; this file follows them,
 * node for node, and the module docstrings there describe Avro's binary encoding and the
 * program's opcodes.
 *
 * A program is a tree of nodes in one int32 array, compiled once per (writer schema, reader
 * schema) pair; decode() runs it over each payload, appending to the program's slots (one per
 * column of the reader's Spark type, each laid out as Arrow lays it out: a validity bitmap, and
 * values, int32 offsets or both), and hands the buffers back as bytes. No Python object is made
 * per record; the GIL is released while the payloads are read.
 *
 * It does not explain faults: a payload it cannot read (cut short, a bad varint, a length or
 * index out of range, a string that is not UTF-8, bytes left over, a FAIL node) is reported by
 * its row number only, and the reference, run on that payload, raises the error (explain() in
 * decode.py). In PERMISSIVE mode such a row becomes a null, the slots rewound to where the row
 * began.
 */
#include "serde.h"

#include <string.h>

/* The opcodes of program.py (OP_*), and its slot kinds (K_*). */
enum {
    OP_NULL = 1, OP_BOOLEAN, OP_INT, OP_LONG, OP_FLOAT, OP_DOUBLE, OP_BYTES, OP_FIXED,
    OP_DECIMAL, OP_ENUM, OP_RECORD, OP_ARRAY, OP_MAP, OP_UNION, OP_NULL_INTO, OP_MEMBER,
    OP_DEFAULT, OP_FAIL
};
enum {
    K_NULL, K_BOOL, K_INT32, K_INT64, K_FLOAT32, K_FLOAT64, K_BINARY, K_DECIMAL, K_STRUCT,
    K_LIST
};

/* How deep a program may nest (a schema's depth): bounds the C stack. */
#define MAX_DEPTH 200

/* A growable byte buffer. */
typedef struct {
    uint8_t *p;
    int64_t len;
    int64_t cap;
} gbuf;

static int gbuf_reserve(gbuf *b, int64_t more)
{
    if (b->len + more <= b->cap)
        return 1;
    int64_t cap = b->cap ? b->cap : 64;
    while (cap < b->len + more)
        cap *= 2;
    uint8_t *p = PyMem_RawRealloc(b->p, (size_t)cap);
    if (p == NULL)
        return 0;
    b->p = p;
    b->cap = cap;
    return 1;
}

/* A slot being built (program.py's Slot; decode.py's _Slot). */
typedef struct {
    int kind;
    int nchildren;
    const int32_t *children;
    int64_t length; /* values so far */
    int64_t nulls;
    gbuf valid;     /* validity bitmap */
    gbuf values;    /* fixed-width values, a binary slot's bytes, a bool slot's bitmap */
    gbuf offsets;   /* int32 offsets: binary and list slots */
} slot_t;

/* Where a row began, for rewinding a slot in PERMISSIVE mode. */
typedef struct {
    int64_t length, nulls, values, offsets;
} mark_t;

/* A compiled program, held by a capsule. */
typedef struct {
    int32_t *code;
    Py_ssize_t ncode;
    int32_t *table; /* the slot table: per slot kind, child count, children */
    int nslots;
    int *kinds;
    int *nchildren;
    int32_t **children;
    PyObject *constants; /* a tuple of bytes */
    const uint8_t **constant;
    Py_ssize_t *constant_len;
    Py_ssize_t nconstants;
    int root;
} program_t;

typedef struct {
    const program_t *program;
    slot_t *slots;
    const uint8_t *data; /* the payloads (or a default's constant, while it is read) */
    int depth;
    int oom;             /* out of memory: not the payload's fault */
} ctx_t;

static const int64_t FIXED_WIDTH[] = {0, 0, 4, 8, 4, 8, 0, 16, 0, 0};

/* -- appending to slots ------------------------------------------------------------------ */

static inline int set_valid(ctx_t *c, slot_t *s, int valid)
{
    int64_t i = s->length;
    if ((i & 7) == 0 && !gbuf_reserve(&s->valid, 1)) {
        c->oom = 1;
        return 0;
    }
    if ((i >> 3) >= s->valid.len)
        s->valid.len = (i >> 3) + 1;
    if (valid)
        s->valid.p[i >> 3] |= (uint8_t)(1u << (i & 7));
    else {
        s->valid.p[i >> 3] &= (uint8_t)~(1u << (i & 7));
        s->nulls++;
    }
    s->length++;
    return 1;
}

static inline int push_offset(ctx_t *c, slot_t *s, int64_t value)
{
    if (value > INT32_MAX)
        return 0; /* past Arrow's int32 offsets */
    if (!gbuf_reserve(&s->offsets, 4)) {
        c->oom = 1;
        return 0;
    }
    int32_t v = (int32_t)value;
    memcpy(s->offsets.p + s->offsets.len, &v, 4);
    s->offsets.len += 4;
    return 1;
}

/* A null into slot, and into every field of a struct (decode.py's null_into). */
static int null_into(ctx_t *c, int slot)
{
    slot_t *s = &c->slots[slot];
    if (s->kind == K_STRUCT) {
        for (int i = 0; i < s->nchildren; i++)
            if (!null_into(c, s->children[i]))
                return 0;
    } else if (s->kind == K_LIST) {
        if (!push_offset(c, s, c->slots[s->children[0]].length))
            return 0;
    } else if (s->kind == K_BINARY) {
        if (!push_offset(c, s, s->values.len))
            return 0;
    } else if (s->kind == K_BOOL) {
        if ((s->length & 7) == 0) {
            if (!gbuf_reserve(&s->values, 1)) {
                c->oom = 1;
                return 0;
            }
            s->values.p[s->values.len++] = 0;
        }
    } else if (s->kind != K_NULL) {
        int64_t w = FIXED_WIDTH[s->kind];
        if (!gbuf_reserve(&s->values, w)) {
            c->oom = 1;
            return 0;
        }
        memset(s->values.p + s->values.len, 0, (size_t)w);
        s->values.len += w;
    }
    return set_valid(c, s, 0);
}

static inline int put_fixed(ctx_t *c, int slot, const void *value, int64_t width)
{
    slot_t *s = &c->slots[slot];
    if (!gbuf_reserve(&s->values, width)) {
        c->oom = 1;
        return 0;
    }
    memcpy(s->values.p + s->values.len, value, (size_t)width);
    s->values.len += width;
    return set_valid(c, s, 1);
}

/* An integer into its slot's type (a writer's int or long read as float or double). */
static inline int put_integer(ctx_t *c, int slot, int64_t value)
{
    if (slot < 0)
        return 1;
    switch (c->slots[slot].kind) {
    case K_INT32: {
        int32_t v = (int32_t)value; /* an int, range-checked by the reader */
        return put_fixed(c, slot, &v, 4);
    }
    case K_INT64:
        return put_fixed(c, slot, &value, 8);
    case K_FLOAT32: {
        float v = (float)value;
        return put_fixed(c, slot, &v, 4);
    }
    default: {
        double v = (double)value;
        return put_fixed(c, slot, &v, 8);
    }
    }
}

static inline int put_bytes(ctx_t *c, int slot, const uint8_t *bytes, int64_t n)
{
    slot_t *s = &c->slots[slot];
    if (!gbuf_reserve(&s->values, n)) {
        c->oom = 1;
        return 0;
    }
    if (n > 0) /* an empty value may meet a buffer not yet allocated */
        memcpy(s->values.p + s->values.len, bytes, (size_t)n);
    s->values.len += n;
    return push_offset(c, s, s->values.len) && set_valid(c, s, 1);
}

/* -- reading ---------------------------------------------------------------------------- */

/* A zigzag varint of at most 10 bytes (decode.py's varint); -1 where malformed. */
static inline int64_t read_varint(const uint8_t *data, int64_t pos, int64_t end, int64_t *out)
{
    uint64_t result = 0;
    int shift = 0;
    for (;;) {
        if (pos >= end)
            return -1;
        uint8_t byte = data[pos++];
        if (shift == 63 && byte > 1)
            return -1;
        result |= (uint64_t)(byte & 0x7F) << shift;
        if (!(byte & 0x80))
            break;
        shift += 7;
    }
    *out = (int64_t)(result >> 1) ^ -(int64_t)(result & 1);
    return pos;
}

/* Whether bytes are UTF-8 as Python's strict decoder accepts it (no overlong forms, no
 * surrogates, nothing past U+10FFFF). */
static int valid_utf8(const uint8_t *s, int64_t n)
{
    int64_t i = 0;
    while (i < n) {
        if (i + 8 <= n) {
            uint64_t chunk;
            memcpy(&chunk, s + i, 8);
            if (!(chunk & 0x8080808080808080ULL)) {
                i += 8;
                continue;
            }
        }
        uint8_t b = s[i];
        if (b < 0x80) {
            i++;
        } else if (b >= 0xC2 && b <= 0xDF) {
            if (i + 1 >= n || (s[i + 1] & 0xC0) != 0x80)
                return 0;
            i += 2;
        } else if (b >= 0xE0 && b <= 0xEF) {
            if (i + 2 >= n || (s[i + 1] & 0xC0) != 0x80 || (s[i + 2] & 0xC0) != 0x80)
                return 0;
            if (b == 0xE0 && s[i + 1] < 0xA0)
                return 0; /* overlong */
            if (b == 0xED && s[i + 1] >= 0xA0)
                return 0; /* a surrogate */
            i += 3;
        } else if (b >= 0xF0 && b <= 0xF4) {
            if (i + 3 >= n || (s[i + 1] & 0xC0) != 0x80 || (s[i + 2] & 0xC0) != 0x80 ||
                (s[i + 3] & 0xC0) != 0x80)
                return 0;
            if (b == 0xF0 && s[i + 1] < 0x90)
                return 0; /* overlong */
            if (b == 0xF4 && s[i + 1] >= 0x90)
                return 0; /* past U+10FFFF */
            i += 4;
        } else {
            return 0;
        }
    }
    return 1;
}

static int64_t run(ctx_t *c, int32_t pc, int64_t pos, int64_t end);

/* An array's or a map's blocks (decode.py's blocks). */
static int64_t run_blocks(ctx_t *c, int32_t pc, int64_t pos, int64_t end)
{
    const int32_t *code = c->program->code;
    int is_map = code[pc] == OP_MAP;
    int slot = code[pc + 1];
    int32_t item = is_map ? code[pc + 4] : code[pc + 2];
    int entries = is_map ? code[pc + 2] : -1, key = is_map ? code[pc + 3] : -1;
    for (;;) {
        int64_t count, size;
        pos = read_varint(c->data, pos, end, &count);
        if (pos < 0)
            return -1;
        if (count == 0)
            break;
        if (count < 0) {
            if (count == INT64_MIN)
                return -1;
            count = -count;
            pos = read_varint(c->data, pos, end, &size);
            if (pos < 0)
                return -1;
        }
        if (count > end - pos)
            return -1;
        for (int64_t i = 0; i < count; i++) {
            if (is_map) {
                int64_t n;
                pos = read_varint(c->data, pos, end, &n);
                if (pos < 0 || n < 0 || n > end - pos || !valid_utf8(c->data + pos, n))
                    return -1;
                if (entries >= 0 &&
                    (!set_valid(c, &c->slots[entries], 1) || !put_bytes(c, key, c->data + pos, n)))
                    return -1;
                pos += n;
            }
            pos = run(c, item, pos, end);
            if (pos < 0)
                return -1;
        }
    }
    if (slot >= 0) {
        slot_t *s = &c->slots[slot];
        if (!push_offset(c, s, c->slots[s->children[0]].length) || !set_valid(c, s, 1))
            return -1;
    }
    return pos;
}

/* One node (decode.py's run): the position after what it read, or -1. */
static int64_t run(ctx_t *c, int32_t pc, int64_t pos, int64_t end)
{
    const int32_t *code = c->program->code;
    int slot = code[pc + 1];
    switch (code[pc]) {
    case OP_RECORD: {
        int n = code[pc + 2];
        if (slot >= 0 && !set_valid(c, &c->slots[slot], 1))
            return -1;
        if (++c->depth > MAX_DEPTH)
            return -1;
        for (int i = 0; i < n && pos >= 0; i++)
            pos = run(c, code[pc + 3 + i], pos, end);
        c->depth--;
        return pos;
    }
    case OP_INT: {
        int64_t v;
        pos = read_varint(c->data, pos, end, &v);
        if (pos < 0 || v < INT32_MIN || v > INT32_MAX)
            return -1;
        return put_integer(c, slot, v) ? pos : -1;
    }
    case OP_LONG: {
        int64_t v;
        pos = read_varint(c->data, pos, end, &v);
        if (pos < 0)
            return -1;
        int32_t scale = code[pc + 2];
        if (scale != 1 && __builtin_mul_overflow(v, (int64_t)scale, &v))
            return -1;
        return put_integer(c, slot, v) ? pos : -1;
    }
    case OP_BYTES: {
        int64_t n;
        pos = read_varint(c->data, pos, end, &n);
        if (pos < 0 || n < 0 || n > end - pos)
            return -1;
        if (code[pc + 2] && !valid_utf8(c->data + pos, n))
            return -1;
        if (slot >= 0 && !put_bytes(c, slot, c->data + pos, n))
            return -1;
        return pos + n;
    }
    case OP_UNION: {
        int64_t index;
        pos = read_varint(c->data, pos, end, &index);
        if (pos < 0 || index < 0 || index >= code[pc + 1])
            return -1;
        if (++c->depth > MAX_DEPTH)
            return -1;
        pos = run(c, code[pc + 2 + index], pos, end);
        c->depth--;
        return pos;
    }
    case OP_FLOAT: {
        if (end - pos < 4)
            return -1;
        float v;
        memcpy(&v, c->data + pos, 4); /* little-endian machines only: see serde.h */
        if (slot >= 0) {
            if (c->slots[slot].kind == K_FLOAT64) {
                double d = v;
                if (!put_fixed(c, slot, &d, 8))
                    return -1;
            } else if (!put_fixed(c, slot, &v, 4))
                return -1;
        }
        return pos + 4;
    }
    case OP_DOUBLE: {
        if (end - pos < 8)
            return -1;
        if (slot >= 0 && !put_fixed(c, slot, c->data + pos, 8))
            return -1;
        return pos + 8;
    }
    case OP_BOOLEAN: {
        if (end - pos < 1 || c->data[pos] > 1)
            return -1;
        if (slot >= 0) {
            slot_t *s = &c->slots[slot];
            if ((s->length & 7) == 0) {
                if (!gbuf_reserve(&s->values, 1)) {
                    c->oom = 1;
                    return -1;
                }
                s->values.p[s->values.len++] = 0;
            }
            if (c->data[pos])
                s->values.p[s->length >> 3] |= (uint8_t)(1u << (s->length & 7));
            else
                s->values.p[s->length >> 3] &= (uint8_t)~(1u << (s->length & 7));
            if (!set_valid(c, s, 1))
                return -1;
        }
        return pos + 1;
    }
    case OP_ARRAY:
    case OP_MAP: {
        if (++c->depth > MAX_DEPTH)
            return -1;
        pos = run_blocks(c, pc, pos, end);
        c->depth--;
        return pos;
    }
    case OP_NULL:
        if (slot >= 0 && !null_into(c, slot))
            return -1;
        return pos;
    case OP_NULL_INTO:
        return null_into(c, slot) ? pos : -1;
    case OP_MEMBER: {
        slot_t *s = &c->slots[slot];
        int index = code[pc + 2];
        if (!set_valid(c, s, 1))
            return -1;
        for (int i = 0; i < s->nchildren; i++)
            if (i != index && !null_into(c, s->children[i]))
                return -1;
        return run(c, code[pc + 3], pos, end);
    }
    case OP_ENUM: {
        int64_t index;
        pos = read_varint(c->data, pos, end, &index);
        if (pos < 0 || index < 0 || index >= code[pc + 2])
            return -1;
        int32_t symbol = code[pc + 3 + index];
        if (symbol == -2)
            return -1;
        if (slot >= 0 && !put_bytes(c, slot, c->program->constant[symbol],
                                    c->program->constant_len[symbol]))
            return -1;
        return pos;
    }
    case OP_FIXED: {
        int64_t n = code[pc + 2];
        if (n > end - pos)
            return -1;
        if (slot >= 0 && !put_bytes(c, slot, c->data + pos, n))
            return -1;
        return pos + n;
    }
    case OP_DECIMAL: {
        int64_t n = code[pc + 2];
        if (n < 0) {
            pos = read_varint(c->data, pos, end, &n);
            if (pos < 0 || n < 0)
                return -1;
        }
        if (n > end - pos)
            return -1;
        /* big-endian two's complement; past 16 bytes, only sign extension may lead */
        const uint8_t *b = c->data + pos;
        int negative = n > 0 && (b[0] & 0x80);
        int64_t skip = n > 16 ? n - 16 : 0;
        for (int64_t i = 0; i < skip; i++)
            if (b[i] != (negative ? 0xFF : 0x00))
                return -1;
        if (skip && ((b[skip] & 0x80) != 0) != negative)
            return -1;
        __int128 value = negative ? -1 : 0;
        for (int64_t i = skip; i < n; i++)
            value = (__int128)(((unsigned __int128)value << 8) | b[i]);
        __int128 limit = 1;
        for (int i = 0; i < code[pc + 3]; i++)
            limit *= 10;
        if (value >= limit || value <= -limit)
            return -1;
        if (slot >= 0 && !put_fixed(c, slot, &value, 16)) /* little-endian, as Arrow's */
            return -1;
        return pos + n;
    }
    case OP_DEFAULT: {
        const uint8_t *data = c->data;
        int32_t constant = code[pc + 1];
        c->data = c->program->constant[constant];
        int64_t n = c->program->constant_len[constant];
        int64_t done = run(c, code[pc + 2], 0, n);
        c->data = data;
        return done < 0 ? -1 : pos;
    }
    default: /* OP_FAIL */
        return -1;
    }
}

/* -- the program object ------------------------------------------------------------------- */

static void program_free(PyObject *capsule)
{
    program_t *p = PyCapsule_GetPointer(capsule, "kpy.avro_program");
    if (p == NULL)
        return;
    PyMem_Free(p->code);
    PyMem_Free(p->table);
    PyMem_Free(p->kinds);
    PyMem_Free(p->nchildren);
    PyMem_Free(p->children);
    PyMem_Free(p->constant);
    PyMem_Free(p->constant_len);
    Py_XDECREF(p->constants);
    PyMem_Free(p);
}

/* Whether every node's slots, children and constants are in range (a program is ours, but a
 * wrong one must not read out of bounds). */
static int program_check(const program_t *p)
{
    for (Py_ssize_t pc = 0; pc < p->ncode;) {
        int32_t op = p->code[pc];
        Py_ssize_t width;
        switch (op) {
        case OP_NULL: case OP_BOOLEAN: case OP_INT: case OP_FLOAT: case OP_DOUBLE:
        case OP_NULL_INTO: case OP_FAIL: width = 2; break;
        case OP_LONG: case OP_BYTES: case OP_FIXED: case OP_ARRAY: case OP_DEFAULT: width = 3;
            break;
        case OP_DECIMAL: case OP_MEMBER: width = 4; break;
        case OP_MAP: width = 5; break;
        case OP_RECORD: case OP_ENUM:
            if (pc + 2 >= p->ncode || p->code[pc + 2] < 0)
                return 0;
            width = 3 + p->code[pc + 2];
            break;
        case OP_UNION:
            if (pc + 1 >= p->ncode || p->code[pc + 1] < 0)
                return 0;
            width = 2 + p->code[pc + 1];
            break;
        default: return 0;
        }
        if (pc + width > p->ncode)
            return 0;
        const int32_t *a = p->code + pc + 1;
        /* slots */
        if (op != OP_UNION && op != OP_DEFAULT && op != OP_FAIL &&
            (a[0] < -1 || a[0] >= p->nslots))
            return 0;
        if ((op == OP_NULL_INTO || op == OP_MEMBER) && a[0] < 0)
            return 0;
        if (op == OP_MAP && (a[1] < -1 || a[1] >= p->nslots || a[2] < -1 || a[2] >= p->nslots ||
                             (a[0] >= 0 && (a[1] < 0 || a[2] < 0))))
            return 0;
        /* children */
        Py_ssize_t first = 0, count = 0;
        if (op == OP_RECORD) { first = 2; count = a[1]; }
        else if (op == OP_UNION) { first = 1; count = a[0]; }
        else if (op == OP_ARRAY) { first = 1; count = 1; }
        else if (op == OP_MAP) { first = 3; count = 1; }
        else if (op == OP_MEMBER) { first = 2; count = 1; }
        else if (op == OP_DEFAULT) { first = 1; count = 1; }
        for (Py_ssize_t i = 0; i < count; i++)
            if (a[first + i] < 0 || a[first + i] >= pc) /* children come first: no cycles */
                return 0;
        /* constants */
        if ((op == OP_DEFAULT || op == OP_FAIL) && (a[0] < 0 || a[0] >= p->nconstants))
            return 0;
        if (op == OP_ENUM)
            for (int32_t i = 0; i < a[1]; i++)
                if (a[2 + i] < -2 || a[2 + i] >= p->nconstants || (a[0] >= 0 && a[2 + i] == -1))
                    return 0;
        if (op == OP_DECIMAL && (a[2] < 1 || a[2] > 38 || a[1] < -1))
            return 0;
        if (op == OP_FIXED && a[1] < 0)
            return 0;
        pc += width;
    }
    /* list slots have one child; a slot's kind is known */
    for (int i = 0; i < p->nslots; i++) {
        if (p->kinds[i] < K_NULL || p->kinds[i] > K_LIST)
            return 0;
        if (p->kinds[i] == K_LIST && p->nchildren[i] != 1)
            return 0;
    }
    return p->root >= 0 && p->root < p->ncode;
}

const char kpy_avro_program_doc[] =
    "avro_program(code, slot_table, constants, root) -> program\n\n"
    "A compiled Avro program (see broker_lite/serde/avro/program.py): its int32 code, its\n"
    "slot table (per slot: kind, child count, children; int32), its constants (a tuple of\n"
    "bytes) and the position of its root node.";

PyObject *kpy_avro_program(PyObject *module, PyObject *args)
{
    Py_buffer code, table;
    PyObject *constants;
    int root;
    if (!PyArg_ParseTuple(args, "y*y*O!i", &code, &table, &PyTuple_Type, &constants, &root))
        return NULL;
    program_t *p = PyMem_Calloc(1, sizeof *p);
    PyObject *capsule = NULL;
    if (p == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    p->ncode = code.len / 4;
    p->code = PyMem_Malloc((size_t)code.len + 4);
    p->table = PyMem_Malloc((size_t)table.len + 4);
    p->nconstants = PyTuple_GET_SIZE(constants);
    p->constant = PyMem_Calloc((size_t)p->nconstants + 1, sizeof *p->constant);
    p->constant_len = PyMem_Calloc((size_t)p->nconstants + 1, sizeof *p->constant_len);
    if (p->code == NULL || p->table == NULL || p->constant == NULL || p->constant_len == NULL) {
        PyErr_NoMemory();
        goto fail;
    }
    memcpy(p->code, code.buf, (size_t)code.len);
    memcpy(p->table, table.buf, (size_t)table.len);
    p->constants = constants;
    Py_INCREF(constants);
    for (Py_ssize_t i = 0; i < p->nconstants; i++) {
        PyObject *item = PyTuple_GET_ITEM(constants, i);
        if (!PyBytes_Check(item)) {
            PyErr_SetString(PyExc_TypeError, "constants must be bytes");
            goto fail;
        }
        p->constant[i] = (const uint8_t *)PyBytes_AS_STRING(item);
        p->constant_len[i] = PyBytes_GET_SIZE(item);
    }
    /* the slot table */
    Py_ssize_t words = table.len / 4, at = 0;
    int nslots = 0;
    while (at + 1 < words) {
        if (p->table[at + 1] < 0)
            break;
        at += 2 + p->table[at + 1];
        nslots++;
    }
    if (at != words || nslots == 0) {
        PyErr_SetString(PyExc_ValueError, "a malformed slot table");
        goto fail;
    }
    p->nslots = nslots;
    p->kinds = PyMem_Malloc(sizeof(int) * (size_t)nslots);
    p->nchildren = PyMem_Malloc(sizeof(int) * (size_t)nslots);
    p->children = PyMem_Malloc(sizeof(int32_t *) * (size_t)nslots);
    if (p->kinds == NULL || p->nchildren == NULL || p->children == NULL) {
        PyErr_NoMemory();
        goto fail;
    }
    at = 0;
    for (int i = 0; i < nslots; i++) {
        p->kinds[i] = p->table[at];
        p->nchildren[i] = p->table[at + 1];
        p->children[i] = p->table + at + 2;
        for (int j = 0; j < p->nchildren[i]; j++)
            if (p->children[i][j] <= i || p->children[i][j] >= nslots) {
                PyErr_SetString(PyExc_ValueError, "a slot's child out of range");
                goto fail;
            }
        at += 2 + p->nchildren[i];
    }
    p->root = root;
    if (!program_check(p)) {
        PyErr_SetString(PyExc_ValueError, "a malformed Avro program");
        goto fail;
    }
    capsule = PyCapsule_New(p, "kpy.avro_program", program_free);
    if (capsule == NULL)
        goto fail;
    goto done;
fail:
    if (p != NULL) {
        PyObject *tmp = PyCapsule_New(p, "kpy.avro_program", program_free);
        Py_XDECREF(tmp); /* frees p through program_free */
    }
done:
    PyBuffer_Release(&code);
    PyBuffer_Release(&table);
    return capsule;
}

/* -- decode() ------------------------------------------------------------------------------- */

static PyObject *bytes_or_none(const gbuf *b, int keep)
{
    if (!keep)
        Py_RETURN_NONE;
    return PyBytes_FromStringAndSize(b->len ? (const char *)b->p : "", b->len);
}

const char kpy_avro_decode_doc[] =
    "avro_decode(program, data, starts, ends, permissive) -> (slots, failed) | int\n\n"
    "Run an Avro program over the payloads data[starts[i]:ends[i]] (int64 buffers; a start\n"
    "below 0 is a null value). The result is, per slot, (length, null count, validity or\n"
    "None, values or None, offsets or None) and the rows that failed (PERMISSIVE: each a\n"
    "null); in FAILFAST mode (permissive false) a failing row's number instead, which the\n"
    "reference (broker_lite/serde/avro/decode.py) explains.";

PyObject *kpy_avro_decode(PyObject *module, PyObject *args)
{
    PyObject *capsule;
    Py_buffer data, starts, ends;
    int permissive;
    if (!PyArg_ParseTuple(args, "Oy*y*y*p", &capsule, &data, &starts, &ends, &permissive))
        return NULL;
    PyObject *result = NULL, *failed = NULL;
    const program_t *p = PyCapsule_GetPointer(capsule, "kpy.avro_program");
    slot_t *slots = NULL;
    mark_t *marks = NULL;
    int64_t *failed_rows = NULL, nfailed = 0, failed_at = -1;
    if (p == NULL)
        goto release;
    if (starts.len != ends.len || starts.len % 8) {
        PyErr_SetString(PyExc_ValueError, "starts and ends must be int64 buffers of one length");
        goto release;
    }
    int64_t rows = starts.len / 8;
    const int64_t *start = starts.buf, *stop = ends.buf;
    for (int64_t i = 0; i < rows; i++)
        if (start[i] >= 0 && (start[i] > stop[i] || stop[i] > data.len)) {
            PyErr_SetString(PyExc_ValueError, "a payload outside the data");
            goto release;
        }
    slots = PyMem_RawCalloc((size_t)p->nslots, sizeof *slots);
    marks = PyMem_RawCalloc((size_t)p->nslots, sizeof *marks);
    failed_rows = PyMem_RawMalloc(sizeof(int64_t) * (size_t)(rows + 1));
    if (slots == NULL || marks == NULL || failed_rows == NULL) {
        PyErr_NoMemory();
        goto release;
    }
    ctx_t c = {p, slots, data.buf, 0, 0};
    int ok = 1;
    for (int i = 0; i < p->nslots && ok; i++) {
        slots[i].kind = p->kinds[i];
        slots[i].nchildren = p->nchildren[i];
        slots[i].children = p->children[i];
        if (slots[i].kind == K_BINARY || slots[i].kind == K_LIST)
            ok = push_offset(&c, &slots[i], 0);
    }
    Py_BEGIN_ALLOW_THREADS
    for (int64_t row = 0; row < rows && ok; row++) {
        c.data = data.buf;
        c.depth = 0;
        if (start[row] < 0) {
            ok = null_into(&c, 0);
            continue;
        }
        if (permissive)
            for (int i = 0; i < p->nslots; i++)
                marks[i] = (mark_t){slots[i].length, slots[i].nulls, slots[i].values.len,
                                    slots[i].offsets.len};
        int64_t at = run(&c, p->root, start[row], stop[row]);
        if (at == stop[row])
            continue;
        if (c.oom) {
            ok = 0;
            break;
        }
        if (!permissive) {
            failed_at = row;
            break;
        }
        for (int i = 0; i < p->nslots; i++) {
            slots[i].length = marks[i].length;
            slots[i].nulls = marks[i].nulls;
            slots[i].values.len = marks[i].values;
            slots[i].offsets.len = marks[i].offsets;
            slots[i].valid.len = (marks[i].length + 7) / 8;
        }
        failed_rows[nfailed++] = row;
        ok = null_into(&c, 0);
    }
    Py_END_ALLOW_THREADS
    if (!ok) {
        if (c.oom)
            PyErr_NoMemory();
        else
            PyErr_SetString(PyExc_OverflowError, "a column of more than 2 GiB in one batch");
        goto release;
    }
    if (failed_at >= 0) {
        result = PyLong_FromLongLong(failed_at);
        goto release;
    }
    PyObject *list = PyList_New(p->nslots);
    if (list == NULL)
        goto release;
    for (int i = 0; i < p->nslots; i++) {
        slot_t *s = &slots[i];
        int has_values = s->kind != K_NULL && s->kind != K_STRUCT && s->kind != K_LIST;
        int has_offsets = s->kind == K_BINARY || s->kind == K_LIST;
        PyObject *entry = Py_BuildValue("(LLNNN)", (long long)s->length, (long long)s->nulls,
                                        bytes_or_none(&s->valid, s->nulls > 0),
                                        bytes_or_none(&s->values, has_values),
                                        bytes_or_none(&s->offsets, has_offsets));
        if (entry == NULL) {
            Py_DECREF(list);
            goto release;
        }
        PyList_SET_ITEM(list, i, entry);
    }
    failed = PyList_New(nfailed);
    if (failed == NULL) {
        Py_DECREF(list);
        goto release;
    }
    for (int64_t i = 0; i < nfailed; i++) {
        PyObject *row = PyLong_FromLongLong(failed_rows[i]);
        if (row == NULL) {
            Py_DECREF(list);
            Py_CLEAR(failed);
            goto release;
        }
        PyList_SET_ITEM(failed, i, row);
    }
    result = PyTuple_Pack(2, list, failed);
    Py_DECREF(list);
    Py_DECREF(failed);
release:
    if (slots != NULL) {
        for (int i = 0; i < p->nslots; i++) {
            PyMem_RawFree(slots[i].valid.p);
            PyMem_RawFree(slots[i].values.p);
            PyMem_RawFree(slots[i].offsets.p);
        }
        PyMem_RawFree(slots);
    }
    PyMem_RawFree(marks);
    PyMem_RawFree(failed_rows);
    PyBuffer_Release(&data);
    PyBuffer_Release(&starts);
    PyBuffer_Release(&ends);
    return result;
}
