#!/usr/bin/env bash
# Runs the W6 cells (checkout-pool transactions, see README.md) for each peer
# and, if SHOAL_BENCH is set, for shoal; prints every RESULT line and then a
# summary per (impl, cell). Repetitions are the outer loop, so the impls are
# interleaved in time.
#
# Environment:
#   REPS=n               repetitions per cell (default 5)
#   CELLS="W6 C M K;..." cells, ';'-separated (default "W6 64 8 5000;W6 8 8 40000")
#   PEERS="a b"          impls to run (default: go-chan-pool erlang-poolboy, + shoal
#                        when SHOAL_BENCH is set)
#   SHOAL_BENCH=/path    shoal's benchmark binary (called as BIN W6 C M K), impls "shoal"
#                        (take, call, return) and "shoal-txn" (SHOAL_BENCH_W6=txn)
#   TIMEOUT=secs         per-run limit, `timeout -k 10` (default 60)
#   OUT=path             also write everything printed on stdout to this file
#   NO_BUILD=1           do not run build.sh when a peer binary is missing
#
# Per-run logs (stdout+stderr): build/results/w6-<UTC stamp>.logs/
set -uo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
BIN="$HERE/build/bin"
REPS=${REPS:-5}
TIMEOUT=${TIMEOUT:-60}
IFS=';' read -r -a CELLS <<< "${CELLS:-W6 64 8 5000;W6 8 8 40000}"

# W1 checksums (xor of xs50(i), i < N); W6's check for C*K = N must equal them.
declare -A KNOWN=([200000]=4157333466 [320000]=554262265 [1000000]=3111071181
                  [2000000]=3697708317 [10000000]=1546984362)

declare -A CMD
CMD[go-chan-pool]="$BIN/go-chan-pool"
CMD[erlang-poolboy]="$BIN/erlang-poolboy"
DEFAULT=(go-chan-pool erlang-poolboy)
if [[ -n "${SHOAL_BENCH:-}" ]]; then
  if [[ ! -x "$SHOAL_BENCH" ]]; then
    echo "run_w6.sh: SHOAL_BENCH=$SHOAL_BENCH is not executable" >&2
    exit 2
  fi
  CMD[shoal]="$SHOAL_BENCH"
  CMD[shoal-txn]="env SHOAL_BENCH_W6=txn $SHOAL_BENCH" # one shoal_checkout_call each
  DEFAULT+=(shoal shoal-txn)
fi
if [[ -n "${PEERS:-}" ]]; then
  read -r -a SELECTED <<< "$PEERS"
else
  SELECTED=("${DEFAULT[@]}")
fi
for impl in "${SELECTED[@]}"; do
  [[ -n "${CMD[$impl]:-}" ]] || {
    echo "run_w6.sh: unknown impl '$impl' (known: ${!CMD[*]}; shoal needs SHOAL_BENCH)" >&2
    exit 2
  }
