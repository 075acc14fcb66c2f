#!/bin/sh
# Runs every test program of a normal build and of the sanitized build, and
# the command-line scripts, then prints the sum as "N passed, N failed,
# N skipped" after naming what was skipped.
# Usage: tests/run.sh BUILD_DIR ASAN_DIR [CLANG_DIR]   (from the project root)
#
# A skip is what a test could not run on this machine (no ../shared, no
# ONNX Runtime): a program says so with a line "SKIP what: why" and
# ", N skipped" after its counts, or, when it ran nothing at all, with the
# one line "NAME: skipped (why)". Skips are never failures.
build=${1:-build}
asan=${2:-build-asan}
clang=${3:-build-clang}
passed=0
failed=0
skipped=0
took=""
start=$(date +%s)
log=$(mktemp)
skips=$(mktemp)
trap 'rm -f "$log" "$skips"' EXIT

# Adds the counts of one "name: N passed, N failed[, N skipped]" line; a
# program that crashed or printed no such line counts as one failure,
# unless it said that it skipped everything.
tally() {
    name=$1 status=$2
    line=$(grep -E '^[A-Za-z0-9_.-]+: [0-9]+ passed, [0-9]+ failed' "$log" | tail -n 1)
    whole=$(grep -E '^[A-Za-z0-9_./-]+: skipped \(.*\)$' "$log" | tail -n 1)
    if [ -z "$line" ] && [ -n "$whole" ] && [ "$status" -eq 0 ]; then
        echo "$name: skipped (${whole#*(}$took"
        echo "$name (${whole#*(}" >> "$skips"
        skipped=$((skipped + 1))
        return
    fi
    if [ -z "$line" ]; then
        echo "$name: no result line (exit status $status)$took"
        tail -n 5 "$log"
        failed=$((failed + 1))
        return
    fi
    p=$(echo "$line" | sed -E 's/.*: ([0-9]+) passed, ([0-9]+) failed.*/\1/')
    f=$(echo "$line" | sed -E 's/.*: ([0-9]+) passed, ([0-9]+) failed.*/\2/')
    s=$(echo "$line" | sed -n -E 's/.*, ([0-9]+) skipped.*/\1/p')
    if [ "$status" -ne 0 ] && [ "$f" -eq 0 ]; then
        f=1  # exited non-zero (a sanitizer report) after counting nothing failed
    fi
    if [ -n "$s" ] && [ "$s" -gt 0 ]; then
        echo "$name: $p passed, $f failed, $s skipped$took"
        grep -E '^SKIP ' "$log" | sed "s|^SKIP \(.*\)|\1  [$name]|" >> "$skips"
        skipped=$((skipped + s))
    else
        echo "$name: $p passed, $f failed$took"
    fi
    [ "$f" -eq 0 ] || grep -E '^(FAIL|ERROR|==[0-9]+==|.*runtime error)' "$log" | head -n 20
    passed=$((passed + p))
    failed=$((failed + f))
}

# Runs one test and tallies it; its wall time is printed after its line,
# so that the slow tests stand out when make check nears its budget
# (30 minutes on 2 cores).
run() {
    name=$1
    shift
    t0=$(date +%s)
    "$@" >"$log" 2>&1
    st=$?
    took="  [$(( $(date +%s) - t0 )) s]"
    tally "$name" $st
}

# ONNX Runtime and Apple's loader, installed where ../shared cannot hold
# them (CI's copy is read-only) and named in OC_ORT_DIR/OC_CT_DIR/NODE_PATH
# for every test below
. tests/judges.sh >"$log" 2>&1
echo "$judges_result" >>"$log"
took=""
tally judges 0
grep -E '^judges: .*ready' "$log"

