/*
 * mil.h - a Core ML ML Program in memory (prefix mil_): what the export
 * builds from an ONNX model, what the package writer serializes, what the
 * package reader gives back and what the import turns into ONNX again.
 *
 * The shape follows MIL's: a Program of Functions, each with typed inputs,
 * an opset name ("CoreML7") and one Block; a Block holds Operations in SSA
 * order (every value defined once, before its readers) and names its
 * outputs; an Operation has a type ("conv"), named inputs each bound to
 * one or more arguments (a value's name or an immediate constant), typed
 * outputs and, for cond and while_loop, nested Blocks. A "const" op holds
 * its value in `val`. Dtype codes are MIL's own (MIL.proto DataType).
 *
 * Ownership: a program owns everything below it; every string and array
 * is heap-allocated and freed by mil_model_free. Builders never fail (they
 * abort on allocation failure, as mem_alloc does).
 */
#ifndef OC_MIL_H
#define OC_MIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* MIL.proto DataType numbers. */
enum {
    MIL_BOOL = 1, MIL_STRING = 2,
    MIL_FP16 = 10, MIL_FP32 = 11, MIL_FP64 = 12, MIL_BF16 = 13,
    MIL_INT8 = 21, MIL_INT16 = 22, MIL_INT32 = 23, MIL_INT64 = 24, MIL_INT4 = 25,
    MIL_UINT8 = 31, MIL_UINT16 = 32, MIL_UINT32 = 33, MIL_UINT64 = 34,
    MIL_UINT4 = 35, MIL_UINT2 = 36, MIL_UINT1 = 37, MIL_UINT6 = 38, MIL_UINT3 = 39,
};

/* The deployment targets, oldest first: the iOS release, the Model's
 * specificationVersion and the MIL opset its functions declare. */
typedef struct MilTarget {
    const char *name;       /* "iOS15" */
    int spec_version;       /* 6 */
    const char *opset;      /* "CoreML5" */
} MilTarget;

extern const MilTarget mil_targets[];
extern const size_t mil_targets_n;
/* The target named `name` ("iOS17", case-insensitive), or NULL. */
const MilTarget *mil_target_find(const char *name);
/* The target whose opset is `opset` ("CoreML7"), or NULL. */
const MilTarget *mil_target_of_opset(const char *opset);

/* A tensor type; rank -1 = unknown rank. A dim of -1 is unknown; when
 * dim_names[i] is set it is a symbolic dimension (flexible in the model
 * description). */
typedef struct MilType {
    int32_t dtype;
    int rank;
    int64_t *dims;
    char **dim_names;       /* NULL, or rank entries (each NULL or a name) */
    bool is_list;           /* a list of tensors of this element type */
} MilType;

/* A constant's value: dense, row-major, little-endian, `nbytes` bytes
 * (booleans one byte each; strings: `strings` with n_strings entries). */
typedef struct MilTensor {
    int32_t dtype;
    int rank;
    int64_t *dims;
    uint8_t *data;
    size_t nbytes;
    char **strings;
    size_t n_strings;
} MilTensor;

/* One argument of an input: a value in scope (`name`), or an immediate
 * constant (`value`). */
typedef struct MilArg {
    char *name;
    MilTensor *value;
} MilArg;

/* An op's input parameter and its arguments (several for variadic
 * parameters: concat's `values`). */
typedef struct MilInput {
    char *param;
    size_t n_args;
    MilArg *args;
} MilInput;

typedef struct MilNamedType {
    char *name;
    MilType type;
} MilNamedType;

typedef struct MilBlock MilBlock;

typedef struct MilOp {
    char *type;             /* "conv" */
    char *name;             /* the op's name attribute (may be NULL) */
    size_t n_in;
    MilInput *in;
    size_t n_out;
    MilNamedType *out;
    size_t n_blocks;
    MilBlock **blocks;
    MilTensor *val;         /* "const": its value (written as the `val` attribute) */
    /* The export's: the ONNX node the op was lowered from (borrowed, valid
     * while the export runs; NULL elsewhere), so that a rule checked after
     * lowering (constant parameters) still names the node. Never written. */
    const void *origin;
} MilOp;

