/* test_pass_build - the text model builder the pass tests share works:
 * a Conv model builds, checks, runs and survives the default pipeline. */
#include "passes_build.h"

int main(void)
{
    IrModel *m = tb_model("opset 13\n"
                          "input x float n,3,8,8\n"
                          "init W float 4,3,3,3 rand\n"
                          "init b float 4 0.5\n"
                          "y = Conv x,W,b pads=[1,1,1,1] strides=[1,1]\n"
                          "z = LeakyRelu y alpha=0.2\n"
                          "output z\n");
    long ch;
    IrModel *o = tb_run(m, NULL, &ch);
    T_CHECK(o && ch == 0 && tb_count(o, "Conv") == 1, "builder: %ld changes", ch);
    T_CHECK(m->graph->n_nodes == 2, "builder: two nodes");
    ir_model_free(o);
    ir_model_free(m);
    return t_done("test_pass_build");
}
