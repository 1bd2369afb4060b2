#!/usr/bin/env bash
# Long fuzz campaigns: run every Fuzz* target of the module for a while,
# one after the other, and report per target the time, executions, new
# interesting inputs and failures.
#
#   scripts/fuzz-campaign.sh                 # every target, 10 minutes each
#   FUZZTIME=30m scripts/fuzz-campaign.sh    # longer
#   scripts/fuzz-campaign.sh 'Parse|Open'    # only the targets matching a regexp
#
# Settings (environment):
#   FUZZTIME  how long each target runs (default 10m; a count such as
#             200000x works too)
#   PARALLEL  fuzzing workers per target (default 1, which keeps a shared
#             machine usable; the figures in docs/reliability.md use 1)
#   OUT       where logs, the summary and copies of failing inputs go
#             (default /tmp/cairn-fuzz-campaign)
#
# Targets are found with `go test -list '^Fuzz' ./...`, so a new fuzz test
# joins the campaign without editing this script.
#
# A failing input is written by `go test` into the package's
# testdata/fuzz/FuzzName/ (commit it with the fix: it then runs in every
# `go test`), and copied to $OUT/failures/. New interesting inputs that do
# not fail stay in Go's fuzz cache ($(go env GOCACHE)/fuzz), so a later
# campaign starts where this one stopped.
#
# Why CI fuzzes by count (`-fuzztime 5000x` in .ci/run) and this script by
# duration: with Go 1.26 a duration-bound run can end with "context deadline
# exceeded" and no failing input when the coordinator races its own
# deadline on a loaded machine (golang/go#75804, fixed in Go 1.27). That
# must never fail CI; here it is reported as "deadline race" and counted as
# a failure only if an input was written.
#
# Exit status: 0 when no target wrote a failing input, 1 otherwise, 2 on
# a usage error.
set -uo pipefail
cd "$(dirname "$0")/.."

FUZZTIME=${FUZZTIME:-10m}
PARALLEL=${PARALLEL:-1}
OUT=${OUT:-/tmp/cairn-fuzz-campaign}
MATCH=${1:-.}

if ! [[ $PARALLEL =~ ^[1-9][0-9]*$ ]]; then
  echo "PARALLEL=$PARALLEL: want a positive count" >&2; exit 2
fi
if ! [[ $FUZZTIME =~ ^([0-9]+x|[0-9]+(\.[0-9]+)?(ns|us|ms|s|m|h))+$ ]]; then
  echo "FUZZTIME=$FUZZTIME: want a duration (10m, 1h) or a count (100000x)" >&2; exit 2
fi
mkdir -p "$OUT/logs" "$OUT/failures"

# pkg<TAB>target for every fuzz target, in package order.
targets=$(go test -list '^Fuzz' ./... 2>/dev/null | awk '
  /^Fuzz/ { names[n++] = $1; next }
  /^(ok|FAIL|\?)[ \t]/ { for (i = 0; i < n; i++) print $2 "\t" names[i]; n = 0 }
' | awk -F'\t' -v m="$MATCH" '$2 ~ m')
if [ -z "$targets" ]; then
  echo "no fuzz target matches $MATCH" >&2; exit 2
fi

summary="$OUT/summary.md"
{
  echo "# Fuzz campaign $(date -u +%Y-%m-%dT%H:%MZ)"
  echo
  echo "$(go version), FUZZTIME=$FUZZTIME, PARALLEL=$PARALLEL, commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
  echo
  echo "| target | package | wall time | execs | execs/s (while fuzzing) | new interesting (corpus total) | result |"
  echo "| --- | --- | --- | --- | --- | --- | --- |"
} > "$summary"

# secs turns Go's elapsed time (45s, 10m1s, 1h2m3s) into seconds.
secs() {
  local d=$1 t=0
  [[ $d =~ ([0-9]+)h ]] && t=$((t + BASH_REMATCH[1] * 3600))
  [[ $d =~ ([0-9]+)m ]] && t=$((t + BASH_REMATCH[1] * 60))
  [[ $d =~ ([0-9]+)s ]] && t=$((t + BASH_REMATCH[1]))
  echo $t
}

failed=0
while IFS=$'\t' read -r pkg name; do
  dir=$(go list -f '{{.Dir}}' "$pkg")
  corpus="$dir/testdata/fuzz/$name"
  before=$(ls "$corpus" 2>/dev/null | sort)
  log="$OUT/logs/$name.log"
  echo "== $name ($pkg), $FUZZTIME, load $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)" >&2
  start=$(date +%s)
  go test -run '^$' -fuzz "^$name\$" -fuzztime "$FUZZTIME" -parallel "$PARALLEL" "$pkg" > "$log" 2>&1
  rc=$?
  wall=$(( $(date +%s) - start ))
  after=$(ls "$corpus" 2>/dev/null | sort)
  written=$(comm -13 <(echo "$before") <(echo "$after") | sed '/^$/d')

  # The last progress line: "fuzz: elapsed: 600s, execs: 123 (205/sec), new interesting: 4 (total: 20)".
  last=$(grep -E 'fuzz: elapsed: .*execs: ' "$log" | tail -n 1)
  elapsed=$(secs "$(sed -nE 's/.*elapsed: ([0-9hms]+),.*/\1/p' <<<"$last")")
  execs=$(sed -nE 's/.*execs: ([0-9]+).*/\1/p' <<<"$last")
  newi=$(sed -nE 's/.*new interesting: ([0-9]+) \(total: ([0-9]+)\).*/\1 (\2)/p' <<<"$last")
  rate=-
  if [ -n "$execs" ] && [ "${elapsed:-0}" -gt 0 ]; then rate=$(( execs / elapsed )); fi

  if [ -n "$written" ]; then
    result="FAIL: $(echo "$written" | wc -l) input(s) in ${corpus#"$PWD"/}"
    failed=1
    mkdir -p "$OUT/failures/$name"
    while read -r f; do cp "$corpus/$f" "$OUT/failures/$name/"; done <<<"$written"
    tail -n 30 "$log" >&2
  elif [ $rc -eq 0 ]; then
    result="ok"
  elif grep -q 'context deadline exceeded' "$log"; then
    result="deadline race (golang/go#75804), no input written"
  else
    result="go test exited $rc, no input written (see $log)"
    tail -n 30 "$log" >&2
  fi
  rel=${pkg#github.com/cairnhq/cairn}
  echo "| $name | ${rel:-/} | ${wall} s | ${execs:--} | $rate | ${newi:--} | $result |" >> "$summary"
  echo "   $result; ${execs:-?} execs in ${wall} s" >&2
done <<<"$targets"

cat "$summary"
exit $failed