done
for cell in "${CELLS[@]}"; do
  read -r -a a <<< "$cell"
  if [[ ${#a[@]} != 4 || "${a[0]}" != W6 ]]; then
    echo "run_w6.sh: bad cell '$cell' (want 'W6 C M K')" >&2
    exit 2
  fi
done

need_build=0
for impl in "${SELECTED[@]}"; do
  [[ "$impl" == shoal* || -x "${CMD[$impl]}" ]] || need_build=1
done
if ((need_build)); then
  [[ -z "${NO_BUILD:-}" ]] || { echo "run_w6.sh: peers not built (NO_BUILD set)" >&2; exit 1; }
  "$HERE/build.sh" || exit 1
fi

STAMP=$(date -u +%Y%m%dT%H%M%SZ)
LOGDIR="$HERE/build/results/w6-$STAMP.logs"
mkdir -p "$LOGDIR"
ROWS="$LOGDIR/rows.tsv"   # impl, cell, status, rate, p99_take_us, uses_min, uses_max, check
: > "$ROWS"
if [[ -n "${OUT:-}" ]]; then
  mkdir -p "$(dirname "$OUT")"
  exec > >(tee "$OUT")
fi

field() { # field KEY LINE -> value of KEY=... in a RESULT line
  local tok
  for tok in $2; do [[ "$tok" == "$1="* ]] && { echo "${tok#*=}"; return; }; done
}

echo "# run_w6.sh REPS=$REPS TIMEOUT=$TIMEOUT nproc=$(nproc) date=$STAMP impls: ${SELECTED[*]}"
echo "# cells: $(IFS=';'; echo "${CELLS[*]}")"
T_START=$(date +%s.%N)
for rep in $(seq 1 "$REPS"); do
  for cell in "${CELLS[@]}"; do
    for impl in "${SELECTED[@]}"; do
      log="$LOGDIR/$impl.${cell// /_}.rep$rep.log"
      # shellcheck disable=SC2086
      timeout -k 10 "$TIMEOUT" ${CMD[$impl]} $cell > "$log" 2>&1
      rc=$?
      line=$(grep '^RESULT ' "$log" | tail -n 1)
      status=ok
      if ((rc == 3)); then status=unsupported
      elif ((rc == 124 || rc == 137)); then status=timeout
      elif ((rc != 0)); then status="fail($rc)"
      elif [[ -z "$line" ]]; then status=noresult
      fi
      if [[ "$status" == ok ]]; then
        echo "$line" | sed -E "s/ impl=[^ ]+/ impl=$impl/"
        printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$impl" "$cell" ok \
          "$(field rate "$line")" "$(field p99_take_us "$line")" \
          "$(field member_uses_min "$line")" "$(field member_uses_max "$line")" \
          "$(field check "$line")" >> "$ROWS"
      else
        echo "RESULT workload=W6 impl=$impl args=\"$cell\" status=$status (log: $log)"
        printf '%s\t%s\t%s\t\t\t\t\t\n' "$impl" "$cell" "$status" >> "$ROWS"
      fi
    done
  done
done
T_END=$(date +%s.%N)

# --- summary -------------------------------------------------------------------
median() { # median FMT < numbers -> median (mean of the middle two for an even count)
  sort -g | awk -v f="$1" '{v[NR] = $1} END {
    if (NR == 0) { print "-"; exit }
    m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
    printf f "\n", m }'
}
col() { # col IMPL CELL N -> column N of the ok rows of (IMPL, CELL)
  awk -F'\t' -v i="$1" -v c="$2" -v n="$3" '$1 == i && $2 == c && $3 == "ok" { print $n }' "$ROWS"
}

echo
echo "# summary: median over ok runs; rate msg/s median (min..max); p99_take_us median;"
echo "# member uses: median of per-run min / median of per-run max; check: distinct values"
printf '%-16s %-16s %7s %28s %12s %18s  %s\n' impl cell ok/runs "rate median (min..max)" \
  p99_take_us "uses min / max" check
problems=()
for cell in "${CELLS[@]}"; do
  read -r -a a <<< "$cell"
  n=$((a[1] * a[3]))
  for impl in "${SELECTED[@]}"; do
    runs=$(awk -F'\t' -v i="$impl" -v c="$cell" '$1 == i && $2 == c' "$ROWS" | wc -l)
    ok=$(col "$impl" "$cell" 4 | wc -l)
    rmed=$(col "$impl" "$cell" 4 | median %.0f)
    rmin=$(col "$impl" "$cell" 4 | sort -g | head -n 1)
    rmax=$(col "$impl" "$cell" 4 | sort -g | tail -n 1)
    p99=$(col "$impl" "$cell" 5 | median %.2f)
    umin=$(col "$impl" "$cell" 6 | median %.0f)
    umax=$(col "$impl" "$cell" 7 | median %.0f)
    checks=$(col "$impl" "$cell" 8 | sort -u | paste -sd, -)
    printf '%-16s %-16s %7s %28s %12s %18s  %s\n' "$impl" "$cell" "$ok/$runs" \
      "${rmed:--} (${rmin:--}..${rmax:--})" "${p99:--}" "${umin:--} / ${umax:--}" "${checks:--}"
    ((ok == runs)) || problems+=("$impl '$cell': $((runs - ok)) of $runs runs not ok")
    if [[ -n "$checks" && -n "${KNOWN[$n]:-}" && "$checks" != "${KNOWN[$n]}" ]]; then
      problems+=("$impl '$cell': check $checks != W1 checksum ${KNOWN[$n]} for N=C*K=$n")
    fi
  done
  all=$(awk -F'\t' -v c="$cell" '$2 == c && $3 == "ok" { print $8 }' "$ROWS" | sort -u | wc -l)
  ((all <= 1)) || problems+=("'$cell': impls disagree on check")
done
echo "# total wall time: $(awk "BEGIN{printf \"%.1f\", $T_END - $T_START}") s; logs: $LOGDIR"
if ((${#problems[@]})); then
  printf '# PROBLEM: %s\n' "${problems[@]}"
  exit 1
fi
known=$(for cell in "${CELLS[@]}"; do
  read -r -a a <<< "$cell"; n=$((a[1] * a[3]))
  [[ -n "${KNOWN[$n]:-}" ]] && echo "N=$n: ${KNOWN[$n]}"; done | sort -u | paste -sd, -)
echo "# all runs ok; checks agree${known:+ and match the W1 checksums ($known)}"
