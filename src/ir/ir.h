/*
 * ir.h - the mutable in-memory model (prefix ir_).
 *
 * The IR mirrors every message and field of onnx.proto so that a model
 * survives load followed by save with nothing lost, and adds what editing
 * needs: values with a producer and a list of uses, a name index per graph
 * (uthash, O(1) lookup), subgraphs that resolve names in enclosing scopes,
 * and a node list that may be edited while it is walked.
 *
 * Conventions:
 * - Optional proto fields keep their presence: a NULL string is "absent",
 *   "" is "present and empty"; scalars have a has_ flag.
 * - Every struct that mirrors a message carries `unk`, the unknown fields the
 *   reader met in it, written back verbatim.
 * - The IR owns all it points to (strings, arrays, tensors, subgraphs) unless
 *   a comment says "borrowed". ir_*_free releases a whole subtree.
 * - Names of values live in IrValue only for node inputs/outputs and graph
 *   inputs/outputs/value_info; initializer tensors keep their own `name`,
 *   which ir_value_rename keeps in step.
 */
#ifndef OC_IR_H
#define OC_IR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/mem.h"
#include "uthash.h"

/* ---- plain data ---------------------------------------------------- */

/* One field the reader did not know, kept as it was on the wire. */
typedef struct IrUnknownField {
    uint32_t tag;      /* field number */
    uint8_t wire_type; /* protobuf wire type 0..5 */
    size_t len;
    uint8_t *data;     /* owned */
} IrUnknownField;

typedef struct IrUnknown {
    size_t n;
    IrUnknownField *f; /* owned array */
} IrUnknown;

/* A proto `bytes` value: may hold NUL bytes. */
typedef struct IrBytes {
    size_t len;
    uint8_t *data; /* owned; may be NULL when len is 0 */
} IrBytes;

/* StringStringEntryProto. */
typedef struct IrStrPair {
    char *key;   /* NULL = absent */
    char *value; /* NULL = absent */
    IrUnknown unk;
} IrStrPair;

/* A list of StringStringEntryProto (metadata_props, external_data, ...). */
typedef struct IrStrMap {
    size_t n;
    IrStrPair *p;
} IrStrMap;

/* OperatorSetIdProto. */
typedef struct IrOpset {
    char *domain; /* NULL = absent, which means "" (ai.onnx) */
    bool has_version;
    int64_t version;
    IrUnknown unk;
} IrOpset;

/* ---- types --------------------------------------------------------- */

/* TensorShapeProto.Dimension: a number, a symbol, or neither. */
typedef enum { IR_DIM_UNSET = 0, IR_DIM_VALUE = 1, IR_DIM_PARAM = 2 } IrDimKind;

typedef struct IrDim {
    IrDimKind kind;
    int64_t value;    /* when kind == IR_DIM_VALUE */
    char *param;      /* when kind == IR_DIM_PARAM */
    char *denotation; /* NULL = absent */
    IrUnknown unk;
} IrDim;

/* TensorShapeProto. */
typedef struct IrShape {
    size_t rank;
    IrDim *dims;
    IrUnknown unk;
} IrShape;

/* Which member of TypeProto's oneof is set; the values are the field
 * numbers, so they read the same as the wire. */
typedef enum {
    IR_TYPE_NONE = 0,
    IR_TYPE_TENSOR = 1,
    IR_TYPE_SEQUENCE = 4,
    IR_TYPE_MAP = 5,
    IR_TYPE_OPAQUE = 7,
    IR_TYPE_SPARSE_TENSOR = 8,
    IR_TYPE_OPTIONAL = 9
} IrTypeKind;

/* TypeProto with its oneof member flattened in. `inner_unk` holds the
 * unknown fields of the member message (TypeProto.Tensor etc.). */
typedef struct IrType IrType;
struct IrType {
    IrTypeKind kind;
    /* tensor, sparse tensor */
    bool has_elem_type;
    int32_t elem_type;
    IrShape *shape;          /* NULL = rank unknown */
    /* sequence, optional: elem; map: value type */
    IrType *elem;            /* NULL = absent */
    bool has_key_type;       /* map */
    int32_t key_type;
    char *opaque_domain;     /* opaque */
    char *opaque_name;
    char *denotation;        /* of the whole TypeProto */
    IrUnknown inner_unk;
    IrUnknown unk;
};

/* ---- tensors ------------------------------------------------------- */

/* TensorProto.Segment. */
typedef struct IrSegment {
    bool has_begin, has_end;
    int64_t begin, end;
    IrUnknown unk;
} IrSegment;

/* Where a tensor's external bytes were found at load time (borrowed from a
 * mapping the model owns), so that save can write them again. */
