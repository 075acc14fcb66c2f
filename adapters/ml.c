/*
 * ml.c - adapters of ai.onnx.ml: LabelEncoder (1, 2, 4),
 * TreeEnsembleRegressor / TreeEnsembleClassifier (1, 3; deprecated at 5,
 * replaced by TreeEnsemble-5) and TreeEnsemble (5). The other ml ops have
 * a single version and need nothing.
 *
 * Tree semantics followed (as the ml evaluator defines them): a tree of
 * the old ops starts at its first node in attribute order, trees run in
 * tree-id order, a node's children are found by (tree id, node id), NaN
 * features follow nodes_missing_value_tracks_true, scores are summed in
 * double in tree order and rounded once into the output type.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adapters/adapters.h"

/* AttributeProto.AttributeType codes. */
enum {
    AD_AT_FLOAT = 1, AD_AT_INT = 2, AD_AT_STRING = 3, AD_AT_TENSOR = 4,
    AD_AT_FLOATS = 6, AD_AT_INTS = 7, AD_AT_STRINGS = 8
};

/* ---- attributes -------------------------------------------------------- */

static IrAttr *ad_ml_attr_new(const char *name, int type)
{
    IrAttr *a = mem_alloc(sizeof *a);
    a->name = mem_strdup(name);
    a->has_type = true;
    a->type = type;
    return a;
}

/* FLOATS attribute from doubles the caller checked to be floats. */
static void ad_ml_set_floats(IrNode *k, const char *name, size_t n, const double *v)
{
    IrAttr *a = ad_ml_attr_new(name, AD_AT_FLOATS);
    a->n_floats = n;
    a->floats = mem_array(n ? n : 1, sizeof *a->floats);
    for (size_t i = 0; i < n; i++)
        a->floats[i] = (float)v[i];
    ir_node_set_attr(k, a);
}

/* STRINGS attribute holding copies of s[0..n). */
static void ad_ml_set_strings(IrNode *k, const char *name, size_t n,
                              const IrBytes *const *s)
{
    IrAttr *a = ad_ml_attr_new(name, AD_AT_STRINGS);
    a->n_strings = n;
    a->strings = mem_array(n ? n : 1, sizeof *a->strings);
    for (size_t i = 0; i < n; i++) {
        a->strings[i].len = s[i]->len;
        a->strings[i].data = mem_alloc(s[i]->len + 1);
        if (s[i]->len)
            memcpy(a->strings[i].data, s[i]->data, s[i]->len);
    }
    ir_node_set_attr(k, a);
}

/* STRING attribute holding a copy of b (which may hold NUL bytes). */
static void ad_ml_set_bytes(IrNode *k, const char *name, const IrBytes *b)
{
    IrAttr *a = ad_ml_attr_new(name, AD_AT_STRING);
    a->has_s = true;
    a->s.len = b->len;
    a->s.data = mem_alloc(b->len + 1);
    if (b->len)
        memcpy(a->s.data, b->data, b->len);
    ir_node_set_attr(k, a);
}

/* A 1-D TENSOR attribute of n elements of es bytes each (host order is
 * little-endian, as every raw tensor this tool writes). */
static void ad_ml_set_tensor(IrNode *k, const char *name, int32_t dt, size_t n,
                             const void *data, size_t es)
{
    int64_t dim = (int64_t)n;
    ir_node_set_attr(k, ir_attr_tensor(name, ir_tensor_new(NULL, dt, 1, &dim, data,
                                                           n * es)));
}

/* Whether every value is a float exactly. */
static bool ad_ml_floats_exact(const double *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if ((double)(float)v[i] != v[i] && !isnan(v[i]))
            return false;
    return true;
}

/* ---- reading tensors (any size; raw, typed or external storage) ------- */

static const uint8_t *ad_ml_raw(const IrTensor *t, size_t *len)
{
    if (t->has_data_location && t->data_location == 1) {
        *len = t->ext.bound ? t->ext.len : 0;
        return t->ext.bound ? t->ext.data : NULL;
    }
    *len = t->raw.len;
    return t->has_raw ? t->raw.data : NULL;
}

static uint64_t ad_ml_le(const uint8_t *p, size_t n)
{
    uint64_t v = 0;
    for (size_t k = n; k-- > 0;)
        v = v << 8 | p[k];
    return v;
}

/* Elements of a float or double tensor as doubles (caller frees). */
static bool ad_ml_tensor_f64(const IrTensor *t, double **v, size_t *n)
{
    uint64_t cnt;
    size_t len, es = t->data_type == IR_DOUBLE ? 8 : 4;
    if ((t->data_type != IR_FLOAT && t->data_type != IR_DOUBLE) ||
        !ir_tensor_numel(t, &cnt) || cnt > ((uint64_t)1 << 28))
        return false;
    const uint8_t *raw = ad_ml_raw(t, &len);
    if (raw ? len != cnt * es
            : (es == 8 ? t->n_double : t->n_float) != cnt)
        return false;
    double *a = mem_array(cnt ? cnt : 1, sizeof *a);
    for (size_t i = 0; i < cnt; i++) {
        if (es == 8) {
            uint64_t u = raw ? ad_ml_le(raw + 8 * i, 8) : 0;
            if (raw)
                memcpy(&a[i], &u, 8);
            else
                a[i] = t->double_data[i];
        } else {
            uint32_t u = raw ? (uint32_t)ad_ml_le(raw + 4 * i, 4) : 0;
            float f;
            if (raw)
                memcpy(&f, &u, 4);
            else
                f = t->float_data[i];
            a[i] = f;
        }
    }
    *v = a;
    *n = cnt;
    return true;
}

/* Elements of an integer tensor (int64, int32, int16, uint8) as int64. */
static bool ad_ml_tensor_i64(const IrTensor *t, int64_t **v, size_t *n)
{
    uint64_t cnt;
    size_t len, es;
    switch (t->data_type) {
    case IR_INT64: es = 8; break;
    case IR_INT32: es = 4; break;
    case IR_INT16: es = 2; break;
    case IR_UINT8: es = 1; break;
    default: return false;
    }
    if (!ir_tensor_numel(t, &cnt) || cnt > ((uint64_t)1 << 28))
        return false;
    const uint8_t *raw = ad_ml_raw(t, &len);
    if (raw ? len != cnt * es : (es == 8 ? t->n_int64 : t->n_int32) != cnt)
        return false;
    int64_t *a = mem_array(cnt ? cnt : 1, sizeof *a);
    for (size_t i = 0; i < cnt; i++) {
        if (!raw) {
            a[i] = es == 8 ? t->int64_data[i] : t->int32_data[i];
            continue;
        }
        uint64_t u = ad_ml_le(raw + es * i, es);
        if (es == 8)
            a[i] = (int64_t)u;
        else if (es == 4)
            a[i] = (int32_t)(uint32_t)u;
        else if (es == 2)
            a[i] = (int16_t)(uint16_t)u;
        else
            a[i] = (int64_t)u;
    }
    *v = a;
    *n = cnt;
    return true;
}

/* A float list attribute `name`, or its `name`_as_tensor form (double
 * tensor), as doubles; *n = 0 and *v = NULL when neither is set. Refuses
 * when both are, or when the tensor cannot be read. */
static int ad_ml_dvec(AdCtx *c, const char *name, double **v, size_t *n)
{
    char tn[64];
    snprintf(tn, sizeof tn, "%s_as_tensor", name);
    const IrAttr *l = ad_attr(c, name), *t = ad_attr(c, tn);
    *v = NULL;
    *n = 0;
    if (l && t)
        return ad_refuse(c, DG_ATTRIBUTE, "both %s and %s are set", name, tn);
    if (t) {
        if (!t->t || !ad_ml_tensor_f64(t->t, v, n))
            return ad_refuse(c, DG_ATTRIBUTE, "%s cannot be read as a float tensor", tn);
        return 0;
    }
    if (l) {
        *n = l->n_floats;
        *v = mem_array(*n ? *n : 1, sizeof **v);
        for (size_t i = 0; i < *n; i++)
            (*v)[i] = l->floats[i];
    }
    return 0;
}

/* ---- LabelEncoder 1 <-> 2 ------------------------------------------------ */

static int ad_ml_bytes_cmp(const void *pa, const void *pb)
{
    const IrBytes *a = *(const IrBytes *const *)pa, *b = *(const IrBytes *const *)pb;
    size_t n = a->len < b->len ? a->len : b->len;
    int r = n ? memcmp(a->data, b->data, n) : 0;
    return r ? r : (a->len > b->len) - (a->len < b->len);
}

/* Whether s[0..n) holds a string twice. */
static bool ad_ml_has_dup(const IrBytes *s, size_t n)
{
    const IrBytes **p = mem_array(n ? n : 1, sizeof *p);
    for (size_t i = 0; i < n; i++)
        p[i] = &s[i];
    qsort(p, n, sizeof *p, ad_ml_bytes_cmp);
    bool dup = false;
    for (size_t i = 1; i < n && !dup; i++)
        dup = ad_ml_bytes_cmp(&p[i - 1], &p[i]) == 0;
    free(p);
    return dup;
}

