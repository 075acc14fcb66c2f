/*
 * onnxconvert.h - the onnx-convert C library (prefix oc_).
 *
 * The one public header: everything a program needs to load, check,
 * convert, optimize, evaluate and save ONNX models. Build against the
 * installed library with `pkg-config --cflags --libs onnxconvert`.
 *
 * Conventions, for every function below:
 * - A function returning int returns 0 on success and -1 on failure; then
 *   oc_error() gives a one-line message saying why. Other functions say
 *   what they return on failure.
 * - Bad input (a damaged file, a wrong size, a NULL argument) is a failure
 *   with a message, never a crash. Running out of memory inside the
 *   library ends the process (a message on stderr, then abort), as the
 *   onnx-convert tool does; only the tensors oc_model_inputs and
 *   oc_evaluate hand out fail with a message instead.
 * - The caller owns what it passes in; what the library hands out is
 *   freed with the function named in its comment.
 *
 * Threads: different models may be used on different threads at the same
 * time; the library's shared tables are built once, under pthread_once,
 * and oc_error() is per thread. One model must not be used by two threads
 * at once, not even by calls that only read it as far as the caller can
 * see (oc_check and oc_evaluate record inferred types in the model). The
 * matrix products go through OpenBLAS, which may start threads of its own
 * (OPENBLAS_NUM_THREADS sets how many).
 */
#ifndef ONNXCONVERT_H
#define ONNXCONVERT_H

/* The version of this library and of the onnx-convert tool built with it;
 * the Makefile reads these three lines (soname, pkg-config file). */
#define ONNXCONVERT_VERSION_MAJOR 0
#define ONNXCONVERT_VERSION_MINOR 9
#define ONNXCONVERT_VERSION_PATCH 0
#define ONNXCONVERT_VERSION "0.9.0"

#include <stddef.h>
#include <stdint.h>

/* Marks the functions the shared library exports; everything else in it
 * is built hidden. */
#if defined(__GNUC__) || defined(__clang__)
#define ONNXCONVERT_API __attribute__((visibility("default")))
#else
#define ONNXCONVERT_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* A loaded model. Opaque; made by oc_load_file or oc_load_memory, freed
 * by oc_model_free. */
typedef struct oc_model oc_model;

/* Element types: the ONNX TensorProto.DataType codes. oc_evaluate takes
 * and gives all of these but OC_STRING and the 4- and 2-bit types
 * (OC_UINT4, OC_INT4, OC_FLOAT4E2M1, OC_UINT2, OC_INT2). */
enum {
    OC_FLOAT = 1, OC_UINT8 = 2, OC_INT8 = 3, OC_UINT16 = 4, OC_INT16 = 5,
    OC_INT32 = 6, OC_INT64 = 7, OC_STRING = 8, OC_BOOL = 9, OC_FLOAT16 = 10,
    OC_DOUBLE = 11, OC_UINT32 = 12, OC_UINT64 = 13, OC_COMPLEX64 = 14,
    OC_COMPLEX128 = 15, OC_BFLOAT16 = 16, OC_FLOAT8E4M3FN = 17,
    OC_FLOAT8E4M3FNUZ = 18, OC_FLOAT8E5M2 = 19, OC_FLOAT8E5M2FNUZ = 20,
    OC_UINT4 = 21, OC_INT4 = 22, OC_FLOAT4E2M1 = 23, OC_FLOAT8E8M0 = 24,
    OC_UINT2 = 25, OC_INT2 = 26
};

/* A dense tensor, for oc_evaluate. Elements are stored row-major, one C
 * object per element in host byte order: float, double, the integer of
 * the type's width, BOOL one byte 0 or 1, FLOAT16 and BFLOAT16 their
 * 16-bit patterns, the FLOAT8 types their 8-bit patterns, COMPLEX64 and
 * COMPLEX128 two floats or doubles (real, imaginary). size is the byte
 * count of data: the product of dims times oc_elem_size(elem_type).
 * A tensor the caller builds is the caller's; an array the library hands
 * out owns its names, dims and data, and is freed with oc_tensors_free. */
