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