/* Renames attribute a of c->n. */
static void ad_ml_rename(IrAttr *a, const char *name)
{
    free(a->name);
    a->name = mem_strdup(name);
}

/* LabelEncoder 1 -> 2: version 1 mapped a string to its position in
 * classes_strings (default_int64 when absent) or an int64 position back
 * to its string (default_string out of range); version 2 maps keys_* to
 * values_*. Up: string input: keys_strings = classes, values_int64s =
 * 0..n-1; int64 input: keys_int64s = 0..n-1, values_strings = classes.
 * The defaults keep their names and values. A class listed twice is
 * refused (its position is ambiguous). */
static int ad_le_1_2(AdCtx *c)
{
    IrAttr *cls = ad_attr(c, "classes_strings");
    int32_t t = ad_elem(ad_in(c, 0));
    if (t != IR_STRING && t != IR_INT64)
        return ad_refuse(c, t ? DG_TYPE : DG_TYPE_UNKNOWN,
                         "the input must be known to be string or int64 to "
                         "choose the direction of the mapping");
    if (!cls || cls->n_strings == 0)
        return ad_refuse(c, DG_ATTRIBUTE, "classes_strings is empty or missing");
    size_t n = cls->n_strings;
    if (t == IR_STRING && ad_ml_has_dup(cls->strings, n))
        return ad_refuse(c, DG_SEMANTICS, "classes_strings lists a class twice");
    int64_t *idx = mem_array(n, sizeof *idx);
    for (size_t i = 0; i < n; i++)
        idx[i] = (int64_t)i;
    ad_ml_rename(cls, t == IR_STRING ? "keys_strings" : "values_strings");
    ad_set_attr_ints(c, c->n, t == IR_STRING ? "values_int64s" : "keys_int64s", n, idx);
    free(idx);
    return 0;
}

/* Whether v[0..n) is a permutation of 0..n-1. */
static bool ad_ml_is_perm(const int64_t *v, size_t n)
{
    bool *seen = mem_array(n ? n : 1, sizeof *seen);
    bool ok = true;
    for (size_t i = 0; i < n && ok; i++) {
        ok = v[i] >= 0 && (uint64_t)v[i] < n && !seen[v[i]];
        if (ok)
            seen[v[i]] = true;
    }
    free(seen);
    return ok;
}

/* LabelEncoder 2 -> 1: only the two mappings version 1 has: strings to
 * their positions (keys_strings -> values_int64s, the values a
 * permutation of 0..n-1) and positions to strings (keys_int64s, a
 * permutation of 0..n-1 -> values_strings). classes_strings[p] is the
 * string of position p. Float keys or values, or other mappings, are
 * refused. default_float only serves float values and is dropped. */
static int ad_le_2_1(AdCtx *c)
{
    IrAttr *ks = ad_attr(c, "keys_strings"), *ki = ad_attr(c, "keys_int64s");
    IrAttr *vs = ad_attr(c, "values_strings"), *vi = ad_attr(c, "values_int64s");
    bool s2i = ks && vi && !ki && !vs, i2s = ki && vs && !ks && !vi;
    if (ad_attr(c, "keys_floats") || ad_attr(c, "values_floats") || (!s2i && !i2s))
        return ad_refuse(c, DG_SEMANTICS,
                         "LabelEncoder-1 only maps strings to their positions and back");
    IrAttr *str = s2i ? ks : vs, *pos = s2i ? vi : ki;
    size_t n = str->n_strings;
    if (pos->n_ints != n || n == 0 || !ad_ml_is_perm(pos->ints, n))
        return ad_refuse(c, DG_SEMANTICS,
                         "the int64 side is not a permutation of 0..%zu", n ? n - 1 : 0);
    const IrBytes **cls = mem_array(n, sizeof *cls);
    for (size_t i = 0; i < n; i++)
        cls[pos->ints[i]] = &str->strings[i];
    ad_ml_set_strings(c->n, "classes_strings", n, cls);
    free(cls);
    static const char *const drop[] = {"keys_strings", "keys_int64s", "values_strings",
                                       "values_int64s", "default_float"};
    for (size_t i = 0; i < 5; i++)
        ad_drop_attr(c, drop[i]);
    return 0;
}

/* ---- LabelEncoder 2 <-> 4 ------------------------------------------------ */

/* The list form of tensor attribute `pre`_tensor (keys or values). */
static int ad_le_tensor_to_list(AdCtx *c, const char *pre)
{
    char tn[32], ln[32];
    snprintf(tn, sizeof tn, "%s_tensor", pre);
    const IrAttr *a = ad_attr(c, tn);
    if (!a)
        return 0;
    static const char *const kinds[] = {"strings", "int64s", "floats"};
    for (size_t i = 0; i < 3; i++) {
        snprintf(ln, sizeof ln, "%s_%s", pre, kinds[i]);
        if (ad_attr(c, ln))
            return ad_refuse(c, DG_ATTRIBUTE, "both %s and %s are set", tn, ln);
    }
    const IrTensor *t = a->t;
    int32_t dt = t ? t->data_type : 0;
    if (dt == IR_STRING) {
        uint64_t cnt;
        if (!ir_tensor_numel(t, &cnt) || cnt != t->n_string)
            return ad_refuse(c, DG_ATTRIBUTE, "%s cannot be read", tn);
        const IrBytes **p = mem_array(cnt ? cnt : 1, sizeof *p);
        for (size_t i = 0; i < cnt; i++)
            p[i] = &t->string_data[i];
        snprintf(ln, sizeof ln, "%s_strings", pre);
        ad_ml_set_strings(c->n, ln, cnt, p);
        free(p);
    } else if (dt == IR_INT64) {
        int64_t *v;
        size_t n;
        if (!ad_ml_tensor_i64(t, &v, &n))
            return ad_refuse(c, DG_ATTRIBUTE, "%s cannot be read", tn);
        snprintf(ln, sizeof ln, "%s_int64s", pre);
        ad_set_attr_ints(c, c->n, ln, n, v);
        free(v);
    } else if (dt == IR_FLOAT) {
        double *v;
        size_t n;
        if (!ad_ml_tensor_f64(t, &v, &n))
            return ad_refuse(c, DG_ATTRIBUTE, "%s cannot be read", tn);
        snprintf(ln, sizeof ln, "%s_floats", pre);
        ad_ml_set_floats(c->n, ln, n, v);
        free(v);
    } else {
        return ad_refuse(c, DG_TYPE, "%s of element type %d has no list form before "
                         "ai.onnx.ml 4", tn, dt);
    }
    ad_drop_attr(c, tn);
    return 0;
}

/* default_tensor (one value) as default_string / default_int64 /
 * default_float; version 4 prefers it over those, so it replaces them. */
static int ad_le_default_to_attr(AdCtx *c)
{
    const IrAttr *a = ad_attr(c, "default_tensor");
    if (!a)
        return 0;
    const IrTensor *t = a->t;
    uint64_t cnt;
    if (!t || !ir_tensor_numel(t, &cnt) || cnt != 1)
        return ad_refuse(c, DG_ATTRIBUTE, "default_tensor must hold one value");
    if (t->data_type == IR_STRING && t->n_string == 1) {
        ad_ml_set_bytes(c->n, "default_string", &t->string_data[0]);
    } else if (t->data_type == IR_INT64 || t->data_type == IR_FLOAT) {
        int64_t *iv = NULL;
        double *fv = NULL;
        size_t n;
        bool ok = t->data_type == IR_INT64 ? ad_ml_tensor_i64(t, &iv, &n)
                                              : ad_ml_tensor_f64(t, &fv, &n);
        if (!ok)
            return ad_refuse(c, DG_ATTRIBUTE, "default_tensor cannot be read");
        if (iv)
            ad_set_attr_i(c, c->n, "default_int64", iv[0]);
        else
            ad_set_attr_f(c, c->n, "default_float", (float)fv[0]);
        free(iv);
        free(fv);
    } else {
        return ad_refuse(c, DG_TYPE, "default_tensor of element type %d has no "
                         "attribute form before ai.onnx.ml 4", t->data_type);
    }
    ad_drop_attr(c, "default_tensor");
    return 0;
}

/* LabelEncoder 4 -> 2: version 4 added keys_tensor / values_tensor /
 * default_tensor (and int16, int32, double). Down: string, int64 and
 * float tensors become the equivalent list attributes; other element
 * types are refused. */
static int ad_le_4_2(AdCtx *c)
{
    if (ad_le_tensor_to_list(c, "keys") < 0 || ad_le_tensor_to_list(c, "values") < 0)
        return -1;
    return ad_le_default_to_attr(c);
}

/* ---- TreeEnsembleRegressor / Classifier 1 <-> 3 ------------------------- */

/* 3 added the *_as_tensor attributes (double-precision forms of
 * nodes_values, nodes_hitrates, base_values and target/class_weights).
 * Down: each becomes its float list when every value is a float exactly
 * (the ops read both forms as the same doubles); otherwise refused. */
