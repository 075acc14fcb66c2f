/*
 * precision.c - changing a model's float precision (prefix pc_).
 *
 * Three steps over the main graph and every body in it, after inference
 * gave every value a type:
 *   1. decide each node: it converts when every slot holding an old-type
 *      value is bound to a type variable whose constraint (at the node's
 *      version) has the new type, or is of a fixed type (that slot keeps
 *      the old type); a call of a model-local function converts unless
 *      a keep list or its types say no, and then its function's body is
 *      decided the same way (a copy made for it when other calls keep the
 *      original); otherwise it keeps the old type and is reported;
 *   2. give each value a stored type: a converted node's switched output
 *      and a graph input take the type of the graph's boundary (the main
 *      graph's: the new one unless --keep-io-types; a body's: its holding
 *      node's); an initializer takes it when every reader does;
 *   3. give every reader the type it takes: from the value itself, or from
 *      the one Cast of that value to that type, made on first need.
 * Before step 1, the shape rule: an input the operator table flags as a
 * shape, a size, scales, axes, indices or a count (shape_in=) never
 * switches, and the nodes that compute it from constants and shapes keep
 * their type, followed back from that input (see pc_shape_rule); for
 * float16, so do the Casts and Muls that scale integer sums back
 * (pc_sum_node). After step 3, converted Casts left casting a value to
 * its own type become Identity (pc_nop_casts).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eval/eval.h"
#include "analysis/infer.h"
#include "ir/clone.h"
#include "schema/opschema.h"
#include "precision/precision.h"

/* One decided node. */
typedef struct PcNode {
    const IrNode *n;
    bool conv;
    bool fixed_out;        /* its attribute-typed outputs keep their type */
    UT_hash_handle hh;
} PcNode;

/* A value's stored type once converted (0: untouched). */
typedef struct PcVal {
    const IrValue *v;
    int32_t stor;
    UT_hash_handle hh;
} PcVal;

/* Room for a node's label (pc_label). */
#define PC_LABEL 256

typedef struct PcCtx {
    IrModel *m;
    IrGraph *g;
    const PcOptions *o;
    PcReport *r;
    IrError *err;
    PcNode *nodes;
    PcVal *vals;
    struct PcStatic *statics;      /* values computed from constants and shapes */
    struct PcShape *shape_nodes;   /* nodes that compute a shape-like input */
    struct PcBodyType *body_types; /* types of function bodies' values */
    /* per model-local function (index in m->functions): */
    size_t n_fn;
    bool *fn_live;          /* a converting call reaches it: its body converts */
    bool *fn_mixed;         /* its calls give its values differing types */
    size_t *fn_stack, n_stack;
    /* Cast at the model's opset has both types: without it (bfloat16
     * before opset 13) no value can change type, so nothing does */
    bool cast_ok;
    char no_cast[80];
    /* nodes of ai.onnx kept for want of the type: the lowest opset at
     * which all that can have it do (0: none can), and how many cannot */
    int gain_opset;
    size_t n_blocked, n_never;
} PcCtx;

int32_t pc_dtype_parse(const char *name)
{
    if (!strcmp(name, "float16"))
        return IR_FLOAT16;
    if (!strcmp(name, "bfloat16"))
        return IR_BFLOAT16;
    if (!strcmp(name, "float32"))
        return IR_FLOAT;
    return 0;
}

const char *pc_dtype_word(int32_t dtype)
{
    switch (dtype) {
    case IR_FLOAT16: return "float16";
    case IR_BFLOAT16: return "bfloat16";
    case IR_FLOAT: return "float32";
    case IR_DOUBLE: return "float64";
    default: return NULL;
    }
}

/* The type as tensor(...) spells it: "float", "double", "float16". */
static const char *pc_tensor_word(int32_t dtype)
{
    return dtype == IR_FLOAT ? "float" : dtype == IR_DOUBLE ? "double" : pc_dtype_word(dtype);
}

bool pc_wanted(const PcOptions *o)
{
    return o && (o->dtype || o->store);
}

/* Whether t is a type the conversion changes: float32 for a half target,
 * float16 and bfloat16 for float32, all three for float64 (the wide copy
 * verification measures a model's rounding noise with). */
static bool pc_is_source(const PcCtx *c, int32_t t)
{
    if (c->o->dtype == IR_FLOAT)
        return t == IR_FLOAT16 || t == IR_BFLOAT16;
    if (c->o->dtype == IR_DOUBLE)
        return t == IR_FLOAT || t == IR_FLOAT16 || t == IR_BFLOAT16;
    return t == IR_FLOAT;
}

/* The element type of a tensor value as inferred, or 0 (unknown, or not
 * a tensor). */
static int32_t pc_type_elem(const IrType *t)
{
    if (!t || t->kind != IR_TYPE_TENSOR || !t->has_elem_type)
        return 0;
    return t->elem_type;
}

static int32_t pc_elem(const IrValue *v)
{
    return v ? pc_type_elem(v->type) : 0;
}

/* Whether `name` is one of the comma-separated words of list. */
static bool pc_in_list(const char *list, const char *name)
{
    if (!list || !name || !*name)
        return false;
    size_t n = strlen(name);
    for (const char *p = list; *p;) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len == n && !strncmp(p, name, n))
            return true;
        if (!e)
            break;
        p = e + 1;
    }
    return false;
}

/* The attribute of g's owner that holds g ("then_branch", "body"). */
static const char *pc_attr_of(const IrGraph *g)
{
    const IrNode *o = g->owner;
    for (size_t i = 0; o && i < o->n_attr; i++) {
        const IrAttr *a = o->attr[i];
        bool in = a->g == g;
        for (size_t k = 0; k < a->n_graphs && !in; k++)
            in = a->graphs[k] == g;
        if (in)
            return a->name ? a->name : "";
    }
    return "";
}

/* n's position in its graph. */
static size_t pc_pos(const IrNode *n)
{
    size_t i = 0;
    for (const IrNode *k = n->graph->first; k && k != n; k = k->next)
        i++;
    return i;
}

/* The index of the function whose body g is or lies in, or -1. */
static long pc_fn_index(const PcCtx *c, const IrGraph *g)
{
    while (g->parent)
        g = g->parent;
    for (size_t i = 0; g->is_function && i < c->m->n_functions; i++)
        if (c->m->functions[i]->body == g)
            return (long)i;
    return -1;
}

static const IrFunction *pc_fn_of(const PcCtx *c, const IrGraph *g)
{
    long k = pc_fn_index(c, g);
    return k < 0 ? NULL : c->m->functions[k];
}

/* The index of the model-local function n calls, or -1. */
static long pc_callee(const PcCtx *c, const IrNode *n)
{
    const IrFunction *f = ir_model_function(c->m, n);
    for (size_t i = 0; f && i < c->m->n_functions; i++)
        if (c->m->functions[i] == f)
            return (long)i;
    return -1;
}

/* A node's name, or "#N" (its position in its graph) when it has none:
 * what the report shows and --keep-float32-node takes. An unnamed node
 * of a body is "OWNER/ATTR#N" (OWNER the holding node's label), of a
 * function body "FUNCTION/#N", so that "#N" means the main graph's. */
static const char *pc_label(const PcCtx *c, const IrNode *n, size_t idx, char *buf,
                            size_t cap)
{
    if (n->name && n->name[0])
        return n->name;
    const IrGraph *g = n->graph;
    const IrFunction *fn = g->owner ? NULL : pc_fn_of(c, g);
    if (g->owner) {
        char up[PC_LABEL];
        const char *o = pc_label(c, g->owner, pc_pos(g->owner), up, sizeof up);
        snprintf(buf, cap, "%s/%s#%zu", o, pc_attr_of(g), idx);
    } else if (fn) {
        snprintf(buf, cap, "%s/#%zu", fn->name ? fn->name : "", idx);
    } else {
        snprintf(buf, cap, "#%zu", idx);
    }
    return buf;
}

static void pc_keep(PcCtx *c, const IrNode *n, size_t idx, const char *reason)
{
    PcReport *r = c->r;
    r->kept = mem_grow(r->kept, r->n_kept + 1, sizeof *r->kept);
    char label[PC_LABEL];
    r->kept[r->n_kept++] = (PcKept){
        .node = mem_strdup(pc_label(c, n, idx, label, sizeof label)),
        .op = mem_strdup(n->op_type), .reason = mem_strdup(reason)};
}

/* ---- deciding nodes -------------------------------------------------- */

/* n's schema at the opset its scope imports (a function body's own
 * imports first), or NULL. */
