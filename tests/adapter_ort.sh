#!/bin/sh
# ONNX Runtime 1.30 (../shared/tools/ort) as a second judge of the adapter
# cases (tests/adapters/*.txt): every model test_adapter_cases converts
# (to each target, and back) is run in ORT on the seeded inputs the
# evaluator was fed, and compared with ORT's run of the original case
# (tests/adapter_ort.js: rtol 1e-3, atol 1e-5, as verify.c).
#
#   tests/adapter_ort.sh [BUILD_DIR] [FILTER]   (from the project root)
#
# Counts, per target (the "-back" models count under the case's target):
#   ok        ORT runs both and they agree
#   wrong     ORT runs both and they differ (a failure)
#   invalid   ORT refuses the converted model as invalid ONNX, and not the
#             original (a failure)
#   no-judge  ORT cannot run the original, lacks a kernel or type at that
#             opset, the original's outputs are random, or ORT's process
#             died on the model (listed in the details, not a failure)
# Prints "adapter_ort: N passed, N failed" (passed = ok, failed = wrong +
# invalid). Skips ("adapter_ort: 0 passed, 0 failed, 1 skipped" after a
# SKIP line naming why) when node or the oracle is missing.
build=${1:-build}
filter=${2:-}
name=adapter_ort
ort=${OC_ORT_DIR:-../shared/tools/ort}
out=$build/$name
. tests/ort_require.sh
rm -rf "$out"
mkdir -p "$out"
"$build/tests/test_adapter_cases" --ort-out "$out/cases" $filter >"$out/cases.log" 2>&1
list=$out/cases/list.txt
if [ ! -s "$list" ]; then
    echo "$name: test_adapter_cases --ort-out wrote no models (see $out/cases.log)"
    echo "$name: 0 passed, 1 failed"
    exit 1
fi

# One ORT process over the whole list; when ORT kills it (it aborts on a
# few models: an integer division by zero), the model it was on is marked
# DIED (all of the case's models when it died on the original) and a new
# process goes on after them.
total=$(wc -l <"$list")
: >"$out/results.txt"
done_n=0
while [ "$done_n" -lt "$total" ]; do
    node tests/adapter_ort.js "$ort" "$list" tests/adapter_ort_known.txt "$done_n" >"$out/part.txt" 2>"$out/part.err"
    grep -E '^(OK|WRONG|INVALID|NOJUDGE) ' "$out/part.txt" >>"$out/results.txt"
    before=$done_n
    done_n=$(wc -l <"$out/results.txt")
    [ "$done_n" -lt "$total" ] || break
    # a process that judged nothing and could not load ORT is a broken
    # judge, not a model that killed it: say so instead of marking every
    # model "no-judge" one process at a time
    if [ "$done_n" -eq "$before" ] && grep -q "Cannot find module" "$out/part.err"; then
        grep -m 1 "Cannot find module" "$out/part.err" | sed "s/^/FAIL $name: /"
        echo "$name: 0 passed, 1 failed"
        exit 1
    fi
    why="the ORT process died: $(grep -v "^.\{0,12\}20[0-9][0-9]-" "$out/part.err" | tail -n 1 | cut -c1-200)"
    last=$(tail -n 1 "$out/part.txt")
    if [ "${last%% *}" = ORIGINAL ]; then
        # on the original: every model of that case
        tail -n +"$((done_n + 1))" "$list" | awk -v c="${last#ORIGINAL }" -v why="$why (on the original)" \
            '$1 != c { exit } { print "NOJUDGE " $1 " " $3 " " why }' >>"$out/results.txt"
    else
        sed -n "$((done_n + 1))p" "$list" | awk -v why="$why" '{ print "NOJUDGE " $1 " " $3 " " why }' >>"$out/results.txt"
    fi
    done_n=$(wc -l <"$out/results.txt")
done

awk -v name="$name" '
    {   t = $3; sub(/-back$/, "", t); seen[t] = 1
        if ($1 == "OK") ok[t]++
        else if ($1 == "WRONG") { bad[t]++; print "WRONG (ORT) " $0 > "/dev/stderr" }
        else if ($1 == "INVALID") { inv[t]++; print "INVALID (ORT) " $0 > "/dev/stderr" }
        else { nj[t]++; print "NO-JUDGE " $0 > "/dev/stderr" }
    }
    END {
        printf "%s: converted adapter cases judged by ONNX Runtime 1.30 against its run of the original\n", name
        printf "  target      ok  wrong  invalid  no-judge\n"
        for (k = 1; k <= 28; k++)
            for (p = 0; p < 2; p++) {
                t = (p ? "ml" : "") k
                if (!(t in seen))
                    continue
                printf "  %6s %7d %6d %8d %9d\n", t, ok[t], bad[t], inv[t], nj[t]
                tok += ok[t]; tbad += bad[t]; tinv += inv[t]; tnj += nj[t]
            }
        printf "  total  %7d %6d %8d %9d\n", tok, tbad, tinv, tnj
        printf "%s: %d passed, %d failed\n", name, tok, tbad + tinv
    }' "$out/results.txt" >"$out/summary.txt" 2>"$out/details.txt"
grep -E '^(WRONG|INVALID) ' "$out/details.txt" | head -n 20 | sed "s/^/FAIL $name: /"
echo "details: $out/details.txt"
cat "$out/summary.txt"