static int ad_te_3_1(AdCtx *c)
{
    static const char *const names[] = {"nodes_values", "nodes_hitrates", "base_values",
                                        "target_weights", "class_weights"};
    for (size_t i = 0; i < 5; i++) {
        char tn[64];
        snprintf(tn, sizeof tn, "%s_as_tensor", names[i]);
        if (!ad_attr(c, tn))
            continue;
        double *v;
        size_t n;
        if (ad_ml_dvec(c, names[i], &v, &n) < 0)
            return -1;
        bool exact = ad_ml_floats_exact(v, n);
        if (exact)
            ad_ml_set_floats(c->n, names[i], n, v);
        free(v);
        if (!exact)
            return ad_refuse(c, DG_ATTRIBUTE,
                             "%s holds doubles that are not floats; version 1 has "
                             "only float lists", tn);
        ad_drop_attr(c, tn);
    }
    return 0;
}


/* ---- the old tree format (TreeEnsembleRegressor / Classifier) ---------- */

enum { AD_BR_LEQ, AD_BR_LT, AD_BR_GTE, AD_BR_GT, AD_BR_EQ, AD_BR_NEQ,
       AD_BR_MEMBER, AD_BR_LEAF };

static const char *const ad_mode_names[] = {"BRANCH_LEQ", "BRANCH_LT", "BRANCH_GTE",
                                            "BRANCH_GT", "BRANCH_EQ", "BRANCH_NEQ",
                                            "BRANCH_MEMBER", "LEAF"};

/* Limits of the rewrites: tree depth (recursion) and emitted nodes. */
#define AD_TE_MAX_DEPTH 10000
#define AD_TE_MAX_NODES ((size_t)1 << 22)

/* A parsed TreeEnsembleRegressor / Classifier. */
typedef struct AdOld {
    size_t n;                  /* nodes */
    const int64_t *tid, *nid, *feat, *tnext, *fnext;  /* borrowed */
    int64_t *miss;             /* n, zeros when absent */
    double *thr;               /* n, zeros when absent */
    uint8_t *mode;             /* n, AD_BR_* */
    size_t *tidx, *fidx;       /* children (branch nodes) */
    size_t ntrees, *roots;     /* first node of each tree, trees by id */
    size_t *w_at;              /* n + 1: weights of node i at [w_at[i], w_at[i+1]) */
    int64_t *w_id;
    double *w_val;
} AdOld;

static void ad_old_free(AdOld *o)
{
    free(o->miss);
    free(o->thr);
    free(o->mode);
    free(o->tidx);
    free(o->fidx);
    free(o->roots);
    free(o->w_at);
    free(o->w_id);
    free(o->w_val);
}

typedef struct AdKey {
    int64_t tid, nid;
    size_t idx;
} AdKey;

static int ad_key_cmp(const void *pa, const void *pb)
{
    const AdKey *a = pa, *b = pb;
    if (a->tid != b->tid)
        return a->tid < b->tid ? -1 : 1;
    if (a->nid != b->nid)
        return a->nid < b->nid ? -1 : 1;
    return (a->idx > b->idx) - (a->idx < b->idx);
}

/* Index of node (tree, node) in the sorted keys, or SIZE_MAX. */
static size_t ad_key_find(const AdKey *k, size_t n, int64_t tree, int64_t node)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (k[mid].tid < tree || (k[mid].tid == tree && k[mid].nid < node))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && k[lo].tid == tree && k[lo].nid == node ? k[lo].idx : SIZE_MAX;
}

/* INTS attribute `name` of c->n with exactly *n values (*n == SIZE_MAX:
 * any length, stored in *n); NULL when absent or of another length. */
static const int64_t *ad_old_ints(AdCtx *c, const char *name, size_t *n)
{
    static const int64_t none[1] = {0};
    const IrAttr *a = ad_attr(c, name);
    if (!a || (*n != SIZE_MAX && a->n_ints != *n))
        return NULL;
    *n = a->n_ints;
    return a->n_ints ? a->ints : none;
}

/* The node attributes: lists, modes, thresholds, missing tracks. */
static int ad_old_nodes(AdCtx *c, AdOld *o)
{
    static const char *const req[] = {"nodes_treeids", "nodes_nodeids",
                                      "nodes_featureids", "nodes_truenodeids",
                                      "nodes_falsenodeids"};
    const int64_t **dst[] = {&o->tid, &o->nid, &o->feat, &o->tnext, &o->fnext};
    size_t n = SIZE_MAX;
    for (size_t i = 0; i < 5; i++)
        if (!(*dst[i] = ad_old_ints(c, req[i], &n)))
            return ad_refuse(c, DG_ATTRIBUTE, "%s is missing or its length differs", req[i]);
    o->n = n;
    if (n == 0)
        return ad_refuse(c, DG_ATTRIBUTE, "the ensemble has no nodes");
    const IrAttr *modes = ad_attr(c, "nodes_modes");
    if (!modes || modes->n_strings != n)
        return ad_refuse(c, DG_ATTRIBUTE, "nodes_modes must name every node's mode");
    o->mode = mem_array(n, 1);
    for (size_t i = 0; i < n; i++) {
        int m = -1;
        for (int k = 0; k < 8 && m < 0; k++)
            if (modes->strings[i].len == strlen(ad_mode_names[k]) &&
                !memcmp(modes->strings[i].data, ad_mode_names[k], modes->strings[i].len))
                m = k;
        if (m < 0 || m == AD_BR_MEMBER)
            return ad_refuse(c, DG_ATTRIBUTE, "node %zu has a mode this op lacks", i);
        o->mode[i] = (uint8_t)m;
    }
    size_t nt;
    double *thr;
    if (ad_ml_dvec(c, "nodes_values", &thr, &nt) < 0)
        return -1;
    if (thr && nt != n) {
        free(thr);
        return ad_refuse(c, DG_ATTRIBUTE, "nodes_values must hold one value per node");
    }
    o->thr = thr ? thr : mem_array(n, sizeof *o->thr);
    o->miss = mem_array(n, sizeof *o->miss);
    const IrAttr *ms = ad_attr(c, "nodes_missing_value_tracks_true");
    if (ms && ms->n_ints > 0) {
        if (ms->n_ints != n)
            return ad_refuse(c, DG_ATTRIBUTE,
                             "nodes_missing_value_tracks_true must match the nodes");
        memcpy(o->miss, ms->ints, n * sizeof *o->miss);
    }
    return 0;
}

/* Children and roots, through the (tree id, node id) keys. */
static int ad_old_link(AdCtx *c, AdOld *o, const AdKey *k)
{
    size_t n = o->n;
    for (size_t i = 1; i < n; i++)
        if (k[i].tid == k[i - 1].tid && k[i].nid == k[i - 1].nid)
            return ad_refuse(c, DG_ATTRIBUTE, "tree %lld lists node %lld twice",
                             (long long)k[i].tid, (long long)k[i].nid);
    o->tidx = mem_array(n, sizeof *o->tidx);
    o->fidx = mem_array(n, sizeof *o->fidx);
    for (size_t i = 0; i < n; i++) {
        if (o->mode[i] == AD_BR_LEAF)
            continue;
        o->tidx[i] = ad_key_find(k, n, o->tid[i], o->tnext[i]);
        o->fidx[i] = ad_key_find(k, n, o->tid[i], o->fnext[i]);
        if (o->tidx[i] == SIZE_MAX || o->fidx[i] == SIZE_MAX || o->feat[i] < 0)
            return ad_refuse(c, DG_ATTRIBUTE, "node %zu branches to a missing node "
                             "or reads a negative feature", i);
    }
    o->roots = mem_array(n, sizeof *o->roots);
    for (size_t i = 0; i < n; i++) {
        if (i && k[i - 1].tid == k[i].tid) {
            size_t *r = &o->roots[o->ntrees - 1];
            *r = k[i].idx < *r ? k[i].idx : *r;
        } else {
            o->roots[o->ntrees++] = k[i].idx;
        }
    }
    return 0;
}

/* The leaf weights (prefix "target" or "class"), grouped by node in
 * attribute order. Every weight must name a leaf. */
