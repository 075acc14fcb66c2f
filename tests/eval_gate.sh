#!/bin/sh
# eval_gate.sh - the evaluator runs only what the checker accepts.
#
# Usage: sh tests/eval_gate.sh PATH/TO/onnx-convert PATH/TO/tool_eval_gate_gen [MAX]
#        (from the project root)
#
# tool_eval_gate_gen writes the models of tests/eval_gate.h (Relu with 3
# inputs, Add with 7, an extra output, missing or mistyped attributes, an
# input type the op does not take, SplitToSequence with no output, a model
# with no graph) and up to MAX (default 200) backend node tests broken the
# same ways, when node tests are found ($ONNX_BACKEND_DATA, ../shared/
# testdata/onnx-backend, /usr/share/libonnx-testdata/data; without them
# that part is skipped, counted and said). For each model, `check` must
# refuse it (exit 1, one line naming the file), and `run` and `test` must
# refuse it the same way: exit 1, exactly the line `check` printed, and no
# output folder or file written; for the built models, `convert --verify`
# and `optimize --verify` too. Ends with
# "eval_gate: N passed, N failed, N skipped".

BIN=$1
GEN=$2
MAX=${3:-200}
if [ -z "$BIN" ] || [ ! -x "$BIN" ] || [ -z "$GEN" ] || [ ! -x "$GEN" ]; then
    echo "usage: sh tests/eval_gate.sh PATH/TO/onnx-convert PATH/TO/tool_eval_gate_gen [MAX]" >&2
    exit 2
fi

LC_ALL=C
export LC_ALL

TALLY=eval_gate
. "$(dirname "$0")/tally.sh"
skipped=0

TMP=$(mktemp -d "${TMPDIR:-/tmp}/oc_eval_gate.XXXXXX") || exit 1
trap 'rm -rf "${TMP:?}"' EXIT
trap 'exit 1' INT TERM
mkdir "$TMP/models" "$TMP/out" || exit 1

node_dir=""
for d in "${ONNX_BACKEND_DATA:-}" ../shared/testdata/onnx-backend /usr/share/libonnx-testdata/data; do
    if [ -n "$d" ] && [ -d "$d/node" ]; then node_dir="$d/node"; break; fi
done
if [ -z "$node_dir" ]; then
    echo "eval_gate: no backend node tests found: the broken node tests are skipped"
    skipped=1
fi

# shellcheck disable=SC2086
if ! "$GEN" "$TMP/models" $node_dir ${node_dir:+$MAX} > "$TMP/list" 2> "$TMP/err"; then
    bad "tool_eval_gate_gen failed: $(head -c 300 "$TMP/err")"
    echo "eval_gate: $passed passed, $failed failed, $skipped skipped"
    exit 1
fi
if [ -n "$node_dir" ] && ! grep -q '^node_' "$TMP/list"; then
    bad "no node test of $node_dir could be broken"
fi

snippet() {
    dd if="$1" bs=300 count=1 2>/dev/null | tr '\n' '|'
}

limited() {
    if command -v timeout > /dev/null 2>&1; then
        timeout 60 "$@"
    else
        "$@"
    fi
}

# same LABEL OUT CMD...: exit status 1, stderr exactly the line `check`
# printed ($TMP/check), OUT not created.
same() {
    label=$1
    s_out=$2
    shift 2
    limited "$@" > /dev/null 2> "$TMP/stderr"
    rc=$?
    if [ "$rc" != 1 ]; then
        bad "$label: exit status $rc, expected 1; stderr: $(snippet "$TMP/stderr")"
    elif ! cmp -s "$TMP/stderr" "$TMP/check"; then
        bad "$label: stderr is not the checker's line: $(snippet "$TMP/stderr")"
    elif [ -n "$s_out" ] && [ -e "$s_out" ]; then
        bad "$label wrote $s_out: $(ls -A "$s_out" | head -n 3 | tr '\n' ' ')"
    else
        ok
    fi
}

while read -r name rule model case; do
    limited "$BIN" check "$model" > /dev/null 2> "$TMP/check"
    rc=$?
    if [ "$rc" != 1 ]; then
        bad "$name: check: exit status $rc, expected 1"
        continue
    fi
    if [ "$(wc -l < "$TMP/check" | tr -d ' ')" != 1 ] || ! grep -qF -- "$model: " "$TMP/check"; then
        bad "$name: check: not one line naming the file: $(snippet "$TMP/check")"
        continue
    fi
    ok
    case $name in
    node_*) grep -qF -- ": $rule: " "$TMP/check" || echo "eval_gate: note: $name: broken for $rule, refused for $(cut -c1-200 "$TMP/check")" ;;
    *) if grep -qF -- ": $rule: " "$TMP/check"; then ok; else bad "$name: check does not say $rule: $(snippet "$TMP/check")"; fi ;;
    esac
    out=$TMP/out/$name
    same "$name: run" "$out" "$BIN" run "$model" --inputs "$case/test_data_set_0" -o "$out"
    rm -rf "$out"
    same "$name: test" "" "$BIN" test "$case" --model "$model"
    case $name in
    node_*) ;;
    *)
        same "$name: convert --verify" "$out.onnx" "$BIN" convert "$model" -o "$out.onnx" --verify
        same "$name: optimize --verify" "$out.onnx" "$BIN" optimize "$model" -o "$out.onnx" --verify ;;
    esac
done < "$TMP/list"

echo "eval_gate: $passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
