#!/bin/bash
# bench/dist.sh - the distribution of shoal's rate over many runs of one
# cell, to see a slow mode that three repetitions hide: per cell, REPS runs
# of shoal-bench alone (back to back), then REPS pairs alternating shoal and
# its Go peer. Prints one summary line per (cell, set) and writes every
# RESULT line to a TSV.
#
#   bench/dist.sh SHOAL_BENCH GO_CHAN [OUT.tsv]
#   REPS=25 (default)  CELLS="W1:10000000:2 ..." (default: W1 W=2 and W=4,
#   W2 P=1000, W4 block)  C2C=build-bench/bin/shoal-c2c: before each run,
#   the machine's cache-line round trip between CPUs 0 and 1 (bench/c2c.c),
#   in the TSV's sixth column
#
# GO_CHAN is the peer harness's go-chan binary (../shared/bench/build.sh);
# W1 runs it as go-chan-rr (GO_W1_MODE=rr, its fastest W1), the rest as
# go-chan. Summary: median, p10, min, max of the `rate=` field and
# min/median -- the slow mode shows as a min far below the median.
set -uo pipefail

shoal=${1:?usage: bench/dist.sh SHOAL_BENCH GO_CHAN [OUT.tsv]}
gochan=${2:?usage: bench/dist.sh SHOAL_BENCH GO_CHAN [OUT.tsv]}
out=${3:-dist-$(date -u +%Y%m%dT%H%MZ).tsv}
reps=${REPS:-25}
cells=${CELLS:-"W1:10000000:2 W1:10000000:4 W2:1000:10000 W4:2000000:block"}

: >"$out"
# run SET IMPL ARGS...: one run; appends "cell set impl rate" to OUT.
run() {
    local set=$1 impl=$2
    shift 2
    local line rate c2c=na
    [ -n "${C2C:-}" ] && c2c=$("$C2C" | sed -n 's/^c2c_ns=//p')
    if [ "$impl" = go-chan-rr ]; then
        line=$(GO_W1_MODE=rr "$gochan" "$@" 2>/dev/null | grep '^RESULT')
    elif [ "$impl" = go-chan ]; then
        line=$("$gochan" "$@" 2>/dev/null | grep '^RESULT')
    else
        line=$("$shoal" "$@" 2>/dev/null | grep '^RESULT')
    fi
    rate=$(sed -n 's/.* rate=\([0-9.]*\).*/\1/p' <<<"$line")
    printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$*" "$set" "$impl" "${rate:-0}" "$line" "$c2c" >>"$out"
}

for c in $cells; do
    IFS=: read -r w a b <<<"$c"
    peer=go-chan
    [ "$w" = W1 ] && peer=go-chan-rr
    for ((i = 0; i < reps; i++)); do
        run alone shoal "$w" "$a" "$b"
    done
    for ((i = 0; i < reps; i++)); do
        run paired shoal "$w" "$a" "$b"
        run paired "$peer" "$w" "$a" "$b"
    done
done

printf '%-26s %-7s %-11s %9s %9s %9s %9s %8s\n' cell set impl median p10 min max min/med
sort -t $'\t' -k1,1 -k2,2 -k3,3 -k4,4g "$out" | awk -F'\t' '
    function flush() {
        if (n == 0) return
        med = n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
        p10 = v[int((n - 1) * 0.1) + 1]
        printf "%-26s %-7s %-11s %8.2fM %8.2fM %8.2fM %8.2fM %8.2f\n", key1, key2, key3,
            med / 1e6, p10 / 1e6, v[1] / 1e6, v[n] / 1e6, v[1] / med
        n = 0
    }
    { k = $1 SUBSEP $2 SUBSEP $3
      if (k != last) { flush(); last = k; key1 = $1; key2 = $2; key3 = $3 }
      v[++n] = $4 }
    END { flush() }'
echo "raw: $out"