static int ad_old_weights(AdCtx *c, AdOld *o, const AdKey *k, const char *pre)
{
    char a[40], b[40], d[40], e[40];
    snprintf(a, sizeof a, "%s_treeids", pre);
    snprintf(b, sizeof b, "%s_nodeids", pre);
    snprintf(d, sizeof d, "%s_ids", pre);
    snprintf(e, sizeof e, "%s_weights", pre);
    double *wv;
    size_t nv, nw = 0;
    const int64_t *wt = NULL, *wn = NULL, *wi = NULL;
    if (ad_ml_dvec(c, e, &wv, &nv) < 0)
        return -1;
    if (ad_attr(c, a) || wv) {
        nw = SIZE_MAX;
        wt = ad_old_ints(c, a, &nw);
        wn = wt ? ad_old_ints(c, b, &nw) : NULL;
        wi = wn ? ad_old_ints(c, d, &nw) : NULL;
        if (!wi || nv != nw) {
            free(wv);
            return ad_refuse(c, DG_ATTRIBUTE, "the %s_* attributes differ in length", pre);
        }
    }
    size_t *node = mem_array(nw ? nw : 1, sizeof *node);
    o->w_at = mem_array(o->n + 2, sizeof *o->w_at);
    o->w_id = mem_array(nw ? nw : 1, sizeof *o->w_id);
    o->w_val = mem_array(nw ? nw : 1, sizeof *o->w_val);
    int rc = 0;
    for (size_t i = 0; i < nw && rc == 0; i++) {
        node[i] = ad_key_find(k, o->n, wt[i], wn[i]);
        if (node[i] == SIZE_MAX || o->mode[node[i]] != AD_BR_LEAF)
            rc = ad_refuse(c, DG_ATTRIBUTE, "%s weight %zu does not name a leaf", pre, i);
        else
            o->w_at[node[i] + 1]++;
    }
    for (size_t i = 0; i < o->n && rc == 0; i++)
        o->w_at[i + 1] += o->w_at[i];
    size_t *fill = mem_array(o->n, sizeof *fill);
    for (size_t i = 0; i < nw && rc == 0; i++) {
        size_t at = o->w_at[node[i]] + fill[node[i]]++;
        o->w_id[at] = wi[i];
        o->w_val[at] = wv[i];
    }
    free(fill);
    free(node);
    free(wv);
    return rc;
}

/* Parses the ensemble of c->n (weights prefix `pre`). */
static int ad_old_parse(AdCtx *c, AdOld *o, const char *pre)
{
    memset(o, 0, sizeof *o);
    if (ad_old_nodes(c, o) < 0)
        return -1;
    AdKey *k = mem_array(o->n, sizeof *k);
    for (size_t i = 0; i < o->n; i++)
        k[i] = (AdKey){o->tid[i], o->nid[i], i};
    qsort(k, o->n, sizeof *k, ad_key_cmp);
    int rc = ad_old_link(c, o, k);
    if (rc == 0)
        rc = ad_old_weights(c, o, k, pre);
    free(k);
    return rc;
}

/* Index of a post_transform / aggregate_function name, or -1. */
static int ad_ml_name_index(const char *s, const char *const *names, int n)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(s, names[i]))
            return i;
    return -1;
}

static const char *const ad_post_names[] = {"NONE", "SOFTMAX", "LOGISTIC",
                                            "SOFTMAX_ZERO", "PROBIT"};
/* TreeEnsemble-5 codes: 0 AVERAGE, 1 SUM, 2 MIN, 3 MAX. */
static const char *const ad_agg_names[] = {"AVERAGE", "SUM", "MIN", "MAX"};
enum { AD_AGG_AVERAGE, AD_AGG_SUM, AD_AGG_MIN, AD_AGG_MAX };

/* ---- the new tree format (TreeEnsemble-5), built ---------------------- */

typedef struct AdNew {
    size_t n, nl, nr;
    int64_t *feat, *tnext, *fnext, *tleaf, *fleaf, *miss;
    uint8_t *mode;
    double *split;
    int64_t *lt;
    double *lw;
    int64_t *roots;
} AdNew;

static void ad_new_free(AdNew *t)
{
    free(t->feat); free(t->tnext); free(t->fnext); free(t->tleaf); free(t->fleaf);
    free(t->miss); free(t->mode); free(t->split); free(t->lt); free(t->lw);
    free(t->roots);
}

/* Appends an interior node; returns its index. */
static size_t ad_new_node(AdNew *t, int64_t feat, uint8_t mode, double split, int64_t miss)
{
    size_t i = t->n++;
    t->feat = mem_grow(t->feat, t->n, sizeof *t->feat);
    t->tnext = mem_grow(t->tnext, t->n, sizeof *t->tnext);
    t->fnext = mem_grow(t->fnext, t->n, sizeof *t->fnext);
    t->tleaf = mem_grow(t->tleaf, t->n, sizeof *t->tleaf);
    t->fleaf = mem_grow(t->fleaf, t->n, sizeof *t->fleaf);
    t->miss = mem_grow(t->miss, t->n, sizeof *t->miss);
    t->mode = mem_grow(t->mode, t->n, sizeof *t->mode);
    t->split = mem_grow(t->split, t->n, sizeof *t->split);
    t->feat[i] = feat;
    t->mode[i] = mode;
    t->split[i] = split;
    t->miss[i] = miss;
    t->tnext[i] = t->fnext[i] = t->tleaf[i] = t->fleaf[i] = 0;
    return i;
}

static size_t ad_new_leaf(AdNew *t, int64_t target, double w)
{
    size_t i = t->nl++;
    t->lt = mem_grow(t->lt, t->nl, sizeof *t->lt);
    t->lw = mem_grow(t->lw, t->nl, sizeof *t->lw);
    t->lt[i] = target;
    t->lw[i] = w;
    return i;
}

static void ad_new_root(AdNew *t, size_t node)
{
    t->roots = mem_grow(t->roots, t->nr + 1, sizeof *t->roots);
    t->roots[t->nr++] = (int64_t)node;
}

/* A tree that always reaches one leaf of (target, w): an interior node on
 * feature 0 whose both branches lead to it. */
static void ad_new_const_tree(AdNew *t, int64_t target, double w)
{
    size_t leaf = ad_new_leaf(t, target, w);
    size_t r = ad_new_node(t, 0, AD_BR_LEQ, 0.0, 0);
    t->tnext[r] = t->fnext[r] = (int64_t)leaf;
    t->tleaf[r] = t->fleaf[r] = 1;
    ad_new_root(t, r);
}

/* Converting one copy of an old tree: copy r takes weight r of each leaf
 * (a leaf with fewer weights gives +0 to target 0). */
typedef struct AdCopy {
    AdCtx *c;
    const AdOld *o;
    AdNew *t;
    size_t r;
    size_t *map, *lmap;        /* old node -> new node / leaf, per copy */
} AdCopy;

#define AD_UNSET SIZE_MAX
#define AD_BUSY (SIZE_MAX - 1)

static int ad_copy_ref(AdCopy *p, size_t i, size_t depth, int64_t *ref, int64_t *leaf);

/* Emits old interior node i. */
static int ad_copy_node(AdCopy *p, size_t i, size_t depth, int64_t *ref)
{
    const AdOld *o = p->o;
    if (p->map[i] == AD_BUSY)
        return ad_refuse(p->c, DG_ATTRIBUTE, "tree %lld has a cycle", (long long)o->tid[i]);
    if (p->map[i] != AD_UNSET) {
        *ref = (int64_t)p->map[i];
        return 0;
    }
    if (depth > AD_TE_MAX_DEPTH || p->t->n >= AD_TE_MAX_NODES)
        return ad_refuse(p->c, DG_SEMANTICS, "the trees are too deep or too large to rewrite");
    p->map[i] = AD_BUSY;
    size_t me = ad_new_node(p->t, o->feat[i], o->mode[i], o->thr[i], o->miss[i] != 0);
    int64_t tr, tl, fr, fl;
    if (ad_copy_ref(p, o->tidx[i], depth + 1, &tr, &tl) < 0 ||
        ad_copy_ref(p, o->fidx[i], depth + 1, &fr, &fl) < 0)
        return -1;
    p->t->tnext[me] = tr;
    p->t->tleaf[me] = tl;
    p->t->fnext[me] = fr;
    p->t->fleaf[me] = fl;
    p->map[i] = me;
    *ref = (int64_t)me;
    return 0;
}

/* The new reference of old node i: a node or (*leaf = 1) a leaf. */
static int ad_copy_ref(AdCopy *p, size_t i, size_t depth, int64_t *ref, int64_t *leaf)
{
    const AdOld *o = p->o;
    *leaf = o->mode[i] == AD_BR_LEAF;
    if (!*leaf)
        return ad_copy_node(p, i, depth, ref);
    if (p->lmap[i] == AD_UNSET) {
        size_t k = o->w_at[i] + p->r;
        p->lmap[i] = k < o->w_at[i + 1] ? ad_new_leaf(p->t, o->w_id[k], o->w_val[k])
                                        : ad_new_leaf(p->t, 0, 0.0);
    }
    *ref = (int64_t)p->lmap[i];
    return 0;
}

/* Most weights a leaf of the tree rooted at old node `root` holds
 * (leaves counted over the whole tree id). */
static size_t ad_old_max_weights(const AdOld *o, size_t root)
{
    size_t m = 0;
    for (size_t i = 0; i < o->n; i++)
        if (o->tid[i] == o->tid[root] && o->mode[i] == AD_BR_LEAF &&
            o->w_at[i + 1] - o->w_at[i] > m)
            m = o->w_at[i + 1] - o->w_at[i];
    return m;
}

/* Converts every old tree into t. With `replicate` (SUM), a tree whose
 * leaves hold up to m weights becomes m consecutive copies, copy r adding
 * each leaf's r-th weight: per target the additions happen in the same
 * order as the old op's. Otherwise every leaf must hold one weight. */
