/*
 * infer/ml.c - inference of the ai.onnx.ml ops (traditional ML). Most
 * take a batch X of [N, C] (a [C] input counts as one row, N = 1) and
 * give [N, ...]. Output element types that the generic step cannot bind
 * (they depend on class-label, key/value or cast attributes, or on the
 * input's type) are set here.
 */
#include "analysis/infer.h"

#include <stdlib.h>
#include <string.h>

/* ---- helpers ------------------------------------------------------- */

/* Whether the attribute is present with at least one element (ints,
 * floats or strings). */
static bool inf_attr_nonempty(const InfCtx *c, const char *name)
{
    const IrAttr *a = inf_attr(c, name);
    return a && (a->n_ints || a->n_floats || a->n_strings);
}

/* The batch size N of a [N, C] or [C] input into d; false when the rank
 * is unknown or not 1 or 2. */
static bool inf_batch_dim(const InfCtx *c, IrDim *d)
{
    const IrShape *in = inf_in_shape(c, 0);
    if (!in || (in->rank != 1 && in->rank != 2))
        return false;
    if (in->rank == 1)
        inf_dim_set(d, 1);
    else
        inf_dim_copy(d, &in->dims[0]);
    return true;
}

/* Output o becomes [N] (cols < -1), [N, ?] (cols == -1) or [N, cols],
 * with N from input 0; nothing when N's rank rule does not apply. */
static void inf_batch_out(InfCtx *c, size_t o, int64_t cols)
{
    IrDim n = {0};
    if (!inf_batch_dim(c, &n))
        return;
    IrShape *s = inf_out_shape(c, o, cols < -1 ? 1 : 2);
    if (s) {
        inf_dim_copy(&s->dims[0], &n);
        if (cols >= 0)
            inf_dim_set(&s->dims[1], cols);
    }
    inf_dim_unknown(&n);
}

/* The element type of class labels: string when classlabels_strings has
 * entries, else int64. */
static int32_t inf_label_elem(const InfCtx *c)
{
    return inf_attr_nonempty(c, "classlabels_strings") ? IR_STRING : IR_INT64;
}

/* Same shape as input 0 (element type from the generic step). */
static int inf_ml_same(InfCtx *c)
{
    return inf_same_as_input(c, 0);
}

/* ---- ops ----------------------------------------------------------- */

/* ArrayFeatureExtractor: X [..., C] with indices Y -> [..., |Y|]. A 1-D
 * X is left unknown (runtimes differ on it); so is the last dim of a
 * scalar Y. */
static int inf_array_feature_extractor(InfCtx *c)
{
    const IrShape *x = inf_in_shape(c, 0), *y = inf_in_shape(c, 1);
    if (!x || x->rank < 2)
        return 0;
    IrShape *s = inf_out_shape(c, 0, x->rank);
    for (size_t k = 0; s && k + 1 < x->rank; k++)
        inf_dim_copy(&s->dims[k], &x->dims[k]);
    if (s && y && y->rank > 0)
        inf_dims_product(&s->dims[x->rank - 1], y, 0, y->rank);
    return 0;
}

/* CastMap: map(int64, string|float) -> tensor of cast_to's type. The
 * shape depends on the map's size (dense) or max_map (sparse): left
 * unknown. */
static int inf_castmap(InfCtx *c)
{
    const char *to = inf_attr_s(c, "cast_to");
    int32_t e = 0;
    if (to && strcmp(to, "TO_FLOAT") == 0)
        e = IR_FLOAT;
    else if (to && strcmp(to, "TO_INT64") == 0)
        e = IR_INT64;
    else if (to && strcmp(to, "TO_STRING") == 0)
        e = IR_STRING;
    else
        return inf_fail(c, "attribute", "cast_to must be TO_FLOAT, TO_INT64 or TO_STRING");
    inf_out_elem(c, 0, e);
    return 0;
}

/* CategoryMapper: strings -> int64 or int64 -> strings, by the input's
 * type; same shape. */
static int inf_category_mapper(InfCtx *c)
{
    int32_t e = inf_in_elem(c, 0);
    if (e == IR_STRING)
        inf_out_elem(c, 0, IR_INT64);
    else if (e == IR_INT64)
        inf_out_elem(c, 0, IR_STRING);
    return inf_same_as_input(c, 0);
}

/* DictVectorizer: a map's values laid out by the vocabulary; the output's
 * element type is the map's value type (its shape is runtime-defined). */
