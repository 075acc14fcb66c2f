/*
 * hostile_models.h - semantically hostile models, built by the project
 * (prefix hm_).
 *
 * Each case starts from a small valid model built through the IR API
 * (Y = Relu(X + W), X and W float [2,3], opset 13, IR 8), breaks it in one
 * way (a cycle, an SSA violation, an undefined name, bad dims, data that
 * does not match its dims, a bad data type, recursive functions, a bad
 * sparse initializer, a huge or unprintable name, ...) and, for what the
 * IR cannot even hold (a value produced twice), patches the saved bytes
 * through protobuf-c. hm_bytes gives the file a case stands for.
 *
 * test_hostile_model.c loads each one and runs the checker, the converter,
 * the optimizer and the evaluator on it; tool_hostile_gen.c writes them to
 * a folder for tests/hostile_models.sh, which runs the command line on
 * them. Both read the table hm_cases, so every function here is used.
 */
#ifndef OC_HOSTILE_MODELS_H
#define OC_HOSTILE_MODELS_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/ir.h"
#include "onnx.pb-c.h"
#include "io/save.h"


/* The size of the huge names: well past LOAD_MAX_NAME. */
#define HM_HUGE_NAME (1u << 20)
/* Inputs of the node with very many inputs. */
#define HM_MANY_INPUTS 100000

/* One hostile model. `rule` is the checker rule that must refuse it, or
 * NULL when the loader refuses it first (the IR cannot hold it, or it
 * passes a loader limit); the message must then name every '|'-separated
 * word of `names` (case-insensitive). */
typedef struct HmCase {
    const char *name;
    void (*build)(IrModel *m);
    void (*patch)(Onnx__ModelProto *mp);   /* NULL: the saved bytes as are */
    const char *rule;
    const char *names;
} HmCase;

/* ---- building blocks ------------------------------------------------ */

static inline void hm_die(const char *what)
{
    fprintf(stderr, "hostile_models: cannot build the model: %s\n", what);
    exit(2);
}

static inline IrNode *hm_node(IrGraph *g, const char *op, const char *name,
                              size_t n_in, const char *const *in, size_t n_out,
                              const char *const *out)
{
    IrError err;
    IrNode *n = ir_node_new(g, NULL, op, "", name, n_in, in, n_out, out, &err);
    if (!n)
        hm_die(err.msg);
    return n;
}

static inline IrNode *hm_find(const IrGraph *g, const char *name)
{
    for (IrNode *n = g->first; n; n = n->next)
        if (n->name && !strcmp(n->name, name))
            return n;
    hm_die(name);
    return NULL;
}

static inline IrTensor *hm_floats(const char *name, size_t rank,
                                  const int64_t *dims, size_t n)
{
    float *v = calloc(n ? n : 1, sizeof *v);
    if (!v)
        hm_die("out of memory");
    for (size_t i = 0; i < n; i++)
        v[i] = 0.5f + (float)i;
    IrTensor *t = ir_tensor_new(name, IR_FLOAT, rank, dims, v, n * sizeof *v);
    free(v);
    return t;
}

static inline void hm_add_init(IrGraph *g, IrTensor *t)
{
    if (!ir_graph_add_init(g, t))
        hm_die(t->name);
}

static inline IrType *hm_float23(void)
{
    int64_t d[2] = {2, 3};
    return ir_type_tensor(IR_FLOAT, 2, d);
}

/* The valid base: Y = Relu(X + W), X and Y float [2,3], opset 13, IR 8. */
static inline IrModel *hm_base(void)
{
    IrModel *m = ir_model_new();
    m->has_ir_version = true;
    m->ir_version = 8;
    ir_model_set_opset(m, "", 13);
    m->graph = ir_graph_new(NULL);
    m->graph->name = mem_strdup("g");
    IrGraph *g = m->graph;
    int64_t d[2] = {2, 3};
    ir_graph_add_input(g, "X", hm_float23());
    hm_add_init(g, hm_floats("W", 2, d, 6));
    hm_node(g, "Add", "add0", 2, (const char *[]){"X", "W"}, 1,
            (const char *[]){"A"});
    hm_node(g, "Relu", "relu0", 1, (const char *[]){"A"}, 1,
            (const char *[]){"Y"});
    ir_graph_add_output(g, ir_graph_find_local(g, "Y"), hm_float23());
    return m;
}

