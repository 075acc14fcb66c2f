/*
 * help.c - every --help text and --version (prefix cli_).
 *
 * These texts and the man page (src/cli/onnx-convert.1) are the command
 * line's documentation: tests/cli_help.py fails when an option of one is
 * missing from the other.
 */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "onnxconvert.h"

static const char cli_help_overview[] =
    "usage: onnx-convert COMMAND [OPTIONS]\n"
    "\n"
    "Converts ONNX models between operator-set versions, optimizes them, and\n"
    "checks with its own reference evaluator that they compute the same thing.\n"
    "\n"
    "commands:\n"
    "  convert   convert models to another opset, or write them back unchanged\n"
    "  optimize  fold constants, remove what computes nothing, fuse patterns\n"
    "  check     validate models against the ONNX rules\n"
    "  info      describe a model\n"
    "  run       evaluate a model on input files\n"
    "  test      run an ONNX backend-test case folder and compare its outputs\n"
    "  compare   run two models on the same inputs, judge them, and name the\n"
    "            first node where they part\n"
    "\n"
    "  onnx-convert COMMAND --help   the options of one command\n"
    "  onnx-convert help COMMAND     the same\n"
    "  onnx-convert --version        the version, the newest opsets and IR\n"
    "\n"
    "Every option with a value takes --name VALUE or --name=VALUE. A model\n"
    "path of - is standard input (convert, optimize, check, info), and -o -\n"
    "writes the model to standard output.\n"
    "\n"
    "Exit status: 0 done; 1 a model was rejected or an operation is not\n"
    "possible (one line on stderr per model, naming it, no output file left\n"
    "behind); 2 usage error (one line, and where to read more).\n";

/* The precision options, the same for convert and optimize. */
#define CLI_HELP_PRECISION \
    "  --dtype T               make float values T (float16, bfloat16: from\n" \
    "                          float32; float32: from float16 and bfloat16);\n" \
    "                          a node whose schema lacks T keeps its type\n" \
    "                          between Casts (docs/precision.md)\n" \
    "  --keep-io-types         --dtype: graph inputs and outputs keep their\n" \
    "                          type (Casts inside)\n" \
    "  --keep-float32 OP,...   --dtype: these ops keep their type\n" \
    "  --keep-float32-node NAME,...\n" \
    "                          --dtype: these nodes keep their type\n" \
    "  --auto                  --dtype float16|bfloat16: keep in float32 the\n" \
    "                          fewest nodes needed for the outputs to stay\n" \
    "                          within --rtol/--atol of the original's, found\n" \
    "                          by evaluating both (docs/precision.md)\n" \
    "  --rtol R, --atol A      --auto: the tolerance, |got - want| <= atol *\n" \
    "                          scale + rtol * |want|, scale an output's largest\n" \
    "                          |want| (default rtol 1e-2; atol the type's:\n" \
    "                          3e-2 float16, 1.25e-1 bfloat16)\n" \
    "  --inputs DIR            --auto: evaluate on DIR's input_K.pb (default:\n" \
    "                          seeded random inputs, as --verify)\n" \
    "  --dtype-strict          --dtype, --store: refuse a weight outside the\n" \
    "                          new type's range instead of clamping it\n" \
    "  --store float16         store float32 weights of 16 elements or more as\n" \
    "                          float16 behind a Cast to float32 (not with\n" \
    "                          --dtype): the file halves, the computation stays\n" \
    "                          float32\n"