typedef struct IrExtRef {
    const uint8_t *data; /* borrowed from IrModel's mappings */
    size_t len;
    bool bound;          /* false: not resolved (LoadOptions.skip_external) */
} IrExtRef;

/* TensorProto, every storage field kept as read. */
typedef struct IrTensor {
    char *name;
    char *doc_string;
    bool has_data_type;
    int32_t data_type;
    size_t ndims;
    int64_t *dims;
    IrSegment *segment; /* NULL = absent */
    size_t n_float;    float *float_data;
    size_t n_int32;    int32_t *int32_data;
    size_t n_string;   IrBytes *string_data;
    size_t n_int64;    int64_t *int64_data;
    size_t n_double;   double *double_data;
    size_t n_uint64;   uint64_t *uint64_data;
    bool has_raw;
    IrBytes raw;
    bool raw_borrowed;  /* raw.data points into one of the model's
                           mappings (IrModel.maps): read-only, not freed */
    IrStrMap external_data;
    bool has_data_location;
    int data_location;  /* 0 DEFAULT, 1 EXTERNAL (other codes kept) */
    IrExtRef ext;       /* external bytes, when data_location is EXTERNAL */
    IrStrMap meta;
    IrUnknown unk;
} IrTensor;

/* SparseTensorProto. */
typedef struct IrSparse {
    IrTensor *values;  /* NULL = absent */
    IrTensor *indices; /* NULL = absent */
    size_t ndims;
    int64_t *dims;
    IrUnknown unk;
} IrSparse;

/* ---- graphs -------------------------------------------------------- */

typedef struct IrGraph IrGraph;
typedef struct IrNode IrNode;
typedef struct IrValue IrValue;

/* AttributeProto. Every value field has its own presence so that malformed
 * or IR-1 attributes (several values, no type) survive a round trip. */
/* The one list of AttributeProto.AttributeType codes: X(NAME, code). */
#define IR_ATTR_TYPES(X) \
    X(UNDEFINED, 0) X(FLOAT, 1) X(INT, 2) X(STRING, 3) X(TENSOR, 4) \
    X(GRAPH, 5) X(FLOATS, 6) X(INTS, 7) X(STRINGS, 8) X(TENSORS, 9) \
    X(GRAPHS, 10) X(SPARSE_TENSOR, 11) X(SPARSE_TENSORS, 12) \
    X(TYPE_PROTO, 13) X(TYPE_PROTOS, 14)

#define IR_ATTR_TYPE_ENUM(name, code) IR_AT_##name = code,
enum { IR_ATTR_TYPES(IR_ATTR_TYPE_ENUM) IR_AT_END };
#undef IR_ATTR_TYPE_ENUM

typedef struct IrAttr {
    char *name;
    char *ref_attr_name;
    char *doc_string;
    bool has_type;
    int type;           /* AttributeProto.AttributeType (IR_AT_*) */
    bool has_f;  float f;
    bool has_i;  int64_t i;
    bool has_s;  IrBytes s;
    IrTensor *t;        /* NULL = absent */
    IrGraph *g;         /* NULL = absent; a subgraph owned by this attr */
    IrSparse *sparse_tensor;
    IrType *tp;
    size_t n_floats;    float *floats;
    size_t n_ints;      int64_t *ints;
    size_t n_strings;   IrBytes *strings;
    size_t n_tensors;   IrTensor **tensors;
    size_t n_graphs;    IrGraph **graphs;
    size_t n_sparse;    IrSparse **sparse_tensors;
    size_t n_tps;       IrType **type_protos;
    IrUnknown unk;
} IrAttr;

/* IntIntListEntryProto. */
typedef struct IrIntList {
    bool has_key;
    int64_t key;
    size_t n;
    int64_t *v;
    IrUnknown unk;
} IrIntList;

/* SimpleShardedDimProto. */
typedef struct IrSimpleShard {
    IrDimKind kind;      /* dim_value, dim_param or neither */
    int64_t dim_value;
    char *dim_param;
    bool has_num_shards;
    int64_t num_shards;
    IrUnknown unk;
} IrSimpleShard;

/* ShardedDimProto. */
typedef struct IrShardedDim {
    bool has_axis;
    int64_t axis;
    size_t n;
    IrSimpleShard *simple;
    IrUnknown unk;
} IrShardedDim;

/* ShardingSpecProto. */
typedef struct IrShardSpec {
    char *tensor_name;
    size_t n_device;
    int64_t *device;
    size_t n_groups;
    IrIntList *groups;
    size_t n_dims;
    IrShardedDim *dims;
    IrUnknown unk;
} IrShardSpec;