typedef struct oc_tensor {
    char *name;         /* the graph input or output it belongs to */
    int32_t elem_type;  /* OC_FLOAT, ... */
    size_t rank;        /* number of dims; 0 for a scalar */
    int64_t *dims;      /* rank entries (may be NULL when rank is 0) */
    void *data;         /* size bytes (may be NULL when size is 0) */
    size_t size;
} oc_tensor;

/* ---- the library ----------------------------------------------------- */

/* The library's version, "MAJOR.MINOR.PATCH" (ONNXCONVERT_VERSION of the
 * build). A static string. */
ONNXCONVERT_API const char *oc_version(void);

/* The newest opset of `domain` the library knows: "" or "ai.onnx" (NULL
 * counts as ""), "ai.onnx.ml", "ai.onnx.preview" or
 * "ai.onnx.preview.training". -1 for any other domain, with oc_error set.
 * The converter converts the first two. */
ONNXCONVERT_API int64_t oc_newest_opset(const char *domain);

/* The newest IR version (ModelProto.ir_version) the library knows. */
ONNXCONVERT_API int64_t oc_newest_ir_version(void);

/* The message of the last call that failed on the calling thread: one
 * line, no newline, naming the file, node, input or rule at fault. "" when
 * no call has failed on this thread; a successful call leaves it as it
 * was. The string belongs to the library and is overwritten by the next
 * failure on the same thread. */
ONNXCONVERT_API const char *oc_error(void);

/* ---- loading and freeing -------------------------------------------- */

/* Loads the model at `path`. Tensors stored in external files are read
 * from beside the model (a location that leaves its folder is refused).
 * On success *out is a new model for the caller to free with
 * oc_model_free; on failure *out is NULL. Loading does not check the
 * model's meaning (oc_check does). */
ONNXCONVERT_API int oc_load_file(const char *path, oc_model **out);

/* Loads a model from `size` bytes at `data` (the bytes of a .onnx file).
 * The bytes are copied: the caller may free them once this returns. A
 * model whose tensors live in external files is refused (there is no
 * folder to read them from). *out as for oc_load_file. */
ONNXCONVERT_API int oc_load_memory(const void *data, size_t size,
                                   oc_model **out);

/* Frees a model and everything it holds. NULL is allowed. */
ONNXCONVERT_API void oc_model_free(oc_model *m);

/* ---- what a model is ------------------------------------------------ */

/* The opset version the model imports for `domain` ("" or "ai.onnx" or
 * NULL for the standard operators, "ai.onnx.ml", or a custom domain); 0
 * when it does not import the domain. -1 on failure (NULL model, or a
 * model left half changed: see oc_convert). */
ONNXCONVERT_API int64_t oc_model_opset(const oc_model *m, const char *domain);

/* The model's ir_version as written in it (0 when it has none). -1 on
 * failure, as oc_model_opset. */
ONNXCONVERT_API int64_t oc_model_ir_version(const oc_model *m);

/* Nodes in the whole model: the main graph, every subgraph and every
 * model-local function body. 0 on failure (with oc_error set), as
 * oc_model_opset. */
ONNXCONVERT_API size_t oc_model_node_count(const oc_model *m);

/* ---- checking, converting, optimizing ------------------------------- */

/* Validates the model with the rules of `onnx-convert check` (docs/checker.md,
 * "The checker"). On failure the message is the first broken rule, which
 * it starts with: "RULE: WHERE: WHAT", e.g. "input-undefined: node
 * 'relu' (Relu-13): input 'ghost' is not a graph input, an initializer,
 * or an earlier node's output". The model is not changed in any way the
 * caller can see. The defects other exporters write that docs/tolerated.md
 * lists are not refused (the report of oc_check_report lists them as
 * "warnings"); oc_convert, oc_optimize, oc_run_command and oc_evaluate
 * repair them before anything else. */
ONNXCONVERT_API int oc_check(oc_model *m);