# The sanitized builds' test programs run beside everything else, one
# sequence on each of the two cores make check is given (they are a third
# of its time): in a background job with its own log, printing its lines
# into $side_out and its sums into $side_sum, shown and added at the end.
sanitized() {
    log=$(mktemp)
    passed=0 failed=0 skipped=0
    for t in "$asan"/tests/test_*; do
        [ -x "$t" ] && ASAN_OPTIONS=detect_leaks=1 run "asan/$(basename "$t")" "$t"
    done
    # the same tests built by clang (float-cast-overflow too), but the
    # whole-corpus sweeps the Makefile names in CLANG_SWEEPS (gcc's
    # sanitized build runs them; a binary left from an older build is not
    # run either)
    for t in "$clang"/tests/test_*; do
        case " ${CLANG_SWEEPS:-} " in
        *" $(basename "$t") "*) continue ;;
        esac
        [ -x "$t" ] && ASAN_OPTIONS=detect_leaks=1 run "clang/$(basename "$t")" "$t"
    done
    rm -f "$log"
    echo "$passed $failed $skipped" >"$side_sum"
}
side_out=$(mktemp)
side_sum=$(mktemp)
trap 'rm -f "$log" "$skips" "$side_out" "$side_sum"' EXIT
sanitized >"$side_out" 2>&1 &
side=$!

for t in "$build"/tests/test_*; do
    name=$(basename "$t")
    case $name in
    # the tests that convert record which adapters ran in judged conversions
    # (and write every refusal, by reason, to a report file)
    test_convert_matrix|test_convert_models)
        run "$name" "$t" --coverage "$build/coverage-$name.txt" --report "$build/report-$name.txt"
        grep -E 'targets 7..26' "$log" ;;
    test_adapter_cases)
        run "$name" "$t" --coverage "$build/coverage-$name.txt" ;;
    *) [ -x "$t" ] && run "$name" "$t" ;;
    esac
done
# every adapter of the table was exercised by a judged conversion
run adapter_coverage "$build/tests/test_adapter_table" --coverage \
    "$build/coverage-test_convert_matrix.txt" "$build/coverage-test_convert_models.txt" \
    "$build/coverage-test_adapter_cases.txt"
# ONNX Runtime judges the converted models for targets 7..26
run ort_matrix sh tests/ort_matrix.sh "$build"
# and the optimized corpus (every case the evaluator judged ok)
run ort_optimize sh tests/ort_matrix.sh "$build" optimize
# and every converted adapter case, against ORT's run of the original
run adapter_ort sh tests/adapter_ort.sh "$build"
# and the optimizer's node counts at or below ORT's basic level
run ort_nodecount sh tests/ort_nodecount.sh "$build"
run hostile_cli sh tests/hostile_cli.sh "$build/onnx-convert"
# --name=value, check DIR, failure lines, usage lines, - and -o -, deep folders
run cli_conventions sh tests/cli_conventions.sh "$build/onnx-convert"
run asan/cli_conventions sh tests/cli_conventions.sh "$asan/onnx-convert"
# every bench program builds and runs once on a tiny input
run bench_smoke sh tests/bench_smoke.sh "$build"
run asan/hostile_cli sh tests/hostile_cli.sh "$asan/onnx-convert"
# --help, the man page and --version agree
run cli_help /usr/bin/python3 tests/cli_help.py "$build/onnx-convert"
# attribute defaults come from the operator table (issue 21)
run attr_defaults /usr/bin/python3 tests/attr_defaults.py
# every #include goes down the rooms of docs/HACKING.md, no cycles; the
# check also finds faults planted in a copy of the tree
run layers /usr/bin/python3 tests/layers.py --self-test
# batch mode and --json against single runs (needs ../shared and python3)
run batch_cli /usr/bin/python3 tests/batch_cli.py "$build/onnx-convert"
run asan/batch_cli /usr/bin/python3 tests/batch_cli.py "$asan/onnx-convert"
# the IR version policy: metadata, functions, --ir-version (issue 19)
run ir_policy /usr/bin/python3 tests/ir_policy.py "$build/onnx-convert" "$build/tests/tool_irpolicy_gen"
run asan/ir_policy /usr/bin/python3 tests/ir_policy.py "$asan/onnx-convert" "$build/tests/tool_irpolicy_gen"
# the evaluator's budgets: memory, steps, time, --verify's inputs (issue 18)
run budgets_cli /usr/bin/python3 tests/budgets_cli.py "$build/onnx-convert"
# verification by default: figures, exact by construction, budget, sizes
run verify_cli /usr/bin/python3 tests/verify_cli.py "$build/onnx-convert"
# a quantized and a float16 model pass by their noise; 20 kinds of planted
# errors fail, and compare names the planted node (issue 36)
run verify_plants /usr/bin/python3 tests/verify_plants.py "$build/onnx-convert"
run asan/verify_plants /usr/bin/python3 tests/verify_plants.py "$asan/onnx-convert"
run asan/budgets_cli /usr/bin/python3 tests/budgets_cli.py "$asan/onnx-convert"
# convert --expand OP, and Einsum below 12 on symbolic dims (issue 20)
run expand_cli /usr/bin/python3 tests/expand_cli.py "$build/onnx-convert"
run asan/expand_cli /usr/bin/python3 tests/expand_cli.py "$asan/onnx-convert" no-ort
# info --targets and convert agree on every target (issue 19; sanitized: one model of ../shared)
run targets_cli /usr/bin/python3 tests/targets_cli.py "$build/onnx-convert"
run asan/targets_cli /usr/bin/python3 tests/targets_cli.py "$asan/onnx-convert" quick
# the Python package against the CLI, and under repetition and threads (issue 22)
run python_api env PYTHONPATH=python ONNXCONVERT_LIBRARY="$build/libonnxconvert.so.0" \
    /usr/bin/python3 tests/python_api.py "$build" quick
