/* The reference evaluator (ev_ prefix): runs a model on given inputs,
 * op by op, as the specification defines each op at each version.
 *
 * It is the judge of every conversion and optimization, so it favours code
 * that reads like the spec over speed; only the matrix products (MatMul,
 * Gemm, Conv, ConvTranspose) go through OpenBLAS.
 *
 * Layout: this header and src/eval/eval.c hold the values, the graph driver and
 * the helpers kernels share; src/eval/<family>.c hold the kernels, one file
 * per op family (the family the operator table gives the op, named the
 * same as in adapters/ and src/analysis/infer/), each op's versions side by side,
 * each file ending with a table ev_ops_F of (domain, op, kernel) that
 * eval.c registers through ev_families; helpers two families share are
 * declared in src/eval/kernels.h. src/eval/io.c
 * reads and writes values (TensorProto, SequenceProto, OptionalProto,
 * MapProto) and compares them. Element access and the small float types
 * are the IR's tensor kit's (ir/tensor_kit.h). */
#ifndef OC_EVAL_H
#define OC_EVAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/half.h"
#include "ir/ir.h"
#include "ir/tensor_kit.h"
#include "schema/opschema.h"
#include "schema/resize.h"

/* Limits, so that a hostile model ends with a message instead of running
 * forever or taking the machine's memory. */
#define EV_MAX_RANK 64                  /* dims of one tensor */
#define EV_MAX_TENSOR_BYTES (1ull << 34) /* 16 GiB for one tensor */
#define EV_MAX_LOOP_ITERS (1ull << 20)  /* iterations of one Loop/Scan run */
#define EV_MAX_CALL_DEPTH 64            /* nested subgraph/function runs */
/* Node runs (every node of every subgraph iteration) of one model run,
 * unless EvOptions says otherwise: far above any real model (a model of
 * 10^5 nodes, or a 10^4-step Loop over 10^4 nodes), low enough that a
 * runaway Loop ends within minutes. */
#define EV_DEFAULT_MAX_STEPS (1ull << 30)

/* Element types are the IR's (IR_FLOAT, ... in src/ir/ir.h). */

/* One string element (owned by its tensor; p is NUL-terminated too). */
typedef struct EvStr {
    size_t len;
    char *p;
} EvStr;

typedef enum { EV_TENSOR = 1, EV_SEQUENCE, EV_OPTIONAL, EV_MAP } EvKind;

/* A run-time value. Values are reference counted: a kernel may return one
 * of its inputs as an output (ev_ref) instead of copying it.
 *
 * Tensor elements are stored unpacked, one C object per element:
 *   FLOAT float; DOUBLE double; INT8/16/32/64 and UINT8/16/32/64 the C
 *   integer of that width; BOOL uint8_t 0/1; STRING EvStr;
 *   FLOAT16 and BFLOAT16 uint16_t bit patterns; the FLOAT8 types, FLOAT4E2M1
 *   and FLOAT8E8M0 uint8_t bit patterns (FLOAT4E2M1 in the low 4 bits);
 *   INT4/INT2 int8_t and UINT4/UINT2 uint8_t, one value per byte;
 *   COMPLEX64 two floats, COMPLEX128 two doubles.
 * Packing of the 4- and 2-bit types happens only in io.c. */
typedef struct EvValue EvValue;
struct EvValue {
    EvKind kind;
    int refs;
    /* bytes charged to the memory budget numbered `budget` (0: none) */
    uint64_t budget;
    size_t charged;
    /* tensor */
    int32_t dtype;
    size_t rank;
    int64_t *dims;       /* rank entries (NULL when rank is 0) */
    size_t numel;
    void *data;          /* numel elements (never NULL: a small block when
                            numel is 0) */
    size_t data_bytes;   /* what data was allocated with (ev_block_get);
                            0: borrowed from an initializer, read-only */
    /* sequence (n_items elements) or optional (n_items 0 = none, or 1) */
    size_t n_items;
    EvValue **items;
    IrType *elem_type;   /* owned; element type when known (empty ones) */
    /* map: keys (a 1-D tensor) and values (a tensor or sequence) */
    EvValue *keys, *vals;
};