static int inf_dict_vectorizer(InfCtx *c)
{
    const IrType *t = inf_in(c, 0);
    if (t && t->kind == IR_TYPE_MAP && t->elem && t->elem->kind == IR_TYPE_TENSOR &&
        t->elem->has_elem_type)
        inf_out_elem(c, 0, t->elem->elem_type);
    return 0;
}

/* FeatureVectorizer: inputs [N, C_i] (or [C_i] as one row) concatenated
 * along the second axis: [N, sum(inputdimensions)] of float. */
static int inf_feature_vectorizer(InfCtx *c)
{
    IrDim n = {0};
    if (!inf_batch_dim(c, &n))
        return 0;
    IrShape *s = inf_out_shape(c, 0, 2);
    if (s) {
        inf_dim_copy(&s->dims[0], &n);
        const int64_t *d;
        long cnt = inf_attr_ints(c, "inputdimensions", &d);
        int64_t sum = 0;
        bool ok = cnt > 0;
        for (long k = 0; ok && k < cnt; k++) {
            ok = d[k] >= 0 && sum <= INT64_MAX - d[k];
            sum += ok ? d[k] : 0;
        }
        if (ok)
            inf_dim_set(&s->dims[1], sum);
    }
    inf_dim_unknown(&n);
    return 0;
}

/* The element type LabelEncoder (version 2+) maps to: the one values_*
 * attribute present decides; 0 when none or several are. */
static int32_t inf_label_encoder_values(const InfCtx *c)
{
    int32_t e = 0;
    int found = 0;
    const IrAttr *t = c->since >= 4 ? inf_attr(c, "values_tensor") : NULL;
    if (t && t->t && t->t->has_data_type) {
        e = t->t->data_type;
        found++;
    }
    if (inf_attr(c, "values_strings")) {
        e = IR_STRING;
        found++;
    }
    if (inf_attr(c, "values_int64s")) {
        e = IR_INT64;
        found++;
    }
    if (inf_attr(c, "values_floats")) {
        e = IR_FLOAT;
        found++;
    }
    return found == 1 ? e : 0;
}

/* LabelEncoder: version 1 maps strings <-> int64 by the input's type;
 * later versions map to the type of the values_* attribute. Same shape. */
static int inf_label_encoder(InfCtx *c)
{
    int32_t e;
    if (c->since < 2) {
        int32_t in = inf_in_elem(c, 0);
        e = in == IR_STRING ? IR_INT64 : in == IR_INT64 ? IR_STRING : 0;
    } else {
        e = inf_label_encoder_values(c);
    }
    if (e)
        inf_out_elem(c, 0, e);
    return inf_same_as_input(c, 0);
}

/* LinearClassifier: labels [N] (string or int64 by the class-label
 * attribute) and scores [N, classes]: one per intercept, or 2 when a
 * single intercept serves two labels. */
static int inf_linear_classifier(InfCtx *c)
{
    int32_t le = inf_label_elem(c);
    inf_out_elem(c, 0, le);
    inf_out_elem(c, 1, IR_FLOAT);
    const float *icpt;
    long ni = inf_attr_floats(c, "intercepts", &icpt);
    const IrAttr *labels = inf_attr(c, le == IR_STRING ? "classlabels_strings"
                                                        : "classlabels_ints");
    size_t nl = labels ? (le == IR_STRING ? labels->n_strings : labels->n_ints) : 0;
    int64_t classes = ni > 0 ? ni : -1;
    if (ni == 1 && nl == 2)
        classes = 2;
    inf_batch_out(c, 0, -2);
    inf_batch_out(c, 1, classes);
    return 0;
}

/* LinearRegressor: [N, targets] of float. */
static int inf_linear_regressor(InfCtx *c)
{
    int64_t t = inf_attr_i(c, "targets");
    inf_batch_out(c, 0, t >= 0 ? t : -1);
    return 0;
}

/* OneHotEncoder: the input's shape plus one dim of the category count;
 * float. */
static int inf_onehot_encoder(InfCtx *c)
{
    const IrAttr *ints = inf_attr(c, "cats_int64s"), *strs = inf_attr(c, "cats_strings");
    if (ints && strs && ints->n_ints && strs->n_strings)
        return inf_fail(c, "attribute", "only one of cats_int64s and cats_strings "
                        "may be given");
    const IrShape *in = inf_in_shape(c, 0);
    if (!in)
        return 0;
    IrShape *s = inf_out_shape(c, 0, in->rank + 1);
    for (size_t k = 0; s && k < in->rank; k++)
        inf_dim_copy(&s->dims[k], &in->dims[k]);
    if (s && (ints != NULL) != (strs != NULL))
        inf_dim_set(&s->dims[in->rank], (int64_t)(ints ? ints->n_ints : strs->n_strings));
    return 0;
}