static int ad_old_to_new(AdCtx *c, const AdOld *o, AdNew *t, bool replicate)
{
    AdCopy p = {.c = c, .o = o, .t = t};
    p.map = mem_array(o->n, sizeof *p.map);
    p.lmap = mem_array(o->n, sizeof *p.lmap);
    int rc = 0;
    for (size_t tr = 0; tr < o->ntrees && rc == 0; tr++) {
        size_t root = o->roots[tr], m = ad_old_max_weights(o, root);
        for (size_t r = 0; r < m && rc == 0; r++) {
            for (size_t i = 0; i < o->n; i++)
                p.map[i] = p.lmap[i] = AD_UNSET;
            p.r = r;
            int64_t ref, leaf;
            rc = ad_copy_ref(&p, root, 0, &ref, &leaf);
            if (rc == 0 && leaf) {
                size_t d = ad_new_node(t, 0, AD_BR_LEQ, 0.0, 0);
                t->tnext[d] = t->fnext[d] = ref;
                t->tleaf[d] = t->fleaf[d] = 1;
                ref = (int64_t)d;
            }
            if (rc == 0)
                ad_new_root(t, (size_t)ref);
            if (!replicate)
                break;
        }
    }
    free(p.map);
    free(p.lmap);
    return rc;
}

/* Whether every leaf of o holds exactly one weight. */
static bool ad_old_one_weight(const AdOld *o)
{
    for (size_t i = 0; i < o->n; i++)
        if (o->mode[i] == AD_BR_LEAF && o->w_at[i + 1] - o->w_at[i] != 1)
            return false;
    return true;
}

/* Sets the TreeEnsemble-5 attributes of k from t; splits and weights as
 * float (checked exact) or double tensors. */
static int ad_new_write(AdCtx *c, IrNode *k, const AdNew *t, bool dbl, int64_t nt,
                        int64_t agg, int64_t post)
{
    if (!dbl && (!ad_ml_floats_exact(t->split, t->n) || !ad_ml_floats_exact(t->lw, t->nl)))
        return ad_refuse(c, DG_ATTRIBUTE,
                         "thresholds or weights are doubles that a float input's "
                         "tensors cannot hold");
    ad_set_attr_ints(c, k, "nodes_featureids", t->n, t->feat);
    ad_set_attr_ints(c, k, "nodes_truenodeids", t->n, t->tnext);
    ad_set_attr_ints(c, k, "nodes_falsenodeids", t->n, t->fnext);
    ad_set_attr_ints(c, k, "nodes_trueleafs", t->n, t->tleaf);
    ad_set_attr_ints(c, k, "nodes_falseleafs", t->n, t->fleaf);
    ad_set_attr_ints(c, k, "nodes_missing_value_tracks_true", t->n, t->miss);
    ad_set_attr_ints(c, k, "tree_roots", t->nr, t->roots);
    ad_set_attr_ints(c, k, "leaf_targetids", t->nl, t->lt);
    ad_ml_set_tensor(k, "nodes_modes", IR_UINT8, t->n, t->mode, 1);
    size_t es = dbl ? 8 : 4, most = t->n > t->nl ? t->n : t->nl;
    uint8_t *buf = mem_array(most ? most : 1, es);
    for (int pass = 0; pass < 2; pass++) {
        const double *v = pass ? t->lw : t->split;
        size_t n = pass ? t->nl : t->n;
        for (size_t i = 0; i < n; i++) {
            float f = (float)v[i];
            memcpy(buf + i * es, dbl ? (const void *)&v[i] : (const void *)&f, es);
        }
        ad_ml_set_tensor(k, pass ? "leaf_weights" : "nodes_splits",
                         dbl ? IR_DOUBLE : IR_FLOAT, n, buf, es);
    }
    free(buf);
    ad_set_attr_i(c, k, "n_targets", nt);
    ad_set_attr_i(c, k, "aggregate_function", agg);
    ad_set_attr_i(c, k, "post_transform", post);
    return 0;
}

/* ---- ai.onnx nodes inside an ml rewrite ---------------------------------- */

/* Whether the scope imports ai.onnx at an opset whose Cast takes an
 * integer `to` (6+); the rewrites below add Cast / ArgMax / Gather /
 * Constant nodes of that domain. They are not inferred here: the driver
 * walks ai.onnx.ml, and inference would read them at the ml opset. */
static int ad_ml_onnx_ok(AdCtx *c)
{
    int64_t v = ir_scope_opset(c->m, c->fn, "");
    if (v < 6)
        return ad_refuse(c, DG_NO_OLDER_FORM,
                         "the rewrite needs ai.onnx ops, and the model imports "
                         "ai.onnx %s", v < 0 ? "not at all" : "below opset 6");
    return 0;
}

static IrNode *ad_ml_onnx(AdCtx *c, const char *op, size_t n_in, IrValue *const *in)
{
    return ad_node_in(c, "", c->n, op, n_in, in, 1);
}

static IrNode *ad_ml_cast(AdCtx *c, IrValue *v, int64_t to)
{
    IrNode *k = ad_ml_onnx(c, "Cast", 1, &v);
    if (k)
        ad_set_attr_i(c, k, "to", to);
    return k;
}

/* Whether X's rows are known to hold at least one feature (X is [F] or
 * [N, F, ...]). */
static bool ad_ml_has_feature(const IrValue *x)
{
    const IrType *t = ad_type(x);
    if (!t || t->kind != IR_TYPE_TENSOR || !t->shape || t->shape->rank == 0)
        return false;
    size_t from = t->shape->rank == 1 ? 0 : 1;
    for (size_t i = from; i < t->shape->rank; i++)
        if (t->shape->dims[i].kind != IR_DIM_VALUE || t->shape->dims[i].value < 1)
            return false;
    return true;
}

/* Whether some node of o is a branch (its feature is then read on every
 * run, so X has at least one feature whenever the old op runs). */
static bool ad_old_has_branch(const AdOld *o)
{
    for (size_t i = 0; i < o->n; i++)
        if (o->mode[i] != AD_BR_LEAF)
            return true;
    return false;
}

/* ---- TreeEnsembleRegressor 3 -> 5 (-> TreeEnsemble) --------------------- */

/* The regressor's checked settings. */
typedef struct AdTerSet {
    int agg, post;
    int64_t nt;
    double *base;
    size_t nbase;
} AdTerSet;

static int ad_ter_settings(AdCtx *c, const AdOld *o, AdTerSet *s)
{
    char ab[32], pb[32];
    s->agg = ad_ml_name_index(ad_attr_s(c, "aggregate_function", ab, sizeof ab),
                              ad_agg_names, 4);
    s->post = ad_ml_name_index(ad_attr_s(c, "post_transform", pb, sizeof pb),
                               ad_post_names, 5);
    if (s->agg < 0 || s->post < 0)
        return ad_refuse(c, DG_ATTRIBUTE, "unknown aggregate_function or post_transform");
    /* without n_targets the output width is left to implementations */
    s->nt = ad_attr_i_or(c, "n_targets", -1);
    if (s->nt < 1)
        return ad_refuse(c, DG_ATTRIBUTE, "n_targets is absent or not positive");
    for (size_t k = 0; k < o->w_at[o->n]; k++)
        if (o->w_id[k] < 0 || o->w_id[k] >= s->nt)
            return ad_refuse(c, DG_ATTRIBUTE, "a target id is outside [0, n_targets)");
    if (ad_ml_dvec(c, "base_values", &s->base, &s->nbase) < 0)
        return -1;
    if (s->nbase && (int64_t)s->nbase != s->nt)
        return ad_refuse(c, DG_ATTRIBUTE, "base_values must hold n_targets values");
    return 0;
}

/* Whether every base value is 0. */
static bool ad_ter_base_zero(const AdTerSet *s)
{
    for (size_t j = 0; j < s->nbase; j++)
        if (s->base[j] != 0)
            return false;
    return true;
}

/* Builds TreeEnsemble(xin) with t's trees; *out is the node. */
static int ad_te_build(AdCtx *c, IrValue *xin, const AdNew *t, bool dbl, int64_t nt,
                       int agg, int post, IrNode **out)
{
    IrNode *te = ad_node_in(c, c->domain, c->n, "TreeEnsemble", 1, &xin, 1);
    if (!te || ad_new_write(c, te, t, dbl, nt, agg, post) < 0 || ad_infer(c, te) < 0)
        return -1;
    *out = te;
    return 0;
}

