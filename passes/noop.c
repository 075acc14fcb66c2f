/*
 * noop.c - removes nodes that return their input unchanged.
 *
 * y = Op(x, ...) where Op provably copies x: every reader of y reads x
 * instead and the node goes (as passes/identity.c does; a y that is a
 * graph output keeps its node). The cases, each exact because the op's
 * definition makes the output equal to the input element for element:
 *   Dropout   in inference: opset < 7 with is_test=1; 7..11 always;
 *             12+ when training_mode is absent or a constant false. The
 *             mask output must be absent or unread (it goes with the node).
 *   Cast      to the input's own element type (opset >= 6, where `to` is an
 *             int); CastLike when both inputs have one element type.
 *   Reshape   when the target shape (constant, or proved by shape
 *             arithmetic), resolved with 0 / -1 / allowzero, equals the
 *             input's static shape.
 *   Expand    when the shape broadcast with the input's static shape gives
 *             that shape back.
 *   Pad       with every pad zero (any mode: nothing is added).
 *   Slice     with step 1 on every listed axis, covering each axis fully.
 *   Transpose with perm 0,1,..,r-1, or no perm and rank <= 1.
 *   Concat    of one input; Split into one output with no sizes or with
 *             the one size equal to the axis' length.
 *   Mul, Div  by a constant of ones, Add of a constant of zeros, Sub of
 *             one (x the first operand of Sub and Div), when broadcasting
 *             gives x's static shape back, or the constant has one
 *             element and no more dims than x (any dims of x then).
 *             Floats need the zero's sign:
 *             x + (-0) and x - (+0) are x for every x, x + (+0) is not
 *             (-0 + 0 = +0), so an Add of +0 stays (ONNX Runtime drops
 *             it; we do not round a -0 away).
 * Squeeze/Unsqueeze are never no-ops in general and are left alone. Shapes
 * come from inference and must be fully static (numbers); anything
 * unknown leaves the node as it is.
 */
#include <stdlib.h>
#include <string.h>

#include <math.h>

#include "passes/passes.h"
#include "schema/opschema.h"
#include "passes/fuse_util.h"
#include "analysis/infer.h"

#define OPT_NP_MAX_RANK 64

/* The static dims of tensor value v into d (rank into *r). */
static bool opt_np_static(const IrValue *v, int64_t *d, size_t *r)
{
    return v && ir_type_static_dims(v->type, d, OPT_NP_MAX_RANK, r);
}

/* The known element type of tensor value v, or 0. */
static int32_t opt_np_elem(const IrValue *v)
{
    const IrType *t = v ? v->type : NULL;
    return t && t->kind == IR_TYPE_TENSOR && t->has_elem_type ? t->elem_type : 0;
}

/* The elements of a constant (or shape-arithmetic-proved) integer value;
 * never a graph input, whose initializer is only a default. Caller frees. */
static bool opt_np_ints(const IrValue *v, int64_t **out, size_t *n)
{
    return v && v->kind != IR_VAL_INPUT && v->kind != IR_VAL_UNDEF &&
           inf_value_ints(v, out, n);
}

/* An INTS attribute's values (borrowed), or false. */
static bool opt_np_attr_ints(const IrNode *k, const char *name, const int64_t **v, size_t *n)
{
    const IrAttr *a = ir_node_attr(k, name);
    if (!a || a->ref_attr_name)
        return false;
    *v = a->ints;
    *n = a->n_ints;
    return true;
}

/* An INT attribute's value, dflt when absent; false when it is a
 * reference to a function attribute (value unknown here). */
static bool opt_np_attr_i(const IrNode *k, const char *name, int64_t dflt, int64_t *v)
{
    const IrAttr *a = ir_node_attr(k, name);
    if (a && (a->ref_attr_name || !a->has_i))
        return false;
    *v = a ? a->i : dflt;
    return true;
}

/* ---- the ops ----------------------------------------------------------- */

static bool opt_np_dropout(const OptCtx *c, const IrNode *k, int64_t opset)
{
    if (k->n_out > 1 && k->out[1] && (k->out[1]->n_uses || ir_value_is_graph_output(k->out[1])))
        return false;
    if (opset < 7) {
        int64_t t;
        return opt_np_attr_i(k, "is_test", 0, &t) && t != 0;
    }
    if (opset < 12 || k->n_in < 3 || !k->in[2])
        return true;
    int64_t *v;
    size_t n;
    if (!opt_np_ints(k->in[2], &v, &n))
        return false;
    bool off = n == 1 && v[0] == 0;
    free(v);
    return off;
}

