/*
 * control.c - adapters of the control-flow ops (If, Loop, Scan,
 * SequenceMap). The recurrent layers are in rnn.c, the sequence and
 * optional ops in sequence.c.
 *
 * The subgraphs of If, Loop and Scan are converted by the driver itself
 * (each node after the nodes of its subgraphs), so these adapters only
 * deal with the node's own signature. Several rewrites replace c->n by a
 * copy with other inputs or outputs ("clone"): the copy takes over c->n's
 * attributes, subgraphs included, then c->n is deleted.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adapters/adapters.h"

/* ---- helpers ------------------------------------------------------- */

/* Squeeze or Unsqueeze (op) of v on axis 0, in the form of c->build_opset
 * (axes attribute before 13, input from 13), built before c->n. */
static IrValue *ad_ct_axis0(AdCtx *c, const char *op, IrValue *v)
{
    int64_t zero = 0;
    return ad_axes_op(c, c->n, op, v, 1, &zero);
}

/* ---- If, Loop ------------------------------------------------------- */

/* The type of a graph output: the inferred one, else the declared one. */
static const IrType *ad_ct_out_type(const IrGraph *g, size_t i)
{
    const IrValueInfo *vi = g->outputs.p[i];
    if (vi->value && vi->value->type)
        return vi->value->type;
    return vi->type;
}

/* Whether two tensor types have provably the same shape: same rank, each
 * dim the same number or the same symbol. */
static bool ad_ct_same_shape(const IrType *a, const IrType *b)
{
    if (!a || !b || a->kind != IR_TYPE_TENSOR || b->kind != IR_TYPE_TENSOR ||
        !a->shape || !b->shape || a->shape->rank != b->shape->rank)
        return false;
    for (size_t i = 0; i < a->shape->rank; i++) {
        const IrDim *x = &a->shape->dims[i], *y = &b->shape->dims[i];
        if (x->kind != y->kind || x->kind == IR_DIM_UNSET)
            return false;
        if (x->kind == IR_DIM_VALUE && x->value != y->value)
            return false;
        if (x->kind == IR_DIM_PARAM && strcmp(x->param, y->param) != 0)
            return false;
    }
    return true;
}

/* If 11 -> 1: If-11 lets the two branches return different shapes, If-1
 * requires the same: the branches' output shapes must be provably equal. */
static int ad_if_11_1(AdCtx *c)
{
    IrAttr *t = ad_attr(c, "then_branch"), *e = ad_attr(c, "else_branch");
    if (!t || !e || !t->g || !e->g || t->g->outputs.n != e->g->outputs.n)
        return ad_refuse(c, DG_ATTRIBUTE, "the branches are missing or differ in outputs");
    for (size_t i = 0; i < t->g->outputs.n; i++)
        if (!ad_ct_same_shape(ad_ct_out_type(t->g, i), ad_ct_out_type(e->g, i)))
            return ad_refuse(c, DG_SHAPE_UNKNOWN,
                             "If-1 needs both branches to return the same shape; output "
                             "%zu is not provably so", i);
    return 0;
}

/* Loop 11 -> 1: Loop-11 allows no loop-carried dependency, Loop-1 needs at
 * least one (its v_initial is variadic with at least one value). Otherwise
 * the two mean the same. */
static int ad_loop_11_1(AdCtx *c)
{
    if (c->n->n_in < 3)
        return ad_refuse(c, DG_ARITY, "Loop-1 needs at least one loop-carried value");
    return 0;
}

/* ---- Scan ----------------------------------------------------------- */

/* The batch size of a Scan-8 node: dim 0 of its inputs (all share it);
 * 0 when unknown anywhere, -1 when two known ones differ. */
static int64_t ad_scan8_batch(AdCtx *c)
{
    int64_t b = 0;
    for (size_t i = 1; i < c->n->n_in; i++) {
        const IrType *t = ad_type(c->n->in[i]);
        if (!t || t->kind != IR_TYPE_TENSOR || !t->shape || t->shape->rank < 1 ||
            t->shape->dims[0].kind != IR_DIM_VALUE)
            continue;
        int64_t v = t->shape->dims[0].value;
        if (b && v != b)
            return -1;
        b = v;
    }
    return b;
}

