#!/bin/sh
# ONNX Runtime as a second judge of the conversion matrix, or (with
# `optimize`) of the optimizer over the corpus.
#
#   tests/ort_matrix.sh [BUILD_DIR] [convert|optimize]   (from the project root)
#
# optimize: writes every optimized case the evaluator judged ok with
# test_optimize_corpus --ort-out, and counts them per opset the same way
# (prints "ort_optimize: N passed, N failed").
#
# Writes every converted node test and model for targets 7..26 (those the
# evaluator judged ok) with test_convert_matrix / test_convert_models
# --ort-out, runs the originals and the converted models in ONNX Runtime
# 1.30 (../shared/tools/ort), and counts, per target:
#   ok        ORT's outputs match the case's expected outputs
#   wrong     they do not, although ORT runs the original case correctly
#   invalid   ORT refuses the converted model as invalid when loading it
#             (a model-validation error: "This is an invalid model", "not
#             in allowed output sizes", "Unrecognized attribute", a type or
#             shape inference error), judged whatever ORT does with the
#             original unless the original is refused the same way: a model
#             we write must be valid even where ORT cannot run it
#   no-judge  ORT cannot run the converted model (a type or op it lacks at
#             that opset: "not implemented", no kernel, an opset newer
#             than it knows) or fails the original too
# Prints "ort_matrix: N passed, N failed" (passed = ok, failed = wrong +
# invalid); the INVALID lines go to the details file.
# Skips ("NAME: 0 passed, 0 failed, 1 skipped" after a SKIP line naming
# why) when node or the oracle is missing.
build=${1:-build}
mode=${2:-convert}
name=ort_matrix
[ "$mode" = optimize ] && name=ort_optimize
ort=${OC_ORT_DIR:-../shared/tools/ort}
out=$build/$name
. tests/ort_require.sh
rm -rf "$out"
if [ "$mode" = optimize ]; then
    mkdir -p "$out/opt"
    "$build/tests/test_optimize_corpus" --ort-out "$out/opt" >/dev/null 2>&1
    cp "$out/opt/list.txt" "$out/converted.txt"
else
    mkdir -p "$out/node" "$out/models"
    "$build/tests/test_convert_matrix" --ort-out "$out/node" >/dev/null 2>&1
    "$build/tests/test_convert_models" --ort-out "$out/models" >/dev/null 2>&1
    cat "$out/node/list.txt" "$out/models/list.txt" >"$out/converted.txt"
fi
cut -d' ' -f1 "$out/converted.txt" | sort -u >"$out/originals.txt"

# Runs a batch list in chunks (ORT aborts the process on a few malformed
# models; a chunk that dies loses only its own lines, reported as ERROR).
judge() {
    list=$1 result=$2
    : >"$result"
    split -l 400 "$list" "$list.part."
    for p in "$list".part.*; do
        node "$ort/ort-check.js" --batch "$p" >"$p.out" 2>/dev/null
        grep -E '^(PASS|FAIL|ERROR) ' "$p.out" >>"$result"
        # lines the chunk never reached (the process died)
        awk -v done="$p.out" 'BEGIN { while ((getline l < done) > 0) { split(l, f, " "); seen[f[2]] = 1 } }
            { m = ($2 == "" ? $1 "/model.onnx" : $2); if (!seen[m]) print "ERROR " m " the ORT process died" }' \
            "$p" >>"$result"
        rm -f "$p" "$p.out"
    done
}
judge "$out/originals.txt" "$out/originals.out"
judge "$out/converted.txt" "$out/converted.out"

awk -v orig="$out/originals.out" -v conv="$out/converted.out" -v name="$name" \
    -v what="$mode" '
    # ORT refusing a model as not valid ONNX (at load or in its type and
    # shape inference), as opposed to something ORT lacks
    function invalid(l) {
        if (l !~ /^ERROR /)
            return 0
        if (l ~ /is not a registered function\/op|ValidateOpsetForDomain|[Nn]ot implemented|NOT_IMPLEMENTED|Could not find an implementation|Unsupported model IR version/)
            return 0
        return l ~ /This is an invalid model|INVALID_GRAPH|INVALID_PROTOBUF|Protobuf parsing failed|not in allowed (input|output) sizes|Unrecognized attribute|ShapeInferenceError|TypeInferenceError|Type Error:/
    }
    BEGIN {
        while ((getline l < orig) > 0) {
            split(l, f, " ")
            m = f[2]; sub(/\/model\.onnx$/, "", m)
            if (f[1] == "PASS") good[m] = 1
            if (invalid(l)) orig_invalid[m] = 1
        }
    }
    {   # converted.txt lines: CASE MODEL TARGET
        case_of[$2] = $1; target[$2] = $3
    }
    END {
        while ((getline l < conv) > 0) {
            split(l, f, " ")
            m = f[2]; c = case_of[m]; t = target[m]
            if (invalid(l) && !orig_invalid[c]) { inv[t]++; print "INVALID (ORT) " l > "/dev/stderr"; continue }
            if (!good[c]) { nj[t]++; continue }
            if (f[1] == "PASS") ok[t]++
            else if (f[1] == "FAIL") { bad[t]++; print "WRONG (ORT) " l > "/dev/stderr" }
            else { nj[t]++; print "NO-JUDGE " l > "/dev/stderr" }
        }
        printf "%s: %s models judged by ONNX Runtime 1.30\n", name,
               what == "optimize" ? "optimized" : "converted"
        printf "  opset       ok  wrong  invalid  no-judge\n"
        for (t = 1; t <= 28; t++) {
            if (ok[t] + bad[t] + inv[t] + nj[t] == 0)
                continue
            printf "  %6d %7d %6d %8d %9d\n", t, ok[t], bad[t], inv[t], nj[t]
            tok += ok[t]; tbad += bad[t]; tinv += inv[t]; tnj += nj[t]
        }
        printf "  total  %7d %6d %8d %9d\n", tok, tbad, tinv, tnj
        if (tinv)
            printf "%d converted models ORT refuses as invalid (INVALID lines in the details)\n", tinv
        printf "%s: %d passed, %d failed\n", name, tok, tbad + tinv
    }' "$out/converted.txt" 2>"$out/details.txt"
echo "details: $out/details.txt"