/* TreeEnsembleRegressor 3 -> 5: ai.onnx.ml 5 deprecates the op in favour
 * of TreeEnsemble, which keeps interior nodes and leaves apart (leaves
 * are (target, weight) pairs), takes tree_roots explicitly and codes
 * modes, aggregation and post transform as integers. The rewrite:
 * - trees in tree-id order, each rooted at its first node, branch nodes
 *   copied, leaves made TreeEnsemble leaves; a tree that is a single leaf
 *   gets an interior node on feature 0 whose both branches reach it;
 * - SUM: a tree whose leaves hold m weights becomes m copies (copy r adds
 *   the r-th weight, +0 to target 0 where a leaf has fewer), and each
 *   non-zero base value a last constant tree: the per-target additions
 *   happen in the old order. AVERAGE / MIN / MAX need one weight per leaf
 *   and zero base values (AVERAGE then divides each weight instead of the
 *   sum: the same mean, rounded in double);
 * - a float X keeps float thresholds and weights (they must be floats);
 *   a double or integer X runs a double TreeEnsemble on X (cast to double
 *   as the old op reads it) and casts the scores to float, rounding the
 *   same double once. An integer X with MIN / MAX is refused: the old op
 *   starts unreached targets at the float maximum there. */
static int ad_ter_3_5(AdCtx *c)
{
    IrValue *x = ad_in(c, 0);
    int32_t tx = ad_elem(x);
    if (tx != IR_FLOAT && tx != IR_DOUBLE && tx != IR_INT32 && tx != IR_INT64)
        return ad_refuse(c, tx ? DG_TYPE : DG_TYPE_UNKNOWN, "X's type must be known");
    bool dbl = tx != IR_FLOAT;
    if (dbl && ad_ml_onnx_ok(c) < 0)
        return -1;
    AdOld o;
    AdTerSet s = {0};
    AdNew t = {0};
    int rc = ad_old_parse(c, &o, "target");
    if (rc == 0)
        rc = ad_ter_settings(c, &o, &s);
    if (rc == 0 && s.agg != AD_AGG_SUM && (!ad_old_one_weight(&o) || !ad_ter_base_zero(&s)))
        rc = ad_refuse(c, DG_SEMANTICS, "AVERAGE/MIN/MAX need one weight per leaf and "
                       "zero base values");
    if (rc == 0 && dbl && tx != IR_DOUBLE && s.agg >= AD_AGG_MIN)
        rc = ad_refuse(c, DG_SEMANTICS, "an integer X with MIN/MAX starts unreached "
                       "targets at the float maximum");
    if (rc == 0)
        rc = ad_old_to_new(c, &o, &t, s.agg == AD_AGG_SUM);
    for (size_t j = 0; rc == 0 && s.agg == AD_AGG_SUM && j < s.nbase; j++)
        if (s.base[j] != 0)
            ad_new_const_tree(&t, (int64_t)j, s.base[j]);
    if (rc == 0 && t.nr == 0)
        rc = ad_refuse(c, DG_SEMANTICS, "no tree contributes a weight");
    if (rc == 0 && !ad_old_has_branch(&o) && !ad_ml_has_feature(x))
        rc = ad_refuse(c, DG_SHAPE_UNKNOWN, "X must be known to have a feature");
    IrNode *te = NULL, *cast = NULL;
    if (rc == 0) {
        IrNode *cx = tx == IR_FLOAT || tx == IR_DOUBLE ? NULL
                                                             : ad_ml_cast(c, x, IR_DOUBLE);
        rc = tx != IR_FLOAT && tx != IR_DOUBLE && !cx ? -1
             : ad_te_build(c, cx ? cx->out[0] : x, &t, dbl, s.nt, s.agg, s.post, &te);
    }
    if (rc == 0 && dbl && !(cast = ad_ml_cast(c, te->out[0], IR_FLOAT)))
        rc = -1;
    if (rc == 0)
        ad_replace(c, dbl ? cast : te);
    ad_old_free(&o);
    ad_new_free(&t);
    free(s.base);
    return rc;
}

/* ---- TreeEnsembleClassifier 3 -> 5 (-> TreeEnsemble, ArgMax, Gather) ---- */

/* A constant 1-D tensor of the class labels (int64 or strings), as an
 * ai.onnx Constant node. */
static IrNode *ad_tec_labels(AdCtx *c, const IrAttr *li, const IrAttr *ls)
{
    IrNode *k = ad_node_in(c, "", c->n, "Constant", 0, NULL, 1);
    if (!k)
        return NULL;
    size_t n = li ? li->n_ints : ls->n_strings;
    int64_t dim = (int64_t)n;
    IrTensor *t;
    if (li) {
        t = ir_tensor_new(NULL, IR_INT64, 1, &dim, li->ints, n * sizeof *li->ints);
    } else {
        t = ir_tensor_new(NULL, IR_STRING, 1, &dim, NULL, 0);
        t->has_raw = false;
        t->n_string = n;
        t->string_data = mem_array(n, sizeof *t->string_data);
        for (size_t i = 0; i < n; i++) {
            t->string_data[i].len = ls->strings[i].len;
            t->string_data[i].data = mem_alloc(ls->strings[i].len + 1);
            if (ls->strings[i].len)
                memcpy(t->string_data[i].data, ls->strings[i].data, ls->strings[i].len);
        }
    }
    ir_node_set_attr(k, ir_attr_tensor("value", t));
    return k;
}

/* The classifier's labels and checked settings. */
typedef struct AdTecSet {
    const IrAttr *li, *ls;
    size_t nl;
    int post;
    double *base;
    size_t nbase;
} AdTecSet;

static int ad_tec_settings(AdCtx *c, const AdOld *o, AdTecSet *s)
{
    char pb[32];
    s->li = ad_attr(c, "classlabels_int64s");
    s->ls = ad_attr(c, "classlabels_strings");
    if (s->li && s->li->n_ints == 0)
        s->li = NULL;
    if (s->ls && s->ls->n_strings == 0)
        s->ls = NULL;
    if (!s->li == !s->ls)
        return ad_refuse(c, DG_ATTRIBUTE, "exactly one class label list must be set");
    s->nl = s->li ? s->li->n_ints : s->ls->n_strings;
    s->post = ad_ml_name_index(ad_attr_s(c, "post_transform", pb, sizeof pb),
                               ad_post_names, 5);
    if (s->post < 0)
        return ad_refuse(c, DG_ATTRIBUTE, "unknown post_transform");
    size_t nw = o->w_at[o->n];
    bool binary = nw > 0;
    for (size_t k = 0; k < nw; k++) {
        if (o->w_id[k] < 0 || (size_t)o->w_id[k] >= s->nl)
            return ad_refuse(c, DG_ATTRIBUTE, "a class id is outside the labels");
        binary = binary && o->w_id[k] == o->w_id[0];
    }
    if (s->nl < 2 || binary)
        return ad_refuse(c, DG_SEMANTICS,
                         "a binary classifier (one label, or every weight on one "
                         "class) writes [1-s, s] or [-s, s]; TreeEnsemble has no "
                         "such output");
    if (ad_ml_dvec(c, "base_values", &s->base, &s->nbase) < 0)
        return -1;
    if (s->nbase && s->nbase != s->nl)
        return ad_refuse(c, DG_ATTRIBUTE, "base_values must hold one value per class");
    return 0;
}

/* TreeEnsembleClassifier 3 -> 5: ai.onnx.ml 5 deprecates the op; the spec
 * points to TreeEnsemble followed by ArgMax and a label lookup. The
 * classifier sums in double, starting from the base values, transforms
 * the row, takes the first largest score's label and rounds the scores to
 * float. Exactly that: X cast to double (how the classifier reads any X),
 * a double TreeEnsemble (base values as leading constant trees, trees as
 * for the regressor's SUM), ArgMax over the double scores (first maximum),
 * Gather of the labels, and the scores cast to float. Binary classifiers
 * are refused (their two-column output is special). */
static int ad_tec_3_5(AdCtx *c)
{
    IrValue *x = ad_in(c, 0);
    int32_t tx = ad_elem(x);
    if (tx != IR_FLOAT && tx != IR_DOUBLE && tx != IR_INT32 && tx != IR_INT64)
        return ad_refuse(c, tx ? DG_TYPE : DG_TYPE_UNKNOWN, "X's type must be known");
    if (ad_ml_onnx_ok(c) < 0)
        return -1;
    AdOld o;
    AdTecSet s = {0};
    AdNew t = {0};
    int rc = ad_old_parse(c, &o, "class");
    if (rc == 0)
        rc = ad_tec_settings(c, &o, &s);
    for (size_t j = 0; rc == 0 && j < s.nbase; j++)
        if (s.base[j] != 0)
            ad_new_const_tree(&t, (int64_t)j, s.base[j]);
    if (rc == 0)
        rc = ad_old_to_new(c, &o, &t, true);
    if (rc == 0 && t.nr == 0)
        rc = ad_refuse(c, DG_SEMANTICS, "no tree contributes a weight");
    if (rc == 0 && !ad_old_has_branch(&o) && !ad_ml_has_feature(x))
        rc = ad_refuse(c, DG_SHAPE_UNKNOWN, "X must be known to have a feature");
    IrNode *cx = NULL, *te = NULL, *z = NULL, *am = NULL, *lab = NULL, *y = NULL;
    if (rc == 0 && tx != IR_DOUBLE && !(cx = ad_ml_cast(c, x, IR_DOUBLE)))
        rc = -1;
    if (rc == 0)
        rc = ad_te_build(c, cx ? cx->out[0] : x, &t, true, (int64_t)s.nl, AD_AGG_SUM,
                         s.post, &te);
    if (rc == 0 && (!(z = ad_ml_cast(c, te->out[0], IR_FLOAT)) ||
                    !(am = ad_ml_onnx(c, "ArgMax", 1, te->out)) ||
                    !(lab = ad_tec_labels(c, s.li, s.ls))))
        rc = -1;
    if (rc == 0) {
        ad_set_attr_i(c, am, "axis", 1);
        ad_set_attr_i(c, am, "keepdims", 0);
        IrValue *in[2] = {lab->out[0], am->out[0]};
        if (!(y = ad_ml_onnx(c, "Gather", 2, in)))
            rc = -1;
    }
    if (rc == 0) {
        ad_set_attr_i(c, y, "axis", 0);
        ad_move_output(c, 0, y, 0);
        ad_move_output(c, 1, z, 0);
        ir_node_delete(c->n);
    }
    ad_old_free(&o);
    ad_new_free(&t);
    free(s.base);
    return rc;
}