static const OsSchema *pc_schema(const PcCtx *c, const IrNode *n)
{
    const char *d = n->domain ? n->domain : "";
    return os_find(n->domain, n->op_type, ir_scope_opset(c->m, pc_fn_of(c, n->graph), d));
}

static bool pc_has_subgraph(const IrNode *n)
{
    for (size_t i = 0; i < n->n_attr; i++)
        if (n->attr[i]->g || n->attr[i]->n_graphs)
            return true;
    return false;
}

/* Whether the type variable `var` of s is bound by one of its inputs (else
 * an attribute sets it: Cast's `to`, RandomNormal's `dtype`, ...). */
static bool pc_var_from_input(const OsSchema *s, const char *var)
{
    for (size_t i = 0; i < s->n_in; i++)
        if (!strcmp(s->in[i].type, var))
            return true;
    return false;
}

/* Whether the slot (input or output i of n) holds an old-type value that
 * switches to the new type when n converts: bound to a type variable. A
 * slot of a fixed type never switches. *blocked is set when the slot's
 * constraint lacks the new type. */
static bool pc_slot_switches(const PcCtx *c, const OsSchema *s, const IrNode *n, bool out,
                             size_t i, bool *blocked)
{
    const IrValue *v = out ? n->out[i] : n->in[i];
    int32_t t = pc_elem(v);
    if (!v || !pc_is_source(c, t) || (!out && os_shape_input(s, i)))
        return false;
    const OsParam *p = out ? os_out_param(s, i) : os_in_param(s, i);
    if (!p || !os_tc(s, p->type))
        return false;
    IrType want = *v->type;
    want.elem_type = c->o->dtype;
    if (!os_param_allows(s, p, &want)) {
        *blocked = true;
        return false;
    }
    return true;
}

/* The attribute holding a Constant-like node's float value: `value`, or
 * Constant's `value_float` / `value_floats`; NULL when none is set. */
static IrAttr *pc_value_attr(const IrNode *n)
{
    static const char *const keys[3] = {"value", "value_float", "value_floats"};
    for (size_t k = 0; k < 3; k++) {
        IrAttr *a = ir_node_attr(n, keys[k]);
        if (a)
            return a;
    }
    return NULL;
}

/* Whether an attribute-typed output can follow the node: `to`, `dtype`
 * (set or added) or a `value` tensor; NULL when it can, else why not.
 * *fixed is set when such an attribute is a reference (ref_attr_name, in
 * a function body): each call sets it, so that output keeps its type
 * while the inputs may still switch (Cast, EyeLike, RandomNormalLike read
 * only values or shapes, the same in either type). */
static const char *pc_attr_typed(const PcCtx *c, const OsSchema *s, const IrNode *n,
                                 bool *fixed)
{
    if (pc_has_subgraph(n))   /* its bodies' outputs type it: they follow */
        return NULL;
    for (size_t i = 0; i < n->n_out; i++) {
        const OsParam *p = os_out_param(s, i);
        bool blocked = false;
        if (!pc_slot_switches(c, s, n, true, i, &blocked) || pc_var_from_input(s, p->type))
            continue;
        const IrAttr *a = os_attr(s, "to") ? ir_node_attr(n, "to") : os_attr(s, "dtype")
                          ? ir_node_attr(n, "dtype") : pc_value_attr(n);
        if (a && a->ref_attr_name) {
            *fixed = true;
            continue;
        }
        if (os_attr(s, "to") || os_attr(s, "dtype"))
            continue;
        if (os_attr(s, "value") && (!a || a->t || a->has_f || a->n_floats || a->floats))
            continue;
        return "its output type is set by an attribute other than value";
    }
    return NULL;
}

/* The lowest later version of n's op whose constraints take the new type
 * at every slot that holds an old-type value (0: none): where converting
 * to that opset too would let n convert. */
static int pc_gain_since(const PcCtx *c, const IrNode *n, int since)
{
    size_t nv;
    const OsSchema *v = os_versions(n->domain, n->op_type, &nv);
    for (size_t k = 0; k < nv; k++) {
        if (v[k].since <= since || (v[k].flags & OS_F_DEPRECATED))
            continue;
        bool blocked = false;
        for (size_t i = 0; i < n->n_in; i++)
            pc_slot_switches(c, &v[k], n, false, i, &blocked);
        for (size_t i = 0; i < n->n_out; i++)
            pc_slot_switches(c, &v[k], n, true, i, &blocked);
        if (!blocked)
            return v[k].since;
    }
    return 0;
}

/* The lowest Cast after version `since` that reads and writes the type. */
static int pc_cast_gain(const PcCtx *c, int since)
{
    size_t nv;
    const OsSchema *v = os_versions("", "Cast", &nv);
    IrType t = {.kind = IR_TYPE_TENSOR, .has_elem_type = true, .elem_type = c->o->dtype};
    for (size_t k = 0; k < nv; k++)
        if (v[k].since > since && os_param_allows(&v[k], os_in_param(&v[k], 0), &t) &&
            os_param_allows(&v[k], os_out_param(&v[k], 0), &t))
            return v[k].since;
    return 0;
}

/* Counts a node kept for want of the type toward the report's hint. */
static void pc_note_blocked(PcCtx *c, const IrNode *n, int since)
{
    if (ir_domain_norm(n->domain)[0])
        return;
    int at = pc_gain_since(c, n, since);
    c->n_blocked++;
    if (!at)
        c->n_never++;
    else if (at > c->gain_opset)
        c->gain_opset = at;
}

/* The report's hint: the opset at which the nodes kept for want of the
 * type (and Cast, when it lacks it) have it. */
static void pc_hint(PcCtx *c)
{
    int at = c->gain_opset;
    if (!c->cast_ok) {
        const OsSchema *s = os_find("", "Cast", ir_model_opset(c->m, ""));
        int cast_at = s ? pc_cast_gain(c, s->since) : 0;
        if (!cast_at)
            return;
        at = at > cast_at ? at : cast_at;
    }
    if (!at || (!c->n_blocked && c->cast_ok))
        return;
    const char *t = pc_tensor_word(c->o->dtype);
    size_t can = c->n_blocked - c->n_never;
    if (!c->cast_ok)
        snprintf(c->r->hint, sizeof c->r->hint, "nothing can change type at opset %lld (%s); "
                 "from opset %d Cast has tensor(%s) and so do %zu of the %zu nodes kept for "
                 "want of it: convert at the same time (--opset %d)",
                 (long long)ir_model_opset(c->m, ""), c->no_cast, at, t, can, c->n_blocked, at);
    else
        snprintf(c->r->hint, sizeof c->r->hint, "%zu of the %zu nodes kept for want of "
                 "tensor(%s) have it from opset %d: convert at the same time (--opset %d)",
                 can, c->n_blocked, t, at, at);
}

/* Whether n reads or writes an old-type value; *unknown set when one of
 * its values has no known tensor type. */
static bool pc_touches(const PcCtx *c, const IrNode *n, bool *unknown)
{
    bool touches = false;
    for (size_t k = 0; k < n->n_in + n->n_out; k++) {
        const IrValue *v = k < n->n_in ? n->in[k] : n->out[k - n->n_in];
        if (!v)
            continue;
        if (pc_is_source(c, pc_elem(v)))
            touches = true;
        else if (!pc_elem(v))
            *unknown = true;
    }
    return touches;
}

/* ---- the shape rule ------------------------------------------------ */

/* Why: a value that becomes a shape or a count (Upsample's scales computed
 * as float arithmetic on Shape, a Range's limit) changes the output's
 * shape when rounded to half (5 * 2.2 = 11 becomes 10.99 -> 10), an error
 * no tolerance covers. Such values are computed from constants and
 * shapes alone, so keeping their computation in float32 costs nothing;
 * values computed from a graph input's data (indices from
 * NonMaxSuppression's scores) stay in the data's precision, or the whole
 * network would be kept. */

/* A value computed from constants and input shapes only. */
typedef struct PcStatic {
    const IrValue *v;
    UT_hash_handle hh;
} PcStatic;

/* A node that computes a shape-like input, and the input it computes. */
typedef struct PcShape {
    const IrNode *n;
    char why[128];
    UT_hash_handle hh;
} PcShape;

static bool pc_static(const PcCtx *c, const IrValue *v)
{
    PcStatic *e = NULL;
    if (v)
        HASH_FIND_PTR(c->statics, &v, e);
    return e != NULL;
}

static void pc_static_add(PcCtx *c, const IrValue *v)
{
    if (!v || pc_static(c, v))
        return;
    PcStatic *e = mem_alloc(sizeof *e);
    e->v = v;
    HASH_ADD_PTR(c->statics, v, e);
}

