#!/bin/sh
# big.sh - time and memory of onnx-convert on big models, against cp of the
# same bytes as the floor (issue 7). A measurement, never a test.
#
# Usage (from the project root; `make bench-big` builds what it needs and
# runs it):
#   sh bench/big.sh [DIR]
# DIR: where the models go (a fresh subfolder of it, deleted at the end);
# default a fresh folder under build/, so on the disk the project is on
# (a tmpfs /tmp would measure memory, not the disk).
# Environment: BIG_MB (transformer size in MiB, default 1024), RUNS (runs
# per step, default 3; the median wall time and the largest RSS are kept),
# CHAIN_SMALL / CHAIN_BIG (chain node counts, 10000 / 100000), LONG_S (a
# step whose first run takes longer runs only once, default 60: noise is
# small beside such times), PY_TIMEOUT (seconds one onnx run may take,
# default 1800; its cell then says TIMEOUT), KEEP=1 keeps the folder.
#
# Models (bench/gen_model, opset 13): a BIG_MB transformer with embedded
# weights, the same with external data, and two chains of small nodes.
# Steps per model: cp (the floor), load+save (convert IN -o OUT), convert
# 13 -> 17, convert 17 -> 13 (of the 17 output), optimize, and where
# /usr/bin/python3 has the onnx package, onnx.version_converter 13 -> 17.
# External-data models are written back with external data.
set -u

BIG_MB=${BIG_MB:-1024}
RUNS=${RUNS:-3}
CHAIN_SMALL=${CHAIN_SMALL:-10000}
CHAIN_BIG=${CHAIN_BIG:-100000}
KEEP=${KEEP:-0}
LONG_S=${LONG_S:-60}
PY_TIMEOUT=${PY_TIMEOUT:-1800}
tool=build/onnx-convert
gen=build/bench/gen_model
py=/usr/bin/python3
TIME=/usr/bin/time
. bench/timing.sh

for f in "$tool" "$gen"; do
    [ -x "$f" ] || { echo "big.sh: $f is missing; run 'make bench-big'" >&2; exit 1; }
done
[ -x "$TIME" ] || { echo "big.sh: needs $TIME (apt-get install time)" >&2; exit 1; }

# Disk: one model at a time is kept (generated before its steps, deleted
# after), plus the cp copy or one step's output, plus the 17 output that
# the 17 -> 13 step reads: about 4 x BIG_MB, with room to spare.
bench_workdir "${1:-build}" bench-big $((4 * BIG_MB + 512)) big.sh

have_py=0
if $py -c 'import onnx' >/dev/null 2>&1; then
    have_py=1
    py_ver=$($py -c 'import onnx; print(onnx.__version__)')
fi

# ---- measuring --------------------------------------------------------

# measure KEY STEP CLEAN CMD...: runs CMD RUNS times under time -v,
# removing the files CLEAN (a space-separated list) before each run, and
# records KEY_STEP_wall (median seconds) and KEY_STEP_rss (largest, KB),
# or FAILED (TIMEOUT when `timeout` stopped it) when a run exits non-zero.
measure() {
    key=$1 step=$2 clean=$3
    shift 3
    walls="" rss=0 i=0 n=$RUNS
    while [ "$i" -lt "$n" ]; do
        # shellcheck disable=SC2086 # CLEAN is a list of paths without spaces
        rm -rf $clean
        # Every run starts with nothing waiting to be written back: a run
        # that writes 1 GB leaves dirty pages that would otherwise slow down
        # whichever run comes next (cp and ours alike) by seconds.
        sync
        t0=$(date +%s%N)
        $TIME -v -o "$work/time.txt" "$@" >"$work/step.log" 2>&1
        st=$?
        t1=$(date +%s%N)
        if [ "$st" != 0 ]; then
            bad=FAILED
            [ "$st" = 124 ] && bad=TIMEOUT
            echo "  $step: $bad (run $((i + 1)), exit status $st): $*" >&2
            tail -n 5 "$work/step.log" | sed 's/^/    /' >&2
            eval "${key}_${step}_wall=$bad ${key}_${step}_rss=$bad"
            return 1
        fi
        # time -v rounds to 10 ms, too coarse for the 10k-node chain: the
        # wall time is read off the clock around it (ns), shown in ms.
        w=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", (b - a) / 1e9 }')
        walls="$walls $w"
        r=$(rss_of "$work/time.txt")
        [ "$r" -gt "$rss" ] && rss=$r
        i=$((i + 1))
        awk -v w="$w" -v l="$LONG_S" 'BEGIN { exit !(w > l) }' && break
        # Sub-second steps get four more runs: their median is the noisy one.
        [ "$i" = 1 ] && awk -v w="$w" 'BEGIN { exit !(w < 1) }' && n=$((RUNS + 4))
    done
    # shellcheck disable=SC2086
    w=$(median $walls)
    eval "${key}_${step}_wall=$w ${key}_${step}_rss=$rss"
    echo "  $step: median $w s of$walls s, peak RSS $((rss / 1024)) MB"
}

