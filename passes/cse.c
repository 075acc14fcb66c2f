/*
 * cse.c - common subexpression elimination.
 *
 * Two nodes of one ai.onnx op that read the same values (the same IrValue,
 * in the same order, the same inputs left out), name the same outputs
 * (the same slots left out) and carry the same attributes (every field
 * equal, bit for bit) compute the same results: ONNX ops are functions of
 * their inputs and attributes. The readers of the later node's outputs
 * read the earlier node's instead, and the later node goes. Since nodes
 * are in topological order, the earlier node's outputs are defined
 * wherever the later node's were read.
 *
 * Left alone: random ops (the operator table's random flag: RandomNormal*,
 * RandomUniform*, Bernoulli, Multinomial, and Dropout, random when
 * training), nodes with subgraph,
 * sparse tensor or type attributes, calls to model-local functions, other domains, and a node
 * one of whose outputs is a graph output (its name is part of the
 * interface).
 */
#include <stdlib.h>
#include <string.h>

#include "passes/passes.h"
#include "analysis/known.h"
#include "schema/opschema.h"

/* The nodes seen so far, by hash: open addressing in one array with at
 * least twice as many slots as candidates, so a run costs one allocation
 * (a table of per-hash lists cost two per node, which on a 100k-node graph
 * was most of the pass). Nodes with one hash follow each other along the
 * probe sequence in the order they were seen. */
typedef struct OptCseSlot {
    uint64_t key;
    IrNode *node;    /* NULL = free */
} OptCseSlot;

typedef struct OptCseTable {
    OptCseSlot *s;
    size_t mask;
} OptCseTable;

#define OPT_CSE_MIX(h, x) ((h) = ((h) ^ (uint64_t)(x)) * 1099511628211ull)

static uint64_t opt_cse_bytes(uint64_t h, const void *p, size_t n)
{
    const uint8_t *b = p;
    for (size_t i = 0; i < n; i++)
        OPT_CSE_MIX(h, b[i]);
    return h;
}

static uint64_t opt_cse_str(uint64_t h, const char *s)
{
    return s ? opt_cse_bytes(h, s, strlen(s) + 1) : opt_cse_bytes(h, "\xff", 1);
}

/* Type, dims and the first bytes of a tensor attribute. */
static uint64_t opt_cse_tensor_hash(uint64_t h, const IrTensor *t)
{
    OPT_CSE_MIX(h, t->data_type);
    h = opt_cse_bytes(h, t->dims, t->ndims * sizeof *t->dims);
    if (t->has_raw)
        h = opt_cse_bytes(h, t->raw.data, t->raw.len < 64 ? t->raw.len : 64);
    return h;
}

/* A hash of what makes two nodes equal (attributes in any order: their
 * hashes are summed). */
static uint64_t opt_cse_hash(const IrNode *k)
{
    uint64_t h = 1469598103934665603ull;
    h = opt_cse_str(h, k->op_type);
    OPT_CSE_MIX(h, k->n_in);
    OPT_CSE_MIX(h, k->n_out);
    for (size_t i = 0; i < k->n_in; i++)
        h = opt_cse_bytes(h, &k->in[i], sizeof k->in[i]);
    uint64_t sum = 0;
    for (size_t a = 0; a < k->n_attr; a++) {
        const IrAttr *at = k->attr[a];
        uint64_t ah = opt_cse_str(1469598103934665603ull, at->name);
        OPT_CSE_MIX(ah, at->has_i ? at->i : 0);
        OPT_CSE_MIX(ah, at->n_ints);
        OPT_CSE_MIX(ah, at->n_floats);
        ah = opt_cse_bytes(ah, at->ints, at->n_ints * sizeof *at->ints);
        ah = opt_cse_bytes(ah, at->floats, at->n_floats * sizeof *at->floats);
        if (at->has_f)
            ah = opt_cse_bytes(ah, &at->f, sizeof at->f);
        if (at->has_s)
            ah = opt_cse_bytes(ah, at->s.data, at->s.len);
        if (at->t)
            ah = opt_cse_tensor_hash(ah, at->t);
        sum += ah;
    }
    OPT_CSE_MIX(h, sum);
    return h;
}