/* Converts the model to ai.onnx opset `opset` (1..oc_newest_opset("")),
 * one opset step at a time, in every graph and model-local function, and
 * sets ir_version as docs/converter.md "IR versions" says. Same as
 * oc_convert_ex(m, opset, 0, 0). */
ONNXCONVERT_API int oc_convert(oc_model *m, int64_t opset);

/* Converts the model's ai.onnx opset to `opset` and its ai.onnx.ml opset
 * to `opset_ml` (ignored when the model does not import ai.onnx.ml), and
 * sets ir_version to `ir_version`. An opset of 0 keeps that opset; an
 * ir_version of 0 lets the IR version policy of docs/converter.md "IR versions"
 * choose (the lowest holding the target opsets and the model's content,
 * never below the model's own when no opset goes down; annotations an
 * older IR lacks are dropped). A non-zero ir_version is written exactly:
 * 3..oc_newest_ir_version() and not below what the target opsets need,
 * else an error; model-local functions are inlined below IR 8. The model must pass oc_check first; a model it refuses is refused here
 * with the same message and is left as it was, and so are out-of-range
 * arguments. A conversion the converter cannot do exactly is refused
 * naming the node, op, opset step and reason: then the model is left half
 * converted, and every later call on it fails except oc_model_free.
 * Nodes out of topological order are first put in order, in every graph
 * (as `onnx-convert convert` does); a cycle is refused as topo-order. */
ONNXCONVERT_API int oc_convert_ex(oc_model *m, int64_t opset,
                                  int64_t opset_ml, int64_t ir_version);

/* Rewrites every node of the ai.onnx ops listed in `ops` (comma separated,
 * e.g. "Einsum,LayerNormalization") with the older ops of its expansion,
 * at the model's own opset, as `onnx-convert convert --expand` does: for
 * runtimes that lack an op the model's opset has. An op without an
 * expansion (`onnx-convert convert --help` lists those with one) is an
 * error naming it, and the model is left as it was; a node the expansion
 * cannot rewrite exactly is refused as oc_convert_ex refuses. */
ONNXCONVERT_API int oc_expand(oc_model *m, const char *ops);

/* Gives the main graph's input NAME the static dims of `spec`
 * ("NAME=1,3,224,224"; "NAME=" for a scalar), as `--input-shape` does:
 * before oc_convert_ex, so that values computed from shapes (Upsample and
 * Resize scales, Expand and Reshape shapes) are known and more of the
 * graph converts; before oc_optimize, so that more of it folds. The rank
 * and any dims the model fixes must agree; -1 otherwise (the model is
 * left as it was). */
ONNXCONVERT_API int oc_set_input_shape(oc_model *m, const char *spec);

/* Optimizes the model: folds constants, removes what computes nothing and
 * fuses operator chains, over every graph and function body, until a
 * round changes nothing. `passes` is a comma-separated list of pass
 * names (`onnx-convert optimize --list-passes`), or NULL for the default
 * pipeline. The graph's inputs and outputs keep their names, types and
 * order. The model must pass oc_check first (refused as in oc_convert_ex,
 * and an unknown pass name is refused with the model left as it was); a
 * pass that fails leaves the model half optimized: every later call on it
 * fails except oc_model_free. Nodes out of order are sorted first, as in
 * oc_convert_ex. */
ONNXCONVERT_API int oc_optimize(oc_model *m, const char *passes);

/* ---- the command line's commands and reports -------------------------- */

/* Runs `onnx-convert COMMAND` ("convert" or "optimize") on m, in place,
 * with the options `args` (n_args words, exactly as on the command line:
 * {"--opset", "11", "--optimize", "--verify"}), so that the model comes
 * out with the bytes the command line writes for the same options (save
 * it with oc_save_file or oc_save_memory). Every option of `onnx-convert
 * COMMAND --help` is taken but those about files and printing: -o,
 * --out-dir, -j, --json, --stats, --external-data, --external-threshold.
 * --verify evaluates the model as it was when the call began against the
 * result, on the inputs of the backend-test case its file sits in (when
 * it was loaded with oc_load_file from such a folder), else on seeded
 * random inputs.
 *
 * When report is not NULL, *report receives the JSON report that
 * `--json` prints (docs/json.md; "path" is the file the model was loaded
 * from, or "memory"), for the caller to free with oc_free, on success and
 * on a refusal alike: its "error" object names the stage, reason, node,
 * op, domain and opset step. An unknown option or a bad value fails
 * before anything runs, with no report and the model as it was. A model
 * the checker refuses is left as it was (report status "invalid"); a
 * failure in a later stage leaves it half changed, and every later call
 * on it fails except oc_model_free, as after oc_convert_ex. */