static inline IrTensor *hm_init(IrModel *m, const char *name)
{
    IrValue *v = ir_graph_find_local(m->graph, name);
    if (!v || !v->init)
        hm_die(name);
    return v->init;
}

static inline void hm_set_op(IrNode *n, const char *op)
{
    free(n->op_type);
    n->op_type = mem_strdup(op);
}

/* A string of n copies of c (caller frees). */
static inline char *hm_repeat(char c, size_t n)
{
    char *s = malloc(n + 1);
    if (!s)
        hm_die("out of memory");
    memset(s, c, n);
    s[n] = '\0';
    return s;
}

/* A boolean scalar initializer `name` (true): an If's condition. */
static inline void hm_add_cond(IrGraph *g, const char *name)
{
    uint8_t t = 1;
    hm_add_init(g, ir_tensor_new(name, IR_BOOL, 0, NULL, &t, 1));
}

/* A graph nested in g holding Relu(`in`) -> `out`, returning `out`. */
static inline IrGraph *hm_relu_graph(IrGraph *g, const char *name,
                                     const char *in, const char *out)
{
    IrGraph *sg = ir_graph_new(g);
    sg->name = mem_strdup(name);
    hm_node(sg, "Relu", "inner", 1, (const char *[]){in}, 1,
            (const char *[]){out});
    ir_graph_add_output(sg, ir_graph_find_local(sg, out), NULL);
    return sg;
}

/* Two Relu nodes that read each other's output: a -> b -> a, in g;
 * `out` is b's output. */
static inline void hm_add_cycle(IrGraph *g, const char *out)
{
    hm_node(g, "Relu", "cyc_a", 1, (const char *[]){out}, 1,
            (const char *[]){"cyc_mid"});
    hm_node(g, "Relu", "cyc_b", 1, (const char *[]){"cyc_mid"}, 1,
            (const char *[]){out});
}

/* If(C) -> Z in the main graph with the given branches (either NULL:
 * left out), Z a graph output. */
static inline void hm_add_if(IrModel *m, IrGraph *then_g, IrGraph *else_g)
{
    IrGraph *g = m->graph;
    hm_add_cond(g, "C");
    IrNode *n = hm_node(g, "If", "if0", 1, (const char *[]){"C"}, 1,
                        (const char *[]){"Z"});
    if (then_g)
        ir_node_set_attr(n, ir_attr_graph("then_branch", then_g));
    if (else_g)
        ir_node_set_attr(n, ir_attr_graph("else_branch", else_g));
    ir_graph_add_output(g, ir_graph_find_local(g, "Z"), hm_float23());
}

/* A model-local function `name` of domain "local": y = calls(x), a
 * function of the same domain (NULL: Relu). */
static inline void hm_add_function(IrModel *m, const char *name,
                                   const char *calls)
{
    IrFunction *f = mem_alloc(sizeof *f);
    f->name = mem_strdup(name);
    f->domain = mem_strdup("local");
    f->body = ir_graph_new(NULL);
    f->body->is_function = true;
    f->n_opsets = 2;
    f->opsets = mem_array(2, sizeof *f->opsets);
    f->opsets[0] = (IrOpset){.domain = mem_strdup(""), .has_version = true,
                             .version = 13};
    f->opsets[1] = (IrOpset){.domain = mem_strdup("local"),
                             .has_version = true, .version = 1};
    ir_graph_add_input(f->body, "x", NULL);
    IrError err;
    if (!ir_node_new(f->body, NULL, calls ? calls : "Relu", calls ? "local" : "",
                     "call", 1, (const char *[]){"x"}, 1, (const char *[]){"y"},
                     &err))
        hm_die(err.msg);
    ir_graph_add_output(f->body, ir_graph_find_local(f->body, "y"), NULL);
    m->functions = mem_grow(m->functions, m->n_functions + 1,
                           sizeof *m->functions);
    m->functions[m->n_functions++] = f;
    ir_model_set_opset(m, "local", 1);
}

/* Makes relu0 a call of local function `fn`. */
static inline void hm_call_from_main(IrModel *m, const char *fn)
{
    IrNode *n = hm_find(m->graph, "relu0");
    hm_set_op(n, fn);
    free(n->domain);
    n->domain = mem_strdup("local");
}

