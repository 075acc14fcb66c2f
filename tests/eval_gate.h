/*
 * eval_gate.h - models the checker refuses but the evaluator could run,
 * built by the project (prefix eg_).
 *
 * The evaluator runs only what the checker accepts (docs/limits.md "Hostile
 * files"). Each case here is a small model that breaks one rule of the
 * checker in a way a kernel would not notice by itself: Relu with three
 * inputs, Add with seven, an extra output, a missing or mistyped
 * attribute, an input of a type the op does not take, SplitToSequence
 * with no output (a use-after-free once), a model with no graph (a
 * null dereference once). eg_mutate_node_test breaks a backend node
 * test's model the same ways, so that the set also covers every op the
 * data has.
 *
 * test_eval_gate.c runs the library (oc_evaluate) and the evaluator's own
 * entry points on them; tool_eval_gate_gen.c writes them as case folders
 * for tests/eval_gate.sh, which runs `check`, `run` and `test`.
 */
#ifndef OC_EVAL_GATE_H
#define OC_EVAL_GATE_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/ir.h"
#include "onnx.pb-c.h"
#include "schema/opschema.h"


static inline void eg_die(const char *what)
{
    fprintf(stderr, "eval_gate: cannot build the model: %s\n", what);
    exit(2);
}

static inline IrNode *eg_node(IrGraph *g, const char *op, size_t n_in,
                              const char *const *in, size_t n_out,
                              const char *const *out)
{
    IrError err;
    IrNode *n = ir_node_new(g, NULL, op, "", "n0", n_in, in, n_out, out, &err);
    if (!n)
        eg_die(err.msg);
    return n;
}

static inline IrType *eg_type(int32_t dt)
{
    int64_t d[2] = {2, 3};
    return ir_type_tensor(dt, 2, d);
}

/* An empty model: opset 13 (SplitToSequence needs 11), IR 8, input X of
 * type dt [2,3]. */
static inline IrModel *eg_model(int32_t dt)
{
    IrModel *m = ir_model_new();
    m->has_ir_version = true;
    m->ir_version = 8;
    ir_model_set_opset(m, "", 13);
    m->graph = ir_graph_new(NULL);
    m->graph->name = mem_strdup("g");
    ir_graph_add_input(m->graph, "X", eg_type(dt));
    return m;
}

/* Y = OP(X, ... n_in times) as the model's output. */
static inline IrModel *eg_unary(const char *op, size_t n_in, int32_t dt)
{
    IrModel *m = eg_model(dt);
    const char *in[8] = {"X", "X", "X", "X", "X", "X", "X", "X"};
    if (n_in > 8)
        eg_die("too many inputs");
    eg_node(m->graph, op, n_in, in, 1, (const char *[]){"Y"});
    ir_graph_add_output(m->graph, ir_graph_find_local(m->graph, "Y"), eg_type(dt));
    return m;
}

static IrModel *eg_relu_3_inputs(void) { return eg_unary("Relu", 3, IR_FLOAT); }
static IrModel *eg_add_7_inputs(void) { return eg_unary("Add", 7, IR_FLOAT); }
static IrModel *eg_gather_1_input(void) { return eg_unary("Gather", 1, IR_FLOAT); }
static IrModel *eg_sqrt_int64(void) { return eg_unary("Sqrt", 1, IR_INT64); }
static IrModel *eg_empty_op(void) { return eg_unary("", 1, IR_FLOAT); }

static IrModel *eg_relu_2_outputs(void)
{
    IrModel *m = eg_model(IR_FLOAT);
    eg_node(m->graph, "Relu", 1, (const char *[]){"X"}, 2, (const char *[]){"Y", "Z"});
    ir_graph_add_output(m->graph, ir_graph_find_local(m->graph, "Y"), eg_type(IR_FLOAT));
    return m;
}

static IrModel *eg_relu_unknown_attr(void)
{
    IrModel *m = eg_unary("Relu", 1, IR_FLOAT);
    ir_node_set_attr(m->graph->first, ir_attr_float("alpha", 0.5f));
    return m;
}

/* Cast without its required `to`. */
static IrModel *eg_cast_no_to(void)
{
    return eg_unary("Cast", 1, IR_FLOAT);
}

/* Concat with `axis` given as a float. */
static IrModel *eg_concat_float_axis(void)
{
    IrModel *m = eg_model(IR_FLOAT);
    eg_node(m->graph, "Concat", 2, (const char *[]){"X", "X"}, 1, (const char *[]){"Y"});
    ir_node_set_attr(m->graph->first, ir_attr_float("axis", 0.0f));
    int64_t d[2] = {4, 3};
    ir_graph_add_output(m->graph, ir_graph_find_local(m->graph, "Y"),
                        ir_type_tensor(IR_FLOAT, 2, d));
    return m;
}

/* SplitToSequence(X) with no output; the graph's output is X itself. */
static IrModel *eg_split_no_output(void)
{
    IrModel *m = eg_model(IR_FLOAT);
    eg_node(m->graph, "SplitToSequence", 1, (const char *[]){"X"}, 0, NULL);
    ir_graph_add_output(m->graph, ir_graph_find_local(m->graph, "X"), eg_type(IR_FLOAT));
    return m;
}

/* A model with no graph, in 8 bytes: ir_version 8 and opset_import
 * {domain "", version 13}. */
static const uint8_t eg_no_graph_bytes[8] = {0x08, 0x08, 0x42, 0x04, 0x0a, 0x00, 0x10, 0x0d};

typedef struct EgCase {
    const char *name;
    IrModel *(*build)(void);    /* NULL: eg_no_graph_bytes */
    const char *rule;           /* the checker's rule that refuses it */
} EgCase;