ONNXCONVERT_API int oc_run_command(oc_model *m, const char *command,
                                   const char *const *args, size_t n_args,
                                   char **report);

/* The JSON report of `onnx-convert check --json` for m (every broken
 * rule in "errors"; "path" as oc_run_command's) in *report, to free with
 * oc_free. Returns 0 when the checker accepts m, -1 when it does not (the
 * report is written all the same; oc_error() is the first finding) or
 * on failure (*report NULL). */
ONNXCONVERT_API int oc_check_report(oc_model *m, char **report);

/* The JSON object `onnx-convert info --json` prints for m (declared and
 * inferred types, op counts, ...) in *report, to free with oc_free. */
ONNXCONVERT_API int oc_info_report(oc_model *m, char **report);

/* The JSON report of `onnx-convert info --targets --json` for m: for
 * every ai.onnx opset (and every ai.onnx.ml opset when m imports it)
 * whether oc_run_command's convert --opset T would convert m, and its
 * refusal when not. m is not changed: each target converts a copy. In
 * *report, to free with oc_free. */
ONNXCONVERT_API int oc_targets_report(oc_model *m, char **report);

/* ---- evaluating ----------------------------------------------------- */

/* Bytes one element of `elem_type` takes in oc_tensor.data; 0 for a type
 * oc_evaluate does not take (strings, the 4- and 2-bit types, unknown
 * codes). */
ONNXCONVERT_API size_t oc_elem_size(int32_t elem_type);

/* The inputs a caller must feed to oc_evaluate: one tensor per graph input
 * that has no initializer, in the graph's order, with the declared name,
 * element type and shape and every element zero; a dim the model leaves
 * open (symbolic or unknown) is 1. Fill the data and pass the array to
 * oc_evaluate. On success *inputs is an array of *n_inputs tensors (NULL
 * when there are none) to free with oc_tensors_free. Fails when an input
 * is not a dense tensor oc_evaluate takes, or declares no shape. */
ONNXCONVERT_API int oc_model_inputs(const oc_model *m, oc_tensor **inputs,
                                    size_t *n_inputs);

/* Runs the model's main graph with the reference evaluator, once the
 * checker accepts the model (as oc_check; a refusal fails the call with
 * its finding, and nothing runs). `inputs` holds
 * one tensor for each graph input that has no initializer (the ones
 * oc_model_inputs lists), in any order: they are matched by name, so
 * every name must be given exactly once. Each input must have the
 * declared element type, its rank and every fixed dim, and a size that
 * matches its dims. Random operators draw from the seed oc_set_eval_seed
 * set (0 by default), so a run is repeatable. On success *outputs is an array of *n_outputs tensors, one
 * per graph output in the graph's order, named after them, to free with
 * oc_tensors_free; on failure *outputs is NULL and *n_outputs 0. Outputs
 * that are not dense tensors (strings, sequences, maps, optionals, the 4-
 * and 2-bit types) make the call fail: oc_evaluate_pb gives those. The
 * inputs are only read. Nodes out of topological order are sorted first,
 * as in oc_convert_ex. */
ONNXCONVERT_API int oc_evaluate(oc_model *m, const oc_tensor *inputs,
                                size_t n_inputs, oc_tensor **outputs,
                                size_t *n_outputs);