/* ---- memory blocks (block.c) ------------------------------------------ */

/* A block of `bytes` (zeroed when asked), from the per-thread cache of
 * freed big blocks when one fits; aborts only when memory is out even
 * after the cache is emptied. */
void *ev_block_get(size_t bytes, bool zero);
/* Gives back a block from ev_block_get with the same `bytes`. */
void ev_block_put(void *p, size_t bytes);
/* Frees the calling thread's cached blocks (the end of a run). */
void ev_block_trim(void);

/* ---- threads (parallel.c) ---------------------------------------------- */

/* One task of ev_parallel: `worker` (below the thread count) names the
 * thread, for per-thread scratch. A task allocates nothing through the
 * evaluator and cannot fail: kernels check sizes and take scratch first. */
typedef void (*EvTaskFn)(void *ctx, size_t task, size_t worker);
/* Runs fn on tasks 0..n_tasks-1 over at most `threads` threads (the
 * caller's among them), returning when all are done. */
void ev_parallel(size_t threads, size_t n_tasks, EvTaskFn fn, void *ctx);
size_t ev_threads_default(void);   /* the machine's online cores, 1..64 */
/* Holds OpenBLAS to one thread (returns what it had) / gives it back. */
int ev_blas_hold(void);
void ev_blas_release(int was);
/* The kernels OpenBLAS computes products with ("SkylakeX", "Haswell",
 * ...; NULL for another BLAS); *repicked when the evaluator chose them by
 * the CPU's features because OpenBLAS did not know the CPU (parallel.c). */
const char *ev_blas_kernels(bool *repicked);

/* ---- values ---------------------------------------------------------- */

/* Bytes one element takes in memory (see above); 0 for an unknown code. */
size_t ev_dtype_size(int32_t dtype);
/* Floating point types, computed in double/float by the kernels. */
bool ev_dtype_is_float(int32_t dtype);
bool ev_dtype_is_int(int32_t dtype);      /* signed or unsigned, any width */
bool ev_dtype_is_unsigned(int32_t dtype);
/* float, double, float16, bfloat16: the types most float ops take. */
bool ev_dtype_is_real(int32_t dtype);

/* A new tensor with zeroed elements, or NULL with err set when the size
 * overflows or passes EV_MAX_TENSOR_BYTES, or rank passes EV_MAX_RANK, or
 * it would take the memory budget in force past its maximum (checked
 * before allocating). With err NULL (a scalar a kernel cannot fail on)
 * the budget is charged but never refuses. dims may be NULL when rank
 * is 0. */
EvValue *ev_tensor_new(int32_t dtype, size_t rank, const int64_t *dims,
                       IrError *err);
/* The same with elements left unset (strings still zeroed), for a kernel
 * that writes every element: zeroing an output costs as much as a fast
 * kernel writing it. */
EvValue *ev_tensor_new_raw(int32_t dtype, size_t rank, const int64_t *dims,
                           IrError *err);
/* A rank-0 tensor holding v (converted to dtype). */
EvValue *ev_scalar_new(int32_t dtype, double v);
EvValue *ev_sequence_new(void);
void ev_sequence_push(EvValue *seq, EvValue *item); /* takes the reference */
EvValue *ev_optional_new(EvValue *item);            /* NULL = none; takes it */
/* Copies n elements of src from element soff to dst from element doff
 * (same dtype); strings are duplicated, since each tensor owns its own. */
void ev_copy_elems(EvValue *dst, size_t doff, const EvValue *src, size_t soff,
                   size_t n);
/* A deep copy of a tensor (strings copied too). */
EvValue *ev_tensor_copy(const EvValue *t, IrError *err);
EvValue *ev_ref(EvValue *v);      /* returns v, one more reference */
void ev_unref(EvValue *v);        /* frees at the last reference; NULL ok */
/* Drops one reference to each of n values (NULL entries ok) and frees the
 * array (NULL ok): inputs and outputs of ev_model_run. */