/* ---- TreeEnsemble 5 -> below 5 (-> TreeEnsembleRegressor-3) -------------- */

/* A parsed TreeEnsemble-5. */
typedef struct AdTE {
    size_t n, nl, nr;
    const int64_t *feat, *tnext, *fnext, *tleaf, *fleaf, *miss, *roots, *lt;
    int64_t *mode;
    double *split, *lw, *mem;
    size_t nmem, *m_at, *m_len;
} AdTE;

static void ad_te_free(AdTE *T)
{
    free(T->mode);
    free(T->split);
    free(T->lw);
    free(T->mem);
    free(T->m_at);
    free(T->m_len);
}

/* TENSOR attribute `name` read as doubles (float/double) or int64s. */
static bool ad_te_tensor(AdCtx *c, const char *name, double **f, int64_t **i, size_t *n)
{
    const IrAttr *a = ad_attr(c, name);
    if (!a || !a->t)
        return false;
    return f ? ad_ml_tensor_f64(a->t, f, n) : ad_ml_tensor_i64(a->t, i, n);
}

/* The lists, tensors and membership sets of c->n, checked as the
 * TreeEnsemble evaluator checks them. */
static int ad_te_parse(AdCtx *c, AdTE *T)
{
    static const char *const req[] = {"nodes_featureids", "nodes_truenodeids",
                                      "nodes_falsenodeids", "nodes_trueleafs",
                                      "nodes_falseleafs"};
    const int64_t **dst[] = {&T->feat, &T->tnext, &T->fnext, &T->tleaf, &T->fleaf};
    size_t n = SIZE_MAX, k;
    memset(T, 0, sizeof *T);
    for (size_t i = 0; i < 5; i++)
        if (!(*dst[i] = ad_old_ints(c, req[i], &n)))
            return ad_refuse(c, DG_ATTRIBUTE, "%s is missing or its length differs", req[i]);
    T->n = n;
    size_t nm = n, nr = SIZE_MAX, nl = SIZE_MAX;
    T->miss = ad_old_ints(c, "nodes_missing_value_tracks_true", &nm);
    if (!T->miss && ad_attr(c, "nodes_missing_value_tracks_true") &&
        ad_attr(c, "nodes_missing_value_tracks_true")->n_ints)
        return ad_refuse(c, DG_ATTRIBUTE, "nodes_missing_value_tracks_true must match");
    if (!(T->roots = ad_old_ints(c, "tree_roots", &nr)) ||
        !(T->lt = ad_old_ints(c, "leaf_targetids", &nl)))
        return ad_refuse(c, DG_ATTRIBUTE, "tree_roots and leaf_targetids are required");
    T->nr = nr;
    T->nl = nl;
    if (!ad_te_tensor(c, "nodes_modes", NULL, &T->mode, &k) || k != n ||
        !ad_te_tensor(c, "nodes_splits", &T->split, NULL, &k) || k != n ||
        !ad_te_tensor(c, "leaf_weights", &T->lw, NULL, &k) || k != nl)
        return ad_refuse(c, DG_ATTRIBUTE, "nodes_modes / nodes_splits / leaf_weights "
                         "cannot be read or do not match");
    if (ad_attr(c, "membership_values") &&
        !ad_te_tensor(c, "membership_values", &T->mem, NULL, &T->nmem))
        return ad_refuse(c, DG_ATTRIBUTE, "membership_values cannot be read");
    T->m_at = mem_array(n ? n : 1, sizeof *T->m_at);
    T->m_len = mem_array(n ? n : 1, sizeof *T->m_len);
    size_t pos = 0;
    for (size_t i = 0; i < n; i++) {
        if (T->mode[i] < AD_BR_LEQ || T->mode[i] > AD_BR_MEMBER || T->feat[i] < 0)
            return ad_refuse(c, DG_ATTRIBUTE, "node %zu has an unknown mode or feature", i);
        size_t tl = T->tleaf[i] ? nl : n, fl = T->fleaf[i] ? nl : n;
        if (T->tnext[i] < 0 || (size_t)T->tnext[i] >= tl || T->fnext[i] < 0 ||
            (size_t)T->fnext[i] >= fl)
            return ad_refuse(c, DG_ATTRIBUTE, "node %zu branches out of range", i);
        if (T->mode[i] != AD_BR_MEMBER)
            continue;
        T->m_at[i] = pos;
        while (pos < T->nmem && !isnan(T->mem[pos]))
            pos++;
        if (pos >= T->nmem)
            return ad_refuse(c, DG_ATTRIBUTE, "membership_values lacks node %zu's set", i);
        T->m_len[i] = pos - T->m_at[i];
        pos++;
    }
    for (size_t t = 0; t < nr; t++)
        if (T->roots[t] < 0 || (size_t)T->roots[t] >= n)
            return ad_refuse(c, DG_ATTRIBUTE, "a tree root is not a node");
    return 0;
}

/* The TreeEnsembleRegressor being written. */
typedef struct AdOut {
    size_t n, nw;
    int64_t *tid, *nid, *feat, *tnext, *fnext, *miss, *mode;
    double *val;
    int64_t *wt, *wn, *wi;
    double *wv;
} AdOut;

static void ad_out_free(AdOut *o)
{
    free(o->tid); free(o->nid); free(o->feat); free(o->tnext); free(o->fnext);
    free(o->miss); free(o->mode); free(o->val);
    free(o->wt); free(o->wn); free(o->wi); free(o->wv);
}

/* Appends a node of tree `tree` with the next id; returns its index. */
static size_t ad_out_node(AdOut *o, int64_t tree, int64_t feat, int64_t mode, double v,
                          int64_t miss)
{
    size_t i = o->n++;
    o->tid = mem_grow(o->tid, o->n, sizeof *o->tid);
    o->nid = mem_grow(o->nid, o->n, sizeof *o->nid);
    o->feat = mem_grow(o->feat, o->n, sizeof *o->feat);
    o->tnext = mem_grow(o->tnext, o->n, sizeof *o->tnext);
    o->fnext = mem_grow(o->fnext, o->n, sizeof *o->fnext);
    o->miss = mem_grow(o->miss, o->n, sizeof *o->miss);
    o->mode = mem_grow(o->mode, o->n, sizeof *o->mode);
    o->val = mem_grow(o->val, o->n, sizeof *o->val);
    o->tid[i] = tree;
    o->nid[i] = i ? (o->tid[i - 1] == tree ? o->nid[i - 1] + 1 : 0) : 0;
    o->feat[i] = feat;
    o->mode[i] = mode;
    o->val[i] = v;
    o->miss[i] = miss;
    o->tnext[i] = o->fnext[i] = 0;
    return i;
}

typedef struct AdEmit {
    AdCtx *c;
    const AdTE *T;
    AdOut *o;
    int64_t tree;
} AdEmit;

static int ad_emit(AdEmit *e, size_t i, bool leaf, size_t depth, int64_t *id);

/* Emits the child (i, leaf) and stores its id as the true (or false)
 * branch of out node `at`. */
static int ad_emit_child(AdEmit *e, size_t at, bool t, size_t i, bool leaf, size_t depth)
{
    int64_t id;
    if (ad_emit(e, i, leaf, depth, &id) < 0)
        return -1;
    if (t)
        e->o->tnext[at] = id;
    else
        e->o->fnext[at] = id;
    return 0;
}

/* A BRANCH_MEMBER node as a chain of BRANCH_EQ nodes, one per set value,
 * all with the node's missing-value direction: the first equal value
 * takes the true branch, none takes the false one (an empty set: one
 * node that is never true for a number, v < -inf). */