/* NodeDeviceConfigurationProto. */
typedef struct IrNodeDevCfg {
    char *configuration_id;
    size_t n_specs;
    IrShardSpec *specs;
    bool has_pipeline_stage;
    int32_t pipeline_stage;
    IrUnknown unk;
} IrNodeDevCfg;

/* One use of a value: input `index` of `node`, or, when node is NULL,
 * output `index` of the subgraph `graph` (a subgraph may return a value of
 * an enclosing graph directly, e.g. an If branch passing x through). */
typedef struct IrUse {
    IrNode *node;
    size_t index;
    IrGraph *graph;  /* only for subgraph-output uses */
} IrUse;

/* NodeProto plus its place in the graph. */
struct IrNode {
    IrGraph *graph;
    IrNode *prev, *next;   /* the graph's node list */
    char *name, *op_type, *domain, *overload, *doc_string;
    size_t n_in;
    IrValue **in;          /* NULL entry = optional input left out ("") */
    size_t cap_in;         /* room in `in` (ir_node_add_input doubles it:
                              one realloc per input was quadratic) */
    size_t n_out;
    IrValue **out;         /* NULL entry = optional output left out */
    size_t n_attr;
    IrAttr **attr;
    IrStrMap meta;
    size_t n_devcfg;
    IrNodeDevCfg *devcfg;
    IrUnknown unk;
    bool dead;             /* deleted: unlinked, `next` kept for walks */
};

/* What defines a value. */
typedef enum {
    IR_VAL_UNDEF = 0,      /* named by a use, defined nowhere (yet) */
    IR_VAL_INPUT,          /* a graph input (may also have an initializer) */
    IR_VAL_INIT,           /* an initializer that is not a graph input */
    IR_VAL_NODE            /* a node's output */
} IrValKind;

/* A named value of one graph. Values are created and freed by the graph. */
struct IrValue {
    char *name;            /* owned; the hash key */
    IrGraph *graph;
    IrValKind kind;
    IrNode *producer;      /* IR_VAL_NODE */
    size_t producer_index;
    IrTensor *init;        /* initializer, borrowed from graph->inits */
    IrSparse *sparse_init; /* sparse initializer, borrowed from graph */
    size_t n_uses, cap_uses;
    IrUse *uses;
    size_t n_infos;        /* ValueInfo entries bound to it (any graph) */
    /* Filled by inference (infer.h), owned, NULL = unknown: */
    IrType *type;          /* the inferred type */
    IrShape *symval;       /* elements of a small integer tensor, as dims
                              (number, symbol or unknown): shape arithmetic */
    IrTensor *known;       /* its value, when computed before any run from
                              known inputs (src/analysis/known.h; read it with kv_value) */
    bool known_input;      /* a graph input whose initializer is a constant
                              (IR 3, where initializers had to be inputs) */
    UT_hash_handle hh;
};

/* ValueInfoProto, bound to the value it describes. */
typedef struct IrValueInfo {
    IrValue *value;
    bool name_absent;      /* the proto had no name field at all */
    IrType *type;          /* NULL = absent */
    char *doc_string;
    IrStrMap meta;
    IrUnknown unk;
} IrValueInfo;

/* TensorAnnotation. */
typedef struct IrTensorAnn {
    char *tensor_name;
    IrStrMap params;
    IrUnknown unk;
} IrTensorAnn;

/* An owned, growable array of pointers. */
typedef struct IrPtrList {
    size_t n, cap;
    void **p;
} IrPtrList;

/* GraphProto (also the body of a FunctionProto). */
struct IrGraph {
    IrGraph *parent;       /* enclosing graph of a subgraph, else NULL */
    IrNode *owner;         /* node whose attribute holds this subgraph */
    char *name;
    char *doc_string;
    IrNode *first, *last;  /* the node list, in file (topological) order */
    size_t n_nodes;
    IrPtrList dead;        /* deleted nodes, freed by ir_graph_collect */
    IrValue *values;       /* uthash: name -> value */
    IrPtrList inputs;      /* IrValueInfo* */
    IrPtrList outputs;     /* IrValueInfo* */
    IrPtrList value_info;  /* IrValueInfo* */
    IrPtrList inits;       /* IrTensor*, in file order */
    IrPtrList sparse_inits;/* IrSparse* */
    size_t n_qann;
    IrTensorAnn *qann;
    IrStrMap meta;
    IrUnknown unk;
    bool is_function;      /* a function body: inputs/outputs are bare names */
    /* A node of this graph has been given a graph attribute (set where one
     * is attached: ir_node_set_attr, the loader, inlining; never cleared).
     * Without it no subgraph lies below, and ir_graph_fresh_name checks
     * one hash instead of walking every node: a pass adding a node per
     * node stays linear. */
    bool may_nest;
};