/* Whether n's outputs are computed from constants and shapes alone: it
 * reads only shapes (Shape, Size), or only such values; a node holding
 * bodies or drawing random numbers is not. */
static bool pc_static_node(const PcCtx *c, const IrNode *n)
{
    const OsSchema *s = pc_schema(c, n);
    if (s && (s->flags & OS_F_SHAPE_ONLY))
        return true;
    if (!s || (s->flags & OS_F_RANDOM) || pc_has_subgraph(n))
        return false;
    for (size_t i = 0; i < n->n_in; i++)
        if (n->in[i] && !pc_static(c, n->in[i]))
            return false;
    return true;
}

/* Marks g's static values: its weights, then node outputs in order (an
 * outer value was marked with its own graph, walked first). */
static int pc_static_graph(IrGraph *g, const IrWalkAt *at, void *arg)
{
    (void)at;
    PcCtx *c = arg;
    for (IrValue *v = g->values; v; v = v->hh.next)
        if (v->init && (v->kind == IR_VAL_INIT || v->kind == IR_VAL_INPUT))
            pc_static_add(c, v);
    for (IrNode *n = g->first; n; n = n->next)
        if (pc_static_node(c, n))
            for (size_t j = 0; j < n->n_out; j++)
                pc_static_add(c, n->out[j]);
    return 0;
}

/* Records that n keeps its type, for `why` (once: the first reason). */
static void pc_shape_mark(PcCtx *c, const IrNode *n, const char *why)
{
    PcShape *e = NULL;
    HASH_FIND_PTR(c->shape_nodes, &n, e);
    if (e)
        return;
    e = mem_alloc(sizeof *e);
    e->n = n;
    snprintf(e->why, sizeof e->why, "%s", why);
    HASH_ADD_PTR(c->shape_nodes, n, e);
}

/* Marks, from static value v, the nodes computing it, back to the
 * shape readers and weights (a worklist: chains may be long). */
static void pc_shape_back(PcCtx *c, const IrValue *v, const char *why)
{
    size_t top = 0, cap = 16;
    const IrValue **work = mem_array(cap, sizeof *work);
    work[top++] = v;
    while (top) {
        const IrValue *x = work[--top];
        const IrNode *p = x->kind == IR_VAL_NODE ? x->producer : NULL;
        PcShape *e = NULL;
        if (p)
            HASH_FIND_PTR(c->shape_nodes, &p, e);
        const OsSchema *s = p && !e ? pc_schema(c, p) : NULL;
        if (!s || (s->flags & OS_F_SHAPE_ONLY))
            continue;
        pc_shape_mark(c, p, why);
        for (size_t i = 0; i < p->n_in; i++) {
            if (!p->in[i])
                continue;
            if (top == cap)
                work = mem_grow(work, cap *= 2, sizeof *work);
            work[top++] = p->in[i];
        }
    }
    free(work);
}

/* Follows every shape-like input of g's nodes back. */
static int pc_shape_graph(IrGraph *g, const IrWalkAt *at, void *arg)
{
    (void)at;
    PcCtx *c = arg;
    for (IrNode *n = g->first; n; n = n->next) {
        const OsSchema *s = pc_schema(c, n);
        for (size_t i = 0; s && i < n->n_in; i++) {
            const OsParam *p = os_in_param(s, i);
            if (!os_shape_input(s, i) || !pc_static(c, n->in[i]) || !p)
                continue;
            char why[128];
            snprintf(why, sizeof why, "computes %s-%d's %s (a shape, size or count)",
                     n->op_type, s->since, p->name);
            pc_shape_back(c, n->in[i], why);
        }
    }
    return 0;
}

/* Whether n is an ONNX node of type op. */
static bool pc_is_op(const IrNode *n, const char *op)
{
    return n && !strcmp(n->op_type, op) && !ir_domain_norm(n->domain)[0];
}

/* The sum rule, for float16 only: the int32 sums of MatMulInteger and
 * ConvInteger reach far past float16's 65504 (a 16-term dot product of
 * uint8 by int8 already may), so the Cast of such a sum to float, the Mul
 * that scales it back and the Mul of the two scales feeding it (as ONNX
 * Runtime's dynamic quantizer writes them) keep float32: in float16 the
 * Cast gives inf, and the product of two small scales loses its digits
 * below 6.1e-5. The scaled result is of the data's size and switches. */
static void pc_sum_node(PcCtx *c, const IrNode *n)
{
    char why[128];
    snprintf(why, sizeof why, "scales %s's int32 sums (beyond float16's range)", n->op_type);
    for (size_t u = 0; n->n_out && n->out[0] && u < n->out[0]->n_uses; u++) {
        const IrNode *cast = n->out[0]->uses[u].node;
        if (!pc_is_op(cast, "Cast") || !cast->n_out || !cast->out[0])
            continue;
        pc_shape_mark(c, cast, why);
        for (size_t k = 0; k < cast->out[0]->n_uses; k++) {
            const IrNode *mul = cast->out[0]->uses[k].node;
            if (!pc_is_op(mul, "Mul"))
                continue;
            pc_shape_mark(c, mul, why);
            for (size_t i = 0; i < mul->n_in; i++) {
                const IrValue *x = mul->in[i];
                if (x && x->kind == IR_VAL_NODE && pc_is_op(x->producer, "Mul"))
                    pc_shape_mark(c, x->producer, why);
            }
        }
    }
}

static int pc_sum_graph(IrGraph *g, const IrWalkAt *at, void *arg)
{
    (void)at;
    for (IrNode *n = g->first; n; n = n->next)
        if (pc_is_op(n, "MatMulInteger") || pc_is_op(n, "ConvInteger"))
            pc_sum_node(arg, n);
    return 0;
}

/* The shape rule (and the sum rule) over every graph the conversion may
 * change. */
static void pc_shape_rule(PcCtx *c)
{
    unsigned walk = IR_WALK_MAIN | IR_WALK_SUBGRAPHS | IR_WALK_FUNCTIONS;
    ir_each_graph(c->m, walk, pc_static_graph, c);
    ir_each_graph(c->m, walk, pc_shape_graph, c);
    if (c->o->dtype == IR_FLOAT16)
        ir_each_graph(c->m, walk, pc_sum_graph, c);
}

/* Why n keeps its type under the shape rule, or NULL: it computes a
 * shape-like input, or one of its shape-like inputs holds an old-type
 * value bound to the type variable of a slot that would switch (Range's
 * limit and its output: one T). */
static const char *pc_shape_why(const PcCtx *c, const OsSchema *s, const IrNode *n)
{
    PcShape *e = NULL;
    HASH_FIND_PTR(c->shape_nodes, &n, e);
    if (e)
        return e->why;
    for (size_t i = 0; s && i < n->n_in; i++) {
        const OsParam *p = os_in_param(s, i);
        if (!os_shape_input(s, i) || !p || !os_tc(s, p->type) ||
            !pc_is_source(c, pc_elem(n->in[i])))
            continue;
        for (size_t k = 0; k < n->n_in + n->n_out; k++) {
            bool out = k >= n->n_in, blocked = false;
            size_t j = out ? k - n->n_in : k;
            const OsParam *q = out ? os_out_param(s, j) : os_in_param(s, j);
            if (q && !strcmp(q->type, p->type) && pc_slot_switches(c, s, n, out, j, &blocked))
                return "a shape, size or count shares its type with a value that would switch";
        }
    }
    return NULL;
}

/* Whether keep_nodes names n (its label found only when unnamed: that
 * costs a walk of its graph). */
static bool pc_listed(const PcCtx *c, const IrNode *n)
{
    char label[PC_LABEL];
    const char *l = n->name && n->name[0] ? n->name
                    : pc_label(c, n, pc_pos(n), label, sizeof label);
    return pc_in_list(c->o->keep_nodes, l);
}

/* Whether a node keep_nodes names holds n: n lies in one of its bodies,
 * or (a Constant: a weight) one of them reads it. For keep_whole. */
static bool pc_kept_whole(const PcCtx *c, const IrNode *n)
{
    for (const IrGraph *g = n->graph; g->owner; g = g->owner->graph)
        if (pc_listed(c, g->owner))
            return true;
    if (n->n_in || strcmp(n->op_type, "Constant"))
        return false;
    for (size_t j = 0; j < n->n_out; j++)
        for (size_t u = 0; n->out[j] && u < n->out[j]->n_uses; u++)
            if (n->out[j]->uses[u].node && pc_listed(c, n->out[j]->uses[u].node))
                return true;
    return false;
}