/* A sparse initializer S: dense shape `dims` (rank 1 or 2), values of
 * shape `vdims`, int64 indices of shape `idims` holding `idx`. */
static inline void hm_add_sparse(IrModel *m, size_t rank, const int64_t *dims,
                                 size_t vrank, const int64_t *vdims,
                                 size_t irank, const int64_t *idims,
                                 size_t n_idx, const int64_t *idx)
{
    IrSparse *s = mem_alloc(sizeof *s);
    size_t nv = 1;
    for (size_t k = 0; k < vrank; k++)
        nv *= (size_t)vdims[k];
    s->values = hm_floats("S", vrank, vdims, nv);
    s->indices = ir_tensor_new("S_idx", IR_INT64, irank, idims, idx,
                               n_idx * sizeof *idx);
    s->ndims = rank;
    s->dims = mem_array(rank, sizeof *s->dims);
    memcpy(s->dims, dims, rank * sizeof *dims);
    ir_ptrlist_push(&m->graph->sparse_inits, s);
    IrValue *v = ir_graph_value(m->graph, "S");
    v->sparse_init = s;
    v->kind = IR_VAL_INIT;
}

/* ---- graph structure ------------------------------------------------ */

static inline void hm_cycle_two(IrModel *m)
{
    hm_add_cycle(m->graph, "cyc_out");
    ir_graph_add_output(m->graph, ir_graph_find_local(m->graph, "cyc_out"),
                        hm_float23());
}

static inline void hm_self_loop(IrModel *m)
{
    hm_node(m->graph, "Add", "selfie", 2, (const char *[]){"X", "S"}, 1,
            (const char *[]){"S"});
    ir_graph_add_output(m->graph, ir_graph_find_local(m->graph, "S"),
                        hm_float23());
}

static inline void hm_cycle_in_if(IrModel *m)
{
    IrGraph *then_g = ir_graph_new(m->graph);
    then_g->name = mem_strdup("then");
    hm_add_cycle(then_g, "t_out");
    ir_graph_add_output(then_g, ir_graph_find_local(then_g, "t_out"), NULL);
    hm_add_if(m, then_g, hm_relu_graph(m->graph, "else", "X", "e_out"));
}

/* Loop(M, C, X) -> Z whose body is (i, c, v) -> (c2, v2); `self_loop`
 * makes v2 read itself, `short_sig` leaves the body with one input. */
static inline void hm_add_loop(IrModel *m, bool self_loop, bool short_sig)
{
    IrGraph *g = m->graph;
    int64_t two = 2;
    hm_add_init(g, ir_tensor_new("M", IR_INT64, 0, NULL, &two, 8));
    hm_add_cond(g, "C");
    IrNode *n = hm_node(g, "Loop", "loop0", 3, (const char *[]){"M", "C", "X"},
                        1, (const char *[]){"Z"});
    IrGraph *b = ir_graph_new(g);
    b->name = mem_strdup("body");
    int64_t scalar_dims[1] = {0};
    if (!short_sig)
        ir_graph_add_input(b, "i", ir_type_tensor(IR_INT64, 0, scalar_dims));
    ir_graph_add_input(b, "c", ir_type_tensor(IR_BOOL, 0, scalar_dims));
    if (!short_sig)
        ir_graph_add_input(b, "v", hm_float23());
    hm_node(b, "Identity", "keep_going", 1, (const char *[]){"c"}, 1,
            (const char *[]){"c2"});
    if (self_loop)
        hm_node(b, "Add", "loop_self", 2, (const char *[]){"v", "v2"}, 1,
                (const char *[]){"v2"});
    else
        hm_node(b, "Relu", "step", 1, (const char *[]){short_sig ? "X" : "v"},
                1, (const char *[]){"v2"});
    ir_graph_add_output(b, ir_graph_find_local(b, "c2"), NULL);
    ir_graph_add_output(b, ir_graph_find_local(b, "v2"), NULL);
    ir_node_set_attr(n, ir_attr_graph("body", b));
    ir_graph_add_output(g, ir_graph_find_local(g, "Z"), hm_float23());
}

static inline void hm_cycle_in_loop(IrModel *m) { hm_add_loop(m, true, false); }
static inline void hm_loop_body_signature(IrModel *m) { hm_add_loop(m, false, true); }