static const char cli_help_convert[] =
    "usage: onnx-convert convert IN.onnx -o OUT.onnx [OPTIONS]\n"
    "       onnx-convert convert IN... --out-dir DIR [-j N] [OPTIONS]\n"
    "\n"
    "Converts ai.onnx (and ai.onnx.ml) to another opset one step at a time,\n"
    "in every graph and function, and refuses, naming node, op, step and\n"
    "reason, whatever it cannot convert exactly. Without --opset, --opset-ml\n"
    "or --ir-version it writes the model back unchanged.\n"
    "\n"
    "  -o OUT.onnx             where to write the model (-: standard output)\n"
    "  --out-dir DIR           batch mode: convert every IN (a model, or a\n"
    "                          folder searched for *.onnx 64 levels deep; a\n"
    "                          deeper folder is reported as a failure) into\n"
    "                          DIR, keeping the paths below each folder; a\n"
    "                          model that fails does not stop the others\n"
    "  -j N                    batch mode: run N models at a time (default 1)\n"
    "  --opset N               convert ai.onnx to opset N\n"
    "  --opset-ml N            convert ai.onnx.ml to opset N\n"
    "  --ir-version N          write IR version N exactly (3..14, not below\n"
    "                          what the target opsets need: else a usage\n"
    "                          error); below 8, model-local functions are\n"
    "                          inlined at every call. Default: the lowest IR\n"
    "                          holding the target opsets and the model's\n"
    "                          content, never below the input's unless an\n"
    "                          opset goes down; annotation-only fields it\n"
    "                          lacks (metadata_props, ...) are dropped and\n"
    "                          reported; types it lacks are refused\n"
    "  --keep-metadata         keep annotation-only fields and the IR that\n"
    "                          holds them instead of dropping them\n"
    "  --expand OP[,OP...]     then rewrite these ops with older ops even where\n"
    "                          the target has them (for runtimes that lack\n"
    "                          them); the ops that can be expanded are listed\n"
    "                          at the end\n"
    "  --optimize              run the optimizer after converting\n"
    "  --passes a,b,c          run these passes, in this order (implies\n"
    "                          --optimize; optimize --list-passes names them)\n"
    "  --stats                 print how many changes each pass made\n"
    "  --input-shape NAME=D,.. give input NAME these static dims (repeat for\n"
    "                          several inputs) before converting, so that\n"
    "                          values computed from shapes (Upsample/Resize\n"
    "                          scales, Expand/Reshape shapes) are known and\n"
    "                          more of the graph converts and folds\n"
    "  (default)               verify: evaluate the model before and after on\n"
    "                          the case's inputs (IN's folder/test_data_set_0)\n"
    "                          or seeded random ones and fail on a difference\n"
    "                          past the tolerance and the original's own\n"
    "                          rounding noise; a conversion exact by\n"
    "                          construction is not evaluated; what cannot be\n"
    "                          verified within the budget is reported\n"
    "  --verify                verify always: no budget, fail when it cannot\n"
    "  --no-verify             do not verify\n"
    "  --verify-budget SECONDS verification by default stops here (default 30)\n"
    "  --max-memory BYTES      --verify: the evaluator's memory at most BYTES\n"
    "                          (suffix K, M, G; default 3/4 of physical memory;\n"
    "                          random inputs get at most a quarter, 256M unless\n"
    "                          given)\n"
    "  --max-steps N           --verify: at most N node runs, every Loop and\n"
    "                          Scan iteration counted (default 1073741824)\n"
    "  --threads N             --verify: the evaluator's threads (default: the\n"
    "                          machine's cores); outputs do not depend on it\n"
    "  --timeout SECONDS       --verify: at most this long per run (default\n"
    "                          600); batch mode: a model's worker past it is\n"
    "                          stopped and reported (error, stage run, timeout)\n"
    CLI_HELP_PRECISION
    "  --infer-shapes          check the model and write the inferred types of\n"
    "                          intermediate values as value_info\n"
    "  --to coreml|onnx        the output's format: coreml writes a Core ML ML\n"
    "                          Program package (a folder, -o OUT.mlpackage):\n"
    "                          the model is converted to opset 17, then each\n"
    "                          node lowered to MIL ops; --verify judges the\n"
    "                          package by its import. Default: coreml when -o\n"
    "                          names *.mlpackage, else onnx\n"
    "  --coreml-target T       --to coreml: the Core ML target (iOS15, iOS16,\n"
    "                          iOS17, iOS18, iOS26); default: the lowest whose\n"
    "                          MIL opset has every op the model needs, named\n"
    "                          in the report; a lower one is refused, naming\n"
    "                          the node, the MIL op and its first target\n"
    "  --external-data FILE    write every tensor of at least BYTES to FILE,\n"
    "                          beside the output (not with --out-dir)\n"
    "  --external-threshold BYTES\n"
    "                          the size for --external-data (default 1024)\n"
    "  --json                  print a JSON report instead of text\n"
    "  -h, --help              this help\n"
    "\n"
    "IN may be a Core ML package (IN.mlpackage, a folder): it is imported to\n"
    "ONNX at opset 17 first, then converted as --opset says (docs/coreml.md).\n"
    "\n"
    "What an IR version keeps, drops and refuses: docs/converter.md.\n"
    "Dropped fields are listed on one line (\"dropped to fit IR N: ...\") and\n"
    "in --json's \"dropped\".\n"
    "\n"
    "Batch mode prints a progress line on stderr when it is a terminal, each\n"
    "failure as it happens, and a table at the end (on stderr with --json);\n"
    "the exit status is 0 only when every model was converted.\n";