/* Decides n: *reason NULL and true when it converts; false with a reason
 * when it keeps the old type while touching it; false with no reason when
 * it touches no old-type value (integer and shape nodes). */
static bool pc_decide(PcCtx *c, const IrNode *n, size_t idx, char *why, size_t cap,
                      bool *report, bool *fixed)
{
    *report = false;
    *fixed = false;
    bool any_unknown = false, touches = pc_touches(c, n, &any_unknown);
    const char *r = NULL;
    char label[PC_LABEL];
    if (!touches)
        return false;
    long fn = pc_callee(c, n);
    if (fn >= 0 && c->fn_mixed[fn])
        r = "function called with differing types";
    else if (pc_in_list(c->o->keep_ops, n->op_type))
        r = "--keep-float32";
    else if (c->o->keep_nodes &&   /* a body node's label walks its owners */
             pc_in_list(c->o->keep_nodes, pc_label(c, n, idx, label, sizeof label)))
        r = "--keep-float32-node";
    else if (c->o->keep_whole && c->o->keep_nodes && pc_kept_whole(c, n))
        r = "part of a node kept (its weight, or in its body)";
    else if (any_unknown)
        r = "a value of unknown or non-tensor type";
    else
        r = pc_shape_why(c, pc_schema(c, n), n);
    if (!r && fn >= 0 && !c->cast_ok)
        r = c->no_cast;
    if (r) {
        snprintf(why, cap, "%s", r);
        *report = true;
        return false;
    }
    if (fn >= 0)   /* its body converts for it, each slot switching */
        return true;
    const OsSchema *s = pc_schema(c, n);
    if (!s || (s->flags & OS_F_BITS)) {
        /* BitCast's result is its input's bits: another input type is
         * another width, another result */
        if (s)
            snprintf(why, cap, "%s-%d reads its input's bits", n->op_type, s->since);
        else
            snprintf(why, cap, "no schema");
        *report = true;
        return false;
    }
    bool blocked = false, sw = false, sw_in = false;
    for (size_t i = 0; i < n->n_in; i++)
        sw_in |= pc_slot_switches(c, s, n, false, i, &blocked);
    for (size_t i = 0; i < n->n_out; i++)
        sw |= pc_slot_switches(c, s, n, true, i, &blocked);
    sw |= sw_in;
    const char *attr = sw ? pc_attr_typed(c, s, n, fixed) : NULL;
    if (!attr && *fixed && !sw_in)   /* nothing left to switch */
        attr = "its output type is set by a referenced attribute";
    if (!blocked && !attr && sw && !c->cast_ok)
        attr = c->no_cast;
    if (blocked || attr) {
        if (blocked)
            pc_note_blocked(c, n, s->since);
        if (blocked)
            snprintf(why, cap, "%s-%d has no type tensor(%s)", n->op_type, s->since,
                     pc_tensor_word(c->o->dtype));
        else
            snprintf(why, cap, "%s", attr);
        *report = true;
        return false;
    }
    return sw;
}

static bool pc_node_conv(const PcCtx *c, const IrNode *n)
{
    PcNode *e;
    HASH_FIND_PTR(c->nodes, &n, e);
    return e && e->conv;
}

static bool pc_node_fixed(const PcCtx *c, const IrNode *n)
{
    PcNode *e;
    HASH_FIND_PTR(c->nodes, &n, e);
    return e && e->fixed_out;
}

/* Decides every node of g; records and reports them. */
static int pc_decide_graph(IrGraph *g, const IrWalkAt *at, void *arg)
{
    (void)at;
    PcCtx *c = arg;
    size_t idx = 0;
    char why[160];
    for (IrNode *n = g->first; n; n = n->next, idx++) {
        bool report;
        PcNode *e = mem_alloc(sizeof *e);
        e->n = n;
        e->conv = pc_decide(c, n, idx, why, sizeof why, &report, &e->fixed_out);
        HASH_ADD_PTR(c->nodes, n, e);
        long fn = e->conv ? pc_callee(c, n) : -1;
        if (fn >= 0 && !c->fn_live[fn]) {   /* its body is decided next */
            c->fn_live[fn] = true;
            c->fn_stack[c->n_stack++] = (size_t)fn;
        }
        if (e->conv)
            c->r->nodes_converted++;
        else if (report)
            pc_keep(c, n, idx, why);
    }
    return 0;
}

/* Every node of the main graph and of the bodies in it, each body
 * decided node by node like the main graph; then the bodies of the
 * functions a converting call reaches, and so on (each once). */
static void pc_decide_all(PcCtx *c)
{
    unsigned all = IR_WALK_MAIN | IR_WALK_SUBGRAPHS;
    ir_graph_each_subgraph(c->g, all, pc_decide_graph, c);
    while (c->n_stack) {
        IrFunction *f = c->m->functions[c->fn_stack[--c->n_stack]];
        if (f->body)
            ir_graph_each_subgraph(f->body, all, pc_decide_graph, c);
    }
}

/* ---- tensors ---------------------------------------------------------- */

/* The largest finite value of a half type. */
static double pc_type_max(int32_t t)
{
    return t == IR_FLOAT16 ? 65504.0 : t == IR_BFLOAT16 ? 3.3895313892515355e38 : 3.4e38;
}

/* x in type `to` as a bit pattern, rounded to nearest even; x clamped to
 * the finite range first (*clamped set) when it is finite but beyond. */
static uint16_t pc_to_half(double x, int32_t to, bool *clamped)
{
    double mx = pc_type_max(to);
    *clamped = false;
    if (isfinite(x) && fabs(x) > mx) {
        x = x < 0 ? -mx : mx;
        *clamped = true;
    }
    return to == IR_FLOAT16 ? half_f32_to_f16((float)x) : half_f32_to_bf16((float)x);
}

/* Drops t's payload, whatever its storage, keeping name and dims. */
static void pc_tensor_clear(IrTensor *t)
{
    free(t->float_data);
    free(t->int32_data);
    free(t->double_data);
    t->float_data = NULL;
    t->int32_data = NULL;
    t->double_data = NULL;
    t->n_float = t->n_int32 = t->n_double = 0;
    if (!t->raw_borrowed)
        free(t->raw.data);
    t->raw = (IrBytes){0};
    t->raw_borrowed = false;
    ir_strmap_free(&t->external_data);
    t->has_data_location = false;
    t->data_location = 0;
    t->ext = (IrExtRef){0};
}

/* A float tensor's elements as read: straight from its raw or external
 * bytes when it has them (a big weight is then not copied into doubles,
 * 8 bytes per element), else decoded from its typed list. */
typedef struct PcSrc {
    const uint8_t *raw;
    double *v;             /* owned when raw is NULL */
    int32_t type;
} PcSrc;

static bool pc_src_open(const IrTensor *t, size_t numel, PcSrc *src)
{
    size_t len, n;
    *src = (PcSrc){.type = t->data_type};
    src->raw = ir_tensor_bytes(t, &len);
    if (src->raw && numel <= SIZE_MAX / 4 &&
        len == numel * (size_t)(ir_dtype_bits(t->data_type) / 8))
        return true;
    src->raw = NULL;
    return ir_tensor_to_f64s(t, numel, &src->v, &n) && n == numel;
}

static double pc_src_get(const PcSrc *src, size_t i)
{
    if (!src->raw)
        return src->v[i];
    if (src->type == IR_FLOAT) {
        const uint8_t *b = src->raw + 4 * i;
        uint32_t u = b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
        float f;
        memcpy(&f, &u, 4);
        return f;
    }
    uint16_t h = (uint16_t)(src->raw[2 * i] | src->raw[2 * i + 1] << 8);
    return src->type == IR_FLOAT16 ? half_f16_to_f32(h) : half_bf16_to_f32(h);
}

/* Element x as `to`'s bit pattern into *bits; -1 when strict refuses it. */
static int pc_encode(PcCtx *c, double x, int32_t to, uint64_t *bits, const char *what)
{
    if (to == IR_DOUBLE) {
        memcpy(bits, &x, 8);
        return 0;
    }
    if (to == IR_FLOAT) {
        float f = (float)x;
        uint32_t u;
        memcpy(&u, &f, 4);
        *bits = u;
        return 0;
    }
    bool cl;
    *bits = pc_to_half(x, to, &cl);
    if (cl && c->o->strict)
        return ir_fail(c->err, "precision: %s: value %g is outside %s's finite range "
                       "(--dtype-strict)", what, x, pc_dtype_word(to));
    c->r->clamped += cl;
    return 0;
}