/* The IR refuses a second producer: the saved bytes are patched so that
 * relu0 writes `to` instead of Y. */
static inline void hm_patch_relu_out(Onnx__ModelProto *mp, const char *to)
{
    for (size_t i = 0; i < mp->graph->n_node; i++) {
        Onnx__NodeProto *n = mp->graph->node[i];
        if (n->name && !strcmp(n->name, "relu0") && n->n_output == 1) {
            free(n->output[0]);
            n->output[0] = mem_strdup(to);
        }
    }
}

static inline void hm_nothing(IrModel *m) { (void)m; }
static inline void hm_patch_twice(Onnx__ModelProto *mp) { hm_patch_relu_out(mp, "A"); }
static inline void hm_patch_input(Onnx__ModelProto *mp) { hm_patch_relu_out(mp, "X"); }
static inline void hm_patch_init(Onnx__ModelProto *mp) { hm_patch_relu_out(mp, "W"); }

static inline void hm_undefined_input(IrModel *m)
{
    ir_node_set_input(hm_find(m->graph, "relu0"), 0,
                      ir_graph_value(m->graph, "nowhere"));
}

static inline void hm_undefined_output(IrModel *m)
{
    ir_graph_add_output(m->graph, ir_graph_value(m->graph, "ghost"),
                        hm_float23());
}

static inline void hm_undefined_outer(IrModel *m)
{
    hm_add_if(m, hm_relu_graph(m->graph, "then", "outer_missing", "t_out"),
              hm_relu_graph(m->graph, "else", "X", "e_out"));
}

/* ---- dims ------------------------------------------------------------ */

static inline void hm_init_dims(IrModel *m, size_t rank, const int64_t *dims)
{
    IrTensor *t = hm_init(m, "W");
    free(t->dims);
    t->ndims = rank;
    t->dims = mem_array(rank ? rank : 1, sizeof *t->dims);
    memcpy(t->dims, dims, rank * sizeof *dims);
}

static inline void hm_init_negative_dim(IrModel *m)
{
    hm_init(m, "W")->dims[0] = -3;
}

static inline void hm_init_dims_overflow(IrModel *m)
{
    int64_t d[3] = {INT64_C(1) << 32, INT64_C(1) << 32, 16};
    hm_init_dims(m, 3, d);
}

static inline void hm_init_rank_huge(IrModel *m)
{
    int64_t *d = malloc(1000 * sizeof *d);
    if (!d)
        hm_die("out of memory");
    for (size_t k = 0; k < 1000; k++)
        d[k] = 1;
    d[0] = 6;
    hm_init_dims(m, 1000, d);
    free(d);
}

static inline IrShape *hm_input_shape(IrModel *m)
{
    IrValueInfo *vi = m->graph->inputs.p[0];
    return vi->type->shape;
}

static inline void hm_input_negative_dim(IrModel *m)
{
    hm_input_shape(m)->dims[0].value = -5;
}

/* -2, not -1: a declared -1 is the unknown dimension some exporters
 * write, tolerated (src/analysis/tolerate.h); any other negative value is refused */
static inline void hm_value_info_negative_dim(IrModel *m)
{
    int64_t d[2] = {2, -2};
    ir_graph_add_value_info(m->graph, ir_graph_find_local(m->graph, "A"),
                            ir_type_tensor(IR_FLOAT, 2, d));
    /* ir_type_tensor makes negative dims unset: set it by hand */
    IrValueInfo *vi = m->graph->value_info.p[m->graph->value_info.n - 1];
    vi->type->shape->dims[1].kind = IR_DIM_VALUE;
    vi->type->shape->dims[1].value = -2;
}

static inline void hm_input_rank_huge(IrModel *m)
{
    IrValueInfo *vi = m->graph->inputs.p[0];
    ir_shape_free(vi->type->shape);
    vi->type->shape = ir_shape_new(1000);
    for (size_t k = 0; k < 1000; k++) {
        vi->type->shape->dims[k].kind = IR_DIM_VALUE;
        vi->type->shape->dims[k].value = 1;
    }
}

/* ---- data that does not match the dims ------------------------------- */