# A step that could not run because the one before it failed.
skipped() {
    eval "${1}_${2}_wall=FAILED ${1}_${2}_rss=FAILED"
    echo "  $2: FAILED (its input was not made)" >&2
}

# ---- the steps on one model -------------------------------------------

# bench_model KEY IN.onnx [DATA]: DATA names IN's external data file, and
# outputs are then written with external data too.
bench_model() {
    key=$1 in=$2 data=${3:-}
    out=$work/out
    mkdir -p "$out"
    dir=$(dirname "$in")
    bytes=$(cat "$in" ${data:+"$dir/$data"} | wc -c)
    eval "${key}_bytes=$bytes"
    # Warm the page cache: every step below reads a cached file.
    cat "$in" ${data:+"$dir/$data"} >/dev/null
    cp "$in" "$out/warm.onnx" && rm -f "$out/warm.onnx"
    ext() { [ -n "$data" ] && printf '%s\n' "--external-data $1"; }
    if [ -n "$data" ]; then
        measure "$key" cp "$out/cp.onnx $out/cp.data" \
            sh -c 'cp "$1" "$3" && cp "$2" "$4"' cp2 "$in" "$dir/$data" \
            "$out/cp.onnx" "$out/cp.data"
    else
        measure "$key" cp "$out/cp.onnx" cp "$in" "$out/cp.onnx"
    fi
    # shellcheck disable=SC2046 # ext prints an option and its value
    measure "$key" ls "$out/ls.onnx $out/ls.data" \
        "$tool" convert "$in" -o "$out/ls.onnx" $(ext ls.data)
    # shellcheck disable=SC2046
    measure "$key" up "$out/c17.onnx $out/c17.data" \
        "$tool" convert "$in" --opset 17 -o "$out/c17.onnx" $(ext c17.data)
    if [ -f "$out/c17.onnx" ]; then
        # shellcheck disable=SC2046
        measure "$key" down "$out/c13.onnx $out/c13.data" \
            "$tool" convert "$out/c17.onnx" --opset 13 -o "$out/c13.onnx" $(ext c13.data)
    else
        skipped "$key" down
    fi
    # shellcheck disable=SC2046
    measure "$key" opt "$out/opt.onnx $out/opt.data" \
        "$tool" optimize "$in" -o "$out/opt.onnx" $(ext opt.data)
    if [ "$have_py" = 1 ]; then
        measure "$key" py "$out/py17.onnx $out/py17.data" \
            timeout "$PY_TIMEOUT" $py bench/onnx_convert_version.py "$in" "$out/py17.onnx" 17 ${data:+py17.data}
    fi
    rm -rf "$out"
}

# gen_and_bench KEY LABEL GEN_ARGS...: generates model KEY, measures it,
# deletes it.
gen_and_bench() {
    key=$1 label=$2
    shift 2
    mdir=$work/$key
    mkdir -p "$mdir"
    echo "$label:"
    if ! "$gen" "$@" | sed 's/^/  generated /'; then
        echo "big.sh: generating $label failed" >&2
        exit 1
    fi
    case " $* " in
    *" --external "*) bench_model "$key" "$mdir/model.onnx" model.data ;;
    *) bench_model "$key" "$mdir/model.onnx" ;;
    esac
    rm -rf "$mdir"
}

# ---- the table --------------------------------------------------------

fmt_mb() { awk -v b="$1" 'BEGIN { printf "%.1f MB", b / 1048576 }'; }