/* Rewrites t (a float tensor) as type `to`, raw little-endian; values
 * beyond a half type's range clamped and counted, or refused when strict
 * (err names `what`). */
static int pc_tensor_retype(PcCtx *c, IrTensor *t, int32_t to, const char *what)
{
    uint64_t numel;
    PcSrc src = {0};
    /* an empty tensor (Resize's roi: dims [0]) has no data to read */
    if (!ir_tensor_numel(t, &numel) || numel > SIZE_MAX / 4 ||
        (numel && !pc_src_open(t, (size_t)numel, &src))) {
        free(src.v);
        return ir_fail(c->err, "precision: %s: the data cannot be read", what);
    }
    size_t n = (size_t)numel, es = ir_dtype_host_size(to);
    uint8_t *raw = mem_array(n ? n : 1, es);
    for (size_t i = 0; i < n; i++) {
        uint64_t bits;
        if (pc_encode(c, pc_src_get(&src, i), to, &bits, what) < 0) {
            free(src.v);
            free(raw);
            return -1;
        }
        for (size_t b = 0; b < es; b++)
            raw[i * es + b] = (uint8_t)(bits >> (8 * b));
    }
    free(src.v);
    pc_tensor_clear(t);
    t->has_data_type = true;
    t->data_type = to;
    t->has_raw = true;
    t->raw.data = raw;
    t->raw.len = n * es;
    return 0;
}

/* ---- node attributes that name the output type ------------------------ */

/* Constant's value_float (a scalar) or value_floats (a vector) as a
 * float32 `value` tensor in its place, for pc_tensor_retype to convert. */
static int pc_floats_to_value(IrNode *n, const IrAttr *a)
{
    int64_t len = (int64_t)a->n_floats;
    IrTensor *t;
    if (a->has_f && !a->n_floats)
        t = ir_tensor_new("value", IR_FLOAT, 0, NULL, &a->f, sizeof a->f);
    else if (a->n_floats || !strcmp(a->name, "value_floats"))
        t = ir_tensor_new("value", IR_FLOAT, 1, &len, a->floats, a->n_floats * sizeof *a->floats);
    else
        return -1;
    char *key = mem_strdup(a->name);
    ir_node_remove_attr(n, key);   /* frees a */
    free(key);
    ir_node_set_attr(n, ir_attr_tensor("value", t));
    return 0;
}

/* Makes a converted node's attribute-typed outputs follow it. */
static int pc_fix_attrs(PcCtx *c, IrNode *n)
{
    const OsSchema *s = pc_schema(c, n);
    bool blocked = false;
    if (pc_has_subgraph(n) || pc_callee(c, n) >= 0)   /* typed by bodies that follow */
        return 0;
    if (pc_node_fixed(c, n))   /* a referenced attribute types it */
        return 0;
    for (size_t i = 0; i < n->n_out; i++) {
        const OsParam *p = os_out_param(s, i);
        if (!pc_slot_switches(c, s, n, true, i, &blocked) || pc_var_from_input(s, p->type))
            continue;
        const char *key = os_attr(s, "to") ? "to" : os_attr(s, "dtype") ? "dtype" : NULL;
        if (key) {
            ir_node_set_attr(n, ir_attr_int(key, c->o->dtype));
            continue;
        }
        IrAttr *a = pc_value_attr(n);
        char what[300];
        snprintf(what, sizeof what, "node '%s' (%s) attribute %s", n->name ? n->name : "",
                 n->op_type, a && a->name ? a->name : "value");
        if (a && !a->t && pc_floats_to_value(n, a) < 0)
            return ir_fail(c->err, "precision: %s: no value", what);
        a = pc_value_attr(n);
        if (a && a->t) {
            if (pc_tensor_retype(c, a->t, c->o->dtype, what) < 0)
                return -1;
        } else {   /* ConstantOfShape's default: one 0 of float32 */
            uint8_t zero[8] = {0};
            int64_t one = 1;
            ir_node_set_attr(n, ir_attr_tensor("value", ir_tensor_new(
                "value", c->o->dtype, 1, &one, zero, ir_dtype_host_size(c->o->dtype))));
        }
    }
    return 0;
}

/* ---- stored and wanted types ------------------------------------------ */

/* What graph g's boundary (its inputs and outputs) takes of an old-type
 * value: the main graph's the new type unless --keep-io-types; a body's
 * follows the node holding it (converted: the new type, kept: the old),
 * so that the node's slots and its bodies' agree (If's branches, Loop's
 * carried values); a function body keeps its type here (pc_funcs). */
static int32_t pc_io_want(const PcCtx *c, const IrGraph *g, int32_t orig)
{
    if (!c->cast_ok)
        return orig;
    if (g->owner)
        return pc_node_conv(c, g->owner) ? c->o->dtype : orig;
    if (g == c->g)
        return c->o->keep_io ? orig : c->o->dtype;
    long k = pc_fn_index(c, g);
    return k >= 0 && c->fn_live[k] ? c->o->dtype : orig;
}

/* Whether slot (input or output i) of converting node n takes the new
 * type: by n's schema, or, for a call of a model-local function, every
 * old-type slot (the body converts with it). */
static bool pc_switches(const PcCtx *c, const IrNode *n, bool out, size_t i)
{
    bool blocked = false;
    if (pc_callee(c, n) >= 0) {
        const IrValue *v = out ? n->out[i] : n->in[i];
        return v && pc_is_source(c, pc_elem(v));
    }
    const OsSchema *s = pc_schema(c, n);
    const OsParam *p = out ? os_out_param(s, i) : NULL;
    if (p && pc_node_fixed(c, n) && !pc_var_from_input(s, p->type))
        return false;
    return pc_slot_switches(c, s, n, out, i, &blocked);
}

/* The type reader `u` of v takes (v of old type `orig`): a node's slot,
 * or a body's output (u->node NULL) that returns v directly. */
static int32_t pc_want(const PcCtx *c, const IrUse *u, int32_t orig)
{
    if (!u->node)
        return pc_io_want(c, u->graph, orig);
    if (!pc_node_conv(c, u->node))
        return orig;
    return pc_switches(c, u->node, false, u->index) ? c->o->dtype : orig;
}

/* The type v is stored in after the conversion. */
static int32_t pc_stored(const PcCtx *c, const IrValue *v, int32_t orig)
{
    int32_t io = pc_io_want(c, v->graph, orig);
    if (v->kind == IR_VAL_NODE) {
        const IrNode *p = v->producer;
        if (!pc_node_conv(c, p))
            return orig;
        return pc_switches(c, p, true, v->producer_index) ? c->o->dtype : orig;
    }
    /* an input with an initializer (IR 3 lists every initializer as an
     * input) is a weight, not one of the inputs --keep-io-types keeps: it
     * changes only when every reader wants it to */
    if (v->kind == IR_VAL_INPUT && !v->init)
        return io;
    if ((v->kind != IR_VAL_INIT && v->kind != IR_VAL_INPUT) || !v->n_uses)
        return orig;
    for (size_t i = 0; i < v->n_uses; i++)
        if (pc_want(c, &v->uses[i], orig) != c->o->dtype)
            return orig;
    if (ir_value_is_graph_output(v) && io != c->o->dtype)
        return orig;
    return c->o->dtype;
}

/* ---- Casts -------------------------------------------------------------- */

/* Where a Cast of v goes: right after its producer, or first in g. */
static IrNode *pc_after(IrGraph *g, const IrValue *v)
{
    if (v->graph == g && v->kind == IR_VAL_NODE && v->producer)
        return v->producer->next;
    return g->first;
}

/* A new Cast of src to `to` in g before `before`; its output value. */
static IrValue *pc_cast(PcCtx *c, IrGraph *g, IrNode *before, IrValue *src, int32_t to)
{
    char base[300];
    snprintf(base, sizeof base, "%s_%s", src->name, ir_dtype_name(to));
    char *name = ir_graph_fresh_name(g, base);
    const char *in[1] = {""}, *out[1] = {name};
    IrNode *n = ir_node_new(g, before, "Cast", NULL, name, 1, in, 1, out, c->err);
    free(name);
    if (!n)
        return NULL;
    ir_node_set_input(n, 0, src);   /* the value itself, whatever scope names it */
    ir_node_set_attr(n, ir_attr_int("to", to));
    c->r->casts++;
    return n->out[0];
}

/* The body directly inside vg that g (nested in vg) lies in. */
static IrGraph *pc_top_sub(const IrGraph *vg, IrGraph *g)
{
    while (g->parent && g->parent != vg)
        g = g->parent;
    return g;
}