run python_stress env PYTHONPATH=python ONNXCONVERT_LIBRARY="$build/libonnxconvert.so.0" \
    /usr/bin/python3 tests/python_stress.py "$build"
# semantically hostile models (the generator is built in the normal build)
run hostile_models sh tests/hostile_models.sh "$build/onnx-convert" "$build/tests/tool_hostile_gen"
run asan/hostile_models sh tests/hostile_models.sh "$asan/onnx-convert" "$build/tests/tool_hostile_gen"
# `make install` into a temporary folder, and docs/c-library.md's example built
# against the installed library (shared and static)
run install sh tests/install.sh "$build"
run eval_gate sh tests/eval_gate.sh "$build/onnx-convert" "$build/tests/tool_eval_gate_gen"
run asan/eval_gate sh tests/eval_gate.sh "$asan/onnx-convert" "$build/tests/tool_eval_gate_gen" 60
# a graph out of topological order: sorted by convert, optimize and run,
# and ONNX Runtime agrees (issue 19)
run topo_ort sh tests/topo_ort.sh "$build/onnx-convert" "$build/tests/tool_topo_gen"
run asan/topo_ort sh tests/topo_ort.sh "$asan/onnx-convert" "$build/tests/tool_topo_gen"
# the Resize interpolation tables against ONNX's expected outputs, by the
# evaluator and ONNX Runtime (issue 20; the sanitized CLI takes 90 s here,
# the adapter cases cover it)
run resize_tables_ort sh tests/resize_tables_ort.sh "$build/onnx-convert"
# Slice steps below 10 (a PyTorch export) and integer products below 10 in
# float32, ONNX Runtime running what we write (issue 33; ~10 s)
run lowering_ort /usr/bin/python3 tests/lowering_ort.py "$build/onnx-convert"
# defects other exporters write (issue 34, docs/tolerated.md): check warns,
# check --strict refuses, convert and optimize repair; onnx.checker and
# ONNX Runtime judge what they write (~10 s)
run tolerated_cli /usr/bin/python3 tests/tolerated_cli.py "$build/onnx-convert"
run asan/tolerated_cli /usr/bin/python3 tests/tolerated_cli.py "$asan/onnx-convert"
# Resize on a float32 rounding boundary (an output length, a nearest pick):
# our evaluator, conversions and Core ML give what onnx's shape inference and
# ONNX Runtime give (issue 33; ~5 s)
run resize_rounding_ort /usr/bin/python3 tests/resize_rounding_ort.py "$build/onnx-convert"
# --dtype and --store over ../shared/models, ONNX Runtime running the results (issue 23)
run precision_cli /usr/bin/python3 tests/precision_cli.py "$build/onnx-convert"
run precision_models /usr/bin/python3 tests/precision_models.py "$build/onnx-convert"
# --dtype over the backend node tests holding subgraphs, --verify each (issue 23; ~5 s)
run precision_bodies /usr/bin/python3 tests/precision_bodies.py "$build/onnx-convert"
# --dtype float16 on PyTorch exports made here: old upsampling, Resize's empty
# roi, --auto keeping an If whole; ONNX Runtime judges (issue 33; ~10 s;
# PRECISION_REAL_SSD=1 adds SSDlite, whose export alone takes minutes)
run precision_real /usr/bin/python3 tests/precision_real.py "$build/onnx-convert"
# --dtype float16 on models already half inside (float32 I/O) and on dynamically
# quantized ones (int32 sums past 65504); numpy and ONNX Runtime judge (~5 s)
run precision_halfin /usr/bin/python3 tests/precision_halfin.py "$build/onnx-convert"
# --auto over ../shared/models, at the default and a tight tolerance, judged again (issue 23; ~20 s)
run precision_auto_models env PYTHONPATH=python ONNXCONVERT_LIBRARY="$build/libonnxconvert.so.0" \
    /usr/bin/python3 tests/precision_auto_models.py "$build/onnx-convert"