static bool opt_np_cast(const OptCtx *c, const IrNode *k, int64_t opset)
{
    int32_t e = opt_np_elem(k->in[0]);
    if (!e)
        return false;
    if (!strcmp(k->op_type, "CastLike"))
        return k->n_in == 2 && opt_np_elem(k->in[1]) == e;
    int64_t to;
    return opset >= 6 && opt_np_attr_i(k, "to", 0, &to) && to == e;
}

/* Whether the dims `s` (n of them) resolve, as Reshape reads them, to
 * exactly the input dims d (rank r). */
static bool opt_np_reshape_same(const int64_t *s, size_t n, const int64_t *d, size_t r,
                                int64_t allowzero)
{
    if (n != r)
        return false;
    size_t minus = 0;
    for (size_t i = 0; i < n; i++) {
        int64_t want = s[i];
        if (want == 0 && !allowzero)
            want = d[i];
        if (want == -1) {
            minus++;
            continue;
        }
        if (want != d[i])
            return false;
    }
    /* With every other dim equal, a single -1 takes what is left: d[i]
     * itself, unless that is ambiguous (a zero-sized input). */
    if (minus > 1)
        return false;
    for (size_t i = 0; minus && i < r; i++)
        if (d[i] == 0)
            return false;
    return true;
}

static bool opt_np_reshape(const OptCtx *c, const IrNode *k, int64_t opset)
{
    int64_t d[OPT_NP_MAX_RANK], allowzero = 0, *s;
    size_t r, n;
    if (opset < 5 || k->n_in != 2 || !opt_np_static(k->in[0], d, &r) ||
        !opt_np_attr_i(k, "allowzero", 0, &allowzero) || !opt_np_ints(k->in[1], &s, &n))
        return false;
    bool same = opt_np_reshape_same(s, n, d, r, allowzero);
    free(s);
    return same;
}

static bool opt_np_expand(const OptCtx *c, const IrNode *k, int64_t opset)
{
    int64_t d[OPT_NP_MAX_RANK], *s;
    size_t r, n;
    if (k->n_in != 2 || !opt_np_static(k->in[0], d, &r) || !opt_np_ints(k->in[1], &s, &n))
        return false;
    /* The result has rank max(r, n); each shape dim must be 1 or the
     * input's own. */
    bool same = n <= r;
    for (size_t i = 0; same && i < n; i++) {
        int64_t x = d[r - n + i];
        same = s[i] == 1 || s[i] == x;
    }
    free(s);
    return same;
}

static bool opt_np_all_zero(const int64_t *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (v[i] != 0)
            return false;
    return true;
}

static bool opt_np_pad(const OptCtx *c, const IrNode *k, int64_t opset)
{
    if (opset < 11) {
        const int64_t *v;
        size_t n;
        return opt_np_attr_ints(k, opset < 2 ? "paddings" : "pads", &v, &n) &&
               opt_np_all_zero(v, n);
    }
    int64_t *v;
    size_t n;
    if (k->n_in < 2 || !opt_np_ints(k->in[1], &v, &n))
        return false;
    bool z = opt_np_all_zero(v, n);
    free(v);
    return z;
}

/* Whether slicing `axes` (or 0..n-1) from starts to ends, step 1, keeps
 * every element of dims d (rank r). */
static bool opt_np_slice_all(const int64_t *st, const int64_t *en, const int64_t *ax,
                             const int64_t *sp, size_t n, const int64_t *d, size_t r)
{
    bool seen[OPT_NP_MAX_RANK] = {false};
    if (n > r)
        return false;
    for (size_t i = 0; i < n; i++) {
        int64_t a = ax ? ax[i] : (int64_t)i;
        if (a < 0)
            a += (int64_t)r;
        if (a < 0 || a >= (int64_t)r || seen[a] || (sp && sp[i] != 1))
            return false;
        seen[a] = true;
        int64_t dim = d[a], s = st[i], e = en[i];
        if (s < 0)
            s += dim;
        if (e < 0)
            e += dim;
        if (dim > 0 && (s > 0 || e < dim))
            return false;
    }
    return true;
}