# cell KEY STEP: "W s (Rx cp), M MB (Sx file)", or FAILED.
cell() {
    eval "w=\${${1}_${2}_wall:-FAILED} r=\${${1}_${2}_rss:-FAILED}"
    eval "cw=\${${1}_cp_wall:-FAILED} b=\${${1}_bytes}"
    case $w in
    FAILED) printf 'FAILED'; return ;;
    TIMEOUT) printf 'TIMEOUT (> %s s)' "$PY_TIMEOUT"; return ;;
    esac
    awk -v w="$w" -v r="$r" -v cw="$cw" -v b="$b" -v step="$2" 'BEGIN {
        mb = r / 1024; fmb = b / 1048576
        if (step == "cp") { printf "%.3f s, %.0f MB", w, mb; exit }
        tr = (cw != "FAILED" && cw > 0) ? sprintf("%.1fx cp", w / cw) : "cp 0.00 s"
        printf "%.3f s (%s), %.0f MB (%.2fx file)", w, tr, mb, mb / fmb }'
}

# ratio_cell STEP: chain CHAIN_BIG time / CHAIN_SMALL time.
ratio_cell() {
    eval "a=\${cbig_${1}_wall:-FAILED} b=\${csmall_${1}_wall:-FAILED}"
    case "$a$b" in
    *FAILED*) printf 'FAILED'; return ;;
    *TIMEOUT*) printf 'TIMEOUT'; return ;;
    esac
    awk -v a="$a" -v b="$b" 'BEGIN {
        if (b > 0) printf "%.1fx", a / b; else printf "- (%.2f s / 0.00 s)", a }'
}

row() {
    key=$1 label=$2
    eval "b=\${${key}_bytes:-0}"
    line="| $label | $(fmt_mb "$b") | $(cell "$key" cp) | $(cell "$key" ls) | $(cell "$key" up) | $(cell "$key" down) | $(cell "$key" opt) |"
    [ "$have_py" = 1 ] && line="$line $(cell "$key" py) |"
    echo "$line"
}

# ---- main ---------------------------------------------------------------

echo "big.sh: BIG_MB=$BIG_MB RUNS=$RUNS on $(nproc) cores, $(awk '/MemTotal/ { printf "%.0f GB", $2 / 1048576 }' /proc/meminfo) RAM, $(date -u '+%Y-%m-%d %H:%M UTC'), commit $(git rev-parse --short HEAD 2>/dev/null || echo '?')"
echo "The page cache is warmed by reading each model (and one untimed cp) before its steps: every time below is warm-cache."
echo

emb="transformer $BIG_MB MB, embedded"
extl="transformer $BIG_MB MB, external data"
small="chain $CHAIN_SMALL nodes"
big="chain $CHAIN_BIG nodes"
gen_and_bench emb "$emb" transformer --size-mb "$BIG_MB" --out "$work/emb/model.onnx"
gen_and_bench ext "$extl" transformer --size-mb "$BIG_MB" --out "$work/ext/model.onnx" --external model.data
gen_and_bench csmall "$small" chain --nodes "$CHAIN_SMALL" --out "$work/csmall/model.onnx"
gen_and_bench cbig "$big" chain --nodes "$CHAIN_BIG" --out "$work/cbig/model.onnx"

echo
echo "MB are MiB. Median wall time (clock read around each run, ms resolution) of $RUNS runs ($((RUNS + 4)) for steps under 1 s, 1 when the first took over $LONG_S s) (x cp: divided by the cp of the same bytes) and the largest peak RSS of the runs (x file: divided by the model's bytes on disk, .onnx plus data)."
echo
head="| model | size | cp (floor) | load+save | convert 13 -> 17 | convert 17 -> 13 | optimize |"
sep="|---|---:|---:|---:|---:|---:|---:|"
if [ "$have_py" = 1 ]; then
    head="$head onnx $py_ver version_converter 13 -> 17 |"
    sep="$sep---:|"
fi
echo "$head"
echo "$sep"
row emb "$emb"
row ext "$extl"
row csmall "$small"
row cbig "$big"
line="| time, $CHAIN_BIG / $CHAIN_SMALL nodes | | $(ratio_cell cp) | $(ratio_cell ls) | $(ratio_cell up) | $(ratio_cell down) | $(ratio_cell opt) |"
[ "$have_py" = 1 ] && line="$line $(ratio_cell py) |"
echo "$line"
[ "$have_py" = 1 ] || echo "(no onnx package for $py: the version_converter column is left out)"