static const char cli_help_optimize[] =
    "usage: onnx-convert optimize IN.onnx -o OUT.onnx [OPTIONS]\n"
    "       onnx-convert optimize IN... --out-dir DIR [-j N] [OPTIONS]\n"
    "       onnx-convert optimize --list-passes\n"
    "\n"
    "Folds constants and shapes, removes what computes nothing and fuses\n"
    "patterns into standard ops of the model's opset, in every graph and\n"
    "function, until a round changes nothing. A graph's inputs and outputs\n"
    "keep their names, types and order.\n"
    "\n"
    "  -o OUT.onnx             where to write the model (-: standard output;\n"
    "                          OUT.mlpackage: a Core ML package, written as\n"
    "                          convert writes one, after optimizing)\n"
    "  --out-dir DIR           batch mode, as in convert\n"
    "  -j N                    batch mode: run N models at a time (default 1)\n"
    "  --passes a,b,c          run these passes, in this order\n"
    "  --list-passes           print every pass and what it does\n"
    "  --stats                 print how many changes each pass made\n"
    "  --input-shape NAME=D,.. give input NAME these static dims (repeat for\n"
    "                          several inputs), so that more of the graph folds\n"
    "  (default)               verify: evaluate the model before and after and\n"
    "                          fail on a difference past the tolerance and the\n"
    "                          original's own rounding noise; what cannot be\n"
    "                          verified within the budget is reported\n"
    "  --verify                verify always: no budget, fail when it cannot\n"
    "  --no-verify             do not verify\n"
    "  --verify-budget SECONDS verification by default stops here (default 30)\n"
    "  --max-memory BYTES      --verify: the evaluator's memory at most BYTES\n"
    "                          (suffix K, M, G; default 3/4 of physical memory;\n"
    "                          random inputs get at most a quarter, 256M unless\n"
    "                          given)\n"
    "  --max-steps N           --verify: at most N node runs, every Loop and\n"
    "                          Scan iteration counted (default 1073741824)\n"
    "  --threads N             --verify: the evaluator's threads (default: the\n"
    "                          machine's cores); outputs do not depend on it\n"
    "  --timeout SECONDS       --verify: at most this long per run (default\n"
    "                          600); batch mode: a model's worker past it is\n"
    "                          stopped and reported (error, stage run, timeout)\n"
    CLI_HELP_PRECISION
    "  --infer-shapes          write the inferred types of intermediate values\n"
    "                          as value_info\n"    "  --keep-metadata         accepted as in convert (optimize keeps the\n"
    "                          model's IR and everything it holds)\n"
    "  --external-data FILE    write every tensor of at least BYTES to FILE,\n"
    "                          beside the output (not with --out-dir)\n"
    "  --external-threshold BYTES\n"
    "                          the size for --external-data (default 1024)\n"
    "  --json                  print a JSON report instead of text\n"
    "  -h, --help              this help\n";