/* Slice-10+: starts, ends, axes, steps are inputs 1..4. */
static bool opt_np_slice_inputs(const IrNode *k, const int64_t *d, size_t r)
{
    int64_t *v[4] = {NULL, NULL, NULL, NULL};
    size_t n[4] = {0, 0, 0, 0};
    bool ok = k->n_in >= 3;
    for (size_t i = 0; ok && i < 4; i++) {
        if (i + 1 >= k->n_in || !k->in[i + 1])
            continue;
        ok = opt_np_ints(k->in[i + 1], &v[i], &n[i]) && n[i] == n[0];
    }
    ok = ok && v[0] && v[1] &&
         opt_np_slice_all(v[0], v[1], v[2], v[3], n[0], d, r);
    for (size_t i = 0; i < 4; i++)
        free(v[i]);
    return ok;
}

static bool opt_np_slice(const OptCtx *c, const IrNode *k, int64_t opset)
{
    int64_t d[OPT_NP_MAX_RANK];
    size_t r;
    if (!opt_np_static(k->in[0], d, &r))
        return false;
    if (opset >= 10)
        return opt_np_slice_inputs(k, d, r);
    const int64_t *st, *en, *ax = NULL;
    size_t ns, ne, na = 0;
    if (!opt_np_attr_ints(k, "starts", &st, &ns) || !opt_np_attr_ints(k, "ends", &en, &ne) ||
        ns != ne)
        return false;
    if (ir_node_attr(k, "axes") && (!opt_np_attr_ints(k, "axes", &ax, &na) || na != ns))
        return false;
    return opt_np_slice_all(st, en, ax, NULL, ns, d, r);
}

static bool opt_np_transpose(const OptCtx *c, const IrNode *k, int64_t opset)
{
    const int64_t *p;
    size_t n;
    if (!ir_node_attr(k, "perm")) {
        const IrType *t = k->in[0]->type;
        return t && t->kind == IR_TYPE_TENSOR && t->shape && t->shape->rank <= 1;
    }
    if (!opt_np_attr_ints(k, "perm", &p, &n))
        return false;
    for (size_t i = 0; i < n; i++)
        if (p[i] != (int64_t)i)
            return false;
    return true;
}

static bool opt_np_concat(const OptCtx *c, const IrNode *k, int64_t opset)
{
    return k->n_in == 1;
}

/* Split into a single output: no sizes at all, or one size equal to the
 * length of the axis. */
static bool opt_np_split(const OptCtx *c, const IrNode *k, int64_t opset)
{
    if (k->n_out != 1)
        return false;
    const IrValue *sv = opset >= 13 || opset < 2 ? (k->n_in > 1 ? k->in[1] : NULL) : NULL;
    bool has_attr = opset < 13 && ir_node_attr(k, "split");
    if (!sv && !has_attr)
        return true;
    int64_t d[OPT_NP_MAX_RANK], axis;
    size_t r;
    if (!opt_np_static(k->in[0], d, &r) || !opt_np_attr_i(k, "axis", 0, &axis))
        return false;
    if (axis < 0)
        axis += (int64_t)r;
    if (axis < 0 || axis >= (int64_t)r || (sv && has_attr))
        return false;
    if (has_attr) {
        const int64_t *v;
        size_t n;
        return opt_np_attr_ints(k, "split", &v, &n) && n == 1 && v[0] == d[axis];
    }
    int64_t *v;
    size_t n;
    if (!opt_np_ints(sv, &v, &n))
        return false;
    bool ok = n == 1 && v[0] == d[axis];
    free(v);
    return ok;
}

/* Whether every element of constant c is the identity of op (Add, Sub,
 * Mul, Div); real: a float type, where the zero's sign counts (see the
 * top of the file). */
static bool opt_np_identity(const char *op, const TkTensor *c, bool real)
{
    bool mul = op[0] == 'M' || op[0] == 'D';
    for (size_t i = 0; i < c->numel; i++) {
        double v = tk_get_f(c, i);
        if (mul ? v != 1.0 : v != 0.0)
            return false;
        if (!mul && real && (signbit(v) != 0) != (op[0] == 'A'))
            return false;
    }
    return true;
}

/* Whether constant c, all of whose dims are 1, broadcasts against x
 * without changing x's shape whatever x's dims are: c's rank is 0, or at
 * most x's known rank (a detector's boxes divided by a scalar 1.0 have a
 * data-dependent count, so x's shape is not static). */
