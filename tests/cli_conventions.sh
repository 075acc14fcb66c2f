#!/bin/sh
# cli_conventions.sh - the command line's conventions (issue 18), on
# models of testdata/ and inputs built here, so it runs without ../shared:
# --name=value, check of one folder, failure lines that name the model,
# one-line usage errors, - as standard input and -o - as standard output,
# and a batch folder deeper than the walk goes is reported, not skipped.
# Usage: sh tests/cli_conventions.sh PATH/TO/onnx-convert   (from the
# project root). Prints "cli_conventions: N passed, N failed".
BIN=${1:?usage: sh tests/cli_conventions.sh PATH/TO/onnx-convert}
case $BIN in /*) ;; *) BIN=$PWD/$BIN ;; esac
M=$PWD/testdata/small_cnn.onnx
TR=$PWD/testdata/tiny_transformer.onnx
passed=0
failed=0
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
# a tool that takes -o - or w.bin for file names writes them here, not
# into the project
cd "$T" || exit 1

ok() { passed=$((passed + 1)); }
bad() { echo "FAIL $*"; failed=$((failed + 1)); }
# expect LABEL COND...: one check
expect() {
    label=$1
    shift
    if "$@"; then ok; else bad "$label"; sed -n 1,3p "$T/err"; fi
}
lines() { wc -l < "$1" | tr -d ' '; }

# --name=value is --name value
"$BIN" convert "$M" -o "$T/a.onnx" --opset 14 >/dev/null 2>"$T/err"
"$BIN" convert "$M" -o "$T/b.onnx" --opset=14 >/dev/null 2>"$T/err"
expect "--opset=14 writes what --opset 14 writes" cmp -s "$T/a.onnx" "$T/b.onnx"
"$BIN" convert "$M" -o="$T/c.onnx" >/dev/null 2>"$T/err"
expect "-o=FILE is not an option form (only --name=value)" test ! -e "$T/c.onnx"
"$BIN" optimize "$M" --out-dir="$T/od" --passes=dead_code >/dev/null 2>"$T/err"
expect "--out-dir=DIR --passes=P" test -s "$T/od/small_cnn.onnx"

# check of one folder searches it
mkdir -p "$T/one/sub"
cp "$M" "$T/one/sub/m.onnx"
"$BIN" check "$T/one" >"$T/out" 2>"$T/err"
expect "check DIR: exit 0" test $? -eq 0
expect "check DIR: the model below it is checked" grep -q "^ok .*$T/one/sub/m.onnx" "$T/out"

# a single model's failure names it: converter refusal, unreadable file
"$BIN" convert "$TR" -o "$T/r.onnx" --opset 8 >/dev/null 2>"$T/err"
rc=$?
expect "refusal: exit 1" test $rc -eq 1
expect "refusal: one line" test "$(lines "$T/err")" = 1
expect "refusal: the line names the model" grep -q "^onnx-convert: $TR: node '" "$T/err"
printf 'not a model' > "$T/junk.onnx"
"$BIN" info "$T/junk.onnx" >/dev/null 2>"$T/err"
expect "info of junk: one line naming it" \
    sh -c "[ \$(wc -l < '$T/err') = 1 ] && grep -q '^onnx-convert: $T/junk.onnx: ' '$T/err'"

# a usage error: one line, then where to read more; exit 2
"$BIN" convert "$M" >/dev/null 2>"$T/err"
rc=$?
expect "usage: exit 2" test $rc -eq 2
expect "usage: two lines" test "$(lines "$T/err")" = 2
expect "usage: see convert --help" grep -qx "see onnx-convert convert --help" "$T/err"
"$BIN" >/dev/null 2>"$T/err"
expect "no command: two lines" test "$(lines "$T/err")" = 2
"$BIN" check "$M" --frob >/dev/null 2>"$T/err"
expect "check usage: see check --help" grep -qx "see onnx-convert check --help" "$T/err"

# standard input and output
"$BIN" convert - -o "$T/s.onnx" --opset 14 <"$M" >/dev/null 2>"$T/err"
expect "convert - reads standard input" cmp -s "$T/a.onnx" "$T/s.onnx"
"$BIN" convert "$M" -o - --opset 14 >"$T/o.onnx" 2>"$T/err"
expect "-o - writes the model to standard output" cmp -s "$T/a.onnx" "$T/o.onnx"
expect "-o -: the report goes to stderr" grep -q "^converted" "$T/err"
"$BIN" optimize - -o - <"$M" >"$T/p.onnx" 2>"$T/err"
"$BIN" optimize "$M" -o "$T/q.onnx" >/dev/null 2>&1
expect "optimize - -o -" cmp -s "$T/p.onnx" "$T/q.onnx"
"$BIN" check - <"$M" >"$T/out" 2>"$T/err"
expect "check -" grep -q "^-: valid" "$T/out"
"$BIN" info - <"$M" >"$T/out" 2>"$T/err"
expect "info -" grep -q "Conv" "$T/out"
"$BIN" check - <"$T/junk.onnx" >/dev/null 2>"$T/err"
rc=$?
expect "check - of junk: exit 1, one line naming -" \
    sh -c "[ $rc = 1 ] && [ \$(wc -l < '$T/err') = 1 ] && grep -q '^onnx-convert: -: ' '$T/err'"
"$BIN" convert "$M" -o - --external-data w.bin >"$T/o2" 2>"$T/err"
rc=$?
expect "-o - with --external-data: usage error, nothing written" \
    sh -c "[ $rc = 2 ] && [ ! -s '$T/o2' ]"
"$BIN" check - "$M" >/dev/null 2>"$T/err"
expect "check - with another model: usage error" test $? -eq 2
# a model with external data streams out whole: it loads without its side file
mkdir -p "$T/ext" "$T/alone"
"$BIN" convert "$M" -o "$T/ext/m.onnx" --external-data w.bin --external-threshold 0 \
    >/dev/null 2>"$T/err"
"$BIN" convert "$T/ext/m.onnx" -o - >"$T/alone/m.onnx" 2>"$T/err"
expect "-o - of a model with external data: written" \
    sh -c "[ -s '$T/ext/w.bin' ] && [ -s '$T/alone/m.onnx' ]"
"$BIN" check "$T/alone/m.onnx" >/dev/null 2>"$T/err"
expect "-o - of a model with external data: checks alone" test $? -eq 0

# a batch folder deeper than the walk goes: reported, exit 1, and the
# models above it still run
d=$T/deep
mkdir -p "$d"
cp "$M" "$d/top.onnx"
i=0
while [ $i -lt 70 ]; do d=$d/d; i=$((i + 1)); done
mkdir -p "$d"
cp "$M" "$d/bottom.onnx"
"$BIN" check "$T/deep" >"$T/out" 2>"$T/err"
rc=$?
expect "deep folder: exit 1" test $rc -eq 1
expect "deep folder: a failure line names the folder not searched" \
    grep -q "^onnx-convert: $T/deep/\(d/\)*d: .*not searched" "$T/err"
expect "deep folder: the model above it is checked" grep -q "^ok .*top.onnx" "$T/out"
"$BIN" convert "$T/deep" --out-dir "$T/deep-out" >"$T/out" 2>"$T/err"
rc=$?
expect "deep folder, convert: exit 1 and the folder named" \
    sh -c "[ $rc = 1 ] && grep -q 'not searched' '$T/err' && [ -s '$T/deep-out/top.onnx' ]"

echo "cli_conventions: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