static inline void hm_raw_len(IrModel *m, size_t len)
{
    IrTensor *t = hm_init(m, "W");
    t->raw.data = mem_grow(t->raw.data, len, 1);
    if (len > t->raw.len)
        memset(t->raw.data + t->raw.len, 0, len - t->raw.len);
    t->raw.len = len;
}

static inline void hm_raw_short(IrModel *m) { hm_raw_len(m, 20); }
static inline void hm_raw_long(IrModel *m) { hm_raw_len(m, 28); }

/* W's data moved to float_data, n values for its 6 elements. */
static inline void hm_float_data(IrModel *m, size_t n)
{
    IrTensor *t = hm_init(m, "W");
    free(t->raw.data);
    t->raw = (IrBytes){0, NULL};
    t->has_raw = false;
    t->n_float = n;
    t->float_data = mem_array(n, sizeof(float));
}

static inline void hm_float_data_short(IrModel *m) { hm_float_data(m, 5); }
static inline void hm_float_data_long(IrModel *m) { hm_float_data(m, 7); }

/* An unused initializer `name` of dtype/dims with no data yet. */
static inline IrTensor *hm_bare_init(IrModel *m, const char *name,
                                     int32_t dtype, int64_t dim)
{
    IrTensor *t = ir_tensor_new(name, dtype, 1, &dim, NULL, 0);
    t->has_raw = false;
    hm_add_init(m->graph, t);
    return t;
}

static inline void hm_int64_data_count(IrModel *m)
{
    IrTensor *t = hm_bare_init(m, "I64", IR_INT64, 4);
    t->n_int64 = 3;
    t->int64_data = mem_array(3, sizeof(int64_t));
}

static inline void hm_string_data_count(IrModel *m)
{
    IrTensor *t = hm_bare_init(m, "STR", IR_STRING, 3);
    t->n_string = 2;
    t->string_data = mem_array(2, sizeof *t->string_data);
    for (size_t k = 0; k < 2; k++) {
        t->string_data[k].data = (uint8_t *)mem_strdup("s");
        t->string_data[k].len = 1;
    }
}

static inline void hm_int32_data_float16(IrModel *m)
{
    IrTensor *t = hm_bare_init(m, "H", IR_FLOAT16, 2);
    t->n_int32 = 3;
    t->int32_data = mem_array(3, sizeof(int32_t));
}

/* ---- data types ------------------------------------------------------ */

static inline void hm_dtype_0(IrModel *m) { hm_init(m, "W")->data_type = 0; }
static inline void hm_dtype_99(IrModel *m) { hm_init(m, "W")->data_type = 99; }
static inline void hm_dtype_neg(IrModel *m) { hm_init(m, "W")->data_type = -1; }

static inline void hm_input_elem_type(IrModel *m, int32_t t)
{
    IrValueInfo *vi = m->graph->inputs.p[0];
    vi->type->elem_type = t;
}

static inline void hm_input_elem_99(IrModel *m) { hm_input_elem_type(m, 99); }
static inline void hm_input_elem_0(IrModel *m) { hm_input_elem_type(m, 0); }

static inline void hm_cast_to(IrModel *m, int64_t to)
{
    IrNode *n = hm_find(m->graph, "relu0");
    hm_set_op(n, "Cast");
    ir_node_set_attr(n, ir_attr_int("to", to));
}

static inline void hm_cast_to_99(IrModel *m) { hm_cast_to(m, 99); }
/* 2^32 + 1: read as 32 bits it would be FLOAT */
static inline void hm_cast_to_wrapping(IrModel *m) { hm_cast_to(m, (INT64_C(1) << 32) + 1); }

/* ---- functions ------------------------------------------------------- */

static inline void hm_fn_self(IrModel *m)
{
    hm_add_function(m, "F", "F");
    hm_call_from_main(m, "F");
}

static inline void hm_fn_mutual(IrModel *m)
{
    hm_add_function(m, "F", "G");
    hm_add_function(m, "G", "F");
    hm_call_from_main(m, "F");
}

static inline void hm_fn_undefined(IrModel *m)
{
    hm_add_function(m, "F", "Nope");
    hm_call_from_main(m, "F");
}