/* Whether Scan-8's sequence_lens (input 0) is absent or a constant that
 * equals the sequence length (dim 1) of every scan input. */
static bool ad_scan8_full_lens(AdCtx *c, size_t first_scan)
{
    IrValue *sl = ad_in(c, 0);
    int64_t *v;
    size_t n;
    if (!sl)
        return true;
    if (!ad_const_ints(sl, &v, &n))
        return false;
    bool ok = n == 1;
    for (size_t i = first_scan; i < c->n->n_in && ok; i++) {
        const IrType *t = ad_type(c->n->in[i]);
        ok = t && t->kind == IR_TYPE_TENSOR && t->shape && t->shape->rank >= 2 &&
             t->shape->dims[1].kind == IR_DIM_VALUE && t->shape->dims[1].value == v[0];
    }
    free(v);
    return ok;
}

/* Scan 8 -> 9: Scan-8 runs its body once per batch entry (axis 0 of every
 * input and output) over the sequence axis 1, with optional per-entry
 * sequence_lens; Scan-9 has no batch axis and scans axis 0. With a batch
 * of 1 and full-length sequences, Scan-9 on the inputs with axis 0
 * squeezed, then unsqueezed outputs, is the same computation. directions
 * becomes scan_input_directions. */
static int ad_scan_8_9(AdCtx *c)
{
    int64_t b = ad_scan8_batch(c);
    int64_t m = ad_attr_i_or(c, "num_scan_inputs", -1);
    size_t n_vals = c->n->n_in > 0 ? c->n->n_in - 1 : 0;
    if (b != 1)
        return ad_refuse(c, b == 0 ? DG_SHAPE_UNKNOWN : DG_SEMANTICS,
                         "Scan-9 has no batch axis; only a batch of 1 (known) converts");
    if (m < 0 || (size_t)m > n_vals)
        return ad_refuse(c, DG_ATTRIBUTE, "bad num_scan_inputs");
    if (!ad_scan8_full_lens(c, 1 + n_vals - (size_t)m))
        return ad_refuse(c, DG_NOT_CONSTANT,
                         "sequence_lens must be absent or a constant equal to the "
                         "sequence length");
    IrValue **in = mem_array(n_vals ? n_vals : 1, sizeof *in);
    for (size_t i = 0; i < n_vals; i++)
        if (!(in[i] = ad_ct_axis0(c, "Squeeze", c->n->in[i + 1]))) {
            free(in);
            return -1;
        }
    IrAttr *d = ad_attr(c, "directions");
    if (d)
        ad_set_attr_ints(c, c->n, "scan_input_directions", d->n_ints, d->ints);
    ad_drop_attr(c, "directions");
    size_t n_out = c->n->n_out;
    bool *keep = mem_array(n_out ? n_out : 1, sizeof *keep);
    for (size_t i = 0; i < n_out; i++)
        keep[i] = c->n->out[i] != NULL;
    IrNode *k = ad_clone(c, c->n->op_type, n_vals, in, n_out, keep);
    free(in);
    int rc = k && ad_infer(c, k) == 0 ? 0 : -1;
    for (size_t i = 0; i < n_out && rc == 0; i++) {
        if (!keep[i])
            continue;
        IrValue *u = ad_ct_axis0(c, "Unsqueeze", k->out[i]);
        if (!u)
            rc = -1;
        else
            ad_move_output(c, i, u->producer, 0);
    }
    free(keep);
    if (rc == 0)
        ir_node_delete(c->n);
    return rc;
}

/* Whether INTS attribute `name` is absent or all zero. */
static bool ad_ct_all_zero(AdCtx *c, const char *name)
{
    IrAttr *a = ad_attr(c, name);
    for (size_t i = 0; a && i < a->n_ints; i++)
        if (a->ints[i] != 0)
            return false;
    return true;
}

