/*
 * milcheck.c - validation of a Core ML ML Program in memory against the
 * MIL operator table (prefix mck_); the rules are listed above mck_model
 * in milcheck.h.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/keyset.h"
#include "coreml/milcheck.h"
#include "coreml/milops.h"

/* One value name of a function: a function or block input, or an op
 * output, and whether it is in scope now. When its block ends it leaves
 * scope, and the name may be defined again: coremltools gives a
 * while_loop's cond and body blocks the same input names. */
typedef struct MckDef {
    const MilType *type;
    bool is_const;          /* computed from constants only */
    bool visible;
} MckDef;

typedef struct MckCtx {
    const MilFunction *fn;
    int target;             /* index into mil_targets */
    KsSet names;            /* value name -> index into defs */
    MckDef *defs;           /* one slot per distinct name */
    size_t n_defs, cap_defs;
    size_t *live;           /* slots defined in the open blocks, in order */
    size_t n_live, cap_live;
    IrError *err;
} MckCtx;

/* The op's label for messages: "conv 'conv_0'" (the name when it has
 * one). Written into buf. */
static const char *mck_label(const MilOp *op, char *buf, size_t n)
{
    if (op->name && op->name[0])
        snprintf(buf, n, "%s '%s'", op->type ? op->type : "?", op->name);
    else
        snprintf(buf, n, "%s (unnamed)", op->type ? op->type : "?");
    return buf;
}

/* Fails with "function F: op LABEL: MESSAGE". */
__attribute__((format(printf, 3, 4)))
static int mck_op_fail(MckCtx *c, const MilOp *op, const char *fmt, ...)
{
    char msg[384], label[160];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return ir_fail(c->err, "function %s: op %s: %s", c->fn->name,
                   mck_label(op, label, sizeof label), msg);
}

/* The visible definition of `name`, or NULL. */
static const MckDef *mck_lookup(const MckCtx *c, const char *name)
{
    int64_t i;
    if (!name || !ks_find(&c->names, &name, 1, &i))
        return NULL;
    return c->defs[i].visible ? &c->defs[i] : NULL;
}

/* p grown to hold at least n items of `size` bytes, doubling *cap, so
 * that defining N values costs O(N) copying (realloc by one item each
 * time is quadratic where realloc always moves, as under ASan). */
static void *mck_reserve(void *p, size_t n, size_t *cap, size_t size)
{
    if (n <= *cap)
        return p;
    size_t want = *cap ? *cap : 16;
    while (want < n)
        want = want > SIZE_MAX / 2 ? n : want * 2;
    *cap = want;
    return mem_grow(p, want, size);
}

/* MIL's words that are not dtype names (those come from mil_dtype_name):
 * a value may not be named after either, as coremltools' writer renames
 * such values (its sanitize_name_strings pass). */
static const char *const mck_keywords[] = {
    "any", "program", "func", "tensor", "list", "dict", "tuple", "true", "false", "state",
};