/* F's body is a -> b -> a; main calls F. */
static inline void hm_fn_cycle(IrModel *m)
{
    hm_add_function(m, "F", NULL);
    IrGraph *b = m->functions[0]->body;
    hm_add_cycle(b, "cyc_out");
    ir_graph_add_output(b, ir_graph_find_local(b, "cyc_out"), NULL);
    hm_call_from_main(m, "F");
}

/* relu0 becomes a Constant whose value tensor has `rank` dims `dims`. */
static inline void hm_constant_dims(IrModel *m, size_t rank, const int64_t *dims)
{
    IrNode *n = hm_find(m->graph, "relu0");
    hm_set_op(n, "Constant");
    ir_node_set_input(n, 0, NULL);
    n->n_in = 0;
    IrTensor *t = ir_tensor_new("", IR_FLOAT, rank, dims, NULL, 0);
    ir_node_set_attr(n, ir_attr_tensor("value", t));
}

static inline void hm_constant_overflow(IrModel *m)
{
    int64_t d[2] = {INT64_C(1) << 40, INT64_C(1) << 40};
    hm_constant_dims(m, 2, d);
}

static inline void hm_constant_negative(IrModel *m)
{
    int64_t d[2] = {2, -7};
    hm_constant_dims(m, 2, d);
}

/* ---- sparse initializers --------------------------------------------- */

static inline void hm_sparse_range(IrModel *m)
{
    int64_t d = 4, nnz = 2, idx[2] = {0, 4};
    hm_add_sparse(m, 1, &d, 1, &nnz, 1, &nnz, 2, idx);
}

static inline void hm_sparse_negative(IrModel *m)
{
    int64_t d = 4, nnz = 2, idx[2] = {-1, 2};
    hm_add_sparse(m, 1, &d, 1, &nnz, 1, &nnz, 2, idx);
}

static inline void hm_sparse_count(IrModel *m)
{
    int64_t d = 4, nnz = 2, n_idx = 3, idx[3] = {0, 1, 2};
    hm_add_sparse(m, 1, &d, 1, &nnz, 1, &n_idx, 3, idx);
}

static inline void hm_sparse_coords_shape(IrModel *m)
{
    int64_t d[2] = {2, 2}, nnz = 2, id[2] = {2, 3}, idx[6] = {0, 0, 0, 1, 1, 1};
    hm_add_sparse(m, 2, d, 1, &nnz, 2, id, 6, idx);
}

static inline void hm_sparse_values_2d(IrModel *m)
{
    int64_t d = 4, vd[2] = {2, 1}, nnz = 2, idx[2] = {0, 1};
    hm_add_sparse(m, 1, &d, 2, vd, 1, &nnz, 2, idx);
}

static inline void hm_sparse_unsorted(IrModel *m)
{
    int64_t d = 4, nnz = 3, idx[3] = {0, 3, 1};
    hm_add_sparse(m, 1, &d, 1, &nnz, 1, &nnz, 3, idx);
}

static inline void hm_sparse_duplicate(IrModel *m)
{
    int64_t d = 4, nnz = 2, idx[2] = {2, 2};
    hm_add_sparse(m, 1, &d, 1, &nnz, 1, &nnz, 2, idx);
}

static inline void hm_sparse_negative_dense_dim(IrModel *m)
{
    int64_t d = -4, nnz = 1, idx[1] = {0};
    hm_add_sparse(m, 1, &d, 1, &nnz, 1, &nnz, 1, idx);
}

static inline void hm_sparse_coords_unsorted(IrModel *m)
{
    /* (1,0) before (0,1): lexicographic order is required */
    int64_t d[2] = {2, 2}, nnz = 2, id[2] = {2, 2}, idx[4] = {1, 0, 0, 1};
    hm_add_sparse(m, 2, d, 1, &nnz, 2, id, 4, idx);
}

/* ---- names ------------------------------------------------------------ */

static inline void hm_huge_node_name(IrModel *m)
{
    IrNode *n = hm_find(m->graph, "relu0");
    free(n->name);
    n->name = hm_repeat('n', HM_HUGE_NAME);
}

static inline void hm_huge_value_name(IrModel *m)
{
    char *s = hm_repeat('v', HM_HUGE_NAME);
    IrError err;
    if (ir_value_rename(ir_graph_find_local(m->graph, "A"), s, &err))
        hm_die(err.msg);
    free(s);
}