/* Scan 9 -> 8: the reverse of 8 -> 9: inputs get a batch axis of 1
 * (Unsqueeze), the outputs lose it (Squeeze), sequence_lens is left out.
 * Only scans along axis 0 that append (the only form of Scan-8)
 * convert. */
static int ad_scan_9_8(AdCtx *c)
{
    if (!ad_ct_all_zero(c, "scan_input_axes") || !ad_ct_all_zero(c, "scan_output_axes"))
        return ad_refuse(c, DG_ATTRIBUTE, "Scan-8 scans axis 0 (after the batch) only");
    if (!ad_ct_all_zero(c, "scan_output_directions"))
        return ad_refuse(c, DG_ATTRIBUTE, "Scan-8 has no prepending scan outputs");
    size_t n_vals = c->n->n_in;
    IrValue **in = mem_array(n_vals + 1, sizeof *in);
    in[0] = NULL;
    for (size_t i = 0; i < n_vals; i++)
        if (!(in[i + 1] = ad_ct_axis0(c, "Unsqueeze", c->n->in[i]))) {
            free(in);
            return -1;
        }
    IrAttr *d = ad_attr(c, "scan_input_directions");
    if (d)
        ad_set_attr_ints(c, c->n, "directions", d->n_ints, d->ints);
    ad_drop_attr(c, "scan_input_directions");
    ad_drop_attr(c, "scan_input_axes");
    ad_drop_attr(c, "scan_output_axes");
    ad_drop_attr(c, "scan_output_directions");
    size_t n_out = c->n->n_out;
    bool *keep = mem_array(n_out ? n_out : 1, sizeof *keep);
    for (size_t i = 0; i < n_out; i++)
        keep[i] = c->n->out[i] != NULL;
    IrNode *k = ad_clone(c, c->n->op_type, n_vals + 1, in, n_out, keep);
    free(in);
    int rc = k && ad_infer(c, k) == 0 ? 0 : -1;
    for (size_t i = 0; i < n_out && rc == 0; i++) {
        if (!keep[i])
            continue;
        IrValue *s = ad_ct_axis0(c, "Squeeze", k->out[i]);
        if (!s)
            rc = -1;
        else
            ad_move_output(c, i, s->producer, 0);
    }
    free(keep);
    if (rc == 0)
        ir_node_delete(c->n);
    return rc;
}

/* Rewrites INTS attribute `name` with negative axes made non-negative;
 * rank_of(i) gives the rank the i-th axis counts in (-1 unknown). */
static int ad_scan_axes_pos(AdCtx *c, const char *name, const IrValue *const *vals,
                            size_t n_vals, int extra)
{
    IrAttr *a = ad_attr(c, name);
    if (!a)
        return 0;
    int64_t *v = mem_array(a->n_ints ? a->n_ints : 1, sizeof *v);
    for (size_t i = 0; i < a->n_ints; i++) {
        v[i] = a->ints[i];
        if (v[i] >= 0)
            continue;
        int r = i < n_vals ? ad_rank(vals[i]) : -1;
        if (r < 0) {
            free(v);
            return ad_refuse(c, DG_SHAPE_UNKNOWN,
                             "a negative %s needs the rank, which is unknown", name);
        }
        v[i] += r + extra;
    }
    ad_set_attr_ints(c, c->n, name, a->n_ints, v);
    free(v);
    return 0;
}

/* Scan 11 -> 9: 11 allows negative scan axes (counted from the end); 9
 * needs them non-negative: rewritten with the ranks of the scan inputs and
 * scan outputs. */
static int ad_scan_11_9(AdCtx *c)
{
    int64_t m = ad_attr_i_or(c, "num_scan_inputs", -1);
    if (m < 0 || (size_t)m > c->n->n_in)
        return ad_refuse(c, DG_ATTRIBUTE, "bad num_scan_inputs");
    size_t n_state = c->n->n_in - (size_t)m;
    size_t k = c->n->n_out > n_state ? c->n->n_out - n_state : 0;
    if (ad_scan_axes_pos(c, "scan_input_axes",
                         (const IrValue *const *)c->n->in + n_state, (size_t)m, 0) < 0)
        return -1;
    return ad_scan_axes_pos(c, "scan_output_axes",
                            (const IrValue *const *)c->n->out + n_state, k, 0);
}

