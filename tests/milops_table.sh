#!/bin/sh
# milops_table.sh - the committed src/coreml/milops_table.c is what
# src/coreml/milops_gen.py makes from coremltools' MIL op definitions in
# ../shared (regenerated into a temporary folder and compared), and the
# generator reads a new op version and refuses what it cannot read
# instead of guessing. Skips when the definitions are not on this machine.
TALLY=milops_table
. "$(dirname "$0")/tally.sh"
defs=${MIL_DEFS:-../shared/tools/coremltools/src/coremltools/converters/mil/mil/ops/defs}
py=/usr/bin/python3
if [ ! -d "$defs/iOS15" ]; then
    echo "SKIP milops_table: no coremltools op definitions at $defs"
    echo "$TALLY: 0 passed, 0 failed, 1 skipped"
    exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if $py src/coreml/milops_gen.py "$defs" "$tmp/table.c" 2>"$tmp/err"; then ok; else bad "generator failed: $(cat "$tmp/err")"; fi
if cmp -s src/coreml/milops_table.c "$tmp/table.c"; then ok; else bad "src/coreml/milops_table.c is not what src/coreml/milops_gen.py makes now (run make milops)"; fi

# a copy of the definitions with a new iOS18 version of relu taking alpha
mkdir -p "$tmp/defs"
for d in iOS15 iOS16 iOS17 iOS18; do cp -r "$defs/$d" "$tmp/defs/$d"; done
cat >>"$tmp/defs/iOS18/states.py" <<'PY'


@register_op(opset_version=_IOS18_TARGET)
class relu(Operation):
    input_spec = InputSpec(
        x=TensorInputType(type_domain="T"),
        alpha=TensorInputType(const=True, optional=True, type_domain=types.fp32),
    )
    type_domains = {"T": (types.fp16, types.fp32)}
PY
if $py src/coreml/milops_gen.py "$tmp/defs" "$tmp/new.c" 2>"$tmp/err"; then ok; else bad "generator failed on the copy: $(cat "$tmp/err")"; fi
if grep -q '{"relu", 3, 2, mp_' "$tmp/new.c" && grep -q '{"relu", 0, 1, mp_' "$tmp/new.c"; then ok; else bad "the iOS18 relu is not a second version"; fi
if grep -q '{"alpha", "fp32", true, true, false, NULL}' "$tmp/new.c"; then ok; else bad "the iOS18 relu's alpha is not read"; fi

# an input kind the generator does not know is an error naming the class
cat >>"$tmp/defs/iOS18/states.py" <<'PY'


@register_op(opset_version=_IOS18_TARGET)
class frob(Operation):
    input_spec = InputSpec(x=MysteryInputType())
PY
if $py src/coreml/milops_gen.py "$tmp/defs" "$tmp/bad.c" 2>"$tmp/err"; then
    bad "generator accepted an unknown input kind"
else
    if grep -q 'iOS18.states.frob: input x has unknown kind MysteryInputType' "$tmp/err"; then ok; else bad "unexpected message: $(cat "$tmp/err")"; fi
fi
if [ ! -e "$tmp/bad.c" ]; then ok; else bad "a table was written after an error"; fi

echo "$TALLY: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
