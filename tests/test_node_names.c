/*
 * test_node_names.c - converted models keep node names unique in each graph.
 *
 * ONNX Runtime refuses a graph with two nodes of one name ("This is an
 * invalid model. Error: two nodes with same node name"). The Loop bodies
 * that SequenceMap (below opset 17) and Scan (below 8) become got one
 * SequenceAt / Gather / Identity per input, all named after their op: 44
 * node-test conversions ORT refused (issue 19). This test converts backend
 * node tests whose expansion makes several such nodes and asks that every
 * graph (subgraphs included) has distinct non-empty node names and that the
 * result passes the check. Skips when the backend data is absent.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/check.h"
#include "convert/convert.h"
#include "corpus.h"
#include "ir/ir.h"
#include "io/load.h"
#include "t.h"

/* The first node name used twice in g or a graph below it, or NULL. */
static const char *dup_name(const IrGraph *g)
{
    for (const IrNode *a = g->first; a; a = a->next) {
        if (a->dead)
            continue;
        for (const IrNode *b = a->next; a->name && a->name[0] && b; b = b->next)
            if (!b->dead && b->name && !strcmp(a->name, b->name))
                return a->name;
        for (size_t i = 0; i < a->n_attr; i++) {
            const IrAttr *at = a->attr[i];
            const char *d = at->g ? dup_name(at->g) : NULL;
            for (size_t k = 0; !d && k < at->n_graphs; k++)
                d = dup_name(at->graphs[k]);
            if (d)
                return d;
        }
    }
    return NULL;
}

static void convert_case(const char *root, const char *name, int to)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/node/%s/model.onnx", root, name);
    IrModel *m = NULL;
    IrError err;
    if (load_model_file(path, NULL, &m, &err) != 0) {
        T_SKIP("%s: %s", name, err.msg);
        return;
    }
    CvOptions o = {.opset = to};
    CvReport r = {0};
    int rc = cv_convert(m, &o, &r, &err);
    cv_report_free(&r);
    T_CHECK(rc == 0, "%s -> %d converts (%s)", name, to, rc ? err.msg : "");
    if (rc == 0) {
        const char *d = dup_name(m->graph);
        T_CHECK(!d, "%s -> %d: node name '%s' is used twice in one graph", name, to,
                d ? d : "");
        ChkReport rep;
        size_t bad = chk_model(m, &rep);
        T_CHECK(bad == 0, "%s -> %d passes the check (%s)", name, to,
                chk_first_error(&rep) ? chk_first_error(&rep) : "");
        chk_report_free(&rep);
    }
    ir_model_free(m);
}

int main(void)
{
    const char *root = corpus_backend_root();
    if (!root) {
        T_SKIP("test_node_names: no ONNX backend test data");
        return t_done("test_node_names");
    }
    /* SequenceMap over two sequences: one SequenceAt per sequence */
    for (int t = 13; t <= 16; t++) {
        convert_case(root, "test_sequence_map_add_2_sequences", t);
        convert_case(root, "test_sequence_map_identity_2_sequences", t);
    }
    /* LinearAttention's Scan over several inputs, below Scan-8: one Gather
     * per scanned input */
    convert_case(root, "test_linear_attention_delta", 7);
    convert_case(root, "test_linear_attention_gated_delta_expanded", 7);
    return t_done("test_node_names");
}