/* ---- SequenceMap ---------------------------------------------------- */

/* seq(tensor(dt)) with the tensor's shape unknown. */
static IrType *ad_ct_seq_type(int32_t dt)
{
    IrType *t = mem_alloc(sizeof *t);
    t->kind = IR_TYPE_SEQUENCE;
    t->elem = ir_type_tensor(dt, 0, NULL);
    ir_shape_free(t->elem->shape);
    t->elem->shape = NULL;
    return t;
}

/* The element type of SequenceMap output k: from the output's inferred
 * sequence type, else from the body output's tensor type; 0 if unknown. */
static int32_t ad_smap_out_dt(AdCtx *c, const IrGraph *g, size_t k)
{
    const IrType *t = ad_type(c->n->out[k]);
    if (t && t->kind == IR_TYPE_SEQUENCE && t->elem && t->elem->kind == IR_TYPE_TENSOR &&
        t->elem->has_elem_type)
        return t->elem->elem_type;
    const IrValueInfo *vi = g->outputs.p[k];
    t = vi->value && vi->value->type ? vi->value->type : vi->type;
    return t && t->kind == IR_TYPE_TENSOR && t->has_elem_type ? t->elem_type : 0;
}

/* A node of op in graph g (before `before`) on named inputs, with one
 * output named out. Its name is free among g's nodes: one body gets a
 * SequenceAt (or Gather) per input, and runtimes refuse a graph with two
 * nodes of one name. */
static IrNode *ad_smap_body_node(AdCtx *c, IrGraph *g, IrNode *before, const char *op,
                                 size_t n_in, const char *const *in, const char *out)
{
    const char *outs[1] = {out};
    char *nm = ad_fresh_name(g, op);
    IrNode *k = ir_node_new(g, before, op, NULL, nm, n_in, in, 1, outs, c->err);
    free(nm);
    return k;
}

/* Whether g's inputs from `first` on may become values computed in the
 * body (as the SequenceMap and Scan-8 rewrites make them): every input is
 * a value of its own (a name listed twice would end up with two producers,
 * or as an input and a node output at once) and none of those has an
 * initializer (a producer would contradict it). Such a body is invalid
 * anyway (check says so), but the rewrite must not corrupt the graph. */
static bool ad_ct_inputs_rebindable(const IrGraph *g, size_t first)
{
    for (size_t i = 0; i < g->inputs.n; i++) {
        const IrValue *v = ((const IrValueInfo *)g->inputs.p[i])->value;
        if (!v || v->graph != g || v->kind != IR_VAL_INPUT || (i >= first && v->init))
            return false;
        for (size_t j = 0; j < i; j++)
            if (((const IrValueInfo *)g->inputs.p[j])->value == v)
                return false;
    }
    return true;
}

/* Checks that SequenceMap's body g can become a Loop body: one body input
 * per node input, known kinds, no name shadowing, outputs computed in g. */
static int ad_smap_check(AdCtx *c, const IrGraph *g, int32_t *odt)
{
    size_t m = c->n->n_in, k = c->n->n_out;
    if (!g || g->inputs.n != m || g->outputs.n != k)
        return ad_refuse(c, DG_ATTRIBUTE, "the body does not match the node's inputs/outputs");
    if (!ad_ct_inputs_rebindable(g, 0))
        return ad_refuse(c, DG_SEMANTICS,
                         "the body's inputs are not distinct values without initializers");
    for (size_t j = 0; j < m; j++) {
        const IrType *t = ad_type(c->n->in[j]);
        if (!t || (t->kind != IR_TYPE_SEQUENCE && (j == 0 || t->kind != IR_TYPE_TENSOR)))
            return ad_refuse(c, DG_TYPE_UNKNOWN, "the kind of input %zu is unknown", j);
        if (ir_graph_find_local(g, c->n->in[j]->name))
            return ad_refuse(c, DG_SEMANTICS, "the body hides input '%s' by name",
                             c->n->in[j]->name);
    }
    for (size_t i = 0; i < k; i++) {
        const IrValueInfo *vi = g->outputs.p[i];
        if (!c->n->out[i] || !vi->value || vi->value->graph != g)
            return ad_refuse(c, DG_SEMANTICS, "body output %zu is not computed in the body", i);
        if (!(odt[i] = ad_smap_out_dt(c, g, i)))
            return ad_refuse(c, DG_TYPE_UNKNOWN, "the type of output %zu is unknown", i);
    }
    return 0;
}