void ev_values_free(EvValue **v, size_t n);

/* The memory budget of a run: every tensor and scratch block allocated on
 * this thread while it is pushed is charged to it and refused past `max`;
 * a value freed later gives its bytes back to the budget it was charged
 * to, when that budget is still pushed. Budgets nest (a stack per
 * thread), ids are unique per process. */
typedef struct EvBudget {
    uint64_t id, max, live;
    struct EvBudget *prev;
} EvBudget;
void ev_budget_push(EvBudget *b, uint64_t max);
void ev_budget_pop(EvBudget *b);
/* Charges `bytes` to the budget in force (none: 0 is stored in *id and
 * nothing refused). -1 with err = "needs X, over the memory budget of Y
 * (Z in use); raise --max-memory" when it would pass the maximum and err
 * is not NULL. */
int ev_budget_take(size_t bytes, uint64_t *id, IrError *err);
void ev_budget_give(uint64_t id, size_t bytes);
/* Bytes v takes (elements and bookkeeping, items of sequences, maps and
 * optionals too): what a fed value weighs against a budget. */
uint64_t ev_value_bytes(const EvValue *v);
/* Three quarters of physical memory (4 GiB when the system does not say):
 * the default maximum. */
uint64_t ev_default_max_memory(void);
/* "8 GiB", "1.5 MiB", "300 bytes" into buf. */
const char *ev_fmt_bytes(uint64_t n, char *buf, size_t cap);

/* Element k of a numeric or bool tensor, as double / int64 / uint64
 * (float16, bfloat16, float8, float4, e8m0 decoded; strings give 0). */
double ev_get_f(const EvValue *t, size_t k);
int64_t ev_get_i(const EvValue *t, size_t k);
uint64_t ev_get_u(const EvValue *t, size_t k);
/* Stores v into element k, converting to the tensor's type: floats round
 * to nearest even (float8 types saturate to their largest finite value,
 * as Cast with saturate=1 does); integers from double truncate toward zero
 * and wrap like a C cast from int64; bool is v != 0. */
void ev_set_f(EvValue *t, size_t k, double v);
void ev_set_i(EvValue *t, size_t k, int64_t v);
void ev_set_u(EvValue *t, size_t k, uint64_t v);

/* float16 and bfloat16: base/half.h; the float8 and float4 types:
 * tk_f8_to_float and tk_f8_from_float (ir/tensor_kit.h). */

/* ---- running a model ------------------------------------------------- */

/* Builds the kernel registry now instead of at the first node run. The
 * build is not synchronized: a program that evaluates on several threads
 * calls it once first (the oc_ library does, under pthread_once). */
void ev_init(void);

typedef struct EvOptions {
    uint64_t seed;            /* for the random ops; 0 = a fixed default */
    uint64_t max_loop_iters;  /* 0 = EV_MAX_LOOP_ITERS */
    uint64_t max_memory;      /* bytes live at once; 0 = ev_default_max_memory */
    uint64_t max_steps;       /* node and subgraph runs; 0 = EV_DEFAULT_MAX_STEPS */
    double timeout;           /* seconds for the whole run; 0 = none */
    /* Not 0: a seed, and one element in eight of each computing node's
     * float16/bfloat16 outputs moves one unit in the last place at random,
     * as an arithmetic that rounds elsewhere would (ONNX Runtime's fused
     * and widened kernels): a result that holds under it does not hang on
     * one rounding (--auto). Copies and picks (Reshape, Gather, Max, ...)
     * stay. */
    uint64_t jitter;
    /* Threads for the kernels that split their work (parallel.c); 0 = the
     * machine's cores. Outputs do not depend on it. */
    size_t threads;
    /* Not NULL: counts the main graph's nodes run so far (how far a run
     * stopped by its timeout got, for an estimate of the whole). */
    size_t *progress;
    /* Not NULL: called after each node of the main graph with its outputs
     * (n->n_out of them, NULL for left-out ones; take a reference with
     * ev_ref to keep one). Not 0 stops the run there (-1, err saying so):
     * how verification finds the first node whose value moved. */
    int (*watch)(void *arg, const IrNode *n, EvValue *const *out);
    void *watch_arg;
} EvOptions;