# the evaluator's float16 kernels against ONNX Runtime: one rounding after
# a float32 sum (issue 23; ~20 s, ~26 s sanitized)
run half_ort /usr/bin/python3 tests/half_ort.py "$build/onnx-convert"
run asan/half_ort /usr/bin/python3 tests/half_ort.py "$asan/onnx-convert"
# Core ML packages (issue 24): Apple's loader judges the ones we write, and
# we read (and rewrite) the ones coremltools writes
run coreml_ct sh tests/coreml_ct.sh "$build/tests/tool_mlpackage_gen" "$build/onnx-convert"
# convert --to coreml on every shared model, judged by Apple's loader, our
# import and ONNX Runtime; targets, refusals, float16, batch (~75 s)
run coreml_cli /usr/bin/python3 tests/coreml_cli.py "$build/onnx-convert"
# Apple's loader accepts each MIL op of the Resize, DepthToSpace, LRN,
# LpNormalization, MVN, LpPool and Einsum lowerings (~1-2 min: 20 packages)
run coreml_cmres_ct /usr/bin/python3 tests/coreml_cmres_ct.py "$build/onnx-convert"
# what Apple's loader refuses is never written: scalar inputs as [1],
# reserved names renamed, Shape-15 start/end, a TopK K from shapes (~20 s)
run coreml_cmfix_ct /usr/bin/python3 tests/coreml_cmfix_ct.py "$build/onnx-convert"

# every feature on the real-model corpus' fixed sample (issue 33): every
# family and kind of model, targets 7, 9, 11, 13, 17, 21, 26; skipped
# without torch (make corpus-check runs the whole corpus)
run corpus sh tests/corpus/sample.sh "$build"

# Cross-check with Debian's python3-onnx shape inference (opsets <= 17),
# when it is installed: a second opinion, never a dependency. (A bare
# `import onnx` is not the probe: libonnx-testdata alone leaves an empty
# onnx/ namespace folder that imports, and the cross-check then counted 0.)
node_dir=""
for d in "${ONNX_BACKEND_DATA:-}" ../shared/testdata/onnx-backend /usr/share/libonnx-testdata/data; do
    if [ -n "$d" ] && [ -d "$d/node" ]; then node_dir="$d/node"; break; fi
done
# the Python package (issue 22): its value codec against onnx's, and
# run()/Session against the CLI on every node test, the shared models'
# expected outputs and ONNX Runtime
run python_values env PYTHONPATH=python /usr/bin/python3 tests/python_values.py
run python_run env PYTHONPATH=python ONNXCONVERT_LIBRARY="$build/libonnxconvert.so.0" \
    /usr/bin/python3 tests/python_run.py "$build" "$node_dir" ../shared/models
