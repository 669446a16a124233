/* The Example encoder and TFRecord framing of write/example_encoder.py and write/shards.py, in C: the same bytes,
 * about 10x less CPU (issue 40). native_records.py is the Python side; the pure-Python code stays the fallback.
 *
 * Python's limited API (3.10, one abi3 build for 3.10-3.13) has no buffer protocol before 3.11, so the inputs come
 * as Arrow arrays through the Arrow C data interface (PyCapsules "arrow_schema" and "arrow_array"), which is an
 * ABI-stable contract of its own: its two structs are declared below rather than taken from Arrow's headers.
 * native_records.py casts every column to the layouts read here (large_list of float32, int64 or large_binary, or
 * large_list of those for a feature list); anything else (nulls among the values, another type) gives None, and
 * the caller encodes in Python. The outputs are new bytes objects; the GIL is released while they are filled.
 *
 * Wire format: see example_encoder.py's docstring. */

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct ArrowSchema {
    const char *format;
    const char *name;
    const char *metadata;
    int64_t flags;
    int64_t n_children;
    struct ArrowSchema **children;
    struct ArrowSchema *dictionary;
    void (*release)(struct ArrowSchema *);
    void *private_data;
};

struct ArrowArray {
    int64_t length;
    int64_t null_count;
    int64_t offset;
    int64_t n_buffers;
    int64_t n_children;
    const void **buffers;
    struct ArrowArray **children;
    struct ArrowArray *dictionary;
    void (*release)(struct ArrowArray *);
    void *private_data;
};

/* ---- varints and tags ------------------------------------------------------------------------------------------ */

#define FIELD_1 0x0A
#define FIELD_2 0x12

/* a loop: most values here (ids, lengths) take one byte, where it beat counting leading zeros by 20% */
static inline uint64_t varint_size(uint64_t value) {
    uint64_t size = 1;
    while (value >= 0x80) {
        value >>= 7;
        size++;
    }
    return size;
}

static inline uint8_t *put_varint(uint8_t *out, uint64_t value) {
    while (value >= 0x80) {
        *out++ = (uint8_t)(value | 0x80);
        value >>= 7;
    }
    *out++ = (uint8_t)value;
    return out;
}

static inline uint8_t *put_u32_le(uint8_t *out, uint32_t value) {
    for (int i = 0; i < 4; i++) out[i] = (uint8_t)(value >> (8 * i));
    return out + 4;
}

/* ---- CRC32C (Castagnoli), TFRecord's checksum ------------------------------------------------------------------ */

static uint32_t crc_table[8][256];

static void crc_init_tables(void) {
    for (uint32_t byte = 0; byte < 256; byte++) {
        uint32_t crc = byte;
        for (int bit = 0; bit < 8; bit++) crc = (crc >> 1) ^ (0x82F63B78u & (0u - (crc & 1)));
        crc_table[0][byte] = crc;
    }
    for (int slice = 1; slice < 8; slice++)
        for (int byte = 0; byte < 256; byte++)
            crc_table[slice][byte] =
                (crc_table[slice - 1][byte] >> 8) ^ crc_table[0][crc_table[slice - 1][byte] & 0xFF];
}