/* Runs m's main graph. `in` holds n_in values for the graph inputs that
 * have no initializer, in order (or for all inputs, when n_in equals their
 * full count). Inputs are checked against the declared types and static
 * dims. On success *out holds one value per graph output (free each with
 * ev_unref, then the array with free). 0 or -1 with err set to one line
 * naming the node or input. */
int ev_model_run(IrModel *m, const EvOptions *opt, size_t n_in,
                 EvValue *const *in, EvValue ***out, size_t *n_out,
                 IrError *err);
/* Runs the single node n of scope fn (NULL: the main graph or a subgraph)
 * on in[] (one per input, NULL for left-out ones), as if alone in a fresh
 * run: for constant folding. Nodes whose attributes refer to a function's
 * attributes (ref_attr_name) or whose subgraphs read outer values cannot
 * run this way. Fills out[] (n->n_out new references, NULL for left-out
 * outputs); 0, or -1 with err set and out[] all NULL. */
int ev_node_run(IrModel *m, const IrFunction *fn, IrNode *n, EvValue *const *in,
                EvValue **out, IrError *err);
/* ev_node_run on IR tensors (in[i] NULL for left-out inputs): what
 * inference proves known values with (analysis/known.h KvRunFn; callers
 * above both rooms hand it over as InfOptions.run). out[i] gets a new
 * tensor for each tensor output (NULL otherwise). Returns 0, or -1 with
 * out[] all NULL. */
int ev_prove_node(IrModel *m, IrNode *n, const IrTensor *const *in, IrTensor **out);
/* The graph inputs a caller must feed (no initializer), in order; none
 * when the model has no graph. *feeds is malloc'ed (free it). */
size_t ev_model_feeds(const IrModel *m, IrValueInfo ***feeds);

/* ---- kernels --------------------------------------------------------- */

typedef struct EvRun EvRun;     /* one ev_model_run (eval.c) */
typedef struct EvFrame EvFrame; /* values of one graph activation */
typedef struct EvScope EvScope; /* attributes visible to ref_attr_name */

/* What a kernel sees. in/out are indexed like the node's inputs/outputs;
 * an absent optional input is NULL. */
typedef struct EvCtx {
    EvRun *run;
    EvFrame *frame;
    EvScope *scope;
    const IrNode *node;
    const OsSchema *schema;   /* NULL for ops the table does not know */
    int64_t ver;              /* the op version in force (schema->since) */
    int64_t opset;            /* the node's domain opset in its scope */
    size_t n_in;
    EvValue **in;
    size_t n_out;
    EvValue **out;            /* kernels fill these (owned references) */
    IrError *err;
    void *tmp;                /* ev_tmp allocations, freed after the node */
} EvCtx;

typedef int (*EvKernel)(EvCtx *c);

typedef struct EvOp {
    const char *domain;       /* "" for ai.onnx */
    const char *op;
    EvKernel fn;
} EvOp;

/* The threads a kernel may use: EvOptions.threads, resolved. */
size_t ev_ctx_threads(const EvCtx *c);
/* fn(ctx, lo, hi) over [0, n) in pieces of `grain` items, on the run's
 * threads when there is more than one piece. The pieces do not depend on
 * the thread count; fn must not allocate through the evaluator. */
typedef void (*EvRangeFn)(void *ctx, size_t lo, size_t hi);
void ev_par_range(const EvCtx *c, size_t n, size_t grain, EvRangeFn fn, void *ctx);
/* Elements per piece of a plain elementwise loop: below two of them a
 * node runs on its own thread (handing work to the pool costs more). */
#define EV_PAR_GRAIN 16384
/* Counts units of work beyond the node's own run against the run's
 * --max-steps budget: 0, or -1 (err set, naming the node) past it. */
