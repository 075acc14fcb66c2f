#!/bin/sh
# resize_tables_ort.sh - the Resize interpolation tables (adapters/
# resize_lower.c) judged against ONNX's own expected outputs, by our
# evaluator and by ONNX Runtime 1.30.
#
# Usage: sh tests/resize_tables_ort.sh PATH/TO/onnx-convert   (from the project root)
#
# Each backend node test test_resize_* (outputs computed by ONNX's
# reference implementation) is made self-contained by
# tests/resize_freeze.js: roi, scales and sizes become initializers. Each
# is converted to opsets 10 and 7, where every Resize that Resize-10 or
# Upsample cannot express becomes Gather / Mul / ReduceSum (/ Where)
# tables; each conversion must succeed (but tf_crop_and_resize with
# extrapolation into opset 7, refused for lack of Where), pass
# `onnx-convert test` and ONNX Runtime (ort-check.js, its default
# tolerance). Skips ("SKIP ..." and "1 skipped") without the backend data
# or without node and ../shared/tools/ort.
# Ends with "resize_tables_ort: N passed, N failed[, N skipped]".

BIN=$1
if [ -z "$BIN" ] || [ ! -x "$BIN" ]; then
    echo "usage: sh tests/resize_tables_ort.sh PATH/TO/onnx-convert" >&2
    exit 2
fi
LC_ALL=C
export LC_ALL
TALLY=resize_tables_ort
. "$(dirname "$0")/tally.sh"
ORT=${OC_ORT_DIR:-../shared/tools/ort}
HERE=$(dirname "$0")

skip() {
    echo "SKIP resize_tables_ort: $1"
    echo "resize_tables_ort: 0 passed, 0 failed, 1 skipped"
    exit 0
}
NODE=""
for d in "${ONNX_BACKEND_DATA:-}" ../shared/testdata/onnx-backend /usr/share/libonnx-testdata/data; do
    [ -n "$d" ] && [ -d "$d/node/test_resize_upsample_scales_linear" ] && { NODE=$d/node; break; }
done
[ -n "$NODE" ] || skip "no ONNX backend test data"
. tests/ort_ready.sh
ort_ready "$ORT" || skip "no node or no ../shared/tools/ort (ONNX Runtime)"

TMP=$(mktemp -d "${TMPDIR:-/tmp}/oc_rs_tables.XXXXXX") || exit 1
trap 'rm -rf "${TMP:?}"' EXIT
trap 'exit 1' INT TERM

list=$TMP/judge
: >"$list"
if ! node "$HERE/resize_freeze.js" "$ORT" proto/onnx.proto "$TMP" "$NODE"/test_resize_* 2>"$TMP/err"; then
    bad "$(cat "$TMP/err")"
fi
for c in "$NODE"/test_resize_*; do
    n=$(basename "$c")
    [ -f "$TMP/$n/model.onnx" ] || continue
    for t in 10 7; do
        m=$TMP/$n/t$t.onnx
        "$BIN" convert "$TMP/$n/model.onnx" -o "$m" --opset $t >/dev/null 2>"$TMP/err"
        rc=$?
        if [ "$n/$t" = test_resize_tf_crop_and_resize_extrapolation_value/7 ]; then
            # Where (opset 9) writes extrapolation_value: refused, saying so
            if [ $rc -eq 1 ] && grep -q "Where (opset 9)" "$TMP/err"; then ok; else
                bad "$n to $t: exit $rc, expected a refusal naming Where: $(cat "$TMP/err")"
            fi
            continue
        fi
        if [ $rc -ne 0 ]; then
            bad "$n to $t: exit $rc: $(cat "$TMP/err")"
            continue
        fi
        if "$BIN" test "$TMP/$n" --model "$m" >/dev/null 2>"$TMP/err"; then ok; else
            bad "$n to $t: the evaluator: $(head -c 300 "$TMP/err")"
        fi
        echo "$TMP/$n $m" >>"$list"
    done
done
# one ORT process for all: each start costs seconds
node "$ORT/ort-check.js" --batch "$list" >"$TMP/out" 2>&1
while read -r c m; do
    if grep -q "^PASS $m " "$TMP/out"; then
        ok
    else
        bad "ONNX Runtime on $m: $(grep -F " $m " "$TMP/out" | head -n 1)"
    fi
done <"$list"
echo "resize_tables_ort: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