/* v's forms: the value in each type; Casts in bodies cached per body. */
typedef struct PcForms {
    IrValue *v;            /* the value as stored */
    int32_t stor;
    IrValue *other;        /* the value in the other type, once made */
    int32_t other_t;
    size_t n_sub;
    IrGraph *sub[8];
    IrValue *sub_v[8];
} PcForms;

/* The form of f in type t for a reader in graph ug (v's graph or one
 * nested in it); made on first need: in v's graph right after v, or,
 * for a reader in a body, first in the body directly inside v's graph,
 * so that nodes stay in order. */
static IrValue *pc_form(PcCtx *c, PcForms *f, int32_t t, IrGraph *ug)
{
    if (t == f->stor)
        return f->v;
    if (f->other)
        return f->other;
    IrGraph *vg = f->v->graph;
    if (ug == vg) {
        f->other = pc_cast(c, vg, pc_after(vg, f->v), f->v, t);
        f->other_t = t;
        return f->other;
    }
    IrGraph *top = pc_top_sub(vg, ug);
    for (size_t i = 0; i < f->n_sub; i++)
        if (f->sub[i] == top)
            return f->sub_v[i];
    IrValue *x = pc_cast(c, top, top->first, f->v, t);
    if (x && f->n_sub < 8) {
        f->sub[f->n_sub] = top;
        f->sub_v[f->n_sub++] = x;
    }
    return x;
}

/* A graph output v must have type `want` but is made in f->stor: the
 * output's value moves to a new Cast, and the producer gets a new value
 * of the stored type, which the other readers then take. */
static int pc_swap_output(PcCtx *c, PcForms *f, int32_t want)
{
    IrValue *v = f->v;
    IrGraph *g = v->graph;
    IrNode *p = v->producer;
    size_t j = v->producer_index;
    char *tmp = ir_graph_fresh_name(g, v->name), *tmp2 = ir_graph_fresh_name(g, "pc_tmp");
    const char *o1[1] = {tmp}, *o2[1] = {tmp2}, *none[1] = {""};
    IrNode *hold = ir_node_new(g, p->next, "Identity", NULL, tmp, 0, NULL, 1, o1, c->err);
    IrNode *cast = hold ? ir_node_new(g, hold->next, "Cast", NULL, tmp, 1, none, 1, o2,
                                      c->err) : NULL;
    free(tmp);
    free(tmp2);
    if (!cast)
        return -1;
    ir_node_take_output(cast, 0, p, j);   /* v: now the Cast's output */
    ir_node_take_output(p, j, hold, 0);   /* the producer's new value */
    ir_node_delete(hold);
    ir_node_set_input(cast, 0, p->out[j]);
    ir_node_set_attr(cast, ir_attr_int("to", want));
    c->r->casts++;
    f->other = v;
    f->other_t = want;
    f->v = p->out[j];
    return 0;
}

static void pc_retype_info(IrValueInfo *vi, int32_t t)
{
    if (vi->type && vi->type->kind == IR_TYPE_TENSOR)
        vi->type->elem_type = t, vi->type->has_elem_type = true;
}

/* Sets the element type a graph input, output or value_info declares. */
static void pc_retype_infos(IrPtrList *l, const IrValue *v, int32_t t)
{
    for (size_t i = 0; i < l->n; i++)
        if (((IrValueInfo *)l->p[i])->value == v)
            pc_retype_info(l->p[i], t);
}

/* Output `index` of body g returns f's value in type `want`: the form
 * of that type, a Cast inside the body where needed (a body's outputs
 * are matched by position, so the name may change). */
static int pc_body_output(PcCtx *c, PcForms *f, IrGraph *g, size_t index, int32_t want)
{
    IrValue *x = pc_form(c, f, want, g);
    if (!x)
        return -1;
    IrValueInfo *vi = g->outputs.p[index];
    if (vi->value != x)
        ir_graph_point_output(g, index, x);
    pc_retype_info(vi, want);
    return 0;
}

/* v is an output of its own graph: the graph's boundary type for it.
 * The main graph's outputs are its interface by name, so an input or
 * initializer there cannot take a Cast; a body's can. */
static int pc_own_output(PcCtx *c, PcForms *f, int32_t orig)
{
    IrValue *v = f->v;
    IrGraph *g = v->graph;
    int32_t w = pc_io_want(c, g, orig);
    if (w != f->stor && v->kind == IR_VAL_NODE) {
        if (pc_swap_output(c, f, w) < 0)
            return -1;
    } else if (w != f->stor && !g->parent && !g->is_function) {
        return ir_fail(c->err, "precision: graph output '%s' is an input or "
                       "initializer read in both types; not supported", v->name);
    } else if (w != f->stor) {
        for (size_t i = 0; i < g->outputs.n; i++)
            if (((IrValueInfo *)g->outputs.p[i])->value == v &&
                pc_body_output(c, f, g, i, w) < 0)
                return -1;
    }
    pc_retype_infos(&g->outputs, v, w);
    return 0;
}

/* Points every reader of v at the form it takes: nodes of v's graph and
 * of bodies below it, and bodies returning v directly. */
static int pc_route(PcCtx *c, IrValue *v, int32_t orig, int32_t stor)
{
    PcForms f = {.v = v, .stor = stor};
    if (ir_value_is_graph_output(v) && pc_own_output(c, &f, orig) < 0)
        return -1;
    /* after a swap v is the Cast's output, still read by every reader */
    size_t n = v->n_uses;
    IrUse *uses = mem_array(n ? n : 1, sizeof *uses);
    if (n)
        memcpy(uses, v->uses, n * sizeof *uses);
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        const IrUse *u = &uses[i];
        int32_t w = pc_want(c, u, orig);
        if (!u->node) {
            rc = pc_body_output(c, &f, u->graph, u->index, w);
            continue;
        }
        IrValue *x = pc_form(c, &f, w, u->node->graph);
        if (!x)
            rc = -1;
        else if (x != u->node->in[u->index])
            ir_node_set_input(u->node, u->index, x);
    }
    free(uses);
    return rc;
}

/* ---- the conversion ------------------------------------------------------- */

/* The old-type tensor values of every graph: inputs, initializers,
 * node outputs (collected first: routing adds values). */
typedef struct PcList {
    const PcCtx *c;
    size_t n, cap;
    IrValue **v;
} PcList;

static int pc_values_of(IrGraph *g, const IrWalkAt *at, void *arg)
{
    (void)at;
    PcList *l = arg;
    for (IrValue *v = g->values; v; v = v->hh.next) {
        if (!pc_is_source(l->c, pc_elem(v)) || v->kind == IR_VAL_UNDEF)
            continue;
        if (l->n == l->cap)
            l->v = mem_grow(l->v, l->cap = l->cap ? l->cap * 2 : 16, sizeof *l->v);
        l->v[l->n++] = v;
    }
    return 0;
}

/* Makes g's converted nodes' attribute-typed outputs follow them. */
static int pc_fix_graph(IrGraph *g, const IrWalkAt *at, void *arg)
{
    (void)at;
    PcCtx *c = arg;
    for (IrNode *k = g->first; k; k = k->next)
        if (pc_node_conv(c, k) && pc_fix_attrs(c, k) < 0)
            return -1;
    return 0;
}

static uint64_t pc_init_bytes(const IrGraph *g)
{
    uint64_t b = 0;
    for (size_t i = 0; i < g->inits.n; i++)
        b += ir_tensor_stored_bytes(g->inits.p[i]);
    return b;
}

/* Gives v its stored type (initializer data, declared types) and routes
 * its readers. */
static int pc_value(PcCtx *c, IrValue *v)
{
    int32_t orig = pc_elem(v), stor = pc_stored(c, v, orig);
    if (stor != orig) {
        PcVal *e = mem_alloc(sizeof *e);
        e->v = v;
        e->stor = stor;
        HASH_ADD_PTR(c->vals, v, e);
        char what[300];
        snprintf(what, sizeof what, "initializer '%s'", v->name);
        if (v->init && pc_tensor_retype(c, v->init, stor, what) < 0)
            return -1;
    }
    return pc_route(c, v, orig, stor);
}

/* Gives g's declared inputs and value_info the stored type of the value
 * each names: one pass over the lists once every value is decided (per
 * value it would cost a scan of value_info each: quadratic on exports
 * that declare every intermediate value). */