/* slicing by 8: eight table lookups per 8 bytes, wherever there is no CRC32C instruction */
static uint32_t crc32c_software(const uint8_t *data, size_t size) {
    uint32_t crc = 0xFFFFFFFFu;
    for (; size >= 8; size -= 8, data += 8) {
        uint32_t low = crc ^ ((uint32_t)data[0] | (uint32_t)data[1] << 8 | (uint32_t)data[2] << 16 |
                              (uint32_t)data[3] << 24);
        crc = crc_table[7][low & 0xFF] ^ crc_table[6][(low >> 8) & 0xFF] ^ crc_table[5][(low >> 16) & 0xFF] ^
              crc_table[4][low >> 24] ^ crc_table[3][data[4]] ^ crc_table[2][data[5]] ^ crc_table[1][data[6]] ^
              crc_table[0][data[7]];
    }
    while (size--) crc = (crc >> 8) ^ crc_table[0][(crc ^ *data++) & 0xFF];
    return ~crc;
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <nmmintrin.h>
#define HAVE_CRC32C_INSTRUCTION 1

/* SSE 4.2's crc32 instruction computes CRC32C; compiled for it alone, called only where the CPU has it */
__attribute__((target("sse4.2"))) static uint32_t crc32c_sse42(const uint8_t *data, size_t size) {
    uint64_t crc = 0xFFFFFFFFu;
    for (; size >= 8; size -= 8, data += 8) {
        uint64_t word;
        memcpy(&word, data, 8);
        crc = _mm_crc32_u64(crc, word);
    }
    uint32_t crc32 = (uint32_t)crc;
    while (size--) crc32 = _mm_crc32_u8(crc32, *data++);
    return ~crc32;
}
#endif

static uint32_t (*crc32c)(const uint8_t *, size_t) = crc32c_software;

static inline uint32_t masked_crc(const uint8_t *data, size_t size) {
    uint32_t crc = crc32c(data, size);
    return ((crc >> 15) | (crc << 17)) + 0xA282EAD8u;
}

/* ---- columns, as the Arrow C data interface lays them out ------------------------------------------------------ */

typedef enum { KIND_BYTES, KIND_FLOAT, KIND_INT } Kind;

static const uint8_t LIST_TAGS[] = {[KIND_BYTES] = 0x0A, [KIND_FLOAT] = 0x12, [KIND_INT] = 0x1A};

typedef struct {
    Kind kind;
    const char *key;
    uint64_t key_size;
    const int64_t *steps;   /* a feature list's row i: steps steps[i] .. steps[i + 1] - 1; NULL for a feature */
    const int64_t *offsets; /* row (or step) i's values: offsets[i] .. offsets[i + 1] - 1 */
    const float *floats;
    const int64_t *ints;
    const int64_t *value_offsets; /* bytes value j: bytes[value_offsets[j] .. value_offsets[j + 1] - 1] */
    const uint8_t *bytes;
} Column;

static int is_format(const struct ArrowSchema *schema, const char *format) {
    return strcmp(schema->format, format) == 0;
}

/* A large_list's offsets, the array's own offset and its parent's (a struct's rows) applied. */
static const int64_t *list_offsets(const struct ArrowArray *array, int64_t parent_offset) {
    return (const int64_t *)array->buffers[1] + array->offset + parent_offset;
}

/* The values of a large_list<float32 | int64 | large_binary>; 0 where their layout is another, or has nulls. */
static int read_values(const struct ArrowSchema *schema, const struct ArrowArray *array, Column *column) {
    if (array->null_count != 0) return 0;
    if (is_format(schema, "f")) {
        column->kind = KIND_FLOAT;
        column->floats = (const float *)array->buffers[1] + array->offset;
    } else if (is_format(schema, "l")) {
        column->kind = KIND_INT;
        column->ints = (const int64_t *)array->buffers[1] + array->offset;
    } else if (is_format(schema, "Z")) {
        column->kind = KIND_BYTES;
        column->value_offsets = (const int64_t *)array->buffers[1] + array->offset;
        column->bytes = (const uint8_t *)array->buffers[2];
    } else {
        return 0;
    }
    return 1;
}

/* A struct's child (a batch's column): large_list<values> or large_list<large_list<values>>; 0 where another. */
static int read_column(const struct ArrowSchema *schema, const struct ArrowArray *array, int64_t row_offset,
                       Column *column) {
    if (!is_format(schema, "+L") || schema->n_children != 1) return 0;
    column->key = schema->name;
    column->key_size = strlen(schema->name);
    const struct ArrowSchema *inner = schema->children[0];
    if (is_format(inner, "+L")) {
        if (inner->n_children != 1) return 0;
        column->steps = list_offsets(array, row_offset);
        column->offsets = list_offsets(array->children[0], 0);
        return read_values(inner->children[0], array->children[0]->children[0], column);
    }
    column->steps = NULL;
    column->offsets = list_offsets(array, row_offset);
    return read_values(inner, array->children[0], column);
}

/* ---- Example and SequenceExample messages ---------------------------------------------------------------------- */

static uint64_t int_payload_size(const Column *column, int64_t start, int64_t end) {
    uint64_t size = 0;
    for (int64_t j = start; j < end; j++) size += varint_size((uint64_t)column->ints[j]);
    return size;
}

/* The size of a Feature's list message (BytesList, FloatList or Int64List) for values start .. end - 1: each bytes
 * value a field of its own; numbers one packed field, left out when there are none. */
static uint64_t list_size(const Column *column, int64_t start, int64_t end) {
    uint64_t count = (uint64_t)(end - start), size = 0;
    switch (column->kind) {
        case KIND_FLOAT:
            return count ? 1 + varint_size(4 * count) + 4 * count : 0;
        case KIND_INT:
            size = int_payload_size(column, start, end);
            return count ? 1 + varint_size(size) + size : 0;
        case KIND_BYTES:
            for (int64_t j = start; j < end; j++) {
                uint64_t value = (uint64_t)(column->value_offsets[j + 1] - column->value_offsets[j]);
                size += 1 + varint_size(value) + value;
            }
            return size;
    }
    return 0;
}

static uint64_t feature_size(const Column *column, int64_t step) {
    uint64_t size = list_size(column, column->offsets[step], column->offsets[step + 1]);
    return 1 + varint_size(size) + size;
}

/* A row's value of the map entry: its Feature, or for a feature list its FeatureList (a field 1 per step) */
static uint64_t value_size(const Column *column, int64_t row) {
    if (column->steps == NULL) return feature_size(column, row);
    uint64_t size = 0;
    for (int64_t step = column->steps[row]; step < column->steps[row + 1]; step++) {
        uint64_t feature = feature_size(column, step);
        size += 1 + varint_size(feature) + feature;
    }
    return size;
}

/* { 1: key, 2: value }, without the entry's own tag and length */
static uint64_t entry_content_size(const Column *column, uint64_t value) {
    return 1 + varint_size(column->key_size) + column->key_size + 1 + varint_size(value) + value;
}


static uint8_t *put_feature(uint8_t *out, const Column *column, int64_t step) {
    int64_t start = column->offsets[step], end = column->offsets[step + 1];
    uint64_t count = (uint64_t)(end - start);
    *out++ = LIST_TAGS[column->kind];
    out = put_varint(out, list_size(column, start, end));
    switch (column->kind) {
        case KIND_FLOAT:
            if (count) {
                *out++ = FIELD_1;
                out = put_varint(out, 4 * count);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
                memcpy(out, column->floats + start, 4 * count);
                out += 4 * count;
#else
                for (int64_t j = start; j < end; j++) {
                    uint32_t bits;
                    memcpy(&bits, column->floats + j, 4);
                    out = put_u32_le(out, bits);
                }
#endif
            }
            break;
        case KIND_INT:
            if (count) {
                *out++ = FIELD_1;
                out = put_varint(out, int_payload_size(column, start, end));
                for (int64_t j = start; j < end; j++) out = put_varint(out, (uint64_t)column->ints[j]);
            }
            break;
        case KIND_BYTES:
            for (int64_t j = start; j < end; j++) {
                uint64_t value = (uint64_t)(column->value_offsets[j + 1] - column->value_offsets[j]);
                *out++ = FIELD_1;
                out = put_varint(out, value);
                if (value) memcpy(out, column->bytes + column->value_offsets[j], value);  /* NULL when all empty */
                out += value;
            }
            break;
    }
    return out;
}

static uint8_t *put_value(uint8_t *out, const Column *column, int64_t row) {
    if (column->steps == NULL) return put_feature(out, column, row);
    for (int64_t step = column->steps[row]; step < column->steps[row + 1]; step++) {
        *out++ = FIELD_1;
        out = put_varint(out, feature_size(column, step));
        out = put_feature(out, column, step);
    }
    return out;
}

/* The batch's columns split in two: features (context) first, then feature lists, each keeping its order. An
 * Example has features only; a SequenceExample writes each group as a field (1, 2) when the batch has any.
 * `value_sizes` holds the current row's value_size of each column, computed once for its size and its bytes. */
typedef struct {
    Column *columns;
    int64_t features;
    int64_t lists;
    int sequence;
    uint64_t *value_sizes;
} Batch;

/* A map (Features or FeatureLists) of columns first .. first + count - 1: a field 1 per entry, in the columns'
 * order (sorted by the caller) */
static uint64_t map_size(const Batch *batch, int64_t first, int64_t count) {
    uint64_t size = 0;
    for (int64_t i = first; i < first + count; i++) {
        uint64_t entry = entry_content_size(&batch->columns[i], batch->value_sizes[i]);
        size += 1 + varint_size(entry) + entry;
    }
    return size;
}

static uint8_t *put_map(uint8_t *out, const Batch *batch, int64_t first, int64_t count, int64_t row) {
    for (int64_t i = first; i < first + count; i++) {
        const Column *column = &batch->columns[i];
        uint64_t value = batch->value_sizes[i];
        *out++ = FIELD_1;
        out = put_varint(out, entry_content_size(column, value));
        *out++ = FIELD_1;
        out = put_varint(out, column->key_size);
        memcpy(out, column->key, column->key_size);
        out += column->key_size;
        *out++ = FIELD_2;
        out = put_varint(out, value);
        out = put_value(out, column, row);
    }
    return out;
}

static void measure_row(const Batch *batch, int64_t row) {
    for (int64_t i = 0; i < batch->features + batch->lists; i++)
        batch->value_sizes[i] = value_size(&batch->columns[i], row);
}

/* after measure_row */
static uint64_t record_size(const Batch *batch) {
    uint64_t size = 0;
    if (!batch->sequence || batch->features) {
        uint64_t map = map_size(batch, 0, batch->features);
        size += 1 + varint_size(map) + map;
    }
    if (batch->sequence && batch->lists) {
        uint64_t map = map_size(batch, batch->features, batch->lists);
        size += 1 + varint_size(map) + map;
    }
    return size;
}

/* after measure_row */
static uint8_t *put_record(uint8_t *out, const Batch *batch, int64_t row) {
    if (!batch->sequence || batch->features) {
        *out++ = FIELD_1;
        out = put_varint(out, map_size(batch, 0, batch->features));
        out = put_map(out, batch, 0, batch->features, row);
    }
    if (batch->sequence && batch->lists) {
        *out++ = FIELD_2;
        out = put_varint(out, map_size(batch, batch->features, batch->lists));
        out = put_map(out, batch, batch->features, batch->lists, row);
    }
    return out;
}

/* ---- the module's functions ------------------------------------------------------------------------------------ */

static int unpack_capsules(PyObject *schema_capsule, PyObject *array_capsule, struct ArrowSchema **schema,
                           struct ArrowArray **array) {
    *schema = PyCapsule_GetPointer(schema_capsule, "arrow_schema");
    if (*schema == NULL) return 0;
    *array = PyCapsule_GetPointer(array_capsule, "arrow_array");
    return *array != NULL;
}

static void free_batch(Batch *batch) {
    PyMem_Free(batch->columns);
    PyMem_Free(batch->value_sizes);
}

static PyObject *encode(PyObject *module, PyObject *args) {
    PyObject *schema_capsule, *array_capsule;
    int sequence;
    struct ArrowSchema *schema;
    struct ArrowArray *array;
    if (!PyArg_ParseTuple(args, "OOp", &schema_capsule, &array_capsule, &sequence)) return NULL;
    if (!unpack_capsules(schema_capsule, array_capsule, &schema, &array)) return NULL;
    if (!is_format(schema, "+s") || array->null_count != 0) Py_RETURN_NONE;
    if (array->length == 0) return Py_BuildValue("(y#y#)", "", (Py_ssize_t)0, "", (Py_ssize_t)0);

    int64_t rows = array->length, count = schema->n_children;
    size_t slots = count ? (size_t)count : 1;
    Batch batch = {PyMem_Calloc(slots, sizeof(Column)), 0, 0, sequence, PyMem_Calloc(slots, sizeof(uint64_t))};
    if (batch.columns == NULL || batch.value_sizes == NULL) {
        PyMem_Free(batch.columns);
        PyMem_Free(batch.value_sizes);
        return PyErr_NoMemory();
    }
    /* features in the columns' order, then feature lists in theirs: at most two walks over the schema */
    for (int pass = 0; pass < 2; pass++) {
        for (int64_t i = 0; i < count; i++) {
            Column column;
            if (!read_column(schema->children[i], array->children[i], array->offset, &column)) {
                free_batch(&batch);
                Py_RETURN_NONE;
            }
            int is_list = column.steps != NULL;
            if (is_list && !sequence) {  /* an Example holds no feature list */
                free_batch(&batch);
                Py_RETURN_NONE;
            }
            if (is_list != pass) continue;
            batch.columns[batch.features + batch.lists] = column;
            if (is_list) batch.lists++;
            else batch.features++;
        }
    }

    PyObject *lengths = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(8 * rows));
    if (lengths == NULL) {
        free_batch(&batch);
        return NULL;
    }
    int64_t *length = (int64_t *)PyBytes_AsString(lengths);
    uint64_t total = 0;
    Py_BEGIN_ALLOW_THREADS
    for (int64_t row = 0; row < rows; row++) {
        measure_row(&batch, row);
        length[row] = (int64_t)record_size(&batch);
        total += (uint64_t)length[row];
    }
    Py_END_ALLOW_THREADS
    PyObject *data = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)total);
    if (data == NULL) {
        free_batch(&batch);
        Py_DECREF(lengths);
        return NULL;
    }
    uint8_t *start = (uint8_t *)PyBytes_AsString(data), *out = start;
    Py_BEGIN_ALLOW_THREADS
    for (int64_t row = 0; row < rows; row++) {
        measure_row(&batch, row);
        out = put_record(out, &batch, row);
    }
    Py_END_ALLOW_THREADS
    free_batch(&batch);
    if ((uint64_t)(out - start) != total) {  /* the two walks disagree: a bug here, never a truncated record */
        Py_DECREF(lengths);
        Py_DECREF(data);
        PyErr_SetString(PyExc_SystemError, "_native_records.encode wrote another size than it computed");
        return NULL;
    }
    return Py_BuildValue("(NN)", data, lengths);
}

