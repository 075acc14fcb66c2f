/*
 * fuse_gemm.c - MatMul followed by Add becomes Gemm; a Transpose feeding a
 * Gemm becomes its transA/transB flag.
 *
 * Y = MatMul(A, B), Z = Add(Y, C) (either operand order), with A [M,K] and
 * B [K,N] both known to be 2-D: Z = Gemm(A, B, C) with alpha = beta = 1,
 * which is A*B + C by definition. Only when
 *  - Y is read by nothing but the Add and is not a graph output;
 *  - Gemm exists at the scope's opset and allows the element type
 *    (the schema table decides: float types, integers from Gemm-9);
 *  - C broadcasts to [M,N] without growing it: rank <= 2 and each of
 *    its dims (aligned from the right) is 1 or the same as Y's (same
 *    number or same symbol), so Add's output is Y's shape [M,N], the shape
 *    Gemm gives. Below opset 7 (Add and Gemm with a `broadcast` attribute)
 *    only an Add without attributes and a C of Y's exact static shape.
 * MatMul with a 1-D or N-D operand is left alone (Gemm would need
 * Reshapes around it: more nodes, not fewer). Integer Gemm with
 * alpha = beta = 1 is exact wrapping arithmetic, as MatMul + Add.
 *
 * Z = Gemm(Transpose(X, perm=[1,0]), ...): Gemm reads X with transA
 * flipped (same for B); the Transpose output must be read only there.
 */
#include "passes/fuse_util.h"
#include "schema/opschema.h"

/* Whether dim j of c equals dim i of y: the same number, or the same
 * symbol. */
static bool opt_fg_same_dim(const IrValue *cv, size_t j, const IrValue *y, size_t i)
{
    const IrDim *a = &cv->type->shape->dims[j], *b = &y->type->shape->dims[i];
    if (a->kind == IR_DIM_VALUE && b->kind == IR_DIM_VALUE)
        return a->value == b->value;
    return a->kind == IR_DIM_PARAM && b->kind == IR_DIM_PARAM && a->param && b->param &&
           strcmp(a->param, b->param) == 0;
}

/* Whether C broadcasts unidirectionally to Y's 2-D shape (exactly Y's
 * static shape when `exact`). */
static bool opt_fg_c_fits(const IrValue *cv, const IrValue *y, bool exact)
{
    long rc = opt_fz_rank(cv);
    if (rc < 0 || rc > 2 || opt_fz_rank(y) != 2 || (exact && rc != 2))
        return false;
    for (long j = 0; j < rc; j++) {
        size_t i = (size_t)(2 - rc + j);
        bool one = opt_fz_dim(cv, (size_t)j) == 1;
        if (exact && (opt_fz_dim(y, i) < 0 || !opt_fg_same_dim(cv, (size_t)j, y, i)))
            return false;
        if (!one && !opt_fg_same_dim(cv, (size_t)j, y, i))
            return false;
    }
    return true;
}

/* Whether Gemm at this opset takes A of v's element type. */
static bool opt_fg_gemm_ok(const OptCtx *c, const IrValue *v)
{
    int64_t ver = ir_scope_opset(c->m, c->fn, "");
    const OsSchema *s = ver > 0 ? os_find("", "Gemm", ver) : NULL;
    return s && opt_fz_type(v) && os_param_allows(s, os_in_param(s, 0), v->type);
}

/* Tries MatMul + Add -> Gemm at Add node `add`. */
static bool opt_fg_matmul_add(OptCtx *c, IrNode *add)
{
    if (add->n_in != 2 || add->n_out != 1 || !add->in[0] || !add->in[1] || !add->out[0])
        return false;
    int64_t ver = ir_scope_opset(c->m, c->fn, "");
    if (ver < 7 && add->n_attr)
        return false;
    for (size_t s = 0; s < 2; s++) {
        IrNode *mm = opt_fz_sole(add->in[s], add, "MatMul");
        IrValue *cv = add->in[1 - s];
        if (!mm || mm->n_in != 2 || !mm->in[0] || !mm->in[1] || mm->n_attr)
            continue;
        IrValue *a = mm->in[0], *b = mm->in[1], *y = add->in[s];
        int32_t et = opt_fz_elem(a);
        if (opt_fz_rank(a) != 2 || opt_fz_rank(b) != 2 || !et || opt_fz_elem(b) != et ||
            opt_fz_elem(cv) != et || !opt_fg_gemm_ok(c, a) ||
            !opt_fg_c_fits(cv, y, ver < 7) || cv == y)
            continue;
        const char *ins[3] = {a->name, b->name, cv->name};
        char *name = ir_graph_fresh_name(c->g, add->name && add->name[0] ? add->name : "gemm");
        char *tmp = ir_graph_fresh_name(c->g, "gemm_out");
        const char *outs[1] = {tmp};
        IrError e;
        IrNode *g = ir_node_new(c->g, add, "Gemm", "", name, 3, ins, 1, outs, &e);
        free(name);
        free(tmp);
        if (!g)
            return false;
        /* ir_node_new resolves names by scope; make sure they are the
         * values the MatMul and Add read. */
        ir_node_set_input(g, 0, a);
        ir_node_set_input(g, 1, b);
        ir_node_set_input(g, 2, cv);
        ir_node_take_output(g, 0, add, 0);
        ir_node_delete(add);
        ir_node_delete(mm);
        return true;
    }
    return false;
}

/* Tries to fold Transposes into Gemm node `g`'s A and B. */
static long opt_fg_trans(IrNode *g, int64_t opset)
{
    long n = 0;
    for (size_t i = 0; i < 2 && i < g->n_in; i++) {
        IrNode *t = g->in[i] ? opt_fz_sole(g->in[i], g, "Transpose") : NULL;
        if (!t || t->n_in != 1 || !t->in[0])
            continue;
        int64_t p[OPT_FZ_MAX_RANK];
        long np = opt_fz_attr_ints(t, "perm", p, OPT_FZ_MAX_RANK);
        bool swap = np == 2 ? p[0] == 1 && p[1] == 0 : np == -1 && opt_fz_rank(t->in[0]) == 2;
        const char *fl = i == 0 ? "transA" : "transB";
        bool ok = true;
        int64_t cur = opt_fz_attr_i(g, fl, opset, &ok);
        if (!swap || !ok || (cur != 0 && cur != 1))
            continue;
        ir_node_set_attr(g, ir_attr_int(fl, !cur));
        ir_node_set_input(g, i, t->in[0]);
        ir_node_delete(t);
        n++;
    }
    return n;
}

static long opt_fg_run(OptCtx *c)
{
    long n = 0;
    IR_FOR_NODES(c->g, k) {
        if (opt_fz_op(k, "Add") && opt_fg_matmul_add(c, k))
            n++;
        else if (opt_fz_op(k, "Gemm"))
            n += opt_fg_trans(k, ir_scope_opset(c->m, c->fn, ""));
    }
    return n;
}

const OptPass opt_pass_fuse_gemm = {
    "fuse_gemm", "fuses 2-D MatMul + Add into Gemm, and Transposes into Gemm's trans flags",
    true, OPT_NEEDS_TYPES, opt_fg_run,
};
