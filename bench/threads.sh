#!/bin/bash
# bench/threads.sh - more dispatcher threads than cores, and contention as
# a pool widens (issue 14, item 5).
#
#   bench/threads.sh SHOAL_BENCH [OUT.tsv]
#   REPS=7 (default)  THREADS="2 8 16"  WIDTHS="2 4 16"
#
# Part 1, oversubscription: W1 10^7 W=2 and W2 P=1000 M=10^4 at
# SHOAL_THREADS = each of THREADS, the thread counts interleaved within
# each repetition so the machine's state is shared between them. Part 2,
# contention: W1 10^7 at W = each of WIDTHS on the default threads. Every
# run's RESULT line and its "stats (timed interval)" line go to the TSV
# (cell, threads, rate, steals, wakes, parks, msgs); the summary prints per
# (cell, threads) the median rate, min..max, the median's ratio to the
# first thread count, and steals, wakes and parks per million messages
# (medians).
set -uo pipefail

shoal=${1:?usage: bench/threads.sh SHOAL_BENCH [OUT.tsv]}
out=${2:-threads-$(date -u +%Y%m%dT%H%MZ).tsv}
reps=${REPS:-7}
threads=${THREADS:-"2 8 16"}
widths=${WIDTHS:-"2 4 16"}

: >"$out"
# run CELL THREADS ARGS...: one run, one TSV row.
run() {
    local cell=$1 nthr=$2
    shift 2
    local all rate msgs steals wakes parks
    if [ "$nthr" = default ]; then
        all=$("$shoal" "$@" 2>&1)
    else
        all=$(SHOAL_THREADS=$nthr "$shoal" "$@" 2>&1)
    fi
    rate=$(sed -n 's/^RESULT.* rate=\([0-9.]*\).*/\1/p' <<<"$all")
    msgs=$(sed -n 's/^RESULT.* msgs=\([0-9]*\).*/\1/p' <<<"$all")
    steals=$(sed -n 's/.*stats (timed interval).* steals=\([0-9]*\).*/\1/p' <<<"$all")
    wakes=$(sed -n 's/.*stats (timed interval).* wakes=\([0-9]*\).*/\1/p' <<<"$all")
    parks=$(sed -n 's/.*stats (timed interval).* parks=\([0-9]*\).*/\1/p' <<<"$all")
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$cell" "$nthr" "${rate:-na}" "${steals:-na}" \
        "${wakes:-na}" "${parks:-na}" "${msgs:-na}" >>"$out"
}

for _ in $(seq 1 "$reps"); do
    for t in $threads; do
        run "W1 10M W=2" "$t" W1 10000000 2
        run "W2 P=1000" "$t" W2 1000 10000
    done
    for w in $widths; do
        run "W1 10M W=$w" default W1 10000000 "$w"
    done
done

python3 - "$out" <<'PY'
import statistics as st, sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1])]
cells = {}
for cell, nthr, rate, steals, wakes, parks, msgs in rows:
    if "na" in (rate, steals, wakes, parks, msgs):
        print(f"{cell} threads={nthr}: a run printed no result", file=sys.stderr)
        continue
    m = float(msgs) / 1e6
    cells.setdefault((cell, nthr), []).append(
        (float(rate), int(steals) / m, int(wakes) / m, int(parks) / m))
base = {}
for (cell, nthr), v in cells.items():
    r = [x[0] for x in v]
    med = st.median(r)
    base.setdefault(cell, med)
    print(f"{cell:12} threads={nthr:7} n={len(r):2} median={med / 1e6:6.2f}M "
          f"min..max={min(r) / 1e6:.2f}..{max(r) / 1e6:.2f}M "
          f"vs_first={med / base[cell]:.2f} "
          f"per_M_msgs: steals={st.median(x[1] for x in v):.1f} "
          f"wakes={st.median(x[2] for x in v):.1f} parks={st.median(x[3] for x in v):.1f}")
PY