static int pc_retype_declared(IrGraph *g, const IrWalkAt *at, void *arg)
{
    (void)at;
    const PcCtx *c = arg;
    IrPtrList *lists[2] = {&g->inputs, &g->value_info};
    for (size_t k = 0; k < 2; k++)
        for (size_t i = 0; i < lists[k]->n; i++) {
            IrValueInfo *vi = lists[k]->p[i];
            const IrValue *v = vi->value;
            PcVal *e = NULL;
            HASH_FIND_PTR(c->vals, &v, e);
            if (e)
                pc_retype_info(vi, e->stor);
        }
    return 0;
}

/* v's type once converted: its stored type, a routing Cast's `to` (its
 * value is new, without an inferred type), else its own. */
static int32_t pc_final_elem(const PcCtx *c, const IrValue *v)
{
    PcVal *e = NULL;
    HASH_FIND_PTR(c->vals, &v, e);
    const IrNode *p = v->kind == IR_VAL_NODE ? v->producer : NULL;
    const IrAttr *to = p && pc_is_op(p, "Cast") ? ir_node_attr(p, "to") : NULL;
    return e ? e->stor : to && to->has_i ? (int32_t)to->i : pc_elem(v);
}

/* Makes g's converted Casts that now cast a value to its own type (a
 * model already half inside: its Casts around float32 islands and its
 * I/O) Identity: ONNX Runtime 1.30 refuses a float16 -> float16 Cast that
 * feeds a node its CPU kernels take only in float32 (Upsample-9), as its
 * own cast insertion retypes that Cast's output. */
static int pc_nop_casts(IrGraph *g, const IrWalkAt *at, void *arg)
{
    (void)at;
    const PcCtx *c = arg;
    for (IrNode *k = g->first; k; k = k->next) {
        const IrAttr *to = strcmp(k->op_type, "Cast") || ir_domain_norm(k->domain)[0] ||
                           k->n_in != 1 || !pc_node_conv(c, k) ? NULL : ir_node_attr(k, "to");
        if (!to || !to->has_i || to->i != pc_final_elem(c, k->in[0]))
            continue;
        while (k->n_attr) {
            char *name = mem_strdup(k->attr[0]->name);
            ir_node_remove_attr(k, name);
            free(name);
        }
        free(k->op_type);
        k->op_type = mem_strdup("Identity");
    }
    return 0;
}

/* Frees every entry of a uthash table of T (entries own nothing). */
#define PC_HASH_FREE(head, T)                  \
    do {                                       \
        T *e_, *t_;                            \
        HASH_ITER(hh, head, e_, t_) {          \
            HASH_DEL(head, e_);                \
            free(e_);                          \
        }                                      \
    } while (0)

static void pc_free_maps(PcCtx *c)
{
    PC_HASH_FREE(c->nodes, PcNode);
    PC_HASH_FREE(c->vals, PcVal);
    PC_HASH_FREE(c->statics, PcStatic);   /* the shape rule's */
    PC_HASH_FREE(c->shape_nodes, PcShape);
}

/* Whether Cast at the model's opset reads and writes the new type. */
static void pc_check_cast(PcCtx *c)
{
    const OsSchema *s = os_find("", "Cast", ir_model_opset(c->m, ""));
    IrType t = {.kind = IR_TYPE_TENSOR, .has_elem_type = true, .elem_type = c->o->dtype};
    c->cast_ok = s && os_param_allows(s, os_in_param(s, 0), &t) &&
                 os_param_allows(s, os_out_param(s, 0), &t);
    snprintf(c->no_cast, sizeof c->no_cast, "Cast-%d has no type tensor(%s)",
             s ? s->since : 0, pc_tensor_word(c->o->dtype));
}

/* ---- model-local functions -------------------------------------------- */

/* The type a function body's value had at the calls inference saw. */
typedef struct PcBodyType {
    const IrValue *v;
    IrType *t;             /* the first call's */
    bool mixed;            /* a later call gave another element type */
    UT_hash_handle hh;
} PcBodyType;

/* InfOptions.body_type: inference drops a body's types after each call,
 * as calls differ; keep the first and note a call that differs. */
static void pc_body_type(void *arg, const IrValue *v, const IrType *t)
{
    PcCtx *c = arg;
    PcBodyType *e;
    HASH_FIND_PTR(c->body_types, &v, e);
    if (e) {
        e->mixed |= pc_type_elem(e->t) != pc_type_elem(t);
        return;
    }
    e = mem_alloc(sizeof *e);
    e->v = v;
    e->t = ir_type_copy(t);
    HASH_ADD_PTR(c->body_types, v, e);
}

/* Gives function bodies' values the types their calls gave them, and
 * marks the functions whose calls give differing ones. */
static void pc_restore_body_types(PcCtx *c)
{
    PcBodyType *e, *tmp;
    HASH_ITER(hh, c->body_types, e, tmp) {
        IrValue *v = (IrValue *)e->v;
        ir_type_free(v->type);
        v->type = ir_type_copy(e->t);
        long k = e->mixed ? pc_fn_index(c, v->graph) : -1;
        if (k >= 0)
            c->fn_mixed[k] = true;
    }
}

static void pc_free_body_types(PcCtx *c)
{
    PcBodyType *e, *tmp;
    HASH_ITER(hh, c->body_types, e, tmp) {
        HASH_DEL(c->body_types, e);
        ir_type_free(e->t);
        free(e);
    }
}

/* Infers the model (function bodies at their calls) and decides every
 * node the conversion reaches. */
static int pc_analyse(PcCtx *c)
{
    size_t n = c->m->n_functions ? c->m->n_functions : 1;
    c->n_fn = c->m->n_functions;
    c->fn_live = mem_array(n, sizeof *c->fn_live);
    c->fn_mixed = mem_array(n, sizeof *c->fn_mixed);
    c->fn_stack = mem_array(n, sizeof *c->fn_stack);
    c->n_stack = 0;
    IrError ie;
    InfOptions io = {.run = ev_prove_node, .body_type = pc_body_type, .body_arg = c};
    if (inf_model(c->m, &io, &ie) < 0)
        return ir_fail(c->err, "precision: %s", ie.msg);
    pc_restore_body_types(c);
    pc_shape_rule(c);
    pc_decide_all(c);
    return 0;
}

/* Drops what pc_analyse found (before analysing again). */
static void pc_reset(PcCtx *c)
{
    pc_free_maps(c);
    pc_free_body_types(c);
    free(c->fn_live);
    free(c->fn_mixed);
    free(c->fn_stack);
    c->fn_live = c->fn_mixed = NULL;
    c->fn_stack = NULL;
    for (size_t i = 0; i < c->r->n_kept; i++) {
        free(c->r->kept[i].node);
        free(c->r->kept[i].op);
        free(c->r->kept[i].reason);
    }
    free(c->r->kept);
    c->r->kept = NULL;
    c->r->n_kept = 0;
    c->r->nodes_converted = 0;
    c->gain_opset = 0;
    c->n_blocked = c->n_never = 0;
}

/* Marks, per function, whether some call needs its body as it is: a
 * call that touches an old-type value and does not convert, or any call
 * in a graph the conversion leaves alone (the body of a function no
 * converting call reaches, a training graph). */
typedef struct PcSplit {
    PcCtx *c;
    bool *keep;
    const bool *copy;      /* second walk: the functions copied */
    char **names;          /* their copies' names */
} PcSplit;

static int pc_split_scan(IrGraph *g, const IrWalkAt *at, void *arg)
{
    PcSplit *sp = arg;
    PcCtx *c = sp->c;
    long home = at->fn ? pc_fn_index(c, g) : -1;
    bool live = !at->training && (home < 0 || ((size_t)home < c->n_fn && c->fn_live[home]));
    for (IrNode *n = g->first; n; n = n->next) {
        long k = pc_callee(c, n);
        bool unknown = false;
        if (k < 0 || (size_t)k >= c->n_fn)
            continue;
        if (sp->copy && sp->copy[k] && pc_node_conv(c, n)) {
            free(n->op_type);
            n->op_type = mem_strdup(sp->names[k]);
        } else if (!sp->copy && (!live || (!pc_node_conv(c, n) && pc_touches(c, n, &unknown)))) {
            sp->keep[k] = true;
        }
    }
    return 0;
}

/* Whether the model has a function of that domain, name and overload. */
static bool pc_fn_named(const IrModel *m, const IrFunction *like, const char *name)
{
    for (size_t i = 0; i < m->n_functions; i++) {
        const IrFunction *f = m->functions[i];
        if (f->name && !strcmp(f->name, name) &&
            !strcmp(ir_domain_norm(f->domain), ir_domain_norm(like->domain)) &&
            !strcmp(f->overload ? f->overload : "", like->overload ? like->overload : ""))
            return true;
    }
    return false;
}

