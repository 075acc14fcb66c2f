/*
 * test_adapter_attrs.c - the adapters' attribute readers take an absent
 * attribute's default from the operator table, at the node's version
 * (issue 21: each default lives once, in the table).
 *
 * Each case builds one node, points an AdCtx at the node's schema at a
 * given opset, and reads an attribute the node does or does not set. The
 * expected defaults are the ONNX spec's (Softmax's axis 1 became -1 in 13,
 * GRU-1 spells its default direction "foward"), not our program's output.
 */
#include <string.h>

#include "t.h"
#include "adapters/adapters.h"

typedef struct {
    IrModel *m;
    IrNode *n;
    AdCtx c;
    IrError err;
} Case;

/* A graph with one node `op` (input x, output y) and an AdCtx for it at
 * `opset`. Returns false when something could not be built. */
static bool case_new(Case *k, const char *op, int64_t opset)
{
    memset(k, 0, sizeof *k);
    k->m = ir_model_new();
    IrGraph *g = k->m->graph = ir_graph_new(NULL);
    const char *in[1] = {"x"}, *out[1] = {"y"};
    ir_graph_add_input(g, "x", ir_type_tensor(IR_FLOAT, 0, NULL));
    k->n = ir_node_new(g, NULL, op, "", "n0", 1, in, 1, out, &k->err);
    k->c.m = k->m;
    k->c.g = g;
    k->c.n = k->n;
    k->c.domain = "";
    k->c.from_opset = opset;
    k->c.from = os_find("", op, opset);
    k->c.err = &k->err;
    return k->n && k->c.from;
}

static void case_free(Case *k)
{
    ir_model_free(k->m);
}

/* Softmax: absent axis is 1 before 13 and -1 from 13; a set one wins. */
static void test_softmax_axis(void)
{
    Case k;
    T_CHECK(case_new(&k, "Softmax", 11), "Softmax-11 built");
    T_CHECK(ad_attr_i(&k.c, "axis") == 1, "Softmax-11 axis defaults to 1");
    case_free(&k);
    T_CHECK(case_new(&k, "Softmax", 13), "Softmax-13 built");
    T_CHECK(ad_attr_i(&k.c, "axis") == -1, "Softmax-13 axis defaults to -1");
    ir_node_set_attr(k.n, ir_attr_int("axis", 0));
    T_CHECK(ad_attr_i(&k.c, "axis") == 0, "a set axis is read as set");
    case_free(&k);
}

/* FLOAT and STRING defaults, and attributes the table has no default for. */
static void test_float_string_none(void)
{
    Case k;
    char buf[32];
    T_CHECK(case_new(&k, "LeakyRelu", 16), "LeakyRelu-16 built");
    T_CHECK(ad_attr_f(&k.c, "alpha") == 0.01f, "LeakyRelu alpha defaults to 0.01");
    T_CHECK(ad_attr_f(&k.c, "beta") == 0.0f, "an attribute the op lacks reads 0");
    T_CHECK(ad_attr_i_or(&k.c, "beta", 5) == 5, "_or gives its fallback when absent");
    case_free(&k);
    T_CHECK(case_new(&k, "GRU", 1), "GRU-1 built");
    const char *d = ad_attr_s(&k.c, "direction", buf, sizeof buf);
    T_CHECK(d && strcmp(d, "foward") == 0, "GRU-1 direction is the spec's \"foward\"");
    T_CHECK(ad_attr_i(&k.c, "hidden_size") == 0, "no default in the table reads 0");
    T_CHECK(ad_attr_s(&k.c, "activations", buf, sizeof buf) == NULL,
            "a list attribute without a string default reads NULL");
    case_free(&k);
    T_CHECK(case_new(&k, "GRU", 7), "GRU-7 built");
    d = ad_attr_s(&k.c, "direction", buf, sizeof buf);
    T_CHECK(d && strcmp(d, "forward") == 0, "GRU-7 direction defaults to forward");
    ir_node_set_attr(k.n, ir_attr_string("direction", "reverse"));
    d = ad_attr_s_or(&k.c, "direction", "x", buf, sizeof buf);
    T_CHECK(d && strcmp(d, "reverse") == 0, "a set string is copied");
    case_free(&k);
}

int main(void)
{
    test_softmax_axis();
    test_float_string_none();
    return t_done("test_adapter_attrs");
}