static inline void hm_huge_op_type(IrModel *m)
{
    IrNode *n = hm_find(m->graph, "relu0");
    free(n->op_type);
    n->op_type = hm_repeat('O', HM_HUGE_NAME);
}

static inline void hm_huge_domain(IrModel *m)
{
    IrNode *n = hm_find(m->graph, "relu0");
    free(n->domain);
    n->domain = hm_repeat('d', HM_HUGE_NAME);
}

static inline void hm_control_chars(IrModel *m)
{
    IrNode *n = hm_find(m->graph, "relu0");
    free(n->name);
    n->name = mem_strdup("evil\nnode\r\t\x1b[2J\x7f");
    hm_set_op(n, "Frobnicate\nSecond line");
}

/* ---- attributes and arity --------------------------------------------- */

static inline void hm_conv_kernel_string(IrModel *m)
{
    IrNode *n = hm_find(m->graph, "relu0");
    hm_set_op(n, "Conv");
    ir_node_add_input(n, ir_graph_find_local(m->graph, "W"));
    ir_node_set_attr(n, ir_attr_string("kernel_shape", "3x3"));
}

static inline void hm_many_inputs(IrModel *m)
{
    IrNode *n = hm_find(m->graph, "add0");
    IrValue *x = ir_graph_find_local(m->graph, "X");
    for (size_t k = 2; k < HM_MANY_INPUTS; k++)
        ir_node_add_input(n, x);
}

static inline void hm_if_no_branches(IrModel *m) { hm_add_if(m, NULL, NULL); }

/* ---- the table ---------------------------------------------------------- */