/* ---- exact equality of attributes ---------------------------------------- */

static bool opt_cse_same_str(const char *a, const char *b)
{
    return (!a && !b) || (a && b && !strcmp(a, b));
}

static bool opt_cse_same_bytes(const IrBytes *a, const IrBytes *b)
{
    return a->len == b->len && (a->len == 0 || !memcmp(a->data, b->data, a->len));
}

static bool opt_cse_same_mem(const void *a, const void *b, size_t n)
{
    return n == 0 || !memcmp(a, b, n);
}

static bool opt_cse_same_byte_lists(const IrBytes *a, const IrBytes *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!opt_cse_same_bytes(&a[i], &b[i]))
            return false;
    return true;
}

/* Tensors stored the same way with the same contents (external data,
 * segments and unknown fields count as different). */
static bool opt_cse_same_tensor(const IrTensor *a, const IrTensor *b)
{
    if (!a || !b)
        return a == b;
    if (a->has_data_type != b->has_data_type || a->data_type != b->data_type ||
        a->ndims != b->ndims || a->segment || b->segment || a->unk.n || b->unk.n ||
        (a->has_data_location && a->data_location != 0) ||
        (b->has_data_location && b->data_location != 0) || a->external_data.n ||
        b->external_data.n || a->has_raw != b->has_raw)
        return false;
    return opt_cse_same_mem(a->dims, b->dims, a->ndims * sizeof *a->dims) &&
           (!a->has_raw || opt_cse_same_bytes(&a->raw, &b->raw)) &&
           a->n_float == b->n_float &&
           opt_cse_same_mem(a->float_data, b->float_data, a->n_float * sizeof(float)) &&
           a->n_int32 == b->n_int32 &&
           opt_cse_same_mem(a->int32_data, b->int32_data, a->n_int32 * sizeof(int32_t)) &&
           a->n_int64 == b->n_int64 &&
           opt_cse_same_mem(a->int64_data, b->int64_data, a->n_int64 * sizeof(int64_t)) &&
           a->n_double == b->n_double &&
           opt_cse_same_mem(a->double_data, b->double_data, a->n_double * sizeof(double)) &&
           a->n_uint64 == b->n_uint64 &&
           opt_cse_same_mem(a->uint64_data, b->uint64_data, a->n_uint64 * sizeof(uint64_t)) &&
           a->n_string == b->n_string &&
           opt_cse_same_byte_lists(a->string_data, b->string_data, a->n_string);
}

/* Whether an attribute is of a kind this pass compares (no subgraphs,
 * sparse tensors or types, no unknown fields). */
static bool opt_cse_plain_attr(const IrAttr *a)
{
    return !a->g && !a->n_graphs && !a->sparse_tensor && !a->n_sparse && !a->tp &&
           !a->n_tps && !a->unk.n;
}

static bool opt_cse_same_attr(const IrAttr *a, const IrAttr *b)
{
    if (!opt_cse_same_str(a->ref_attr_name, b->ref_attr_name) ||
        a->has_type != b->has_type || a->type != b->type || a->has_f != b->has_f ||
        a->has_i != b->has_i || a->has_s != b->has_s)
        return false;
    if ((a->has_f && memcmp(&a->f, &b->f, sizeof a->f)) || (a->has_i && a->i != b->i) ||
        (a->has_s && !opt_cse_same_bytes(&a->s, &b->s)) || !opt_cse_same_tensor(a->t, b->t))
        return false;
    if (a->n_ints != b->n_ints || a->n_floats != b->n_floats ||
        a->n_strings != b->n_strings || a->n_tensors != b->n_tensors)
        return false;
    if (!opt_cse_same_mem(a->ints, b->ints, a->n_ints * sizeof *a->ints) ||
        !opt_cse_same_mem(a->floats, b->floats, a->n_floats * sizeof *a->floats) ||
        !opt_cse_same_byte_lists(a->strings, b->strings, a->n_strings))
        return false;
    for (size_t i = 0; i < a->n_tensors; i++)
        if (!opt_cse_same_tensor(a->tensors[i], b->tensors[i]))
            return false;
    return true;
}