int ev_charge(EvCtx *c, uint64_t units);
/* Fails the node: err = "node 'NAME' (OP-VER): <message>"; returns -1. */
int ev_fail(EvCtx *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Zeroed scratch memory freed when the kernel returns (abort on OOM,
 * NULL with an error when n*size overflows). */
void *ev_tmp(EvCtx *c, size_t n, size_t size);
/* The same, not zeroed: for buffers the kernel writes in full. */
void *ev_tmp_raw(EvCtx *c, size_t n, size_t size);

/* Input i (NULL when absent or past the end). */
EvValue *ev_in(const EvCtx *c, size_t i);
/* Input i, which must be present and a tensor; else fails and gives NULL. */
EvValue *ev_in_tensor(EvCtx *c, size_t i);
/* The elements of integer (or bool/float, truncated) input i as int64s in
 * ev_tmp memory; *n = numel. NULL (with failure) when absent/not a tensor. */
int64_t *ev_in_ints(EvCtx *c, size_t i, size_t *n);
bool ev_has_out(const EvCtx *c, size_t i); /* the node names output i */
/* Input i, present, a tensor of a ev_dtype_is_real type; else fails. */
EvValue *ev_in_real(EvCtx *c, size_t i);
/* Optional input i: NULL when absent (no failure), else as ev_in_real,
 * setting *bad when it is present but unusable. */
EvValue *ev_in_real_opt(EvCtx *c, size_t i, bool *bad);

/* Attributes, resolving ref_attr_name inside function bodies. An absent
 * attribute reads as the operator table's default for the node's op at
 * its version (0, 0.0f or NULL where the table has none). */
const IrAttr *ev_attr(const EvCtx *c, const char *name);
int64_t ev_attr_i(const EvCtx *c, const char *name);
float ev_attr_f(const EvCtx *c, const char *name);
/* A string attribute as a NUL-terminated string (ev_tmp copy; the
 * table's default is its own constant). */
const char *ev_attr_s(EvCtx *c, const char *name);
/* The same with the caller's default, only where the table has none for
 * that attribute at that version (each call is listed, with its reason,
 * in tests/attr_defaults_exceptions.txt). */
int64_t ev_attr_i_or(const EvCtx *c, const char *name, int64_t dflt);
float ev_attr_f_or(const EvCtx *c, const char *name, float dflt);
const char *ev_attr_s_or(EvCtx *c, const char *name, const char *dflt);
/* List attributes: count, or -1 when absent (then *v is NULL). */
long ev_attr_ints(const EvCtx *c, const char *name, const int64_t **v);
long ev_attr_floats(const EvCtx *c, const char *name, const float **v);
long ev_attr_strings(const EvCtx *c, const char *name, const IrBytes **v);
/* A tensor attribute decoded (a new reference the caller must ev_unref),
 * or NULL (failure set when present but undecodable). */
EvValue *ev_attr_tensor(EvCtx *c, const char *name);
IrGraph *ev_attr_graph(const EvCtx *c, const char *name);

/* Output i: a new zeroed tensor stored in c->out[i] (the context owns it).
 * NULL with failure set on a size error. */
EvValue *ev_out_tensor(EvCtx *c, size_t i, int32_t dtype, size_t rank,
                       const int64_t *dims);
/* The same, elements unset: only for kernels that write every one. */
EvValue *ev_out_tensor_raw(EvCtx *c, size_t i, int32_t dtype, size_t rank,
                           const int64_t *dims);
/* Sets output i to v (takes the reference). */
void ev_out_set(EvCtx *c, size_t i, EvValue *v);

/* Normalizes axis for an axis range of rank + extra: valid axes are
 * [-(rank+extra), rank+extra), and a negative one counts from rank+extra
 * (extra = 1 suits Unsqueeze and OneHot, whose axis indexes the output;
 * ops like Flatten, whose axis may equal rank but counts negatives from
 * rank, normalize by hand). Fails naming `what`. */
int ev_axis(EvCtx *c, const char *what, int64_t axis, size_t rank,
            size_t extra, size_t *out);

/* Multidirectional broadcasting of n tensors: the output shape into
 * *rank/dims (EV_MAX_RANK entries), failing when dims conflict. */
int ev_broadcast_shape(EvCtx *c, size_t n, EvValue *const *t, size_t *rank,
                       int64_t *dims);
/* Walks the elements of a broadcast output, giving the offset of the
 * matching element in each input:
 *   EvBcast b; ev_bcast_init(&b, n, t, rank, dims);
 *   for (size_t k = 0; k < numel; k++) { ... b.off[j] ...; ev_bcast_next(&b); } */
#define EV_BCAST_MAX 8
typedef struct EvBcast {
    size_t n, rank;
    int64_t dims[EV_MAX_RANK];
    size_t idx[EV_MAX_RANK];
    size_t stride[EV_BCAST_MAX][EV_MAX_RANK];
    size_t off[EV_BCAST_MAX];
} EvBcast;
void ev_bcast_init(EvBcast *b, size_t n, EvValue *const *t, size_t rank,
                   const int64_t *dims);
void ev_bcast_next(EvBcast *b);

/* Product of dims[from, to); row-major strides of a shape. */
size_t ev_dims_prod(const int64_t *dims, size_t from, size_t to);
void ev_strides(size_t rank, const int64_t *dims, size_t *strides);

/* Runs subgraph g (an attribute of c->node) in a scope that sees the
 * node's graph: binds g's k-th input to in[k] (n_in of them), and stores
 * new references to its n_out outputs in out. 0 or -1 (failure set, naming
 * the node). */
int ev_run_subgraph(EvCtx *c, IrGraph *g, size_t n_in, EvValue *const *in,
                    size_t n_out, EvValue **out);

/* A uniform double in [0, 1) from the run's generator (random ops). */
double ev_random(EvCtx *c);
uint64_t ev_max_loop_iters(const EvCtx *c);

/* Decodes a TensorProto (raw, typed fields or external bytes) into a new
 * tensor. NULL with err set when the data does not match the dims. */
EvValue *ev_from_ir_tensor(const IrTensor *t, IrError *err);
/* The same, using t's bytes in place where their layout is the
 * evaluator's (no copy): the value must not outlive t. */
EvValue *ev_from_ir_tensor_borrow(const IrTensor *t, IrError *err);
/* v, or a copy of it where it (or an item) borrows: what may leave a run. */
EvValue *ev_value_own(EvValue *v, IrError *err);
/* Encodes a tensor as a new TensorProto named `name` (raw_data, or
 * string_data for strings; 4- and 2-bit types packed). */
IrTensor *ev_to_ir_tensor(const EvValue *v, const char *name);

/* ---- values in files, and comparing them (src/eval/io.c) ------------- */

/* Element k of tensor t as "[i,j,...]" into buf. */
void ev_index_text(const EvValue *t, size_t k, char *buf, size_t cap);
/* Decodes `len` bytes at buf: a serialized TensorProto, SequenceProto,
 * OptionalProto or MapProto; `type` (the graph input's declared type, may
 * be NULL = tensor) says which, and gives empty sequences and maps their
 * element types. A map whose values are scalar tensors of one type keeps
 * them as one 1-D tensor (what the map kernels take). `what` names the
 * bytes in messages. 0 or -1 with err; buf is not kept. */
int ev_value_read_mem(const void *buf, size_t len, const IrType *type,
                      const char *what, EvValue **out, IrError *err);
/* The same from a file (mapped, then decoded as above). */
int ev_value_read(const char *path, const IrType *type, EvValue **out,
                  IrError *err);
/* Reads DIR/input_0.pb, input_1.pb, ... for the model's feeds (see
 * ev_model_run), each as its input's declared kind; a missing file names
 * the input that needs it. */
int ev_inputs_read(IrModel *m, const char *dir, EvValue ***in, size_t *n_in,
                   IrError *err);
/* Encodes v as the message its kind needs, named `name`: a TensorProto
 * (raw_data, or string_data), SequenceProto, MapProto or OptionalProto. On
 * success *buf (malloc'ed, the caller frees) holds *len bytes; -1 with err
 * past protobuf's 2 GiB limit. */
int ev_value_write_mem(const EvValue *v, const char *name, uint8_t **buf,
                       size_t *len, IrError *err);
/* The same written to path (temp file + rename). */
int ev_value_write(const EvValue *v, const char *name, const char *path,
                   IrError *err);
/* Compares got with want: same kind, dtype and shape; floats by
 * |got - want| <= atol + rtol * |want| with NaN equal to NaN; integers,
 * bools and strings exactly. true when equal; otherwise a one-line reason
 * (first differing element) in why. */
bool ev_value_equal(const EvValue *got, const EvValue *want, double rtol,
                    double atol, char *why, size_t cap);

/* ---- backend test cases (the `test` command) -------------------------- */

typedef struct EvTestResult {
    size_t sets;        /* test_data_set_* folders run */
    size_t passed;      /* of them, all outputs equal */
} EvTestResult;

/* Runs every test_data_set_* of case_dir with the case's model.onnx, or
 * `model` when not NULL, comparing outputs. 0 when all sets pass; -1 with
 * err = the first failure (set name, output, reason). */
int ev_test_case(const char *case_dir, const char *model, double rtol,
                 double atol, EvTestResult *res, IrError *err);
/* The same with a model already loaded (m is run, not freed). */
int ev_test_case_model(const char *case_dir, IrModel *m, double rtol,
                       double atol, EvTestResult *res, IrError *err);
/* Both with the run's options (budgets; NULL = the defaults). */
int ev_test_case_opt(const char *case_dir, const char *model,
                     const EvOptions *opt, double rtol, double atol,
                     EvTestResult *res, IrError *err);
int ev_test_case_model_opt(const char *case_dir, IrModel *m,
                           const EvOptions *opt, double rtol, double atol,
                           EvTestResult *res, IrError *err);

/* The kernel tables of each family, ended by a NULL op: ev_ops_F is
 * defined in src/eval/F.c, F the op's family in the operator table. */
extern const EvOp ev_ops_activation[];
extern const EvOp ev_ops_attention[];
extern const EvOp ev_ops_control[];
extern const EvOp ev_ops_einsum[];
extern const EvOp ev_ops_elementwise[];
extern const EvOp ev_ops_index[];
extern const EvOp ev_ops_misc[];
extern const EvOp ev_ops_ml[];
extern const EvOp ev_ops_nn[];
extern const EvOp ev_ops_norm[];
extern const EvOp ev_ops_quant[];
extern const EvOp ev_ops_random[];
extern const EvOp ev_ops_reduce[];
extern const EvOp ev_ops_resize[];
extern const EvOp ev_ops_rnn[];
extern const EvOp ev_ops_sample[];
extern const EvOp ev_ops_sequence[];
extern const EvOp ev_ops_shape[];
extern const EvOp ev_ops_signal[];
extern const EvOp ev_ops_string[];
extern const EvOp ev_ops_tensor[];
extern const EvOp ev_ops_training[];

/* Every family's table under its family name (the registry is built from
 * this list; a test reads it to see where each op is registered). */
typedef struct EvFamily {
    const char *name;
    const EvOp *ops;
} EvFamily;
extern const EvFamily ev_families[];
extern const size_t ev_families_n;

/* One resized axis of an ONNX Resize (opset 11 and later attributes) as a
 * dense matrix, with the evaluator's coordinate and weight formulas: the
 * axis' output is W x + bias, W [out, in] row-major, bias [out] (the
 * extrapolation_value of tf_crop_and_resize where the crop leaves the
 * input, else 0). For the Core ML export, which lowers such axes as a
 * product with a constant. -1 on an unknown mode, a filter too wide or
 * no memory. */
typedef struct EvResizeSpec {
    const char *mode, *ctm, *nearest_mode;
    double cubic_a, extrapolation;
    bool exclude_outside, antialias;
} EvResizeSpec;
int ev_resize_axis_weights(const EvResizeSpec *sp, const RszAxis *len,
                           double *w, double *bias);

#endif