/* Rewrites SequenceMap's body g into a Loop body: inputs (iter, cond,
 * acc_1..acc_K); each former input is computed first as
 * SequenceAt(outer sequence, iter) or Identity(outer tensor); outputs
 * (cond, SequenceInsert(acc_k, former output k)...). */
static int ad_smap_body(AdCtx *c, IrGraph *g, const int32_t *odt)
{
    size_t m = c->n->n_in, k = c->n->n_out;
    IrPtrList old_in = g->inputs, old_out = g->outputs;
    g->inputs = (IrPtrList){0};
    g->outputs = (IrPtrList){0};
    char *iter = ir_graph_fresh_name(g, "sequence_map_iter");
    char *cond = ir_graph_fresh_name(g, "sequence_map_cond");
    char **acc = mem_array(k, sizeof *acc), **nxt = mem_array(k, sizeof *nxt);
    ir_graph_add_input(g, iter, ir_type_tensor(IR_INT64, 0, NULL));
    ir_graph_add_input(g, cond, ir_type_tensor(IR_BOOL, 0, NULL));
    for (size_t i = 0; i < k; i++) {
        acc[i] = ir_graph_fresh_name(g, "sequence_map_acc");
        ir_graph_add_input(g, acc[i], ad_ct_seq_type(odt[i]));
    }
    IrNode *first = g->first;
    int rc = 0;
    for (size_t j = 0; j < m && rc == 0; j++) {
        IrValueInfo *vi = old_in.p[j];
        IrValue *e = vi->value;
        ir_valueinfo_free(vi);
        e->kind = IR_VAL_UNDEF;
        bool seq = ad_type(c->n->in[j])->kind == IR_TYPE_SEQUENCE;
        const char *ins[2] = {c->n->in[j]->name, iter};
        if (!ad_smap_body_node(c, g, first, seq ? "SequenceAt" : "Identity", seq ? 2 : 1,
                               ins, e->name))
            rc = -1;
    }
    char *cond_out = ir_graph_fresh_name(g, "sequence_map_cond_out");
    const char *cin[1] = {cond};
    IrNode *ck = rc == 0 ? ad_smap_body_node(c, g, NULL, "Identity", 1, cin, cond_out) : NULL;
    if (ck)
        ir_graph_add_output(g, ck->out[0], ir_type_tensor(IR_BOOL, 0, NULL));
    for (size_t i = 0; i < k && ck; i++) {
        IrValueInfo *vi = old_out.p[i];
        nxt[i] = ir_graph_fresh_name(g, "sequence_map_acc_out");
        const char *ins[2] = {acc[i], vi->value->name};
        IrNode *sk = ad_smap_body_node(c, g, NULL, "SequenceInsert", 2, ins, nxt[i]);
        if (!sk) {
            rc = -1;
            break;
        }
        ir_graph_add_output(g, sk->out[0], ad_ct_seq_type(odt[i]));
    }
    if (!ck)
        rc = -1;
    for (size_t i = 0; i < old_out.n; i++)
        ir_valueinfo_free(old_out.p[i]);
    for (size_t i = 0; i < k; i++) {
        free(acc[i]);
        free(nxt[i]);
    }
    free(old_in.p);
    free(old_out.p);
    free(acc);
    free(nxt);
    free(iter);
    free(cond);
    free(cond_out);
    if (rc < 0)
        c->refusal = DG_INTERNAL;
    return rc;
}