static const char cli_help_check[] =
    "usage: onnx-convert check MODEL... [--all] [--strict] [--json] [-j N]\n"
    "\n"
    "Validates models against the ONNX rules and those onnx.checker misses.\n"
    "Prints the first rule a model breaks (--all: every one) and exits 1, or\n"
    "says it is valid. A MODEL may be a folder, searched for *.onnx 64\n"
    "levels deep (a deeper folder is reported as a failure); with a folder\n"
    "or several models a table follows. Defects other tools write that ONNX\n"
    "Runtime accepts (docs/tolerated.md) are warnings: the model is valid,\n"
    "and convert and optimize repair them.\n"
    "\n"
    "  --all                   print every broken rule, not only the first\n"
    "  --strict                refuse the tolerated defects too (exit 1)\n"
    "  --json                  print a JSON report instead of text\n"
    "  -j N                    check N models at a time (default 1)\n"
    "  -h, --help              this help\n";

static const char cli_help_info[] =
    "usage: onnx-convert info MODEL.onnx [--json] [--targets]\n"
    "\n"
    "Describes a model: IR version, producer, opset imports, operator counts,\n"
    "initializers, inputs and outputs with declared and inferred types,\n"
    "functions and subgraphs.\n"
    "\n"
    "  --json                  print the description as JSON\n"
    "  --targets               run convert's checks (writing nothing) for every\n"
    "                          ai.onnx opset as --opset, and every ai.onnx.ml\n"
    "                          opset as --opset-ml when the model imports it;\n"
    "                          print per target yes, or convert's refusal\n"
    "                          (with --json: per domain and target the status\n"
    "                          and convert's error object)\n"
    "  -h, --help              this help\n";

/* The evaluator's budgets, the same for run, test and compare; `timeout`
 * says what --timeout stops. */
#define CLI_HELP_BUDGETS(timeout) \
    "  --max-memory BYTES      evaluate within BYTES of values alive at once\n" \
    "                          (suffix K, M, G; default 3/4 of physical memory)\n" \
    "  --max-steps N           at most N node runs, every Loop and Scan\n" \
    "                          iteration counted (default 1073741824)\n" \
    "  --threads N             the evaluator's threads (default: the machine's\n" \
    "                          cores); outputs do not depend on it\n" \
    "  --timeout SECONDS       " timeout "\n" \
    "  -h, --help              this help\n";

static const char cli_help_run[] =
    "usage: onnx-convert run MODEL.onnx --inputs DIR -o OUTDIR [--seed N]\n"
    "\n"
    "Evaluates the model with the reference evaluator on DIR/input_K.pb and\n"
    "writes OUTDIR/output_K.pb (written only when the whole model ran).\n"
    "\n"
    "  --inputs DIR            the folder of input_0.pb, input_1.pb, ...\n"
    "  -o OUTDIR               the folder to write output_K.pb into\n"
    "  --seed N                the seed of random ops (default 0)\n"
    CLI_HELP_BUDGETS("stop after this long (default: no limit)")

static const char cli_help_test[] =
    "usage: onnx-convert test CASE_DIR [--model OTHER.onnx] [--rtol R]\n"
    "                         [--atol A]\n"
    "\n"
    "Runs every test_data_set_* of an ONNX backend-test case folder with its\n"
    "model.onnx and compares the outputs: |got - want| <= atol + rtol*|want|\n"
    "for floats (NaN equals NaN), exact for the other types.\n"
    "\n"
    "  --model OTHER.onnx      run this model instead (a converted one)\n"
    "  --rtol R                relative tolerance (default 1e-3)\n"
    "  --atol A                absolute tolerance (default 1e-7)\n"
    CLI_HELP_BUDGETS("stop each run after this long (default: no limit)")