static bool opt_np_unit_bcast(const TkTensor *c, const IrValue *x)
{
    for (size_t i = 0; i < c->rank; i++)
        if (c->dims[i] != 1)
            return false;
    const IrShape *sh = x->type && x->type->kind == IR_TYPE_TENSOR ? x->type->shape : NULL;
    return c->rank == 0 || (sh && sh->rank >= c->rank);
}

/* For Add/Sub/Mul/Div (opset 7+: numpy broadcasting) by an identity
 * constant, the index of the input the node copies, else -1. */
static int opt_np_arith(const IrNode *k, int64_t opset)
{
    static const char *const ops[] = {"Add", "Sub", "Mul", "Div"};
    bool known = false;
    for (size_t i = 0; i < 4; i++)
        known = known || !strcmp(k->op_type, ops[i]);
    if (!known || ir_domain_norm(k->domain)[0] ||
        opset < 7 || k->n_in != 2 || !k->in[0] || !k->in[1] || k->n_out != 1 ||
        !k->out[0])
        return -1;
    size_t nv;
    const OsSchema *sch = os_versions(k->domain, k->op_type, &nv);
    bool commutes = sch && (sch->flags & OS_F_COMMUTATIVE);   /* Add, Mul */
    int64_t dx[OPT_NP_MAX_RANK], dy[OPT_NP_MAX_RANK];
    size_t rx, ry;
    for (int j = 0; j < (commutes ? 2 : 1); j++) {
        const IrValue *x = k->in[j];
        int32_t e = opt_np_elem(x);
        if (!e || opt_np_elem(k->out[0]) != e)
            continue;
        TkTensor *c = opt_fz_const(k->in[1 - j]);
        bool same = opt_np_static(x, dx, &rx) && opt_np_static(k->out[0], dy, &ry) &&
                    rx == ry && memcmp(dx, dy, rx * sizeof *dx) == 0;
        bool id = c && c->dtype == e &&
                  (same || opt_np_unit_bcast(c, x)) &&
                  opt_np_identity(k->op_type, c, !ir_dtype_is_int(e));
        tk_free(c);
        if (id)
            return j;
    }
    return -1;
}

/* ---- the pass ----------------------------------------------------------- */

typedef bool (*OptNpTest)(const OptCtx *c, const IrNode *k, int64_t opset);

static const struct {
    const char *op;
    OptNpTest test;
} opt_np_ops[] = {
    {"Dropout", opt_np_dropout},     {"Cast", opt_np_cast},
    {"CastLike", opt_np_cast},       {"Reshape", opt_np_reshape},
    {"Expand", opt_np_expand},       {"Pad", opt_np_pad},
    {"Slice", opt_np_slice},         {"Transpose", opt_np_transpose},
    {"Concat", opt_np_concat},       {"Split", opt_np_split},
};

/* Whether node k copies its input 0 to its output 0. */
static bool opt_np_is_noop(const OptCtx *c, const IrNode *k, int64_t opset)
{
    if (ir_domain_norm(k->domain)[0] || k->n_in < 1 ||
        !k->in[0] || k->n_out < 1 || !k->out[0])
        return false;
    for (size_t i = 1; i < k->n_out; i++)
        if (k->out[i] && strcmp(k->op_type, "Dropout") != 0)
            return false;
    for (size_t i = 0; i < sizeof opt_np_ops / sizeof opt_np_ops[0]; i++)
        if (!strcmp(k->op_type, opt_np_ops[i].op))
            return opt_np_ops[i].test(c, k, opset);
    return false;
}

static long opt_np_run(OptCtx *c)
{
    int64_t opset = ir_scope_opset(c->m, c->fn, "");
    if (opset < 1)
        return 0;
    long n = 0;
    IR_FOR_NODES(c->g, k) {
        int j = opt_np_arith(k, opset);
        if (j < 0 && !opt_np_is_noop(c, k, opset))
            continue;
        IrValue *x = k->in[j < 0 ? 0 : j], *y = k->out[0];
        IrError e;
        if (ir_value_is_graph_output(y) || ir_value_replace_uses(y, x, &e) < 0)
            continue;
        ir_node_delete(k);
        n++;
    }
    return n;
}

const OptPass opt_pass_noop = {
    "noop", "removes nodes that return their input unchanged (Dropout in inference, "
    "Cast to the same type, full Slice, zero Pad, identity Transpose, Mul by 1, ...)",
    true, OPT_NEEDS_TYPES, opt_np_run,
};
