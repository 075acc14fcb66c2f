#!/bin/sh
# coreml_ct.sh - Apple's loader judges the .mlpackage folders we write, and
# we read the ones coremltools writes.
#
# Usage: sh tests/coreml_ct.sh PATH/TO/tool_mlpackage_gen PATH/TO/onnx-convert
#        (from the project root)
#
# 0. `onnx-convert info` describes a package we wrote (target, opset, op
#    counts, blobs) and refuses a folder that is not one, in one line.
# 1. tool_mlpackage_gen writes the hand-built programs of tests/mlp_models.h
#    (relu, conv with a blob weight, matmul with a 512x256 blob, fp16
#    consts, while_loop + cond, a flexible input); ct_check.py must say OK
#    for each (Manifest, every message field known, SSA, every blob, the
#    description against the function, every op type-inferred again at
#    its declared opset).
#    Their constants and description are then read by Apple's own code
#    (tests/coreml_values.py) and compared with what the tool put there.
# 2. coremltools' self-test writes its own packages (selftest.py --keep):
#    we must read the good ones, refuse the one whose blob offset is past
#    the end (exit 1, one line), and copy each good one (read, write again)
#    into a package ct_check.py accepts too.
# Without ../shared/tools/coremltools (or when its setup fails) 1 and 2
# are skipped and said. Ends with "coreml_ct: N passed, N failed[, N skipped]".

GEN=$1
BIN=$2
if [ -z "$GEN" ] || [ ! -x "$GEN" ] || [ -z "$BIN" ] || [ ! -x "$BIN" ]; then
    echo "usage: sh tests/coreml_ct.sh PATH/TO/tool_mlpackage_gen PATH/TO/onnx-convert" >&2
    exit 2
fi
CT=${OC_CT_DIR:-../shared/tools/coremltools}

LC_ALL=C
export LC_ALL
TALLY=coreml_ct
. "$(dirname "$0")/tally.sh"

TMP=$(mktemp -d "${TMPDIR:-/tmp}/oc_coreml_ct.XXXXXX") || exit 1
trap 'rm -rf "${TMP:?}"' EXIT
trap 'exit 1' INT TERM
mkdir "$TMP/ours" "$TMP/apple" "$TMP/copies" "$TMP/plain" || exit 1

# 0. ours written, and described by `info` (no judge needed)
if "$GEN" write "$TMP/ours" >"$TMP/written" 2>&1; then
    ok
else
    bad "tool_mlpackage_gen write: $(cat "$TMP/written")"
fi
"$BIN" info "$TMP/ours/matmul.mlpackage" >"$TMP/info" 2>&1
st=$?
if [ "$st" -eq 0 ] && grep -q '^  target  *iOS17 (specificationVersion 8)$' "$TMP/info" &&
    grep -q '^  opset  *CoreML7$' "$TMP/info" && grep -q '^    matmul 1$' "$TMP/info" &&
    grep -q '^  in weight.bin  *1 blobs (524288 bytes)$' "$TMP/info"; then
    ok
else
    bad "info matmul.mlpackage: exit $st: $(cat "$TMP/info")"
fi
"$BIN" info "$TMP/plain" >"$TMP/info" 2>&1
st=$?
if [ "$st" -eq 1 ] && [ "$(wc -l <"$TMP/info")" -eq 1 ] && grep -q 'Manifest.json' "$TMP/info"; then
    ok
else
    bad "info of a plain folder: exit $st: $(cat "$TMP/info")"
fi

if [ ! -x "$CT/ct_check.py" ] || ! "$CT/setup.sh" --no-selftest >/dev/null 2>&1; then
    echo "SKIP coreml_ct judge: no working coremltools judge at $CT (run its setup.sh)"
    echo "coreml_ct: $passed passed, $failed failed, 1 skipped"
    [ "$failed" -eq 0 ]
    exit
fi

# Runs the judge on one package: OK counts as a pass.
judge() {
    line=$("$CT/ct_check.py" "$1" 2>&1 | tail -n 1)
    case $line in
    "ct_check: OK "*) ok ;;
    *) bad "$2: $line" ;;
    esac
}

# 1. ours, judged
n=0
for p in "$TMP"/ours/*.mlpackage; do
    [ -d "$p" ] || continue
    n=$((n + 1))
    judge "$p" "ours/$(basename "$p")"
done
[ "$n" -eq 6 ] && ok || bad "expected 6 packages written, found $n"

# 1b. their constants and description as Apple's own parsers read them
# (tests/coreml_values.py: Model_pb2 and libmilstoragepython), against the
# formulas the tool filled them with
/usr/bin/python3 -E -s tests/coreml_values.py "$CT" "$TMP/ours" >"$TMP/values" 2>&1
line=$(grep -E '^coreml_values: [0-9]+ passed, [0-9]+ failed$' "$TMP/values")
if [ -n "$line" ]; then
    p=$(echo "$line" | sed -E 's/.*: ([0-9]+) passed.*/\1/')
    f=$(echo "$line" | sed -E 's/.* ([0-9]+) failed$/\1/')
    passed=$((passed + p))
    failed=$((failed + f))
    [ "$f" -eq 0 ] || grep '^FAIL' "$TMP/values" >&2
else
    bad "coreml_values.py: $(tail -n 3 "$TMP/values")"
fi

# 2. coremltools' own
if ! "$CT/selftest.py" --keep "$TMP/apple" >"$TMP/selftest" 2>&1; then
    bad "selftest.py --keep failed: $(tail -n 1 "$TMP/selftest")"
fi
for name in good control-flow; do
    p="$TMP/apple/$name.mlpackage"
    if [ ! -d "$p" ]; then
        bad "selftest.py kept no $name.mlpackage"
        continue
    fi
    if "$GEN" read "$p" >"$TMP/out" 2>&1; then ok; else bad "read $name: $(cat "$TMP/out")"; fi
    if "$GEN" copy "$p" "$TMP/copies/$name.mlpackage" >"$TMP/out" 2>&1; then
        ok
        judge "$TMP/copies/$name.mlpackage" "copy of $name"
    else
        bad "copy $name: $(cat "$TMP/out")"
    fi
done
p="$TMP/apple/blob-offset-past-end.mlpackage"
if [ -d "$p" ]; then
    "$GEN" read "$p" >"$TMP/out" 2>&1
    st=$?
    if [ "$st" -eq 1 ] && [ "$(wc -l <"$TMP/out")" -eq 1 ] && grep -q 'past the end' "$TMP/out"; then
        ok
    else
        bad "blob-offset-past-end: exit $st: $(cat "$TMP/out")"
    fi
else
    bad "selftest.py kept no blob-offset-past-end.mlpackage"
fi

echo "coreml_ct: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