static const char cli_help_compare[] =
    "usage: onnx-convert compare A.onnx B.onnx [--inputs DIR] [--json]\n"
    "\n"
    "Runs both models on the same inputs (paired by position) and judges B\n"
    "against A as convert's verification judges a conversion: each float\n"
    "output within the tolerance or within a few times A's own rounding\n"
    "noise (A computed again in float64), the rest exactly. When they differ,\n"
    "both are run again and the first node of A, in its order, whose output\n"
    "(a value of the same name in B) leaves that floor is named, with the\n"
    "nodes before it that B does not have. Exit 0 equal, 1 differ or\n"
    "could not run (the reason on stderr).\n"
    "\n"
    "  --inputs DIR            evaluate on DIR's input_K.pb (default: seeded\n"
    "                          random inputs; open dims 2, or 8, 32, 128, 512\n"
    "                          while A refuses them)\n"
    "  --input-shape NAME=DIMS fix the open dims of input NAME in both\n"
    "  --rtol R, --atol A      the tolerance (default 1e-3 and 1e-5; a model\n"
    "                          in float16 or bfloat16 against a wider one:\n"
    "                          that type's)\n"
    "  --seed N                the seed of random inputs and ops (default 1)\n"
    "  --json                  the report as one JSON object (docs/json.md)\n"
    CLI_HELP_BUDGETS("stop each run after this long (default: no limit)")

static const struct {
    const char *command, *text;
} cli_helps[] = {
    {"convert", cli_help_convert}, {"optimize", cli_help_optimize},
    {"check", cli_help_check},     {"info", cli_help_info},
    {"run", cli_help_run},         {"test", cli_help_test},
    {"compare", cli_help_compare},
};

/* The ops --expand takes, from the adapter table, wrapped at 72 columns. */
static void cli_help_expandable(FILE *f)
{
    char ops[2048];
    cv_expandable(ops, sizeof ops);
    fputs("\nOps --expand can rewrite:", f);
    size_t col = 80;
    for (char *p = strtok(ops, ","); p; p = strtok(NULL, ",")) {
        if (col + strlen(p) + 1 > 72) {
            fputs("\n ", f);
            col = 1;
        }
        fprintf(f, " %s", p);
        col += strlen(p) + 1;
    }
    fputc('\n', f);
}

void cli_help(FILE *f, const char *command)
{
    for (size_t i = 0; command && i < sizeof cli_helps / sizeof cli_helps[0]; i++)
        if (!strcmp(cli_helps[i].command, command)) {
            fputs(cli_helps[i].text, f);
            if (!strcmp(command, "convert"))
                cli_help_expandable(f);
            return;
        }
    fputs(cli_help_overview, f);
}

/* One line of what is wrong, and where the whole story is: the help of
 * forty lines would bury the line that matters. */
int cli_usage(const char *command, const char *msg)
{
    if (msg)
        fprintf(stderr, "onnx-convert: %s\n", msg);
    if (command)
        fprintf(stderr, "see onnx-convert %s --help\n", command);
    else
        fputs("see onnx-convert --help\n", stderr);
    return CLI_USAGE;
}

void cli_version(FILE *f)
{
    fprintf(f, "onnx-convert %s\n", oc_version());
    fprintf(f, "newest opsets: ai.onnx %lld, ai.onnx.ml %lld\n",
            (long long)oc_newest_opset(""), (long long)oc_newest_opset("ai.onnx.ml"));
    fprintf(f, "newest IR version: %lld\n", (long long)oc_newest_ir_version());
    bool repicked;
    const char *kernels = ev_blas_kernels(&repicked);
    if (kernels)
        fprintf(f, "evaluator products: OpenBLAS, %s kernels%s\n", kernels,
                repicked ? " (chosen by the CPU's features: the library does not know "
                           "this CPU model)" : "");
}
