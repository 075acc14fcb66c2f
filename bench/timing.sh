# timing.sh - helpers big.sh and big3g.sh source: reading /usr/bin/time -v.
# (POSIX sh; no side effects when sourced.)

# Seconds from the "Elapsed (wall clock) time" line ("h:mm:ss" or "m:ss.ss").
wall_of() {
    awk -F': ' '/Elapsed \(wall clock\)/ {
        n = split($2, p, ":"); s = 0
        for (i = 1; i <= n; i++) s = s * 60 + p[i]
        printf "%.2f\n", s }' "$1"
}

# Kilobytes from the "Maximum resident set size" line.
rss_of() {
    awk -F': ' '/Maximum resident set size/ { print $2 }' "$1"
}

# The median of the numbers given (the lower middle one for an even count).
median() {
    printf '%s\n' "$@" | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'
}

# bench_workdir BASE PREFIX NEED_MB SCRIPT: sets $work to a fresh folder
# PREFIX.XXXXXX under BASE, removed at exit (kept with KEEP=1), and stops
# the script when its disk has less than NEED_MB free.
bench_workdir() {
    mkdir -p "$1" || exit 1
    work=$(mktemp -d "$1/$2.XXXXXX") || exit 1
    trap 'if [ "${KEEP:-0}" = 1 ]; then echo "kept $work"; else rm -rf "$work"; fi' EXIT
    trap 'exit 130' INT TERM
    avail=$(df -Pm "$work" | awk 'NR == 2 { print $4 }')
    echo "disk: $avail MB free at $work, this run needs about $3 MB"
    if [ "$avail" -lt "$3" ]; then
        echo "$4: not enough free disk space (need about $3 MB); use a smaller size or another DIR" >&2
        exit 1
    fi
}