/* Same attributes, in any order. */
static bool opt_cse_same_attrs(const IrNode *a, const IrNode *b)
{
    if (a->n_attr != b->n_attr)
        return false;
    for (size_t i = 0; i < a->n_attr; i++) {
        const IrAttr *x = a->attr[i], *y = ir_node_attr(b, x->name);
        if (!y || !opt_cse_same_attr(x, y))
            return false;
    }
    return true;
}

/* Whether b computes what a computes. */
static bool opt_cse_same(const IrNode *a, const IrNode *b)
{
    if (strcmp(a->op_type, b->op_type) != 0 || a->n_in != b->n_in || a->n_out != b->n_out ||
        !opt_cse_same_str(a->overload, b->overload))
        return false;
    for (size_t i = 0; i < a->n_in; i++)
        if (a->in[i] != b->in[i])
            return false;
    for (size_t i = 0; i < a->n_out; i++)
        if (!a->out[i] != !b->out[i])
            return false;
    return opt_cse_same_attrs(a, b);
}

/* ---- which nodes qualify -------------------------------------------------- */

/* Random nodes (kv_random: random ops, Dropout in training mode) give new
 * values on every run, so two of them are never one. */
static bool opt_cse_candidate(const OptCtx *c, const IrNode *k)
{
    if (ir_domain_norm(k->domain)[0] ||
        kv_random(c->m, k) || ir_model_function(c->m, k))
        return false;
    /* a node with no inputs (SequenceEmpty, Constant) is a function of its
     * attributes alone, unless random (above) */
    for (size_t a = 0; a < k->n_attr; a++)
        if (!opt_cse_plain_attr(k->attr[a]))
            return false;
    return true;
}

/* ---- the pass ------------------------------------------------------------- */

/* The earlier node equal to k (added to the table when there is none). */
static IrNode *opt_cse_find(OptCseTable *t, IrNode *k)
{
    uint64_t key = opt_cse_hash(k);
    size_t i = (size_t)(key ^ (key >> 32)) & t->mask;
    for (; t->s[i].node; i = (i + 1) & t->mask)
        if (t->s[i].key == key && opt_cse_same(t->s[i].node, k))
            return t->s[i].node;
    t->s[i] = (OptCseSlot){key, k};
    return NULL;
}

static bool opt_cse_any_output(const IrNode *k)
{
    for (size_t i = 0; i < k->n_out; i++)
        if (k->out[i] && ir_value_is_graph_output(k->out[i]))
            return true;
    return false;
}

/* Moves the readers of k's outputs to p's; true when any moved. Deletes
 * k when nothing reads it any more. */
static bool opt_cse_merge(IrNode *p, IrNode *k)
{
    bool moved = false, left = false;
    for (size_t i = 0; i < k->n_out; i++) {
        IrValue *y = k->out[i];
        IrError e;
        if (!y || !y->n_uses)
            continue;
        if (ir_value_replace_uses(y, p->out[i], &e) == 0)
            moved = true;
        else
            left = true;
    }
    if (moved && !left)
        ir_node_delete(k);
    return moved;
}

static long opt_cse_run(OptCtx *c)
{
    size_t count = 0;
    IR_FOR_NODES(c->g, k)
        count++;
    size_t cap = 16;
    while (cap < 2 * count + 1)
        cap *= 2;
    OptCseTable t = {mem_array(cap, sizeof *t.s), cap - 1};
    long n = 0;
    IR_FOR_NODES(c->g, k) {
        if (!opt_cse_candidate(c, k) || opt_cse_any_output(k))
            continue;
        IrNode *p = opt_cse_find(&t, k);
        if (p && opt_cse_merge(p, k))
            n++;
    }
    free(t.s);
    return n;
}

const OptPass opt_pass_cse = {
    "cse", "merges nodes that run one op on the same inputs with the same attributes", true, 0,
    opt_cse_run,
};
