#!/usr/bin/env bash
# Session start-up cost of `aq run`, against bare execution in the same run.
#
# Each row runs `true` R times (default 40) and takes the median wall time:
#   bare        true itself;
#   shims-only  aq run --profile shims-only -- true (policy, session dir, shims,
#               supervisor socket, log; no kernel sandbox);
#   strict      aq run -- true (the default: namespaces, secret masks, Landlock,
#               seccomp, rlimits, and all of the above);
#   dev         aq run --profile dev -- true.
# The workspace holds a few hundred files so the secret search does real work.
#
# Usage: bench/session.sh [R]
# Output: a Markdown table on stdout; raw timings in bench/results/.
set -euo pipefail
cd "$(dirname "$0")/.."
R=${1:-40}
root=$PWD
cargo build --release --quiet
AQ=$root/target/release/aq

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
export XDG_STATE_HOME=$scratch/state XDG_CONFIG_HOME=$scratch/config
mkdir -p "$scratch/ws" && cd "$scratch/ws" && git init -q .
for d in $(seq 20); do
  mkdir -p "src/m$d"
  for f in $(seq 20); do echo "x" > "src/m$d/f$f.rs"; done
done
echo "API_KEY=fake" > .env

now_ns() { date +%s%N; }
median_ns() {
  local times=() t0 t1
  for _ in $(seq "$R"); do
    t0=$(now_ns); "$@" >/dev/null 2>&1; t1=$(now_ns)
    times+=($((t1 - t0)))
  done
  printf '%s\n' "${times[@]}" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'
}

raw=$root/bench/results/session-$(date -u +%Y%m%dT%H%M%SZ).txt
mkdir -p "$(dirname "$raw")"
{
  echo "date: $(date -u +%FT%TZ)"
  echo "host: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "kernel: $(uname -r)"
  echo "aq: $($AQ --version)"
  echo "R=$R"
} > "$raw"

bare=$(median_ns true)
shims=$(median_ns "$AQ" run -q --profile shims-only -- true)
strict=$(median_ns "$AQ" run -q -- true)
dev=$(median_ns "$AQ" run -q --profile dev -- true)
{
  echo "| run | median | added vs bare | ratio |"
  echo "|---|---|---|---|"
  for row in "bare:$bare" "shims-only:$shims" "strict:$strict" "dev:$dev"; do
    name=${row%%:*}; ns=${row#*:}
    awk -v n="$name" -v t="$ns" -v b="$bare" 'BEGIN { printf "| %s | %.2f ms | %.2f ms | %.1fx |\n", n, t/1e6, (t-b)/1e6, t/b }'
  done
} | tee -a "$raw"