struct MilBlock {
    size_t n_in;            /* while_loop body/cond: the loop variables */
    MilNamedType *in;
    size_t n_out;
    char **out;             /* value names the block returns */
    size_t n_ops;
    MilOp **ops;
    size_t cap_ops;         /* mil_op_add's: ops grow by doubling (0: as
                               allocated by whoever filled them) */
};

typedef struct MilFunction {
    char *name;             /* "main" */
    char *opset;            /* "CoreML7" */
    size_t n_in;
    MilNamedType *in;
    MilBlock *block;
} MilFunction;

/* A feature of the model description: an input or output, a multi-array
 * of `type` (symbolic dims become flexible ranges [lo, hi]; hi -1 is
 * unbounded). */
typedef struct MilFeature {
    char *name;
    char *doc;
    MilType type;
    int64_t *range_lo, *range_hi;   /* NULL, or rank entries */
} MilFeature;

typedef struct MilModel {
    int spec_version;
    size_t n_fn;
    MilFunction **fn;
    size_t n_in, n_out;
    MilFeature *in, *out;
    /* description metadata: "com.github.apple.coremltools.source" style
     * user-defined pairs, and the short description */
    char *short_doc;
    size_t n_meta;
    char **meta_keys, **meta_values;
} MilModel;

/* ---- building ------------------------------------------------------------ */

MilModel *mil_model_new(const MilTarget *t);
void mil_model_free(MilModel *m);
MilFunction *mil_function_add(MilModel *m, const char *name, const char *opset);
void mil_function_input(MilFunction *f, const char *name, const MilType *t);
MilBlock *mil_block_new(void);

/* A new op at the end of b. */
MilOp *mil_op_add(MilBlock *b, const char *type, const char *name);
/* Binds input `param` of op to the value `name` (a second call with the
 * same param adds an argument: variadic inputs). */
void mil_op_in(MilOp *op, const char *param, const char *name);
/* Binds input `param` to an immediate constant (owned by op). */
void mil_op_in_const(MilOp *op, const char *param, MilTensor *t);
/* Adds output `name` of type t (copied). */
void mil_op_out(MilOp *op, const char *name, const MilType *t);
/* A const op named `name` in b holding t (owned); its output is `name`. */
MilOp *mil_const_add(MilBlock *b, const char *name, MilTensor *t);
void mil_block_output(MilBlock *b, const char *name);

/* ---- types and tensors ------------------------------------------------------ */

MilType mil_type(int32_t dtype, int rank, const int64_t *dims);
MilType mil_type_copy(const MilType *t);
void mil_type_clear(MilType *t);
/* A tensor of dtype and dims holding a copy of `data` (nbytes derived from
 * the dims and dtype's width; NULL data: zeros). */
MilTensor *mil_tensor_new(int32_t dtype, int rank, const int64_t *dims, const void *data);
MilTensor *mil_tensor_scalar_i32(int32_t v);
MilTensor *mil_tensor_scalar_f32(float v);
MilTensor *mil_tensor_scalar_bool(bool v);
MilTensor *mil_tensor_ints(const int32_t *v, size_t n);    /* rank 1 int32 */
MilTensor *mil_tensor_string(const char *s);               /* rank 0 string */
MilTensor *mil_tensor_copy(const MilTensor *t);
void mil_tensor_free(MilTensor *t);
/* Bytes per element in memory (0 for strings and unknown codes). The
 * sub-byte types (int4, uint1..uint6: compressed weights) are stored
 * packed in a blob and held unpacked here, one byte per element. */
size_t mil_dtype_size(int32_t dtype);
/* Bits per element as stored (1..6 for the sub-byte types), 0 when
 * unknown. */
int mil_dtype_bits(int32_t dtype);
/* "fp32", "int32", ... (MIL's own names), or NULL. */
const char *mil_dtype_name(int32_t dtype);
/* Element count of a tensor's dims (false on overflow). */
bool mil_tensor_numel(const MilTensor *t, uint64_t *n);

/* ---- lookups ------------------------------------------------------------------ */

/* The function named `name`, or NULL. */
MilFunction *mil_function_find(const MilModel *m, const char *name);
/* The input `param` of op, or NULL. */
const MilInput *mil_op_input(const MilOp *op, const char *param);
/* The MIL type of value `name` as fn declares it (an input, or an output
 * of an op of its block), or NULL. */
const MilType *mil_function_type(const MilFunction *fn, const char *name);

#endif