bool mck_identifier(const char *name)
{
    if (!((name[0] >= 'A' && name[0] <= 'Z') || (name[0] >= 'a' && name[0] <= 'z') || name[0] == '_'))
        return false;
    for (const char *p = name; *p; p++)
        if (!((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '_'))
            return false;
    for (size_t i = 0; i < sizeof mck_keywords / sizeof mck_keywords[0]; i++)
        if (!strcmp(name, mck_keywords[i]))
            return false;
    for (int32_t code = 0; code < 64; code++)     /* MIL's dtype codes are below 64 */
        if (mil_dtype_name(code) && !strcmp(name, mil_dtype_name(code)))
            return false;
    return true;
}

/* Defines `name` (of type t); fails naming `what` when the name is empty,
 * not an identifier, or already in scope (defined in this block or one around it). */
static int mck_define(MckCtx *c, const char *name, const MilType *t, bool is_const,
                      const char *what)
{
    if (!name || !name[0])
        return ir_fail(c->err, "function %s: %s: a value without a name", c->fn->name, what);
    if (!mck_identifier(name))
        return ir_fail(c->err, "function %s: %s: value name '%s' is not a MIL identifier ([A-Za-z_][A-Za-z0-9_]*, not a type name or keyword)",
                       c->fn->name, what, name);
    int64_t slot;
    if (ks_find(&c->names, &name, 1, &slot)) {
        if (c->defs[slot].visible)
            return ir_fail(c->err, "function %s: %s: value '%s' is defined twice",
                           c->fn->name, what, name);
    } else {
        slot = (int64_t)c->n_defs;
        ks_add(&c->names, &name, 1, slot);
        c->defs = mck_reserve(c->defs, c->n_defs + 1, &c->cap_defs, sizeof *c->defs);
        c->n_defs++;
    }
    c->defs[slot] = (MckDef){.type = t, .is_const = is_const, .visible = true};
    c->live = mck_reserve(c->live, c->n_live + 1, &c->cap_live, sizeof *c->live);
    c->live[c->n_live++] = (size_t)slot;
    return 0;
}

/* Whether dtype's MIL name is one of the '|'-separated names of
 * `types` (NULL: any). */
static bool mck_dtype_in(int32_t dtype, const char *types)
{
    const char *name = mil_dtype_name(dtype);
    if (!types)
        return true;
    if (!name)
        return false;
    size_t n = strlen(name);
    for (const char *p = types; *p;) {
        const char *bar = strchr(p, '|');
        size_t len = bar ? (size_t)(bar - p) : strlen(p);
        if (len == n && !strncmp(p, name, n))
            return true;
        if (!bar)
            break;
        p = bar + 1;
    }
    return false;
}

/* The schema's parameter `name`, or NULL. */
static const MilParam *mck_param(const MilOpSchema *s, const char *name)
{
    for (size_t i = 0; name && i < s->n_params; i++)
        if (!strcmp(s->params[i].name, name))
            return &s->params[i];
    return NULL;
}

/* The dtype an argument is known to have (0: unknown, or a list). */
static int32_t mck_arg_dtype(const MckCtx *c, const MilArg *a)
{
    if (a->value)
        return a->value->dtype;
    const MckDef *d = mck_lookup(c, a->name);
    if (!d || !d->type || d->type->is_list)
        return 0;
    return d->type->dtype;
}

static const char *mck_dtype_str(int32_t dtype)
{
    const char *n = mil_dtype_name(dtype);
    return n ? n : "(unknown code)";
}

/* Checks one argument of parameter p: defined and visible, constant when
 * p must be, dtype within p's. */
static int mck_arg(MckCtx *c, const MilOp *op, const MilParam *p, const MilArg *a)
{
    if (!a->name == !a->value)
        return mck_op_fail(c, op, "param %s: an argument must be either a value name or an immediate value", p->name);
    if (a->name) {
        const MckDef *d = mck_lookup(c, a->name);
        if (!d)
            return mck_op_fail(c, op, "param %s: value '%s' is not defined before its use", p->name, a->name);
        if (p->is_const && !d->is_const)
            return mck_op_fail(c, op, "param %s: must be a constant, but '%s' is not computed from constants only", p->name, a->name);
    }
    int32_t dtype = mck_arg_dtype(c, a);
    if (dtype && !mck_dtype_in(dtype, p->types))
        return mck_op_fail(c, op, "param %s: dtype %s is not one of %s", p->name,
                           mck_dtype_str(dtype), p->types);
    return 0;
}

/* Parameters of one type variable must share a dtype: the first
 * argument of known dtype sets it. `seen` holds one parameter per
 * variable met so far (at most one per parameter of the op). */
static int mck_type_vars(MckCtx *c, const MilOp *op, const MilOpSchema *s)
{
    const MilParam *seen_p[32];
    int32_t seen_dt[32];
    size_t n_seen = 0;
    for (size_t i = 0; i < op->n_in; i++) {
        const MilParam *p = mck_param(s, op->in[i].param);
        for (size_t k = 0; p->tvar && k < op->in[i].n_args; k++) {
            int32_t dt = mck_arg_dtype(c, &op->in[i].args[k]);
            size_t j = 0;
            while (j < n_seen && strcmp(seen_p[j]->tvar, p->tvar))
                j++;
            if (!dt)
                continue;
            if (j < n_seen && seen_dt[j] != dt)
                return mck_op_fail(c, op, "param %s: dtype %s differs from %s of param %s (both of type %s)",
                                   p->name, mck_dtype_str(dt), mck_dtype_str(seen_dt[j]),
                                   seen_p[j]->name, p->tvar);
            if (j == n_seen && n_seen < 32) {
                seen_p[n_seen] = p;
                seen_dt[n_seen++] = dt;
            }
        }
    }
    return 0;
}

/* Checks the op's bound inputs against its schema s, then that every
 * required parameter is bound. */
static int mck_inputs(MckCtx *c, const MilOp *op, const MilOpSchema *s)
{
    for (size_t i = 0; i < op->n_in; i++) {
        const MilInput *in = &op->in[i];
        const MilParam *p = mck_param(s, in->param);
        if (!p)
            return mck_op_fail(c, op, "param %s: unknown parameter of %s at %s",
                               in->param ? in->param : "(null)", s->name, c->fn->opset);
        for (size_t k = 0; k < i; k++)
            if (!strcmp(op->in[k].param, in->param))
                return mck_op_fail(c, op, "param %s: bound twice", p->name);
        if (in->n_args == 0)
            return mck_op_fail(c, op, "param %s: bound to no argument", p->name);
        if (in->n_args > 1 && !p->variadic)
            return mck_op_fail(c, op, "param %s: %zu arguments to a parameter that takes one",
                               p->name, in->n_args);
        for (size_t k = 0; k < in->n_args; k++)
            if (mck_arg(c, op, p, &in->args[k]) < 0)
                return -1;
    }
    for (size_t i = 0; i < s->n_params; i++)
        if (!s->params[i].optional && !mil_op_input(op, s->params[i].name))
            return mck_op_fail(c, op, "param %s: required, not bound", s->params[i].name);
    return mck_type_vars(c, op, s);
}

/* A const op holds its value in its `val` attribute and has no inputs
 * and one output of the value's dtype. */
static int mck_const(MckCtx *c, const MilOp *op)
{
    if (!op->val)
        return mck_op_fail(c, op, "attribute val: a const op without a value");
    if (op->n_in)
        return mck_op_fail(c, op, "param %s: a const op takes no inputs", op->in[0].param);
    if (op->n_out != 1)
        return mck_op_fail(c, op, "attribute val: a const op has one output, not %zu", op->n_out);
    if (op->out[0].type.dtype != op->val->dtype)
        return mck_op_fail(c, op, "attribute val: output '%s' declared %s but the value is %s",
                           op->out[0].name ? op->out[0].name : "",
                           mck_dtype_str(op->out[0].type.dtype), mck_dtype_str(op->val->dtype));
    return 0;
}

/* The op's schema at the function's target, or a failure that says
 * whether the op is unknown or needs a newer target. */
static const MilOpSchema *mck_schema(MckCtx *c, const MilOp *op)
{
    const MilOpSchema *s = milop_find(op->type, c->target);
    if (s)
        return s;
    int since = milop_since(op->type);
    if (since < 0)
        mck_op_fail(c, op, "unknown op type");
    else
        mck_op_fail(c, op, "needs %s (%s); the function's opset is %s",
                    mil_targets[since].name, mil_targets[since].opset, c->fn->opset);
    return NULL;
}

static int mck_block(MckCtx *c, const MilBlock *b, int depth);

/* Whether the op's outputs are constants, by coremltools' rule
 * (Var._propagate_constness_upstream): a constexpr_ op's always, any
 * other op's when every argument is an immediate or a constant (a const
 * op has none). Called after the inputs were checked. */
static bool mck_op_constant(const MckCtx *c, const MilOp *op)
{
    if (!strncmp(op->type, "constexpr_", 10))
        return true;
    for (size_t i = 0; i < op->n_in; i++)
        for (size_t k = 0; k < op->in[i].n_args; k++) {
            const MilArg *a = &op->in[i].args[k];
            const MckDef *d = a->name ? mck_lookup(c, a->name) : NULL;
            if (a->name && (!d || !d->is_const))
                return false;
        }
    return true;
}

/* The blocks an op holds, by MIL's rules for its two control-flow ops:
 * cond has a then and an else block without inputs, each returning one
 * value per output of the op; while_loop has a cond block and a body
 * block, each taking the loop variables, the first returning the
 * condition, the second the next loop variables, one per output. Other
 * ops hold no blocks. */
static int mck_block_shape(MckCtx *c, const MilOp *op)
{
    bool is_cond = !strcmp(op->type, "cond"), is_loop = !strcmp(op->type, "while_loop");
    if (!is_cond && !is_loop) {
        if (op->n_blocks)
            return mck_op_fail(c, op, "blocks: %s holds no blocks, this one has %zu",
                               op->type, op->n_blocks);
        return 0;
    }
    if (op->n_blocks != 2)
        return mck_op_fail(c, op, "blocks: %s holds 2 blocks, not %zu", op->type, op->n_blocks);
    const MilInput *lv = is_loop ? mil_op_input(op, "loop_vars") : NULL;
    size_t n_vars = lv ? lv->n_args : 0;
    for (size_t i = 0; i < 2; i++) {
        const MilBlock *b = op->blocks[i];
        if (!b)
            continue;   /* mck_block names it */
        size_t want_out = is_loop && i == 0 ? 1 : (is_loop ? n_vars : op->n_out);
        if (b->n_in != n_vars)
            return mck_op_fail(c, op, "blocks: block %zu takes %zu inputs, not %zu", i, n_vars,
                               b->n_in);
        if (b->n_out != want_out)
            return mck_op_fail(c, op, "blocks: block %zu returns %zu values, not %zu", i,
                               want_out, b->n_out);
    }
    if (is_loop && op->n_out != n_vars)
        return mck_op_fail(c, op, "blocks: a while_loop has one output per loop variable (%zu), not %zu",
                           n_vars, op->n_out);
    return 0;
}

/* Checks one op: its schema, inputs, nested blocks, then defines its
 * outputs (after the blocks: a block cannot read its own op's outputs). */
static int mck_op(MckCtx *c, const MilOp *op, int depth)
{
    if (!op)
        return ir_fail(c->err, "function %s: a missing op", c->fn->name);
    if (!op->type)
        return mck_op_fail(c, op, "an op without a type");
    if (op->name && !mck_identifier(op->name))
        return mck_op_fail(c, op, "the op's name is not a MIL identifier ([A-Za-z_][A-Za-z0-9_]*, not a type name or keyword)");
    const MilOpSchema *s = mck_schema(c, op);
    if (!s)
        return -1;
    if (!strcmp(op->type, "const") ? mck_const(c, op) < 0 : mck_inputs(c, op, s) < 0)
        return -1;
    if (mck_block_shape(c, op) < 0)
        return -1;
    for (size_t i = 0; i < op->n_blocks; i++)
        if (mck_block(c, op->blocks[i], depth + 1) < 0)
            return -1;
    char what[200], label[160];
    snprintf(what, sizeof what, "op %s: output", mck_label(op, label, sizeof label));
    bool is_const = mck_op_constant(c, op);
    for (size_t i = 0; i < op->n_out; i++)
        if (mck_define(c, op->out[i].name, &op->out[i].type, is_const, what) < 0)
            return -1;
    return 0;
}

/* Checks a block in the scope around it: its inputs and ops, then its
 * outputs; then hides what it defined. */
static int mck_block(MckCtx *c, const MilBlock *b, int depth)
{
    if (!b)
        return ir_fail(c->err, "function %s: a missing block", c->fn->name);
    if (depth > MCK_MAX_DEPTH)
        return ir_fail(c->err, "function %s: blocks nested deeper than %d", c->fn->name,
                       MCK_MAX_DEPTH);
    size_t mark = c->n_live;
    for (size_t i = 0; i < b->n_in; i++)
        if (mck_define(c, b->in[i].name, &b->in[i].type, false, "block input") < 0)
            return -1;
    for (size_t i = 0; i < b->n_ops; i++)
        if (mck_op(c, b->ops[i], depth) < 0)
            return -1;
    for (size_t i = 0; i < b->n_out; i++)
        if (!mck_lookup(c, b->out[i]))
            return ir_fail(c->err, "function %s: block output '%s' is not defined in the block or around it",
                           c->fn->name, b->out[i] ? b->out[i] : "(null)");
    for (size_t i = mark; i < c->n_live; i++)
        c->defs[c->live[i]].visible = false;
    c->n_live = mark;
    return 0;
}

/* The target index of the function's opset, or -1 after failing. */
static int mck_fn_target(const MilModel *m, const MilFunction *f, int model_target,
                         IrError *err)
{
    const MilTarget *t = mil_target_of_opset(f->opset);
    if (!t)
        return ir_fail(err, "function %s: opset '%s' is not a Core ML ML Program opset",
                       f->name, f->opset ? f->opset : "(null)");
    int i = (int)(t - mil_targets);
    if (i > model_target)
        return ir_fail(err, "function %s: opset %s needs specificationVersion %d, the model has %d",
                       f->name, f->opset, t->spec_version, m->spec_version);
    return i;
}

/* Apple's loader takes a function input only as a tensor of rank 1 or
 * more (it reads a rank-0 tensor type as a scalar and refuses it: "Functions
 * input of type int not supported"; a negative rank it refuses outright),
 * nor as a list: coremltools passes a scalar as [1] and squeezes it. */
static int mck_fn_input(const MilFunction *f, const MilNamedType *in, IrError *err)
{
    if (in->type.is_list || in->type.rank < 1)
        return ir_fail(err, "function %s: function input '%s': %s; a function input must be "
                       "a tensor of rank 1 or more (pass a scalar as [1] and squeeze it)",
                       f->name, in->name, in->type.is_list ? "a list" :
                       in->type.rank == 0 ? "rank 0 (a scalar)" : "rank unknown");
    return 0;
}

static int mck_function(const MilModel *m, const MilFunction *f, int model_target,
                        IrError *err)
{
    if (!f->name || !f->name[0])
        return ir_fail(err, "a function without a name");
    int target = mck_fn_target(m, f, model_target, err);
    if (target < 0)
        return -1;
    MckCtx c = {.fn = f, .target = target, .err = err};
    int rc = 0;
    for (size_t i = 0; i < f->n_in && rc == 0; i++) {
        rc = mck_define(&c, f->in[i].name, &f->in[i].type, false, "function input");
        if (rc == 0)
            rc = mck_fn_input(f, &f->in[i], err);
    }
    if (rc == 0)
        rc = mck_block(&c, f->block, 0);
    ks_free(&c.names);
    free(c.defs);
    free(c.live);
    return rc;
}

/* Fails unless every feature of list[0..n) is named in `names`; `what`
 * is "input" or "output". */
static int mck_features(const MilFeature *list, size_t n, const KsSet *names, const char *what,
                        IrError *err)
{
    for (size_t i = 0; i < n; i++) {
        const char *name = list[i].name;
        if (!name || !ks_find(names, &name, 1, NULL))
            return ir_fail(err, "description: %s '%s' is not an %s of function main", what,
                           name ? name : "(null)", what);
    }
    return 0;
}

/* When the model description is filled in, its inputs are the main
 * function's inputs and its outputs the main block's outputs (the
 * package's description is how Core ML finds them). Hash sets keep it
 * linear for programs with very many inputs. */
static int mck_description(const MilModel *m, IrError *err)
{
    if (!m->n_in && !m->n_out)
        return 0;
    const MilFunction *f = mil_function_find(m, "main");
    if (!f)
        return ir_fail(err, "description: features are described but there is no function main");
    if (m->n_in != f->n_in || m->n_out != f->block->n_out)
        return ir_fail(err, "description: %zu inputs and %zu outputs, function main has %zu and %zu",
                       m->n_in, m->n_out, f->n_in, f->block->n_out);
    KsSet ins = {0}, outs = {0};
    for (size_t i = 0; i < f->n_in; i++)
        ks_add(&ins, (const char *const *)&f->in[i].name, 1, 0);
    for (size_t i = 0; i < f->block->n_out; i++)
        ks_add(&outs, (const char *const *)&f->block->out[i], 1, 0);
    int rc = mck_features(m->in, m->n_in, &ins, "input", err);
    if (rc == 0)
        rc = mck_features(m->out, m->n_out, &outs, "output", err);
    ks_free(&ins);
    ks_free(&outs);
    return rc;
}

/* The target index of the model's specificationVersion, or -1. */
static int mck_model_target(const MilModel *m)
{
    for (size_t i = 0; i < mil_targets_n; i++)
        if (mil_targets[i].spec_version == m->spec_version)
            return (int)i;
    return -1;
}

int mck_model(const MilModel *m, IrError *err)
{
    int target = mck_model_target(m);
    if (target < 0)
        return ir_fail(err, "specificationVersion %d is not an ML Program target's (%s..%s: %d..%d)",
                       m->spec_version, mil_targets[0].name, mil_targets[mil_targets_n - 1].name,
                       mil_targets[0].spec_version, mil_targets[mil_targets_n - 1].spec_version);
    if (m->n_fn == 0)
        return ir_fail(err, "the program has no function");
    KsSet fnames = {0};
    int rc = 0;
    for (size_t i = 0; i < m->n_fn && rc == 0; i++) {
        if (!m->fn[i]) {
            rc = ir_fail(err, "function %zu: missing", i);
            break;
        }
        const char *name = m->fn[i]->name;
        rc = mck_function(m, m->fn[i], target, err);
        if (rc == 0 && !ks_add(&fnames, &name, 1, 0))
            rc = ir_fail(err, "function %s: defined twice", name);
    }
    ks_free(&fnames);
    return rc < 0 ? rc : mck_description(m, err);
}
