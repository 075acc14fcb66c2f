/*
 * fold.c - constant folding: a node whose inputs are all constants is run
 * once, now, by the evaluator, and its outputs become constants.
 *
 * Any deterministic ai.onnx / ai.onnx.ml op folds (random ops, control
 * flow and nodes reading function attributes do not). The evaluator is the
 * same one that judges conversions, so a fold computes what the op means at
 * the scope's opset. A fold that fails to run is left alone: the model
 * reports its own error at run time, as before. A node the checker would
 * refuse on its own (a pass may have made it) is never run.
 *
 * The growth guard: folding turns a small recipe (Tile, Expand,
 * ConstantOfShape, Range ...) into stored bytes. A fold is done only when
 * the bytes it adds, less the bytes of constant inputs only this node
 * reads, stay within OptOptions.fold_limit (default 1 MiB). Outputs whose
 * inferred shapes are static are measured before running anything.
 */
#include <string.h>

#include "passes/passes.h"
#include "analysis/check.h"
#include "eval/eval.h"
#include "analysis/known.h"
#include "schema/opschema.h"

#define OPT_FOLD_LIMIT_DEFAULT (1u << 20)

/* Ops whose result is not a function of their inputs alone, or that run
 * graphs, are never folded (the rule of src/analysis/known.h: the table's random and
 * control flags); nor are ops the table marks no_fold, nor a Constant,
 * which is already one. */
static bool opt_fold_op_skipped(const OptCtx *c, const IrNode *k)
{
    size_t nv;
    const OsSchema *s = os_versions(k->domain, k->op_type, &nv);
    return !strcmp(k->op_type, "Constant") || !kv_deterministic(c->m, k) ||
           (s && (s->flags & OS_F_NO_FOLD));
}

/* Whether every present input is a constant (a node with none, such as
 * OptionalHasElement of a left-out input, folds too: the skipped ops are
 * the ones whose result is not a function of their inputs); adds the
 * bytes of those only k reads to *freed. */
static bool opt_fold_inputs(const IrNode *k, uint64_t *freed)
{
    for (size_t i = 0; i < k->n_in; i++) {
        const IrValue *v = k->in[i];
        if (!v)
            continue;
        const IrTensor *t = opt_const_tensor(v);
        if (!t)
            return false;
        bool only_k = !ir_value_is_graph_output(v);
        for (size_t u = 0; u < v->n_uses && only_k; u++)
            only_k = v->uses[u].node == k;
        bool first = true;          /* count a value read twice once */
        for (size_t j = 0; j < i; j++)
            first = first && k->in[j] != v;
        if (only_k && first)
            *freed += ir_tensor_stored_bytes(t);
    }
    return true;
}

/* The bytes k's outputs will take, from inferred static shapes; false
 * when some output is not a tensor of a static shape and known type. */
static bool opt_fold_static_bytes(const IrNode *k, uint64_t *bytes)
{
    *bytes = 0;
    for (size_t i = 0; i < k->n_out; i++) {
        const IrValue *v = k->out[i];
        if (!v)
            continue;
        const IrType *t = v->type;
        if (!t || t->kind != IR_TYPE_TENSOR || !t->has_elem_type || !t->shape)
            return false;
        uint64_t n = 1;
        for (size_t d = 0; d < t->shape->rank; d++) {
            const IrDim *dm = &t->shape->dims[d];
            if (dm->kind != IR_DIM_VALUE || dm->value < 0 ||
                (dm->value && n > UINT64_MAX / (uint64_t)dm->value))
                return false;
            n *= (uint64_t)dm->value;
        }
        uint64_t b;
        if (!ir_dtype_bytes(t->elem_type, n, &b) || b > UINT64_MAX - *bytes)
            return false;
        *bytes += b;
    }
    return true;
}

/* Runs k on its constant inputs; out[] gets one tensor per output (NULL
 * for left-out ones). false when it cannot run or yields a non-tensor. */
static bool opt_fold_eval(OptCtx *c, IrNode *k, IrTensor **out)
{
    EvValue **in = mem_array(k->n_in + 1, sizeof *in);
    EvValue **res = mem_array(k->n_out + 1, sizeof *res);
    bool ok = true;
    IrError e;
    for (size_t i = 0; i < k->n_in && ok; i++)
        if (k->in[i])
            ok = (in[i] = ev_from_ir_tensor(opt_const_tensor(k->in[i]), &e)) != NULL;
    ok = ok && ev_node_run(c->m, c->fn, k, in, res, &e) == 0;
    for (size_t i = 0; i < k->n_out && ok; i++) {
        if (!k->out[i])
            continue;
        const IrType *t = k->out[i]->type;
        ok = res[i] && res[i]->kind == EV_TENSOR &&
             (!t || (t->kind == IR_TYPE_TENSOR &&
                     (!t->has_elem_type || t->elem_type == res[i]->dtype)));
        if (ok)
            out[i] = ev_to_ir_tensor(res[i], "");
    }
    for (size_t i = 0; i < k->n_in; i++)
        ev_unref(in[i]);
    for (size_t i = 0; i < k->n_out; i++)
        ev_unref(res[i]);
    free(in);
    free(res);
    return ok;
}

static void opt_fold_free(IrTensor **t, size_t n)
{
    for (size_t i = 0; i < n; i++)
        ir_tensor_free(t[i]);
    free(t);
}

/* Whether the checker would accept k on its own (op, arity, attributes).
 * The optimizer's callers check the whole model first, but a pass may
 * have made k since: the evaluator runs only what the checker accepts. */
static bool opt_fold_node_valid(OptCtx *c, IrNode *k)
{
    ChkReport r;
    size_t errors = chk_node_alone(c->m, c->fn, k, &r);
    chk_report_free(&r);
    return errors == 0;
}

/* Folds k if it may; 1 when folded, 0 when not, -1 on failure. */
static int opt_fold_node(OptCtx *c, IrNode *k)
{
    uint64_t limit = c->o && c->o->fold_limit ? c->o->fold_limit : OPT_FOLD_LIMIT_DEFAULT;
    uint64_t freed = 0, bytes = 0;
    if (opt_fold_op_skipped(c, k) || !opt_fold_inputs(k, &freed) ||
        !opt_fold_node_valid(c, k))
        return 0;
    if (opt_fold_static_bytes(k, &bytes) && bytes > freed + limit)
        return 0;
    IrTensor **t = mem_array(k->n_out + 1, sizeof *t);
    if (!opt_fold_eval(c, k, t)) {
        opt_fold_free(t, k->n_out);
        return 0;
    }
    bytes = 0;
    bool placeable = true;
    for (size_t i = 0; i < k->n_out; i++)
        if (t[i]) {
            bytes += ir_tensor_stored_bytes(t[i]);
            placeable = placeable && opt_can_place_const(c, t[i]->data_type);
        }
    if (bytes > freed + limit || !placeable) {
        opt_fold_free(t, k->n_out);
        return 0;
    }
    for (size_t i = 0; i < k->n_out; i++) {
        if (!t[i])
            continue;
        IrTensor *ti = t[i];
        t[i] = NULL;
        if (opt_replace_by_const(c, k, i, ti) < 0) {
            opt_fold_free(t, k->n_out);
            return -1;
        }
    }
    free(t);
    ir_node_delete(k);
    return 1;
}

static long opt_fold_run(OptCtx *c)
{
    return opt_each_node(c, opt_fold_node);
}

const OptPass opt_pass_fold = {
    "fold", "runs nodes whose inputs are all constant and stores their results "
    "(within a size bound)", true, OPT_NEEDS_TYPES, opt_fold_run,
};