/* SequenceMap-17 (opset 16 and below): the spec defines it by a Loop over
 * the input sequence's length: each iteration takes the iteration's
 * elements of the input sequences (SequenceAt) and the additional tensors,
 * runs the body and appends each result to its output sequence
 * (SequenceInsert), starting from empty sequences. Loop carries sequences
 * from 13, so this serves opsets 13..16. */
static int ad_smap_17_0(AdCtx *c)
{
    IrAttr *ba = ad_attr(c, "body");
    IrGraph *g = ba ? ba->g : NULL;
    size_t k = c->n->n_out;
    int32_t *odt = mem_array(k ? k : 1, sizeof *odt);
    if (ad_smap_check(c, g, odt) < 0) {
        free(odt);
        return -1;
    }
    IrValue **in = mem_array(k + 2, sizeof *in);
    IrValue *sin[1] = {c->n->in[0]};
    IrNode *len = ad_node(c, c->n, "SequenceLength", 1, sin, 1);
    in[0] = len ? len->out[0] : NULL;
    in[1] = ad_const_scalar(c, IR_BOOL, 1.0);
    int rc = in[0] && in[1] ? 0 : -1;
    for (size_t i = 0; i < k && rc == 0; i++) {
        IrNode *e = ad_node_in(c, c->domain, c->n, "SequenceEmpty", 0, NULL, 1);
        if (!e) {
            rc = -1;
            break;
        }
        ad_set_attr_i(c, e, "dtype", odt[i]);
        rc = ad_infer(c, e);
        in[2 + i] = e->out[0];
    }
    if (rc == 0)
        rc = ad_smap_body(c, g, odt);
    bool *keep = mem_array(k ? k : 1, sizeof *keep);
    for (size_t i = 0; i < k; i++)
        keep[i] = true;
    IrNode *loop = rc == 0 ? ad_clone(c, "Loop", k + 2, in, k, keep) : NULL;
    free(keep);
    free(in);
    free(odt);
    if (!loop || ad_infer(c, loop) < 0)
        return -1;
    for (size_t i = 0; i < k; i++)
        ad_move_output(c, i, loop, i);
    ir_node_delete(c->n);
    return 0;
}

/* Rewrites Scan-8's body g (batch already removed) into a Loop body:
 * inputs (iter, cond, states...), each scan element computed first as
 * Gather(scan input j, iter) (or index len - 1 - iter for a reversed
 * input), outputs (cond, states..., scan outputs...). sq[j] are the outer
 * (squeezed) scan inputs, rev[j] their directions, len the sequence
 * length (an outer scalar). */
static int ad_scan0_body(AdCtx *c, IrGraph *g, size_t n_state, size_t m,
                         IrValue *const *sq, const int64_t *rev, IrValue *len)
{
    IrPtrList old_in = g->inputs;
    g->inputs = (IrPtrList){0};
    char *iter = ir_graph_fresh_name(g, "scan_iter");
    char *cond = ir_graph_fresh_name(g, "scan_cond");
    char *cond_out = ir_graph_fresh_name(g, "scan_cond_out");
    char *ridx = NULL, *last = NULL;
    int rc = 0;
    ir_graph_add_input(g, iter, ir_type_tensor(IR_INT64, 0, NULL));
    ir_graph_add_input(g, cond, ir_type_tensor(IR_BOOL, 0, NULL));
    for (size_t i = 0; i < n_state; i++)
        ir_ptrlist_push(&g->inputs, old_in.p[i]);
    IrNode *first = g->first;
    for (size_t j = 0; j < m && rc == 0; j++) {
        if (rev[j] && !ridx) {
            /* len - 1 - iter, once */
            IrValue *one = ad_const_scalar(c, IR_INT64, 1.0);
            last = ir_graph_fresh_name(g, "scan_last");
            ridx = ir_graph_fresh_name(g, "scan_rev_index");
            const char *a[2] = {len->name, one ? one->name : ""};
            const char *b[2] = {last, iter};
            if (!one || !ad_smap_body_node(c, g, first, "Sub", 2, a, last) ||
                !ad_smap_body_node(c, g, first, "Sub", 2, b, ridx))
                rc = -1;
        }
        IrValueInfo *vi = old_in.p[n_state + j];
        IrValue *e = vi->value;
        ir_valueinfo_free(vi);
        e->kind = IR_VAL_UNDEF;
        const char *ins[2] = {sq[j]->name, rev[j] ? ridx : iter};
        if (rc == 0 && !ad_smap_body_node(c, g, first, "Gather", 2, ins, e->name))
            rc = -1;
    }
    const char *cin[1] = {cond};
    IrNode *ck = rc == 0 ? ad_smap_body_node(c, g, first, "Identity", 1, cin, cond_out) : NULL;
    if (ck) {
        IrValueInfo *vi = mem_alloc(sizeof *vi);
        vi->value = ck->out[0];
        vi->type = ir_type_tensor(IR_BOOL, 0, NULL);
        ck->out[0]->n_infos++;
        ir_ptrlist_push(&g->outputs, NULL);
        memmove(g->outputs.p + 1, g->outputs.p, (g->outputs.n - 1) * sizeof *g->outputs.p);
        g->outputs.p[0] = vi;
    } else {
        rc = -1;
    }
    free(old_in.p);
    free(iter);
    free(cond);
    free(cond_out);
    free(ridx);
    free(last);
    if (rc < 0 && !c->refusal)
        c->refusal = DG_INTERNAL;
    return rc;
}

