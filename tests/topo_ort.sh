#!/bin/sh
# topo_ort.sh - a model out of topological order, as the float16
# conversion of onnxconverter-common writes it, through the command line
# and judged by ONNX Runtime 1.30 (issue 19, "Done when" 2).
#
# Usage: sh tests/topo_ort.sh PATH/TO/onnx-convert PATH/TO/tool_topo_gen
#        (from the project root)
#
# tool_topo_gen writes a hand-built float16 model (its input and output
# Casts after the nodes that read them), the same nodes in order
# (sorted.onnx, written by hand), an input, and a model with a cycle; and,
# when ../shared/models/squeezenet1_1_opset13 is there, that model
# converted to float16 the same way (else skipped and counted). For each:
#   - `check` exits 1 naming the topo-order violation and saying convert
#     repairs it;
#   - `run` gives byte-identical outputs on the model and on sorted.onnx,
#     and `test --model` passes the model on sorted.onnx's outputs;
#   - `convert --opset N --verify` for 9, 11, 17, 21 and `optimize
#     --verify` succeed, say "sorted 1 node into topological order", and
#     --json says "sorted": 1;
# and a cycle is refused by convert and run: exit 1, one line naming a
# node on it, no output written. With node and ../shared/tools/ort, ONNX
# Runtime's outputs of each original (unsorted) model, written as its
# case's expected outputs by tests/ort_expect.js, are matched by ONNX
# Runtime on sorted.onnx and every converted and optimized model
# (ort-check.js, its default tolerance); without them that part is
# skipped and counted.
# Ends with "topo_ort: N passed, N failed[, N skipped]".

BIN=$1
GEN=$2
if [ -z "$BIN" ] || [ ! -x "$BIN" ] || [ -z "$GEN" ] || [ ! -x "$GEN" ]; then
    echo "usage: sh tests/topo_ort.sh PATH/TO/onnx-convert PATH/TO/tool_topo_gen" >&2
    exit 2
fi
LC_ALL=C
export LC_ALL
TALLY=topo_ort
. "$(dirname "$0")/tally.sh"
skipped=0
ORT=${OC_ORT_DIR:-../shared/tools/ort}
HERE=$(dirname "$0")

TMP=$(mktemp -d "${TMPDIR:-/tmp}/oc_topo_ort.XXXXXX") || exit 1
trap 'rm -rf "${TMP:?}"' EXIT
trap 'exit 1' INT TERM

MODELS=../shared/models
REAL=$MODELS/squeezenet1_1_opset13
[ -f "$REAL/model.onnx" ] && [ -f "$REAL/test_data_set_0/input_0.pb" ] || REAL=""
# shellcheck disable=SC2086
if ! "$GEN" "$TMP" $REAL 2>"$TMP/err"; then
    bad "tool_topo_gen failed: $(head -c 300 "$TMP/err")"
    echo "topo_ort: $passed passed, $failed failed"
    exit 1
fi
if [ -z "$REAL" ]; then
    echo "SKIP topo_ort: no $MODELS/squeezenet1_1_opset13: only the hand-built model"
    skipped=$((skipped + 1))
fi

