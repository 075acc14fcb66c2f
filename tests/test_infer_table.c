/*
 * test_infer_table.c - inference's op registry and attribute readers:
 * every op is registered in exactly one family table (inf_families), and
 * an attribute a node leaves out reads as the operator table's default at
 * the node's version (Softmax's axis is 1 before opset 13 and -1 from
 * 13, as the ONNX specification of each version says), else as 0 / NULL,
 * while the `_or` readers fall back to their argument only where the
 * table has no default.
 */
#include <stdio.h>
#include <string.h>

#include "analysis/infer.h"
#include "ir/ir.h"
#include "schema/opschema.h"
#include "t.h"

/* Counts the tables that register (domain, op). */
static int registrations(const char *domain, const char *op)
{
    int n = 0;
    for (size_t f = 0; f < inf_families_n; f++)
        for (const InfOp *o = inf_families[f].ops; o->op; o++)
            n += strcmp(o->domain, domain) == 0 && strcmp(o->op, op) == 0;
    return n;
}

static void test_families(void)
{
    size_t ops = 0;
    for (size_t f = 0; f < inf_families_n; f++) {
        T_CHECK(inf_families[f].name && inf_families[f].ops, "family %zu is empty", f);
        for (size_t g = f + 1; g < inf_families_n; g++)
            T_CHECK(strcmp(inf_families[f].name, inf_families[g].name) != 0,
                    "family '%s' is listed twice", inf_families[f].name);
        for (const InfOp *o = inf_families[f].ops; o->op; o++) {
            ops++;
            int n = registrations(o->domain, o->op);
            if (n != 1)
                T_CHECK(false, "%s:%s is registered %d times", o->domain, o->op, n);
            T_CHECK(os_versions(o->domain, o->op, &(size_t){0}) != NULL,
                    "%s:%s (family %s) is not in the operator table", o->domain,
                    o->op, inf_families[f].name);
        }
    }
    T_CHECK(ops > 200, "only %zu ops registered", ops);
}

/* A context for one node `op` of ai.onnx at `opset` in a fresh model. */
static IrError node_err;

static IrNode *node_at(IrModel *m, const char *op, InfCtx *c, int opset)
{
    static int made;
    char name[32];
    snprintf(name, sizeof name, "y%d", made++);
    const char *in[] = {"x"}, *out[] = {name};
    IrNode *n = ir_node_new(m->graph, NULL, op, "", name, 1, in, 1, out, &node_err);
    T_CHECK(n != NULL, "%s node not built: %s", op, node_err.msg);
    memset(c, 0, sizeof *c);
    c->model = m;
    c->node = n;
    c->schema = os_find("", op, opset);
    c->since = c->schema ? c->schema->since : 0;
    c->opset = opset;
    c->err = &node_err;
    return n;
}

static void test_defaults(void)
{
    IrModel *m = ir_model_new();
    m->graph = ir_graph_new(NULL);
    InfCtx c;
    node_at(m, "Softmax", &c, 11);
    T_CHECK(c.schema, "no Softmax-11 schema");
    T_CHECK(inf_attr_i(&c, "axis") == 1, "Softmax-11 axis reads %lld, not 1",
            (long long)inf_attr_i(&c, "axis"));
    T_CHECK(inf_attr_i_or(&c, "axis", 7) == 1, "the table's default must win over _or's");
    node_at(m, "Softmax", &c, 13);
    T_CHECK(inf_attr_i(&c, "axis") == -1, "Softmax-13 axis reads %lld, not -1",
            (long long)inf_attr_i(&c, "axis"));
    IrNode *n = node_at(m, "LeakyRelu", &c, 16);
    T_CHECK(inf_attr_f(&c, "alpha") > 0.0099f && inf_attr_f(&c, "alpha") < 0.0101f,
            "LeakyRelu-16 alpha reads %g, not 0.01", inf_attr_f(&c, "alpha"));
    ir_node_set_attr(n, ir_attr_float("alpha", 0.5f));
    T_CHECK(inf_attr_f(&c, "alpha") == 0.5f, "a present attribute must win");
    node_at(m, "Resize", &c, 19);
    const char *mode = inf_attr_s(&c, "mode");
    T_CHECK(mode && strcmp(mode, "nearest") == 0, "Resize-19 mode reads %s",
            mode ? mode : "NULL");
    /* Shape-15's end has no default: 0 without a fallback, else the fallback */
    node_at(m, "Shape", &c, 15);
    T_CHECK(inf_attr_i(&c, "end") == 0, "Shape-15 end without a default reads %lld",
            (long long)inf_attr_i(&c, "end"));
    T_CHECK(inf_attr_i_or(&c, "end", 5) == 5, "the fallback is not used");
    T_CHECK(inf_attr_s(&c, "no_such") == NULL, "an unknown string attribute is not NULL");
    ir_model_free(m);
}

int main(void)
{
    test_families();
    test_defaults();
    return t_done("infer_table");
}