/* Scan-8 (opset 7 and below): Scan-8 over a batch of 1 with full-length
 * sequences is a Loop over the sequence length on the inputs with the
 * batch axis squeezed: the body gets each step's scan elements by Gather
 * (from the end for reversed inputs), Loop's scan outputs stack the
 * body's along a new axis 0 as Scan's do, and the batch axis is put back
 * on every output. */
static int ad_scan_8_0(AdCtx *c)
{
    int64_t b = ad_scan8_batch(c);
    int64_t m = ad_attr_i_or(c, "num_scan_inputs", -1);
    size_t n_vals = c->n->n_in > 0 ? c->n->n_in - 1 : 0;
    IrAttr *ba = ad_attr(c, "body"), *d = ad_attr(c, "directions");
    IrGraph *g = ba ? ba->g : NULL;
    if (b != 1)
        return ad_refuse(c, b == 0 ? DG_SHAPE_UNKNOWN : DG_SEMANTICS,
                         "only a batch of 1 (known) converts to a Loop");
    if (m < 1 || (size_t)m > n_vals || !g || g->inputs.n != n_vals ||
        g->outputs.n != c->n->n_out || (d && d->n_ints != (size_t)m))
        return ad_refuse(c, DG_ATTRIBUTE, "bad num_scan_inputs, directions or body");
    if (!ad_ct_inputs_rebindable(g, n_vals - (size_t)m))
        return ad_refuse(c, DG_SEMANTICS,
                         "the body's inputs are not distinct values without initializers");
    size_t n_state = n_vals - (size_t)m;
    if (n_state == 0)
        return ad_refuse(c, DG_ARITY, "Loop-1 needs at least one loop-carried value");
    if (!ad_scan8_full_lens(c, 1 + n_state))
        return ad_refuse(c, DG_NOT_CONSTANT,
                         "sequence_lens must be absent or a constant equal to the "
                         "sequence length");
    for (size_t i = 0; i < g->outputs.n; i++) {
        const IrValueInfo *vi = g->outputs.p[i];
        if (!vi->value || vi->value->graph != g)
            return ad_refuse(c, DG_SEMANTICS, "body output %zu is not computed in the body", i);
    }
    IrValue **sq = mem_array(n_vals + 2, sizeof *sq);
    int64_t *rev = mem_array((size_t)m, sizeof *rev);
    int rc = 0;
    for (size_t j = 0; j < n_vals && rc == 0; j++)
        if (!(sq[2 + j] = ad_ct_axis0(c, "Squeeze", c->n->in[1 + j])))
            rc = -1;
    for (size_t j = 0; j < (size_t)m; j++)
        rev[j] = d ? d->ints[j] : 0;
    IrValue *len = NULL;
    if (rc == 0) {
        IrValue *sin[1] = {sq[2 + n_state]};
        IrNode *shape = ad_node(c, c->n, "Shape", 1, sin, 1);
        IrValue *zero = ad_const_scalar(c, IR_INT64, 0.0);
        IrValue *gin[2] = {shape ? shape->out[0] : NULL, zero};
        IrNode *gl = shape && zero ? ad_node(c, c->n, "Gather", 2, gin, 1) : NULL;
        len = gl ? gl->out[0] : NULL;
        sq[0] = len;
        sq[1] = ad_const_scalar(c, IR_BOOL, 1.0);
        rc = len && sq[1] ? ad_scan0_body(c, g, n_state, (size_t)m, sq + 2 + n_state,
                                         rev, len)
                          : -1;
    }
    free(rev);
    size_t n_out = c->n->n_out;
    bool *keep = mem_array(n_out ? n_out : 1, sizeof *keep);
    for (size_t i = 0; i < n_out; i++)
        keep[i] = c->n->out[i] != NULL;
    ad_drop_attr(c, "num_scan_inputs");
    ad_drop_attr(c, "directions");
    IrNode *loop = rc == 0 ? ad_clone(c, "Loop", 2 + n_state, sq, n_out, keep) : NULL;
    free(sq);
    rc = loop && ad_infer(c, loop) == 0 ? 0 : -1;
    for (size_t i = 0; i < n_out && rc == 0; i++) {
        if (!keep[i])
            continue;
        IrValue *u = ad_ct_axis0(c, "Unsqueeze", loop->out[i]);
        if (!u)
            rc = -1;
        else
            ad_move_output(c, i, u->producer, 0);
    }
    free(keep);
    if (rc == 0)
        ir_node_delete(c->n);
    return rc;
}