# One case: CASE_DIR (model.onnx out of order, sorted.onnx, inputs) and the
# node `check` must name as reading graph_input_cast_0 too early. Adds the
# models ONNX Runtime is to judge to $list as "CASE_DIR MODEL" lines.
list=$TMP/judge
: >"$list"
one_case() {
    CASE=$1 first=$2
    M=$CASE/model.onnx
    # check: the violation, named, with the hint
    "$BIN" check "$M" >"$TMP/out" 2>"$TMP/err"
    rc=$?
    if [ $rc -eq 1 ] && [ "$(wc -l <"$TMP/err")" -eq 1 ] &&
       grep -qF "topo-order: node '$first' (Conv-11): input 'graph_input_cast_0' is produced by a later node" "$TMP/err" &&
       grep -q "(convert and optimize put the nodes in order)" "$TMP/err"; then
        ok
    else
        bad "check $M: exit $rc: $(cat "$TMP/err")"
    fi

    # run: the unsorted model computes what the same nodes in order compute
    rm -rf "$TMP/run_a" "$TMP/run_b"
    "$BIN" run "$M" --inputs "$CASE/test_data_set_0" -o "$TMP/run_a" >"$TMP/out" 2>"$TMP/err"
    rc_a=$?
    "$BIN" run "$CASE/sorted.onnx" --inputs "$CASE/test_data_set_0" -o "$TMP/run_b" >/dev/null 2>&1
    rc_b=$?
    same=yes
    for f in "$TMP"/run_b/output_*.pb; do
        cmp -s "$f" "$TMP/run_a/$(basename "$f")" || same=no
    done
    if [ $rc_a -eq 0 ] && [ $rc_b -eq 0 ] && [ $same = yes ]; then
        ok
    else
        bad "run $M: exit $rc_a/$rc_b or outputs differ from the sorted copy's: $(cat "$TMP/err")"
    fi

    # test: the unsorted model against the sorted copy's outputs
    rm -rf "$TMP/tcase"
    mkdir -p "$TMP/tcase/test_data_set_0"
    cp "$CASE"/test_data_set_0/input_*.pb "$TMP"/run_b/output_*.pb "$TMP/tcase/test_data_set_0/" 2>/dev/null
    if "$BIN" test "$TMP/tcase" --model "$M" >"$TMP/out" 2>"$TMP/err" &&
       grep -q "PASS" "$TMP/out"; then
        ok
    else
        bad "test --model $M: $(cat "$TMP/err")"
    fi

    # convert and optimize: sorted, said so, verified by the evaluator
    echo "$CASE $CASE/sorted.onnx" >>"$list"
    for t in 9 11 17 21; do
        o=$CASE/conv_$t.onnx
        "$BIN" convert "$M" -o "$o" --opset "$t" --verify >"$TMP/out" 2>"$TMP/err"
        rc=$?
        if [ $rc -eq 0 ] && grep -qx "sorted 1 node into topological order" "$TMP/out" &&
           grep -q "^verified: outputs equal" "$TMP/out"; then
            ok
            echo "$CASE $o" >>"$list"
        else
            bad "convert $M --opset $t: exit $rc: $(cat "$TMP/out" "$TMP/err" | tr '\n' '|')"
        fi
    done
    "$BIN" convert "$M" -o "$TMP/json.onnx" --opset 17 --json >"$TMP/out" 2>"$TMP/err"
    if grep -q '"sorted": 1,' "$TMP/out"; then ok; else bad "--json: no \"sorted\": 1: $(head -c 400 "$TMP/out")"; fi
    "$BIN" optimize "$M" -o "$CASE/opt.onnx" --verify >"$TMP/out" 2>"$TMP/err"
    rc=$?
    if [ $rc -eq 0 ] && grep -qx "sorted 1 node into topological order" "$TMP/out" &&
       grep -q "^verified: outputs equal" "$TMP/out"; then
        ok
        echo "$CASE $CASE/opt.onnx" >>"$list"
    else
        bad "optimize $M: exit $rc: $(cat "$TMP/out" "$TMP/err" | tr '\n' '|')"
    fi
}
one_case "$TMP/case" conv
[ -n "$REAL" ] && one_case "$TMP/real" /features/features.0/Conv

# a real cycle: refused, one line naming a node on it, nothing written
for cmd in convert run; do
    if [ $cmd = convert ]; then
        "$BIN" convert "$TMP/cycle.onnx" -o "$TMP/cycle_out.onnx" --opset 17 >"$TMP/out" 2>"$TMP/err"
    else
        "$BIN" run "$TMP/cycle.onnx" --inputs "$TMP/case/test_data_set_0" -o "$TMP/cycle_out" >"$TMP/out" 2>"$TMP/err"
    fi
    rc=$?
    if [ $rc -eq 1 ] && [ "$(wc -l <"$TMP/err")" -eq 1 ] &&
       grep -Eq "topo-order: .*node 'loop_(add|neg)' \((Add|Neg)\) is on a cycle" "$TMP/err" &&
       [ ! -e "$TMP/cycle_out.onnx" ] && [ ! -e "$TMP/cycle_out" ]; then
        ok
    else
        bad "$cmd of a cycle: exit $rc: $(cat "$TMP/err")"
    fi
done

# ONNX Runtime: what it computes for the unsorted original, it computes
# for each converted and optimized model
. tests/ort_ready.sh
if ! ort_ready "$ORT"; then
    echo "SKIP topo_ort: no node or no ../shared/tools/ort (ONNX Runtime): the converted models are not judged"
    skipped=$((skipped + 1))
else
    # ORT's outputs of each original (unsorted) model are its case's expected outputs
    for c in "$TMP/case" ${REAL:+"$TMP/real"}; do
        node "$HERE/ort_expect.js" "$ORT" "$c" "$c/model.onnx" >"$TMP/out" 2>"$TMP/err" ||
            bad "ONNX Runtime cannot run $c/model.onnx: $(cat "$TMP/err")"
    done
    # one ORT process for all: each start costs seconds
    node "$ORT/ort-check.js" --batch "$list" >"$TMP/out" 2>&1
    while read -r c o; do
        if grep -q "^PASS $o " "$TMP/out"; then
            ok
        else
            bad "ONNX Runtime on $o: $(grep -F " $o " "$TMP/out" | head -n 1)"
        fi
    done <"$list"
fi

if [ $skipped -gt 0 ]; then
    echo "topo_ort: $passed passed, $failed failed, $skipped skipped"
else
    echo "topo_ort: $passed passed, $failed failed"
fi
[ $failed -eq 0 ]