static const EgCase eg_cases[] = {
    {"relu_3_inputs", eg_relu_3_inputs, "arity"},
    {"add_7_inputs", eg_add_7_inputs, "arity"},
    {"gather_1_input", eg_gather_1_input, "arity"},
    {"relu_2_outputs", eg_relu_2_outputs, "arity"},
    {"split_to_sequence_no_output", eg_split_no_output, "arity"},
    {"relu_unknown_attr", eg_relu_unknown_attr, "attr-unknown"},
    {"cast_no_to", eg_cast_no_to, "attr-required"},
    {"concat_float_axis", eg_concat_float_axis, "attr-type"},
    {"sqrt_int64", eg_sqrt_int64, "type-constraint"},
    {"empty_op", eg_empty_op, "op-unknown"},
    {"no_graph", NULL, "graph-missing"},
};
#define EG_N_CASES (sizeof eg_cases / sizeof eg_cases[0])

/* ---- node tests, broken through the wire format ----------------------- */

/* The opset the model imports for `domain`, or -1. */
static inline int64_t eg_opset(const Onnx__ModelProto *mp, const char *domain)
{
    for (size_t i = 0; i < mp->n_opset_import; i++) {
        const char *d = mp->opset_import[i]->domain ? mp->opset_import[i]->domain : "";
        if (!strcmp(ir_domain_norm(d), ir_domain_norm(domain)))
            return mp->opset_import[i]->version;
    }
    return -1;
}

/* Appends s to a protobuf-c string array. */
static inline void eg_push(char ***arr, size_t *n, const char *s)
{
    char **a = realloc(*arr, (*n + 1) * sizeof *a);
    if (!a)
        eg_die("out of memory");
    a[*n] = strdup(s);
    if (!a[*n])
        eg_die("out of memory");
    *arr = a;
    (*n)++;
}

/* Breaks node n (schema sc) in way `kind`: 0 an extra input, 1 an extra
 * output (when those are bounded), 2 a required attribute dropped, 3 an
 * attribute of the wrong type, 4 an attribute the schema lacks. Returns
 * the checker's rule, or NULL when this kind does not apply. Strings
 * added are malloc'ed, as protobuf-c's free expects of unpacked messages. */
static inline const char *eg_break(Onnx__NodeProto *n, const OsSchema *sc, int kind)
{
    if (kind == 0 && sc->max_in >= 0 && n->n_input == (size_t)sc->max_in) {
        eg_push(&n->input, &n->n_input, n->input[0]);
        return "arity";
    }
    if (kind == 1 && sc->max_out >= 0 && n->n_output == (size_t)sc->max_out) {
        eg_push(&n->output, &n->n_output, "eval_gate_extra_output");
        return "arity";
    }
    for (size_t i = 0; kind == 2 && i < n->n_attribute; i++) {
        const OsAttr *a = os_attr(sc, n->attribute[i]->name);
        if (a && a->required) {
            onnx__attribute_proto__free_unpacked(n->attribute[i], NULL);
            n->attribute[i] = n->attribute[--n->n_attribute];
            return "attr-required";
        }
    }
    for (size_t i = 0; kind == 3 && i < n->n_attribute; i++) {
        Onnx__AttributeProto *at = n->attribute[i];
        if (at->type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT && at->has_i) {
            at->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT;
            at->has_i = 0;
            at->has_f = 1;
            at->f = (float)at->i;
            return "attr-type";
        }
    }
    if (kind != 4)
        return NULL;
    Onnx__AttributeProto **a = realloc(n->attribute, (n->n_attribute + 1) * sizeof *a);
    Onnx__AttributeProto *at = malloc(sizeof *at);
    if (!a || !at)
        eg_die("out of memory");
    onnx__attribute_proto__init(at);
    at->name = strdup("eval_gate_bogus");
    at->has_type = 1;
    at->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
    at->has_i = 1;
    at->i = 1;
    a[n->n_attribute++] = at;
    n->attribute = a;
    return "attr-unknown";
}

/* Breaks the first node of mp's graph that has a schema, in the first
 * way eg_break can from kind `first` on (cycling). Returns the rule, or
 * NULL when no node can be broken. */
static inline const char *eg_mutate(Onnx__ModelProto *mp, int first)
{
    Onnx__GraphProto *g = mp->graph;
    for (size_t k = 0; g && k < g->n_node; k++) {
        Onnx__NodeProto *n = g->node[k];
        const char *dom = n->domain ? n->domain : "";
        int64_t opset = eg_opset(mp, dom);
        const OsSchema *sc = n->op_type && opset > 0 ? os_find(dom, n->op_type, opset) : NULL;
        if (!sc || !n->n_input)
            continue;
        for (int i = 0; i < 5; i++) {
            const char *rule = eg_break(n, sc, (first + i) % 5);
            if (rule)
                return rule;
        }
    }
    return NULL;
}

/* The bytes of the model file `len` bytes at `buf`, broken by eg_mutate
 * from kind `kind` on;
 * NULL when it does not parse or has nothing to break. *out_len is set;
 * the caller frees the result. */
static inline uint8_t *eg_mutate_bytes(const uint8_t *buf, size_t len, int kind,
                                       size_t *out_len, const char **rule)
{
    Onnx__ModelProto *mp = onnx__model_proto__unpack(NULL, len, buf);
    if (!mp)
        return NULL;
    uint8_t *out = NULL;
    *rule = eg_mutate(mp, kind);
    if (*rule) {
        *out_len = onnx__model_proto__get_packed_size(mp);
        out = malloc(*out_len ? *out_len : 1);
        if (!out)
            eg_die("out of memory");
        onnx__model_proto__pack(mp, out);
    }
    onnx__model_proto__free_unpacked(mp, NULL);
    return out;
}

#endif