grep -E '^(node tests passing|ONNX Runtime agrees)' "$log"
if [ -n "$node_dir" ] && /usr/bin/python3 -c 'import onnx.shape_inference' 2>/dev/null; then
    models=""
    [ -d ../shared/models ] && models=../shared/models
    run onnx_crosscheck /usr/bin/python3 tests/onnx_crosscheck.py "$build/onnx-convert" "$node_dir" $models
    grep -E '^onnx .* cross-check' "$log"
else
    echo "onnx_crosscheck: skipped (no python3-onnx or no node tests)"
    echo "onnx_crosscheck (no python3-onnx or no node tests)" >> "$skips"
    skipped=$((skipped + 1))
fi

# the MIL op table (issue 24): the committed table is the generator's
# output, and it agrees with coremltools' own registry (about 1 and 2 s)
run milops_table sh tests/milops_table.sh
run milops_registry /usr/bin/python3 tests/milops_registry.py
# Apple's loader on each MIL op the rnn lowering and the elementwise
# compositions emit (GRU, RNN, LSTM peepholes, Mod, Round, ...; ~50 s)
run coreml_cmrnn_ct /usr/bin/python3 tests/coreml_cmrnn_ct.py "$build/onnx-convert"
# Apple's loader on the MIL ops of the Loop and index lowerings (~35 s;
# test_coreml_cmctl judges their numbers)
run coreml_cmctl_ct sh tests/coreml_cmctl_ct.sh "$build/onnx-convert"
# Apple's loader, --verify and a second input size on models with dynamic
# dims: LSTM/GRU/RNN over [batch, seq], a conv net over [1,3,H,W], Slice,
# Reshape, Flatten, Expand, Shape over a dynamic batch (~45 s)
run coreml_cmdyn_ct /usr/bin/python3 tests/coreml_cmdyn_ct.py "$build/onnx-convert"
# Apple's loader and --verify on the Einsum-as-matmul and GridSample-as-
# resample lowerings, and ONNX Runtime on each package's import against
# numpy's einsum and PyTorch's grid_sample (~2.5 min: 23 packages)
run coreml_cmops_ct /usr/bin/python3 tests/coreml_cmops_ct.py "$build/onnx-convert"
# the quantizer's ops (DynamicQuantizeLinear, MatMulInteger, ConvInteger,
# QLinearMatMul, QLinearConv, int32 DequantizeLinear) exported exactly,
# judged by Apple's loader and by ONNX Runtime against the original
run coreml_cmquant_ct /usr/bin/python3 tests/coreml_cmquant_ct.py "$build/onnx-convert"
# coremltools' own packages (its Builder): negative transpose perms,
# string consts, iOS18's scaled_dot_product_attention, imported, checked
# and run by ONNX Runtime against numpy (~15 s)
run coreml_ctfix_ct /usr/bin/python3 tests/coreml_ctfix_ct.py "$build/onnx-convert"
# the import of packages coremltools writes (issue 34): one per MIL op the
# import raises, built with coremltools' Builder, judged by Apple's loader,
# `check` and ONNX Runtime against numpy's reading of each op's definition;
# the refused ops must be refused naming the op (~45 s: 160 packages)
run coreml_ctbuild_ct /usr/bin/python3 tests/coreml_ctbuild_ct.py "$build/onnx-convert"

# the sanitized programs' lines and sums (a job that died without its
# sums counts as one failure)
wait "$side"
cat "$side_out"
if read -r sp sf ss <"$side_sum" && [ -n "$ss" ]; then
    passed=$((passed + sp))
    failed=$((failed + sf))
    skipped=$((skipped + ss))
else
    echo "sanitized test programs: no sums (the background job died)"
    failed=$((failed + 1))
fi

xfail=$(grep -cvE '^(#|$)' tests/xfail.txt 2>/dev/null || true)
echo "expected failures listed in tests/xfail.txt: ${xfail:-0}"
if [ "$skipped" -gt 0 ]; then
    echo "skipped (not on this machine; never failures):"
    sed 's/^/  /' "$skips"
fi
echo "tests took $(( ($(date +%s) - start) / 60 )) min $(( ($(date +%s) - start) % 60 )) s"
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