static const AdEntry ad_control[] = {
    /* If */
    {"", "If", 1, 11, AD_COMPATIBLE, NULL},
    AD_DOWN("If", 1, 11, AD_SEMANTIC, ad_if_11_1),
    AD_BOTH("If", 11, 13),
    AD_BOTH("If", 13, 16),
    AD_BOTH("If", 16, 19),
    AD_BOTH("If", 19, 21),
    AD_BOTH("If", 21, 23),
    AD_BOTH("If", 23, 24),
    AD_BOTH("If", 24, 25),
    /* Loop */
    {"", "Loop", 1, 11, AD_COMPATIBLE, NULL},
    AD_DOWN("Loop", 1, 11, AD_SEMANTIC, ad_loop_11_1),
    AD_BOTH("Loop", 11, 13),
    AD_BOTH("Loop", 13, 16),
    AD_BOTH("Loop", 16, 19),
    AD_BOTH("Loop", 19, 21),
    AD_BOTH("Loop", 21, 23),
    AD_BOTH("Loop", 23, 24),
    AD_BOTH("Loop", 24, 25),
    /* Scan */
    AD_GONE("Scan", 8, AD_EXPAND, ad_scan_8_0),
    AD_UP("Scan", 8, 9, AD_SEMANTIC, ad_scan_8_9),
    AD_DOWN("Scan", 8, 9, AD_SEMANTIC, ad_scan_9_8),
    {"", "Scan", 9, 11, AD_COMPATIBLE, NULL},
    AD_DOWN("Scan", 9, 11, AD_SEMANTIC, ad_scan_11_9),
    AD_BOTH("Scan", 11, 16),
    AD_BOTH("Scan", 16, 19),
    AD_BOTH("Scan", 19, 21),
    AD_BOTH("Scan", 21, 23),
    AD_BOTH("Scan", 23, 24),
    AD_BOTH("Scan", 24, 25),
    /* SequenceMap */
    AD_GONE("SequenceMap", 17, AD_EXPAND, ad_smap_17_0),
};

const AdFamily ad_family_control = {"control", ad_control,
                                    sizeof ad_control / sizeof ad_control[0]};