static const HmCase hm_cases[] = {
    {"cycle_two_nodes", hm_cycle_two, NULL, "topo-order", "cyc_a"},
    {"cycle_self_loop", hm_self_loop, NULL, "topo-order", "selfie"},
    {"cycle_in_if_branch", hm_cycle_in_if, NULL, "topo-order", "cyc_a|then"},
    {"cycle_in_loop_body", hm_cycle_in_loop, NULL, "topo-order", "loop_self"},
    {"ssa_two_producers", hm_nothing, hm_patch_twice, NULL, "ssa|'A'|relu0"},
    {"ssa_output_is_input", hm_nothing, hm_patch_input, NULL, "ssa|'X'|relu0"},
    {"ssa_output_is_init", hm_nothing, hm_patch_init, NULL, "ssa|'W'|relu0"},
    {"undefined_input", hm_undefined_input, NULL, "input-undefined", "nowhere|relu0"},
    {"undefined_graph_output", hm_undefined_output, NULL, "output-unproduced", "ghost"},
    {"undefined_outer_name", hm_undefined_outer, NULL, "input-undefined", "outer_missing"},
    {"init_negative_dim", hm_init_negative_dim, NULL, "tensor-dims", "'W'|-3"},
    {"init_dims_overflow", hm_init_dims_overflow, NULL, NULL, "'W'|overflow"},
    {"init_rank_1000", hm_init_rank_huge, NULL, NULL, "'W'|rank|LOAD_MAX_RANK"},
    {"input_negative_dim", hm_input_negative_dim, NULL, "value-type", "'X'|-5"},
    {"value_info_negative_dim", hm_value_info_negative_dim, NULL, "value-type", "'A'|-2"},
    {"input_rank_1000", hm_input_rank_huge, NULL, NULL, "'X'|rank|LOAD_MAX_RANK"},
    {"raw_data_short", hm_raw_short, NULL, "tensor-size", "'W'|20"},
    {"raw_data_long", hm_raw_long, NULL, "tensor-size", "'W'|28"},
    {"float_data_short", hm_float_data_short, NULL, "tensor-size", "'W'|5"},
    {"float_data_long", hm_float_data_long, NULL, "tensor-size", "'W'|7"},
    {"int64_data_count", hm_int64_data_count, NULL, "tensor-size", "'I64'"},
    {"string_data_count", hm_string_data_count, NULL, "tensor-size", "'STR'"},
    {"int32_data_float16_count", hm_int32_data_float16, NULL, "tensor-size", "'H'"},
    {"dtype_undefined", hm_dtype_0, NULL, "tensor-dtype", "'W'"},
    {"dtype_99", hm_dtype_99, NULL, "tensor-dtype", "'W'|99"},
    {"dtype_minus_1", hm_dtype_neg, NULL, "tensor-dtype", "'W'|-1"},
    {"input_elem_type_99", hm_input_elem_99, NULL, "value-type", "'X'|99"},
    {"input_elem_type_undefined", hm_input_elem_0, NULL, "value-type", "'X'"},
    {"cast_to_99", hm_cast_to_99, NULL, "attribute", "relu0|'to'|99"},
    {"cast_to_2pow32_plus_1", hm_cast_to_wrapping, NULL, "attribute", "relu0|'to'|4294967297"},
    {"function_calls_itself", hm_fn_self, NULL, "function-recursion", "'F'"},
    {"functions_call_each_other", hm_fn_mutual, NULL, "function-recursion", "'F'"},
    {"function_calls_undefined", hm_fn_undefined, NULL, "op-unknown", "Nope|'F'"},
    {"cycle_in_function_body", hm_fn_cycle, NULL, "topo-order", "cyc_a|'F'"},
    {"constant_dims_overflow", hm_constant_overflow, NULL, NULL, "tensor-overflow|relu0"},
    {"constant_negative_dim", hm_constant_negative, NULL, "tensor-dims", "relu0|-7"},
    {"sparse_index_out_of_range", hm_sparse_range, NULL, "sparse-index", "'S'|4"},
    {"sparse_index_negative", hm_sparse_negative, NULL, "sparse-index", "'S'|-1"},
    {"sparse_index_count", hm_sparse_count, NULL, "sparse-shape", "'S'"},
    {"sparse_coords_wrong_shape", hm_sparse_coords_shape, NULL, "sparse-shape", "'S'"},
    {"sparse_values_2d", hm_sparse_values_2d, NULL, "sparse-shape", "'S'|1-D"},
    {"sparse_unsorted", hm_sparse_unsorted, NULL, "sparse-order", "'S'"},
    {"sparse_duplicate", hm_sparse_duplicate, NULL, "sparse-unique", "'S'"},
    {"sparse_coords_unsorted", hm_sparse_coords_unsorted, NULL, "sparse-order", "'S'"},
    {"sparse_negative_dense_dim", hm_sparse_negative_dense_dim, NULL, "tensor-dims", "'S'"},
    {"huge_node_name", hm_huge_node_name, NULL, NULL, "node|LOAD_MAX_NAME"},
    {"huge_value_name", hm_huge_value_name, NULL, NULL, "LOAD_MAX_NAME"},
    {"huge_op_type", hm_huge_op_type, NULL, NULL, "op_type|LOAD_MAX_NAME"},
    {"huge_domain", hm_huge_domain, NULL, NULL, "domain|LOAD_MAX_NAME"},
    {"control_chars_in_names", hm_control_chars, NULL, "op-unknown", "evil|Frobnicate"},
    {"conv_kernel_shape_string", hm_conv_kernel_string, NULL, "attr-type", "kernel_shape|relu0"},
    {"node_100000_inputs", hm_many_inputs, NULL, "arity", "add0|100000"},
    {"if_without_branches", hm_if_no_branches, NULL, "attr-required", "if0|_branch"},
    {"loop_body_wrong_signature", hm_loop_body_signature, NULL, "subgraph", "loop0"},
};
#define HM_N_CASES (sizeof hm_cases / sizeof hm_cases[0])

/* The bytes of case c's file: the base model broken by c->build, saved,
 * and patched when c->patch says. 0, or -1 with err set. */
static inline int hm_bytes(const HmCase *c, uint8_t **buf, size_t *len,
                           IrError *err)
{
    IrModel *m = hm_base();
    c->build(m);
    int rc = save_model_buffer(m, buf, len, err);
    ir_model_free(m);
    if (rc || !c->patch)
        return rc;
    Onnx__ModelProto *mp = onnx__model_proto__unpack(NULL, *len, *buf);
    free(*buf);
    *buf = NULL;
    if (!mp)
        return ir_fail(err, "%s: the saved model does not decode", c->name);
    c->patch(mp);
    *len = onnx__model_proto__get_packed_size(mp);
    *buf = malloc(*len ? *len : 1);
    if (!*buf)
        hm_die("out of memory");
    onnx__model_proto__pack(mp, *buf);
    onnx__model_proto__free_unpacked(mp, NULL);
    return 0;
}

#endif
