/*
 * fuse_cast.c - drops the middle type of a Cast chain when it loses nothing.
 *
 * t = Cast(x, to=T1), y = Cast(t, to=T2), x of type T0: when T1 holds every
 * value of T0 exactly (float16 -> float -> double, int8 -> int32,
 * uint16 -> int32, int16 -> float, bool -> any number, ...), t carries
 * x's values unchanged, so converting t to T2 is converting x to T2:
 * y = Cast(x, to=T2). When T2 is T0 as well, y equals x and its readers
 * read x. Never through a narrower or differently shaped type (float ->
 * float16 rounds, float -> int32 truncates, int32 -> float rounds), nor
 * with strings or the 8-, 4- and 2-bit float/integer formats, nor below
 * opset 6 (where `to` is a string). Only when t has no other reader.
 */
#include "passes/fuse_util.h"

/* Kind and precision of the types this pass knows: 'f' floats with a
 * mantissa of `bits` (implicit bit counted) and exponent range class
 * `exp`, 'i' signed / 'u' unsigned integers of `bits`, 'b' bool. */
typedef struct OptFcType {
    int32_t code;
    char kind;
    int bits;
    int exp;
} OptFcType;

static const OptFcType opt_fc_types[] = {
    {IR_BOOL, 'b', 1, 0},      {IR_INT8, 'i', 8, 0},       {IR_UINT8, 'u', 8, 0},
    {IR_INT16, 'i', 16, 0},    {IR_UINT16, 'u', 16, 0},    {IR_INT32, 'i', 32, 0},
    {IR_UINT32, 'u', 32, 0},   {IR_INT64, 'i', 64, 0},     {IR_UINT64, 'u', 64, 0},
    {IR_FLOAT16, 'f', 11, 5},  {IR_BFLOAT16, 'f', 8, 8},   {IR_FLOAT, 'f', 24, 8},
    {IR_DOUBLE, 'f', 53, 11},
};

static const OptFcType *opt_fc_find(int32_t code)
{
    for (size_t i = 0; i < sizeof opt_fc_types / sizeof opt_fc_types[0]; i++)
        if (opt_fc_types[i].code == code)
            return &opt_fc_types[i];
    return NULL;
}

/* Whether every value of type a is a value of type b. */
static bool opt_fc_widens(int32_t ca, int32_t cb)
{
    const OptFcType *a = opt_fc_find(ca), *b = opt_fc_find(cb);
    if (!a || !b)
        return false;
    if (ca == cb)
        return true;
    if (a->kind == 'b')
        return b->kind != 'b';
    if (b->kind == 'f') {
        if (a->kind == 'f')
            return b->bits >= a->bits && b->exp >= a->exp;
        /* an integer of n value bits fits a mantissa of n bits */
        return (a->kind == 'u' ? a->bits : a->bits - 1) <= b->bits;
    }
    if (b->kind == 'i')
        return a->kind != 'f' && (a->kind == 'i' ? a->bits <= b->bits : a->bits < b->bits);
    return b->kind == 'u' && a->kind == 'u' && a->bits <= b->bits;
}

/* The `to` of Cast k, or 0 when it is not a plain int or k has attributes
 * besides to and saturate. */
static int32_t opt_fc_to(const IrNode *k)
{
    static const char *const known[] = {"to", "saturate", NULL};
    bool ok = true;
    int64_t to = opt_fz_attr_i(k, "to", 0, &ok);
    if (!ok || opt_fz_other_attrs(k, known) || k->n_in != 1 || k->n_out != 1 || !k->in[0] ||
        !k->out[0])
        return 0;
    return (int32_t)to;
}

static bool opt_fc_one(OptCtx *c, IrNode *y)
{
    int32_t t2 = opt_fc_to(y);
    IrNode *t = opt_fz_sole(y->in[0], y, "Cast");
    if (!t2 || !opt_fc_find(t2) || !t)
        return false;
    int32_t t1 = opt_fc_to(t), t0 = opt_fz_elem(t->in[0]);
    if (!t1 || !t0 || !opt_fc_widens(t0, t1))
        return false;
    IrValue *x = t->in[0];
    IrError e;
    if (t2 == t0 && !ir_value_is_graph_output(y->out[0]) &&
        ir_value_replace_uses(y->out[0], x, &e) == 0) {
        ir_node_delete(y);
        ir_node_delete(t);
        return true;
    }
    ir_node_set_input(y, 0, x);
    ir_node_delete(t);
    return true;
}

static long opt_fc_run(OptCtx *c)
{
    if (ir_scope_opset(c->m, c->fn, "") < 6)
        return 0;
    return opt_fz_each(c, "Cast", opt_fc_one);
}

const OptPass opt_pass_fuse_cast = {
    "fuse_cast", "merges Cast chains whose middle type holds every value exactly",
    true, OPT_NEEDS_TYPES, opt_fc_run,
};