static PyObject *frame(PyObject *module, PyObject *args) {
    PyObject *schema_capsule, *array_capsule;
    struct ArrowSchema *schema;
    struct ArrowArray *array;
    if (!PyArg_ParseTuple(args, "OO", &schema_capsule, &array_capsule)) return NULL;
    if (!unpack_capsules(schema_capsule, array_capsule, &schema, &array)) return NULL;
    if (!is_format(schema, "Z") || array->null_count != 0) Py_RETURN_NONE;
    if (array->length == 0) return PyBytes_FromStringAndSize("", 0);  /* its buffers may be NULL */

    int64_t rows = array->length;
    const int64_t *offsets = (const int64_t *)array->buffers[1] + array->offset;
    const uint8_t *records = (const uint8_t *)array->buffers[2];
    uint64_t size = (uint64_t)(offsets[rows] - offsets[0]) + 16 * (uint64_t)rows;
    PyObject *framed = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)size);
    if (framed == NULL) return NULL;
    uint8_t *out = (uint8_t *)PyBytes_AsString(framed);
    Py_BEGIN_ALLOW_THREADS
    for (int64_t row = 0; row < rows; row++) {
        uint64_t length = (uint64_t)(offsets[row + 1] - offsets[row]);
        for (int i = 0; i < 8; i++) out[i] = (uint8_t)(length >> (8 * i));
        put_u32_le(out + 8, masked_crc(out, 8));
        if (length) memcpy(out + 12, records + offsets[row], length);  /* records is NULL when all are empty */
        out = put_u32_le(out + 12 + length, masked_crc(out + 12, length));
    }
    Py_END_ALLOW_THREADS
    return framed;
}

