#!/bin/sh
# The default optimizer pipeline against ONNX Runtime 1.30's "basic" level
# in node count, over every case test_optimize_corpus optimizes (the node
# tests, the backend's models, ../shared/models).
#
#   tests/ort_nodecount.sh [BUILD_DIR]      (from the project root)
#
# For each case the evaluator judged ok after our optimization (and those
# it cannot judge), ORT optimizes the ORIGINAL model at its basic level
# (bench/ort_basic.js, one process over the whole list) and both results'
# nodes are counted the way `onnx-convert info` counts nodes_total (every
# graph and function). A case passes when our count is at most ORT's; a
# case above ORT fails and is named with both counts. Cases ORT cannot load
# are not judged. That our optimized models give the cases' expected
# outputs under ORT is tests/ort_matrix.sh optimize's check (the
# evaluator's is test_optimize_corpus's); this one counts nodes only.
#
# Below IR 4 every initializer is also a graph input: a default the caller
# may replace, which we never fold (ORT folds it), and a Constant node
# cannot become an initializer without becoming a new input. A case of IR
# < 4 above ORT is listed as "IR<4", not judged.
#
# Prints "ort_nodecount: N passed, N failed"; skips (a SKIP line, then
# "ort_nodecount: 0 passed, 0 failed, 1 skipped") without node or ORT.
build=${1:-build}
name=ort_nodecount
ort=${OC_ORT_DIR:-../shared/tools/ort}
out=$build/$name
. tests/ort_require.sh
rm -rf "$out"
mkdir -p "$out"
# The optimized cases: those tests/ort_matrix.sh optimize just wrote (run.sh
# runs it first) when newer than the program that writes them, else ours.
opt=$build/ort_optimize/opt
if [ ! -s "$opt/list.txt" ] || [ ! "$opt/list.txt" -nt "$build/tests/test_optimize_corpus" ]; then
    opt=$out/opt
    mkdir -p "$opt"
    "$build/tests/test_optimize_corpus" --ort-out "$opt" >"$out/corpus.log" 2>&1
fi
[ -s "$opt/list.txt" ] || {
    echo "FAIL $name: test_optimize_corpus wrote no list (see $out/corpus.log)"
    echo "$name: 0 passed, 1 failed"
    exit 1
}

# ORT's basic level, in chunks (ORT aborts the process on a few malformed
# models; a chunk that dies loses only its own lines, which are then not
# judged). Every ORT model goes to one scratch file: some are hundreds of
# MB. Lines: ORIGINAL SCRATCH OURS.
awk -v s="$out/ort.onnx" '{ print $1 "/model.onnx", s, $2 }' "$opt/list.txt" >"$out/batch.txt"
: >"$out/counts.txt"
split -l 400 "$out/batch.txt" "$out/batch.part."
for p in "$out"/batch.part.*; do
    node bench/ort_basic.js --batch "$p" 2>/dev/null | grep -E '^(OK|ERROR) ' >>"$out/counts.txt"
    rm -f "$p"
done
rm -f "$out/ort.onnx"

# OK ORIGINAL IR ORT OURS; a chunk whose process died left no line
died=$(( $(wc -l <"$out/batch.txt") - $(wc -l <"$out/counts.txt") ))
awk -v name="$name" -v died="$died" '
    $1 == "ERROR" { nj++ }
    $1 != "OK" || NF != 5 { next }
    {
        n = $2; sub(/\/model\.onnx$/, "", n); sub(/.*onnx-backend\//, "", n); sub(/^\.\.\/shared\//, "", n)
        if ($5 <= $4) pass++
        else if ($3 < 4) { old++; printf "IR<4 %s: ours %d nodes > ORT basic %d (IR %d, not judged)\n", n, $5, $4, $3 }
        else { fail++; printf "FAIL %s: %s: ours %d nodes > ORT basic %d\n", name, n, $5, $4 }
    }
    END {
        printf "%s: %d cases ORT cannot load, %d lost with a dying ORT process and %d of IR < 4 above it, not judged\n", name, nj, died, old
        printf "%s: %d passed, %d failed\n", name, pass, fail
    }' "$out/counts.txt"
