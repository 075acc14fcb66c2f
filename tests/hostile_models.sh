#!/bin/sh
# hostile_models.sh - the command line against semantically hostile models.
#
# Usage: sh tests/hostile_models.sh PATH/TO/onnx-convert PATH/TO/tool_hostile_gen
#        (from the project root)
#
# tool_hostile_gen writes every case of tests/hostile_models.h (cycles, SSA
# violations, undefined names, bad dims, data that does not fit its dims,
# bad data types, recursive functions, bad sparse initializers, huge and
# unprintable names, ...) into a temporary folder. For each file F,
# `check F`, `convert F --opset 17 -o OUT` and `optimize F -o OUT` must exit
# 1 with exactly one line on stderr naming the rule (or, for what the loader
# refuses, naming the file), and leave nothing in OUT's folder; `info F`
# may describe the model or refuse it in one line, but never crash. A command that runs longer than 60 s counts as a hang. Ends with
# "hostile_models: N passed, N failed".

BIN=$1
GEN=$2
if [ -z "$BIN" ] || [ ! -x "$BIN" ] || [ -z "$GEN" ] || [ ! -x "$GEN" ]; then
    echo "usage: sh tests/hostile_models.sh PATH/TO/onnx-convert PATH/TO/tool_hostile_gen" >&2
    exit 2
fi

LC_ALL=C
export LC_ALL

TALLY=hostile_models
. "$(dirname "$0")/tally.sh"

TMP=$(mktemp -d "${TMPDIR:-/tmp}/oc_hostile_models.XXXXXX") || exit 1
trap 'rm -rf "${TMP:?}"' EXIT
trap 'exit 1' INT TERM
IN=$TMP/in
OUTDIR=$TMP/out
ERR=$TMP/stderr
mkdir "$IN" "$OUTDIR" || exit 1

if ! "$GEN" "$IN" > "$TMP/cases" 2> "$ERR"; then
    bad "tool_hostile_gen failed: $(head -c 300 "$ERR")"
    echo "hostile_models: $passed passed, $failed failed"
    exit 1
fi

# The first 300 bytes of a file on one line, for messages.
snippet() {
    dd if="$1" bs=300 count=1 2>/dev/null | tr '\n' '|'
}

# A command that blocks must not hang the run: `timeout` when there is
# one, else the command runs as is.
limited() {
    if command -v timeout > /dev/null 2>&1; then
        timeout 60 "$@"
    else
        "$@"
    fi
}

# refused LABEL WANT CMD...: exit status 1, one stderr line holding WANT,
# nothing left in OUTDIR.
refused() {
    label=$1
    want=$2
    shift 2
    limited "$@" > /dev/null 2> "$ERR"
    rc=$?
    left=$(ls -A "$OUTDIR")
    if [ "$rc" = 124 ]; then
        bad "$label: still running after 60 s"
    elif [ "$rc" != 1 ]; then
        bad "$label: exit status $rc, expected 1; stderr: $(snippet "$ERR")"
    elif [ "$(wc -l < "$ERR" | tr -d ' ')" != 1 ] || ! grep -q . "$ERR"; then
        bad "$label: stderr is not exactly one line: $(snippet "$ERR")"
    elif ! grep -q -- "$want" "$ERR"; then
        bad "$label: stderr does not name $want: $(snippet "$ERR")"
    elif [ -n "$left" ]; then
        bad "$label left files behind: $left"
    else
        ok
    fi
    rm -rf "${OUTDIR:?}"/* "${OUTDIR:?}"/.[!.]* 2> /dev/null
}

n=0
while read -r name rule; do
    f=$IN/$name.onnx
    n=$((n + 1))
    # what the message must hold: the checker's rule, or for a file the
    # loader refuses, the file's name (every loader message starts so)
    if [ "$rule" = load ]; then
        want=$f
    else
        want=": $rule:"
    fi
    refused "check $name" "$want" "$BIN" check "$f"
    refused "convert $name --opset 17" "$want" \
        "$BIN" convert "$f" --opset 17 -o "$OUTDIR/out.onnx"
    refused "optimize $name" "$want" "$BIN" optimize "$f" -o "$OUTDIR/out.onnx"
    # info describes what it can load (inference included) and refuses
    # what it cannot: exit status 0, or 1 with one line; never a crash
    limited "$BIN" info "$f" > /dev/null 2> "$ERR"
    rc=$?
    if [ "$rc" = 0 ] && [ ! -s "$ERR" ]; then
        ok
    elif [ "$rc" = 1 ] && [ "$(wc -l < "$ERR" | tr -d ' ')" = 1 ]; then
        ok
    else
        bad "info $name: exit status $rc; stderr: $(snippet "$ERR")"
    fi
done < "$TMP/cases"

[ "$n" -gt 0 ] || bad "tool_hostile_gen wrote no cases"
echo "hostile_models: $n models"
echo "hostile_models: $passed passed, $failed failed"
[ "$failed" = 0 ]