/* TrainingInfoProto. */
typedef struct IrTraining {
    IrGraph *initialization; /* NULL = absent */
    IrGraph *algorithm;      /* NULL = absent */
    IrStrMap init_binding;
    IrStrMap update_binding;
    IrUnknown unk;
} IrTraining;

/* FunctionProto. The body's inputs and outputs are the function's formal
 * parameters (saved as bare names). */
typedef struct IrFunction {
    char *name, *domain, *overload, *doc_string;
    IrGraph *body;
    size_t n_attr_names;
    char **attr_names;       /* attributes without defaults */
    size_t n_attr;
    IrAttr **attr;           /* attributes with defaults */
    size_t n_opsets;
    IrOpset *opsets;
    IrStrMap meta;
    IrUnknown unk;
} IrFunction;

/* DeviceConfigurationProto. */
typedef struct IrDevCfg {
    char *name;
    bool has_num_devices;
    int32_t num_devices;
    size_t n_device;
    char **device;
    IrUnknown unk;
} IrDevCfg;

/* A file region mapped read-only for the model's lifetime. */
typedef struct IrMapping {
    char *path;            /* path as opened (for messages) */
    char *location;        /* the external_data location naming it, or NULL */
    void *base;
    size_t len;
    int fd;                /* the file, kept open so that save can copy file
                              to file (copy_file_range); -1 = closed */
    /* Unmaps [base, base+len) when the model is freed: the loader's own
     * (it also unlists the region from the signal guard), so that the IR
     * knows nothing of mappings and signals. NULL with base NULL. */
    void (*release)(void *base, size_t len);
} IrMapping;

/* ModelProto plus what the loader opened for it. */
typedef struct IrModel {
    bool has_ir_version;
    int64_t ir_version;
    size_t n_opsets;
    IrOpset *opsets;
    char *producer_name, *producer_version, *domain, *doc_string;
    bool has_model_version;
    int64_t model_version;
    IrGraph *graph;          /* NULL = absent */
    IrStrMap meta;
    size_t n_training;
    IrTraining *training;
    size_t n_functions;
    IrFunction **functions;
    size_t n_configs;
    IrDevCfg *configs;
    IrUnknown unk;
    char *dir;               /* the model's folder (external data root) */
    size_t n_maps;
    IrMapping *maps;
} IrModel;

/* ---- errors -------------------------------------------------------- */

/* A fallible call fills one of these with a one-line message. */
typedef struct IrError {
    char msg[512];
} IrError;

/* Formats into err (if not NULL); returns -1 so callers can
 * `return ir_fail(err, ...)`. */