/* Bounds every later oc_evaluate and oc_evaluate_pb of m: at most `max_memory` bytes of
 * values alive at once (0: three quarters of physical memory, the
 * default), at most `max_steps` node runs, every iteration of a Loop or
 * Scan body counted (0: 2^30, the default), and at most `timeout_seconds`
 * of time (0: no limit, the default). A run that would pass one fails
 * with a message naming the node, its op and the bound, before the
 * allocation that would pass the memory budget is made. Fails on a
 * negative or NaN timeout. */
ONNXCONVERT_API int oc_set_eval_limits(oc_model *m, uint64_t max_memory, uint64_t max_steps, double timeout_seconds);

/* Sets the seed the random operators (RandomNormal, Bernoulli, Dropout in
 * training mode, ...) of every later oc_evaluate and oc_evaluate_pb of m
 * draw from: 0 by default, as `onnx-convert run --seed`. The same seed
 * gives the same outputs. */
ONNXCONVERT_API int oc_set_eval_seed(oc_model *m, uint64_t seed);

/* A named run of bytes: one value serialized as ONNX writes it, for
 * oc_evaluate_pb. A buffer the caller builds is the caller's; an array
 * the library hands out owns its names and data, and is freed with
 * oc_buffers_free. */
typedef struct oc_buffer {
    char *name;         /* the graph input or output it belongs to */
    void *data;         /* size bytes (may be NULL when size is 0) */
    size_t size;
} oc_buffer;

/* Runs the model as oc_evaluate does (the checker first, the same limits
 * and seed), with every value serialized the way the ONNX backend test
 * cases store them (input_K.pb, output_K.pb): a TensorProto, or, where the
 * graph input's declared type is a sequence, a map or an optional, a
 * SequenceProto, MapProto or OptionalProto. So it takes and gives every
 * kind of value the evaluator has, strings and the 4- and 2-bit types
 * included (packed as TensorProto packs them). `inputs` holds one buffer
 * for each graph input that has no initializer, in any order, matched by
 * name: a name no such input has, a missing input or one given twice
 * fails naming it, and so do bytes that do not decode as the declared
 * kind (truncated, the wrong message, a wrong element type or dims).
 * On success *outputs is an array of *n_outputs buffers, one per graph
 * output in the graph's order, named after them, holding what `onnx-convert
 * run` writes to output_K.pb, to free with oc_buffers_free; on failure
 * *outputs is NULL and *n_outputs 0. The inputs are only read. Like every
 * call on a model, never on one model from two threads at once. */
ONNXCONVERT_API int oc_evaluate_pb(oc_model *m, const oc_buffer *inputs,
                                   size_t n_inputs, oc_buffer **outputs,
                                   size_t *n_outputs);

/* Frees an array of n buffers that oc_evaluate_pb handed out, with their
 * names and data. NULL is allowed. Not for arrays the caller built. */
ONNXCONVERT_API void oc_buffers_free(oc_buffer *b, size_t n);

/* Frees an array of n tensors that oc_model_inputs or oc_evaluate handed
 * out, with their names, dims and data. NULL is allowed. Not for arrays
 * the caller built. */
ONNXCONVERT_API void oc_tensors_free(oc_tensor *t, size_t n);

/* ---- saving --------------------------------------------------------- */

/* Writes the model to `path`, through a temporary file beside it that is
 * renamed into place (a failure leaves no file behind, and an old file at
 * `path` as it was). Tensors the model read from external files are
 * written again to files of the same names beside `path`. A model over
 * protobuf's 2 GiB message limit is refused. */
ONNXCONVERT_API int oc_save_file(const oc_model *m, const char *path);

/* Serializes the model into memory: on success *data holds *size bytes
 * (a .onnx file's content) for the caller to free with oc_free. Tensors in
 * external files are written as references (location, offset, length),
 * not as bytes. Refused over 2 GiB. On failure *data is NULL. */
ONNXCONVERT_API int oc_save_memory(const oc_model *m, void **data,
                                   size_t *size);

/* Frees memory the library handed out (oc_save_memory's buffer). NULL is
 * allowed. */
ONNXCONVERT_API void oc_free(void *p);

#ifdef __cplusplus
}
#endif

#endif