/* A deep copy of function k under a fresh name (NAME_float16, ...) in
 * its domain, added to the model; its name (owned). */
static char *pc_fn_copy(PcCtx *c, size_t k)
{
    IrFunction *f = c->m->functions[k];
    IrFunction *nf = ir_function_clone(f);
    char name[300];
    snprintf(name, sizeof name, "%s_%s", f->name, pc_dtype_word(c->o->dtype));
    for (int i = 2; pc_fn_named(c->m, f, name) && i < 1000; i++)
        snprintf(name, sizeof name, "%s_%s_%d", f->name, pc_dtype_word(c->o->dtype), i);
    free(nf->name);
    nf->name = mem_strdup(name);
    c->m->functions = mem_grow(c->m->functions, c->m->n_functions + 1,
                              sizeof *c->m->functions);
    c->m->functions[c->m->n_functions++] = nf;
    return mem_strdup(name);
}

/* A function some calls convert and others keep as it is: the converting
 * calls get a copy to convert. Returns how many copies were made. */
static int pc_split(PcCtx *c)
{
    size_t n = c->n_fn ? c->n_fn : 1;
    unsigned walk = IR_WALK_ALL;
    bool *keep = mem_array(n, sizeof *keep);
    char **names = mem_array(n, sizeof *names);
    PcSplit sp = {.c = c, .keep = keep};
    ir_each_graph(c->m, walk, pc_split_scan, &sp);
    int made = 0;
    for (size_t k = 0; k < c->n_fn; k++) {
        keep[k] = keep[k] && c->fn_live[k];
        if (keep[k]) {
            names[k] = pc_fn_copy(c, k);
            made++;
        }
    }
    sp.copy = keep;
    sp.names = names;
    if (made > 0)
        ir_each_graph(c->m, walk, pc_split_scan, &sp);
    for (size_t k = 0; k < c->n_fn; k++)
        free(names[k]);
    free(names);
    free(keep);
    return made;
}

/* Runs fn on the graphs the conversion changes: the main graph, the
 * bodies in it, and the bodies of the functions converting calls reach. */
static int pc_each_live(PcCtx *c, IrGraphFn fn, void *arg)
{
    unsigned all = IR_WALK_MAIN | IR_WALK_SUBGRAPHS;
    int rc = ir_graph_each_subgraph(c->g, all, fn, arg);
    for (size_t k = 0; rc == 0 && k < c->n_fn; k++)
        if (c->fn_live[k] && c->m->functions[k]->body)
            rc = ir_graph_each_subgraph(c->m->functions[k]->body, all, fn, arg);
    return rc;
}

/* --dtype: decide (copying functions whose calls disagree, then deciding
 * again), retype attributes, route every old-type value. */
static int pc_dtype(PcCtx *c)
{
    pc_check_cast(c);
    /* each pass copies functions at most once: the copies' calls all
     * convert, so a later pass finds nothing more to copy for them */
    size_t passes = c->m->n_functions + 1;
    for (size_t pass = 0;; pass++) {
        if (pc_analyse(c) < 0)
            return -1;
        int made = pc_split(c);
        if (made > 0 && pass >= passes)
            return ir_fail(c->err, "precision: model-local functions still need copies "
                           "after %zu passes; not supported", passes);
        if (made == 0)
            break;
        pc_reset(c);
    }
    pc_hint(c);
    /* before routing: a swapped output's new value has no inferred type */
    int rc = pc_each_live(c, pc_fix_graph, c);
    PcList l = {.c = c};
    if (rc == 0)
        pc_each_live(c, pc_values_of, &l);
    for (size_t i = 0; i < l.n && rc == 0; i++)
        rc = pc_value(c, l.v[i]);
    free(l.v);
    if (rc == 0) {
        pc_each_live(c, pc_retype_declared, c);
        pc_each_live(c, pc_nop_casts, c);
    }
    ir_graph_clear_inferred(c->g);
    for (size_t i = 0; i < c->m->n_functions; i++)
        if (c->m->functions[i]->body)
            ir_graph_clear_inferred(c->m->functions[i]->body);
    return rc;
}

/* --store float16: one initializer stored as float16 behind a Cast that
 * takes its name, so that every reader is unchanged. */
static int pc_store_one(PcCtx *c, IrValue *v)
{
    char base[300];
    snprintf(base, sizeof base, "%s_float16", v->name);
    char *name = ir_graph_fresh_name(c->g, base), *old = mem_strdup(v->name);
    int rc = ir_value_rename(v, name, c->err);
    const char *none[1] = {""}, *out[1] = {old};
    IrNode *cast = rc ? NULL : ir_node_new(c->g, c->g->first, "Cast", NULL, old, 1, none,
                                           1, out, c->err);
    free(name);
    free(old);
    if (!cast)
        return -1;
    char what[300];
    snprintf(what, sizeof what, "initializer '%s'", cast->out[0]->name);
    if (pc_tensor_retype(c, v->init, IR_FLOAT16, what) < 0 ||
        ir_value_replace_uses(v, cast->out[0], c->err) < 0)
        return -1;
    /* IR 3: the weight is also a graph input, whose declared type follows */
    pc_retype_infos(&c->g->inputs, v, IR_FLOAT16);
    pc_retype_infos(&c->g->value_info, v, IR_FLOAT16);
    ir_node_set_input(cast, 0, v);
    ir_node_set_attr(cast, ir_attr_int("to", IR_FLOAT));
    c->r->casts++;
    c->r->stored++;
    return 0;
}

/* --store float16 over the main graph's initializers. Under IR 3 every
 * initializer is also a graph input (a default a caller may override):
 * it is stored the same way, the input renamed and declared float16 with
 * it, since IR 3 cannot hold an initializer that is not an input. */
static int pc_store(PcCtx *c)
{
    size_t n = c->g->inits.n;
    IrValue **list = mem_array(n ? n : 1, sizeof *list);
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        IrTensor *t = c->g->inits.p[i];
        IrValue *v = ir_graph_find_local(c->g, t->name);
        uint64_t numel;
        if (v && v->init == t && t->data_type == IR_FLOAT && v->n_uses &&
            !ir_value_is_graph_output(v) && ir_tensor_numel(t, &numel) &&
            numel >= PC_STORE_MIN)
            list[k++] = v;
    }
    int rc = 0;
    for (size_t i = 0; i < k && rc == 0; i++)
        rc = pc_store_one(c, list[i]);
    free(list);
    return rc;
}

int pc_convert(IrModel *m, const PcOptions *o, PcReport *r, IrError *err)
{
    PcReport local;
    if (!r)
        r = &local;
    memset(r, 0, sizeof *r);
    r->dtype = o->dtype;
    r->store = o->store;
    if (!m->graph)
        return 0;
    if (o->dtype && o->store)
        return ir_fail(err, "precision: --store float16 keeps the computation in "
                       "float32; it does not go with --dtype");
    PcCtx c = {.m = m, .g = m->graph, .o = o, .r = r, .err = err};
    r->init_bytes_before = pc_init_bytes(c.g);
    int rc = o->dtype ? pc_dtype(&c) : o->store ? pc_store(&c) : 0;
    r->init_bytes_after = pc_init_bytes(c.g);
    pc_free_maps(&c);
    pc_free_body_types(&c);
    free(c.fn_live);
    free(c.fn_mixed);
    free(c.fn_stack);
    if (r == &local)
        pc_report_free(r);
    return rc;
}

void pc_report_free(PcReport *r)
{
    for (size_t i = 0; i < r->n_kept; i++) {
        free(r->kept[i].node);
        free(r->kept[i].op);
        free(r->kept[i].reason);
    }
    free(r->kept);
    memset(r, 0, sizeof *r);
}

static int pc_copy_as(const IrModel *m, int32_t dtype, IrModel **out, IrError *err)
{
    IrModel *w = ir_model_clone(m);
    PcOptions po = {.dtype = dtype};
    PcReport pr = {0};
    int rc = pc_convert(w, &po, &pr, err);
    pc_report_free(&pr);
    if (rc < 0) {
        ir_model_free(w);
        return -1;
    }
    *out = w;
    return 0;
}

int pc_widen_copy(const IrModel *m, IrModel **out, IrError *err)
{
    return pc_copy_as(m, IR_FLOAT, out, err);
}

int pc_wide_copy(const IrModel *m, IrModel **out, IrError *err)
{
    return pc_copy_as(m, IR_DOUBLE, out, err);
}