static PyObject *crc32c_implementation(PyObject *module, PyObject *unused) {
    return PyUnicode_FromString(crc32c == crc32c_software ? "software" : "sse4.2");
}

/* for the tests: both implementations against google_crc32c, whichever this CPU runs */
static PyObject *crc32c_of(PyObject *module, PyObject *args) {
    const char *data, *implementation;
    Py_ssize_t size;
    if (!PyArg_ParseTuple(args, "y#s", &data, &size, &implementation)) return NULL;
    if (strcmp(implementation, "software") == 0)
        return PyLong_FromUnsignedLong(crc32c_software((const uint8_t *)data, (size_t)size));
#ifdef HAVE_CRC32C_INSTRUCTION
    if (strcmp(implementation, "sse4.2") == 0 && __builtin_cpu_supports("sse4.2"))
        return PyLong_FromUnsignedLong(crc32c_sse42((const uint8_t *)data, (size_t)size));
#endif
    PyErr_Format(PyExc_ValueError, "no CRC32C implementation %s on this machine", implementation);
    return NULL;
}

static PyMethodDef methods[] = {
    {"encode", encode, METH_VARARGS,
     "encode(schema_capsule, array_capsule, sequence) -> (records: bytes, lengths: bytes of int64) or None\n\n"
     "A struct array's rows (a RecordBatch's) as serialized tf.train.Examples (SequenceExamples if `sequence`), "
     "back to back, or None where a column's layout is not one this module reads."},
    {"frame", frame, METH_VARARGS,
     "frame(schema_capsule, array_capsule) -> bytes or None\n\n"
     "A large_binary array's values with TFRecord's framing: length, its masked CRC32C, the value, its masked "
     "CRC32C."},
    {"crc32c_implementation", crc32c_implementation, METH_NOARGS,
     "'sse4.2' where the CPU's CRC32C instruction computes the checksums, else 'software'."},
    {"crc32c", crc32c_of, METH_VARARGS,
     "crc32c(data: bytes, implementation: 'software' | 'sse4.2') -> int: the (unmasked) CRC32C of `data`."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_definition = {
    PyModuleDef_HEAD_INIT, "_native_records", "The Example encoder and TFRecord framing in C.", -1, methods,
};

PyMODINIT_FUNC PyInit__native_records(void) {
    crc_init_tables();
#ifdef HAVE_CRC32C_INSTRUCTION
    __builtin_cpu_init();
    if (__builtin_cpu_supports("sse4.2")) crc32c = crc32c_sse42;
#endif
    return PyModule_Create(&module_definition);
}