/* SVMClassifier, TreeEnsembleClassifier: labels [N] by the class-label
 * attribute, scores [N, ?] (the column count has binary special cases). */
static int inf_classifier(InfCtx *c)
{
    inf_out_elem(c, 0, inf_label_elem(c));
    inf_out_elem(c, 1, IR_FLOAT);
    inf_batch_out(c, 0, -2);
    inf_batch_out(c, 1, -1);
    return 0;
}

/* SVMRegressor: [N, ?] of float. */
static int inf_svm_regressor(InfCtx *c)
{
    inf_batch_out(c, 0, -1);
    return 0;
}

/* TreeEnsembleRegressor: [N, n_targets] of float. */
static int inf_tree_regressor(InfCtx *c)
{
    int64_t t = inf_attr_has(c, "n_targets") ? inf_attr_i(c, "n_targets") : -1;
    inf_batch_out(c, 0, t >= 0 ? t : -1);
    return 0;
}

/* TreeEnsemble (version 5): X [N, F] -> [N, n_targets] of X's type. */
static int inf_tree_ensemble(InfCtx *c)
{
    int r = inf_in_rank(c, 0);
    if (r >= 0 && r != 2)
        return inf_fail(c, "rank", "input must have rank 2, has %d", r);
    return inf_tree_regressor(c);
}

/* ZipMap: seq(map(K, float)) with K string or int64 by the class-label
 * attribute given. */
static int inf_zipmap(InfCtx *c)
{
    int r = inf_in_rank(c, 0);
    if (r >= 0 && r != 1 && r != 2)
        return inf_fail(c, "rank", "input must have rank 1 or 2, has %d", r);
    int32_t key = 0;
    if (inf_attr_nonempty(c, "classlabels_strings"))
        key = IR_STRING;
    if (inf_attr_nonempty(c, "classlabels_int64s"))
        key = key ? 0 : IR_INT64;
    if (!key)
        return 0;
    IrType *val = mem_alloc(sizeof *val);
    val->kind = IR_TYPE_TENSOR;
    val->has_elem_type = true;
    val->elem_type = IR_FLOAT;
    val->shape = ir_shape_new(0);
    IrType *map = mem_alloc(sizeof *map);
    map->kind = IR_TYPE_MAP;
    map->has_key_type = true;
    map->key_type = key;
    map->elem = val;
    IrType *seq = mem_alloc(sizeof *seq);
    seq->kind = IR_TYPE_SEQUENCE;
    seq->elem = map;
    inf_out_type(c, 0, seq);
    return 0;
}

const InfOp inf_ops_ml[] = {
    {"ai.onnx.ml", "ArrayFeatureExtractor", inf_array_feature_extractor},
    {"ai.onnx.ml", "Binarizer", inf_ml_same},
    {"ai.onnx.ml", "CastMap", inf_castmap},
    {"ai.onnx.ml", "CategoryMapper", inf_category_mapper},
    {"ai.onnx.ml", "DictVectorizer", inf_dict_vectorizer},
    {"ai.onnx.ml", "FeatureVectorizer", inf_feature_vectorizer},
    {"ai.onnx.ml", "Imputer", inf_ml_same},
    {"ai.onnx.ml", "LabelEncoder", inf_label_encoder},
    {"ai.onnx.ml", "LinearClassifier", inf_linear_classifier},
    {"ai.onnx.ml", "LinearRegressor", inf_linear_regressor},
    {"ai.onnx.ml", "Normalizer", inf_ml_same},
    {"ai.onnx.ml", "OneHotEncoder", inf_onehot_encoder},
    {"ai.onnx.ml", "SVMClassifier", inf_classifier},
    {"ai.onnx.ml", "SVMRegressor", inf_svm_regressor},
    {"ai.onnx.ml", "Scaler", inf_ml_same},
    {"ai.onnx.ml", "TreeEnsemble", inf_tree_ensemble},
    {"ai.onnx.ml", "TreeEnsembleClassifier", inf_classifier},
    {"ai.onnx.ml", "TreeEnsembleRegressor", inf_tree_regressor},
    {"ai.onnx.ml", "ZipMap", inf_zipmap},
    {NULL, NULL, NULL}};