static int ad_emit_member(AdEmit *e, size_t i, size_t depth, int64_t *id)
{
    const AdTE *T = e->T;
    size_t k = T->m_len[i];
    int64_t miss = T->miss ? T->miss[i] != 0 : 0;
    size_t at = ad_out_node(e->o, e->tree, T->feat[i], k ? AD_BR_EQ : AD_BR_LT,
                            k ? T->mem[T->m_at[i]] : -INFINITY, miss);
    *id = e->o->nid[at];
    for (size_t j = 0;; j++) {
        if (ad_emit_child(e, at, true, (size_t)T->tnext[i], T->tleaf[i], depth + 1) < 0)
            return -1;
        if (j + 1 >= k)
            return ad_emit_child(e, at, false, (size_t)T->fnext[i], T->fleaf[i], depth + 1);
        size_t nx = ad_out_node(e->o, e->tree, T->feat[i], AD_BR_EQ,
                                T->mem[T->m_at[i] + j + 1], miss);
        e->o->fnext[at] = e->o->nid[nx];
        at = nx;
    }
}

/* Emits node (or leaf) i of the TreeEnsemble as a fresh subtree of the
 * tree being written; *id is its node id. */
static int ad_emit(AdEmit *e, size_t i, bool leaf, size_t depth, int64_t *id)
{
    const AdTE *T = e->T;
    if (depth > AD_TE_MAX_DEPTH || e->o->n >= AD_TE_MAX_NODES)
        return ad_refuse(e->c, DG_SEMANTICS,
                         "the trees are too deep, cyclic or too large to rewrite");
    if (leaf) {
        size_t at = ad_out_node(e->o, e->tree, 0, AD_BR_LEAF, 0.0, 0);
        AdOut *o = e->o;
        size_t w = o->nw++;
        o->wt = mem_grow(o->wt, o->nw, sizeof *o->wt);
        o->wn = mem_grow(o->wn, o->nw, sizeof *o->wn);
        o->wi = mem_grow(o->wi, o->nw, sizeof *o->wi);
        o->wv = mem_grow(o->wv, o->nw, sizeof *o->wv);
        o->wt[w] = e->tree;
        o->wn[w] = o->nid[at];
        o->wi[w] = T->lt[i];
        o->wv[w] = T->lw[i];
        *id = o->nid[at];
        return 0;
    }
    if (T->mode[i] == AD_BR_MEMBER)
        return ad_emit_member(e, i, depth, id);
    size_t at = ad_out_node(e->o, e->tree, T->feat[i], T->mode[i], T->split[i],
                            T->miss ? T->miss[i] != 0 : 0);
    *id = e->o->nid[at];
    if (ad_emit_child(e, at, true, (size_t)T->tnext[i], T->tleaf[i], depth + 1) < 0)
        return -1;
    return ad_emit_child(e, at, false, (size_t)T->fnext[i], T->fleaf[i], depth + 1);
}

/* Writes the TreeEnsembleRegressor attributes of o onto c->n. */
static int ad_out_write(AdCtx *c, const AdOut *o, int64_t nt, int64_t agg, int64_t post)
{
    if (!ad_ml_floats_exact(o->val, o->n) || !ad_ml_floats_exact(o->wv, o->nw))
        return ad_refuse(c, DG_ATTRIBUTE, "splits, set values or weights are doubles "
                         "that TreeEnsembleRegressor's float lists cannot hold");
    IrNode *k = c->n;
    while (k->n_attr)
        ir_node_remove_attr(k, k->attr[0]->name);
    ad_set_attr_ints(c, k, "nodes_treeids", o->n, o->tid);
    ad_set_attr_ints(c, k, "nodes_nodeids", o->n, o->nid);
    ad_set_attr_ints(c, k, "nodes_featureids", o->n, o->feat);
    ad_set_attr_ints(c, k, "nodes_truenodeids", o->n, o->tnext);
    ad_set_attr_ints(c, k, "nodes_falsenodeids", o->n, o->fnext);
    ad_set_attr_ints(c, k, "nodes_missing_value_tracks_true", o->n, o->miss);
    const IrBytes **modes = mem_array(o->n ? o->n : 1, sizeof *modes);
    IrBytes names[8];
    for (size_t m = 0; m < 8; m++)
        names[m] = (IrBytes){strlen(ad_mode_names[m]), (uint8_t *)ad_mode_names[m]};
    for (size_t i = 0; i < o->n; i++)
        modes[i] = &names[o->mode[i]];
    ad_ml_set_strings(k, "nodes_modes", o->n, modes);
    free(modes);
    ad_ml_set_floats(k, "nodes_values", o->n, o->val);
    ad_set_attr_ints(c, k, "target_treeids", o->nw, o->wt);
    ad_set_attr_ints(c, k, "target_nodeids", o->nw, o->wn);
    ad_set_attr_ints(c, k, "target_ids", o->nw, o->wi);
    ad_ml_set_floats(k, "target_weights", o->nw, o->wv);
    ad_set_attr_i(c, k, "n_targets", nt);
    ad_set_attr_s(c, k, "aggregate_function", ad_agg_names[agg]);
    ad_set_attr_s(c, k, "post_transform", ad_post_names[post]);
    return 0;
}

/* TreeEnsemble-5 below ai.onnx.ml 5, as TreeEnsembleRegressor-3 (the op
 * it replaced), for a float X (the regressor's output is always float,
 * TreeEnsemble's has X's type). Each tree (tree id = its place in
 * tree_roots, so trees run in the same order) is written out from its
 * root, every reference making its own copy (shared nodes and leaves are
 * duplicated, so each tree is a proper tree whose root comes first);
 * a leaf becomes a LEAF node with one target weight; a BRANCH_MEMBER node
 * a chain of BRANCH_EQ nodes. Codes become names; nodes_hitrates (a
 * performance hint) is dropped. AVERAGE divides the sum once instead of
 * each weight: the same mean, rounded in double. */
static int ad_te_5_0(AdCtx *c)
{
    int32_t tx = ad_elem(ad_in(c, 0));
    if (tx != IR_FLOAT)
        return ad_refuse(c, tx ? DG_TYPE : DG_TYPE_UNKNOWN,
                         "only a float X keeps its output type: TreeEnsembleRegressor "
                         "always returns float");
    int64_t nt = ad_attr_i_or(c, "n_targets", -1), agg = ad_attr_i(c, "aggregate_function");
    int64_t post = ad_attr_i(c, "post_transform");
    if (nt < 1 || agg < 0 || agg > 3 || post < 0 || post > 4)
        return ad_refuse(c, DG_ATTRIBUTE, "n_targets, aggregate_function or "
                         "post_transform is invalid");
    AdTE T;
    AdOut o = {0};
    int rc = ad_te_parse(c, &T);
    for (size_t k = 0; rc == 0 && k < T.nl; k++)
        if (T.lt[k] < 0 || T.lt[k] >= nt)
            rc = ad_refuse(c, DG_ATTRIBUTE, "a leaf targets an id outside n_targets");
    AdEmit e = {.c = c, .T = &T, .o = &o};
    for (size_t t = 0; rc == 0 && t < T.nr; t++) {
        int64_t id;
        e.tree = (int64_t)t;
        rc = ad_emit(&e, (size_t)T.roots[t], false, 0, &id);
    }
    if (rc == 0 && o.n == 0)
        rc = ad_refuse(c, DG_SEMANTICS, "the ensemble has no tree");
    if (rc == 0)
        rc = ad_out_write(c, &o, nt, agg, post);
    if (rc == 0) {
        free(c->n->op_type);
        c->n->op_type = mem_strdup("TreeEnsembleRegressor");
        rc = ad_infer(c, c->n);
    }
    ad_te_free(&T);
    ad_out_free(&o);
    return rc;
}

static const AdEntry ad_ml[] = {
    AD_ML_UP("LabelEncoder", 1, 2, AD_SEMANTIC, ad_le_1_2),
    AD_ML_DOWN("LabelEncoder", 1, 2, AD_SEMANTIC, ad_le_2_1),
    AD_ML_UP("LabelEncoder", 2, 4, AD_ATTRS, ad_nothing),
    AD_ML_DOWN("LabelEncoder", 2, 4, AD_ATTRS, ad_le_4_2),
    AD_ML_UP("TreeEnsembleRegressor", 1, 3, AD_ATTRS, ad_nothing),
    AD_ML_DOWN("TreeEnsembleRegressor", 1, 3, AD_ATTRS, ad_te_3_1),
    AD_ML_UP("TreeEnsembleRegressor", 3, 5, AD_RENAME, ad_ter_3_5),
    AD_ML_DOWN("TreeEnsembleRegressor", 3, 5, AD_COMPATIBLE, NULL),
    AD_ML_UP("TreeEnsembleClassifier", 1, 3, AD_ATTRS, ad_nothing),
    AD_ML_DOWN("TreeEnsembleClassifier", 1, 3, AD_ATTRS, ad_te_3_1),
    AD_ML_UP("TreeEnsembleClassifier", 3, 5, AD_RENAME, ad_tec_3_5),
    AD_ML_DOWN("TreeEnsembleClassifier", 3, 5, AD_COMPATIBLE, NULL),
    AD_ML_GONE("TreeEnsemble", 5, AD_RENAME, ad_te_5_0),
};

const AdFamily ad_family_ml = {"ml", ad_ml, sizeof ad_ml / sizeof ad_ml[0]};
