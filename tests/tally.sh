# tally.sh - the counting the shell tests share. A script sets TALLY to its
# name and sources this file (`. "$(dirname "$0")/tally.sh"`); then `ok`
# counts a passed check, `bad MESSAGE` a failed one (printing
# "FAIL NAME: MESSAGE" on stderr), and the script ends by printing
# "NAME: N passed, N failed", the line tests/run.sh sums.
passed=0
failed=0

ok() {
    passed=$((passed + 1))
}

bad() {
    failed=$((failed + 1))
    echo "FAIL $TALLY: $*" >&2
}