int ir_fail(IrError *err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* ---- pointer lists (memory: base/mem.h) ---------------------------- */

void ir_ptrlist_push(IrPtrList *l, void *p);
void ir_ptrlist_remove_at(IrPtrList *l, size_t i);


/* ---- element types ------------------------------------------------- */

/* The one list of TensorProto.DataType codes: X(NAME, code, bits per
 * element, class). Every module names a type as IR_<NAME> and asks its
 * class here, instead of keeping a list or writing a bare code. Bits are 0
 * where the size is not fixed (STRING) or there is no element (UNDEFINED). */
#define IR_DTYPES(X) \
    X(UNDEFINED, 0, 0, NONE) \
    X(FLOAT, 1, 32, FLOAT) \
    X(UINT8, 2, 8, UINT) \
    X(INT8, 3, 8, SINT) \
    X(UINT16, 4, 16, UINT) \
    X(INT16, 5, 16, SINT) \
    X(INT32, 6, 32, SINT) \
    X(INT64, 7, 64, SINT) \
    X(STRING, 8, 0, STRING) \
    X(BOOL, 9, 8, BOOL) \
    X(FLOAT16, 10, 16, FLOAT) \
    X(DOUBLE, 11, 64, FLOAT) \
    X(UINT32, 12, 32, UINT) \
    X(UINT64, 13, 64, UINT) \
    X(COMPLEX64, 14, 64, COMPLEX) \
    X(COMPLEX128, 15, 128, COMPLEX) \
    X(BFLOAT16, 16, 16, FLOAT) \
    X(FLOAT8E4M3FN, 17, 8, FLOAT) \
    X(FLOAT8E4M3FNUZ, 18, 8, FLOAT) \
    X(FLOAT8E5M2, 19, 8, FLOAT) \
    X(FLOAT8E5M2FNUZ, 20, 8, FLOAT) \
    X(UINT4, 21, 4, UINT) \
    X(INT4, 22, 4, SINT) \
    X(FLOAT4E2M1, 23, 4, FLOAT) \
    X(FLOAT8E8M0, 24, 8, FLOAT) \
    X(UINT2, 25, 2, UINT) \
    X(INT2, 26, 2, SINT)

#define IR_DTYPE_ENUM(name, code, bits, cls) IR_##name = code,
enum { IR_DTYPES(IR_DTYPE_ENUM) IR_DTYPE_END };
#undef IR_DTYPE_ENUM

/* What kind of number an element type holds. FLOAT covers every binary
 * floating format (double down to float4, and the exponent-only E8M0). */
typedef enum {
    IR_DC_NONE, IR_DC_FLOAT, IR_DC_SINT, IR_DC_UINT, IR_DC_BOOL,
    IR_DC_STRING, IR_DC_COMPLEX
} IrDtypeClass;

/* TensorProto.DataType name ("FLOAT", ...) or NULL for an unknown code. */
const char *ir_dtype_name(int32_t dtype);
/* Bits per element (1..128), 0 for STRING/UNDEFINED/unknown. */
int ir_dtype_bits(int32_t dtype);
/* The type's class; IR_DC_NONE for UNDEFINED and unknown codes. */
IrDtypeClass ir_dtype_class(int32_t dtype);
/* Class tests: float (any binary floating format), integer (signed or
 * unsigned), signed integer, and "numeric" (float, integer or complex). */
bool ir_dtype_is_float(int32_t dtype);
bool ir_dtype_is_int(int32_t dtype);
bool ir_dtype_is_signed_int(int32_t dtype);
bool ir_dtype_is_numeric(int32_t dtype);

/* Number of elements of a tensor, from its dims; false on a negative dim
 * or overflow. */
bool ir_tensor_numel(const IrTensor *t, uint64_t *out);
/* Bytes the tensor's payload takes as stored (raw, typed lists or external),
 * strings counted by length. */
uint64_t ir_tensor_stored_bytes(const IrTensor *t);

/* ---- element access of IR tensors (src/ir/ir_tensor.c) ------------------
 * The one decoder of TensorProto payloads: raw_data, bound external data
 * and the typed lists (float_data, int32_data, int64_data, double_data,
 * uint64_data), for every type of IR_DTYPES. Bytes are read little-endian
 * one by one (never a cast of unaligned bytes); the 4- and 2-bit types are
 * packed first element in the lowest bits, and in int32_data either one
 * element per entry or packed bytes (writers differ). */

/* Elements per stored byte: 2 for the 4-bit types, 4 for the 2-bit ones,
 * else 1. */
unsigned ir_dtype_per_byte(int32_t dtype);
/* Bytes of one element once unpacked (the evaluator's layout: float16,
 * bfloat16 and float8 as bit patterns, 4- and 2-bit types one per byte,
 * signed ones sign-extended, complex as two reals); 0 for STRING, UNDEFINED
 * and unknown codes. */
size_t ir_dtype_host_size(int32_t dtype);
/* The bytes `numel` elements of dtype take stored (raw_data, external
 * data): packed, so 4- and 2-bit types share bytes. The one tensor byte
 * size: false for a type of no fixed width (string, undefined) or when
 * the size overflows 64 bits. */
bool ir_dtype_bytes(int32_t dtype, uint64_t numel, uint64_t *bytes);
/* The raw or bound external payload of t and its length; NULL (len 0) for
 * typed lists and unbound external data. */
const uint8_t *ir_tensor_bytes(const IrTensor *t, size_t *len);
/* Whether t's data is external (data_location EXTERNAL). */
bool ir_tensor_is_external(const IrTensor *t);
/* How many elements t's stored data holds (for the packed types, the most
 * its bytes can hold), or SIZE_MAX when that cannot be told before decoding
 * (unbound external data, strings in raw_data). */
size_t ir_tensor_present_elems(const IrTensor *t);
/* Refuses (err, -1) dims that overflow or are negative, and dims declaring
 * more elements than the data holds, before anything is allocated. */
int ir_tensor_check_declared(const IrTensor *t, IrError *err);
/* Decodes the numel elements of a non-string tensor into dst (numel *
 * ir_dtype_host_size bytes); -1 with err when the stored data does not
 * hold exactly numel elements. */
int ir_tensor_decode(const IrTensor *t, void *dst, size_t numel, IrError *err);
/* Element i as a bit pattern (integers wrapped to their width, float16/
 * bfloat16/float8 codes, complex64 as real | imag << 32); false when i is
 * beyond the dims or the stored data, or the type has no pattern of 64
 * bits or fewer (STRING, COMPLEX128). */
bool ir_tensor_get_bits(const IrTensor *t, size_t i, uint64_t *bits);
/* Element i of an integer or bool tensor; false for other types. */
bool ir_tensor_get_i64(const IrTensor *t, size_t i, int64_t *v);
/* Element i of a float, double, float16, bfloat16, integer or bool tensor
 * as a double; false for other types. */
bool ir_tensor_get_f64(const IrTensor *t, size_t i, double *v);
/* All elements, in a new array (*v, owned by the caller), when t has at
 * most max of them, its data holds exactly that many, and each reads as
 * ir_tensor_get_i64 / _f64 does; false otherwise. */
bool ir_tensor_to_i64s(const IrTensor *t, size_t max, int64_t **v, size_t *n);
bool ir_tensor_to_f64s(const IrTensor *t, size_t max, double **v, size_t *n);

/* ---- model and graph lifetime -------------------------------------- */

IrModel *ir_model_new(void);
void ir_model_free(IrModel *m);
/* A graph nested in `parent` (NULL for a top-level graph). */
IrGraph *ir_graph_new(IrGraph *parent);
void ir_graph_free(IrGraph *g);
void ir_tensor_free(IrTensor *t);
void ir_sparse_free(IrSparse *s);
void ir_type_free(IrType *t);
/* Whether declared dimension d is the unknown some exporters write as
 * dim_value -1 (a tolerated defect, src/analysis/tolerate.h: inference
 * and the repair read it as no dimension at all). */
bool ir_dim_minus_one(const IrDim *d);
void ir_shape_free(IrShape *s);
/* Deep copies (NULL gives NULL); unknown fields are copied too. */
IrType *ir_type_copy(const IrType *t);
/* The dims of a tensor type whose shape is fully static (every dim a
 * number >= 0) into dims (at most cap) and *rank; false otherwise. */
bool ir_type_static_dims(const IrType *t, int64_t *dims, size_t cap, size_t *rank);
IrShape *ir_shape_copy(const IrShape *s);
/* A shape of `rank` unset dimensions. */
IrShape *ir_shape_new(size_t rank);
/* Drops inference results (type, symval, known) from every value of g and of
 * the graphs nested in it. */
void ir_graph_clear_inferred(IrGraph *g);
void ir_attr_free(IrAttr *a);
void ir_function_free(IrFunction *f);
void ir_unknown_free(IrUnknown *u);
/* A deep copy of src's unknown fields into dst (dst's old ones not freed). */
void ir_unknown_copy(IrUnknown *dst, const IrUnknown *src);
void ir_strmap_free(IrStrMap *m);
void ir_valueinfo_free(IrValueInfo *vi);
/* Drop node device configurations, quantization annotations, model
 * configurations (annotations an older IR lacks: irver.h). */
void ir_node_clear_devcfg(IrNode *n);
void ir_graph_clear_qann(IrGraph *g);
void ir_model_clear_configs(IrModel *m);

/* The default domain is written "" or "ai.onnx" (NULL counts as ""): the
 * one normaliser, which gives "" for it and the domain otherwise, and the
 * one way messages show it ("ai.onnx"). */
const char *ir_domain_norm(const char *domain);
const char *ir_domain_shown(const char *domain);

/* Sets the opset version of `domain` ("" = ai.onnx), adding the import if
 * the model lacks it. Returns the version or -1 when absent. */
int64_t ir_model_opset(const IrModel *m, const char *domain);
void ir_model_set_opset(IrModel *m, const char *domain, int64_t version);

/* The model-local function node n calls (same domain, name and
 * overload; "" and "ai.onnx" are one domain), or NULL. */
IrFunction *ir_model_function(const IrModel *m, const IrNode *n);
/* The opset of `domain` a node sees: the function's own import when fn is
 * not NULL and imports it, else the model's. -1 when not imported. */
int64_t ir_scope_opset(const IrModel *m, const IrFunction *fn, const char *domain);

/* ---- values -------------------------------------------------------- */

/* The value named `name` in g itself, or NULL. O(1). */
IrValue *ir_graph_find_local(const IrGraph *g, const char *name);
/* The value named `name` in g or the nearest enclosing graph, as ONNX's
 * scoping rules say, or NULL. */
IrValue *ir_graph_lookup(const IrGraph *g, const char *name);
/* The value named `name` in g, created (IR_VAL_UNDEF) if missing. */
IrValue *ir_graph_value(IrGraph *g, const char *name);
/* A name not yet used in g or any graph it encloses or is enclosed by,
 * built from `base`. Caller frees. */
char *ir_graph_fresh_name(const IrGraph *g, const char *base);
/* Renames v; refuses (-1) if the new name is taken in v's graph or would
 * be captured by a value of that name in a subgraph that reads v. Keeps the
 * initializer tensor's name and quantization annotations in step.
 * O(uses x subgraph depth). Training bindings are not renamed. */
int ir_value_rename(IrValue *v, const char *name, IrError *err);
/* Points every use of `from` at `to`: node inputs (in subgraphs too) and
 * subgraph outputs that named `from`. The outputs of from's own graph are
 * not touched: they are its interface. Refuses (-1, nothing changed) when
 * a use sits in a subgraph where `to`'s name means another value. */
int ir_value_replace_uses(IrValue *from, IrValue *to, IrError *err);
/* Makes output `index` of g (a subgraph or function body, whose outputs
 * are matched by position) return v (of g or an enclosing graph); the
 * ValueInfo (its type) stays. Use lists and ValueInfo counts follow. */
void ir_graph_point_output(IrGraph *g, size_t index, IrValue *v);
/* True when v is listed among its graph's outputs. */
bool ir_value_is_graph_output(const IrValue *v);
/* Drops v from its graph if nothing refers to it any more. */
void ir_value_drop_if_unused(IrValue *v);
/* Drops g's initializers that nothing reads (a read from a nested
 * subgraph counts) and that are not graph inputs or outputs; returns how
 * many. */
size_t ir_graph_drop_unused_inits(IrGraph *g);

/* Adds graph input `name` with an (owned) type, at the end of the input
 * list. Returns the new ValueInfo, or NULL (type not taken) when the name
 * is already an input or a node's output in g. */
IrValueInfo *ir_graph_add_input(IrGraph *g, const char *name, IrType *type);
/* Appends v (of g or an enclosing graph) to g's outputs. */
IrValueInfo *ir_graph_add_output(IrGraph *g, IrValue *v, IrType *type);
/* Adds a value_info annotation for v. */
IrValueInfo *ir_graph_add_value_info(IrGraph *g, IrValue *v, IrType *type);
/* Adds an initializer (takes ownership of t, whose name must be set).
 * Returns NULL (t not taken) when the name already has an initializer or
 * is a node's output. */
IrValue *ir_graph_add_init(IrGraph *g, IrTensor *t);
/* Sets key to value in a metadata-style map, adding the entry if new. */
void ir_strmap_set(IrStrMap *m, const char *key, const char *value);

/* ---- nodes --------------------------------------------------------- */

/* A new node appended to g (before == NULL) or inserted before `before`.
 * Outputs are created as values of g; an output name that is already
 * produced in g is refused (returns NULL with err set). Empty names ("")
 * stand for left-out optional inputs/outputs. */
IrNode *ir_node_new(IrGraph *g, IrNode *before, const char *op_type,
                    const char *domain, const char *name,
                    size_t n_in, const char *const *in,
                    size_t n_out, const char *const *out, IrError *err);
/* Sets input i of n to v (NULL = left out), keeping use lists right. */
void ir_node_set_input(IrNode *n, size_t i, IrValue *v);
/* Appends an input. */
void ir_node_add_input(IrNode *n, IrValue *v);
/* Unlinks and frees n; its outputs lose their producer (they become
 * IR_VAL_UNDEF values, dropped when unused). Safe inside IR_FOR_NODES. */
void ir_node_delete(IrNode *n);
/* Makes from's output j become n's output i: the value (name, uses,
 * graph-output listing, value_info) moves to n and from's slot is left
 * out. n's old output i, if any, loses its producer. For rewrites that
 * replace a node by others while its consumers keep their input. */
void ir_node_take_output(IrNode *n, size_t i, IrNode *from, size_t j);
/* Moves n to just before `before` (or to the end when NULL). */
void ir_node_move_before(IrNode *n, IrNode *before);

/* The attribute named `name`, or NULL. */
IrAttr *ir_node_attr(const IrNode *n, const char *name);
/* Adds or replaces an attribute (takes ownership). A graph attribute's
 * subgraphs become children of n's graph, owned by n. */
void ir_node_set_attr(IrNode *n, IrAttr *a);
/* Removes and frees the attribute named `name`; returns whether it existed. */
bool ir_node_remove_attr(IrNode *n, const char *name);
IrAttr *ir_attr_int(const char *name, int64_t v);
IrAttr *ir_attr_float(const char *name, float v);
IrAttr *ir_attr_ints(const char *name, size_t n, const int64_t *v);
IrAttr *ir_attr_floats(const char *name, size_t n, const float *v);
IrAttr *ir_attr_string(const char *name, const char *s);
IrAttr *ir_attr_strings(const char *name, size_t n, const char *const *v);
IrAttr *ir_attr_tensor(const char *name, IrTensor *t);
/* A GRAPH attribute holding g (create g with ir_graph_new(node's graph)). */
IrAttr *ir_attr_graph(const char *name, IrGraph *g);

/* A FLOAT/INT64/... tensor with raw little-endian data copied from `data`
 * (`bytes` long). dims copied. */
IrTensor *ir_tensor_new(const char *name, int32_t dtype, size_t ndims,
                        const int64_t *dims, const void *data, size_t bytes);
/* A tensor type with a fixed shape; dims < 0 become unset dimensions. */
IrType *ir_type_tensor(int32_t elem_type, size_t rank, const int64_t *dims);

/* Walks g's nodes in order. The body may delete the current node or any
 * other (deleted nodes stay allocated, marked dead, until ir_graph_collect)
 * and may insert nodes; nodes inserted or moved during a walk may or may not
 * be visited. `break` is safe. */
IrNode *ir_walk_first(const IrGraph *g);
IrNode *ir_walk_next(const IrNode *n); /* next live node after n */
#define IR_FOR_NODES(g, n) \
    for (IrNode *n = ir_walk_first(g); n; n = ir_walk_next(n))
/* Frees the nodes deleted since the last collect. No walk may be active. */
void ir_graph_collect(IrGraph *g);

/* Drops g's value_info entries of values defined nowhere, read by nothing
 * and not graph outputs (left by rewrites that deleted their producers);
 * not recursive. Returns how many went. */
size_t ir_graph_drop_stale_info(IrGraph *g);

/* Counts subgraphs (attribute graphs) at every depth below g. */
size_t ir_graph_count_subgraphs(const IrGraph *g);

/* ---- scope walking -------------------------------------------------- */

/* Which graphs a walk visits (ir_each_graph, ir_graph_each_subgraph).
 * The top graphs are the model's graph (MAIN), the training graphs
 * (TRAINING: each TrainingInfo's initialization, then its algorithm) and
 * the function bodies (FUNCTIONS), in that order, which is the order of
 * their fields in ModelProto. SUBGRAPHS adds the graphs held by node
 * attributes (If, Loop, Scan, SequenceMap ...) below every visited top
 * graph, at every depth. A graph comes before the subgraphs it holds
 * unless POST is given; subgraphs follow their nodes' order, and a node's
 * attributes theirs. */
enum {
    IR_WALK_MAIN = 1u << 0,
    IR_WALK_SUBGRAPHS = 1u << 1,
    IR_WALK_FUNCTIONS = 1u << 2,
    IR_WALK_TRAINING = 1u << 3,
    IR_WALK_POST = 1u << 4,
    IR_WALK_ALL = IR_WALK_MAIN | IR_WALK_SUBGRAPHS | IR_WALK_FUNCTIONS | IR_WALK_TRAINING
};

/* Where a visited graph sits. */
typedef struct IrWalkAt {
    IrNode *node;          /* the node whose attribute holds it; NULL = a top graph */
    IrAttr *attr;          /* that attribute */
    IrFunction *fn;        /* the function whose body it is or lies in, else NULL */
    IrTraining *training;  /* the TrainingInfo it is or lies in, else NULL */
    unsigned depth;        /* 0 for a top graph, 1 for its subgraphs, ... */
} IrWalkAt;

/* Called on each visited graph; a nonzero return stops the walk, which
 * then returns that value. fn may edit g and the graphs below it (delete
 * or add nodes), not the graphs that hold g: the walker is still reading
 * their node lists. In a POST walk the graphs below g are done when fn(g)
 * runs, so it may also free its deleted nodes (ir_graph_collect). */
typedef int (*IrGraphFn)(IrGraph *g, const IrWalkAt *at, void *arg);
typedef int (*IrConstGraphFn)(const IrGraph *g, const IrWalkAt *at, void *arg);

/* Walks the graphs of m that flags select; returns 0, or what stopped it. */
int ir_each_graph(IrModel *m, unsigned flags, IrGraphFn fn, void *arg);
/* Walks g itself (when flags has IR_WALK_MAIN) and the graphs nested in it
 * (IR_WALK_SUBGRAPHS); at->depth counts from g. */
int ir_graph_each_subgraph(IrGraph *g, unsigned flags, IrGraphFn fn, void *arg);
/* The same, for walkers that only read. */
int ir_each_graph_const(const IrModel *m, unsigned flags, IrConstGraphFn fn, void *arg);
int ir_graph_each_subgraph_const(const IrGraph *g, unsigned flags, IrConstGraphFn fn,
                                 void *arg);

#endif
