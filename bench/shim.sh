#!/usr/bin/env bash
# Shim overhead, measured against bare execution in the same run.
#
# For each workload, a bash loop runs N execs (default 600) of a program:
#   bare       with the normal PATH;
#   floor      through `env -i PROGRAM`, a minimal C program that only execs:
#              the least any exec-based shim can add on this machine;
#   shim       inside `aq run`, reached through its shim (judged, logged,
#              then exec'd), with the default (dynamically linked) build;
#   shim-static the same with a static-pie build (`+crt-static`), which
#              skips the dynamic loader.
# Each is run R times (default 5); medians are compared as ratios to bare,
# and the added cost per exec is (x - bare) / N. The session's own start and
# end (an `aq run` of an empty loop) is subtracted from the shim rows.
#
# Usage: bench/shim.sh [N] [R]
# Output: a Markdown table on stdout; raw timings in bench/results/.
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-600}
R=${2:-5}
root=$PWD

cargo build --release --quiet
AQ=$root/target/release/aq
host=$(rustc -vV | sed -n 's/^host: //p')
AQ_STATIC=""
if [[ $host == *-linux-gnu ]]; then
  CARGO_TARGET_DIR=$root/target/static RUSTFLAGS="-C target-feature=+crt-static" \
    cargo build --release --quiet --bin aq --target "$host"
  AQ_STATIC=$root/target/static/$host/release/aq
fi

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
export XDG_STATE_HOME=$scratch/state XDG_CONFIG_HOME=$scratch/config
mkdir -p "$scratch/ws" && cd "$scratch/ws" && git init -q .

now_ns() { date +%s%N; }

# Runs "$@" R times; prints the median wall time in nanoseconds.
median_ns() {
  local times=() t0 t1
  for _ in $(seq "$R"); do
    t0=$(now_ns); "$@" >/dev/null 2>&1; t1=$(now_ns)
    times+=($((t1 - t0)))
  done
  printf '%s\n' "${times[@]}" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'
}

raw=$root/bench/results/shim-$(date -u +%Y%m%dT%H%M%SZ).txt
mkdir -p "$(dirname "$raw")"
{
  echo "date: $(date -u +%FT%TZ)"
  echo "host: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), load $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "kernel: $(uname -r)"
  echo "rustc: $(rustc --version)"
  echo "aq: $($AQ --version)"
  echo "N=$N R=$R"
} > "$raw"

ms() { awk -v x="$1" 'BEGIN {printf "%.1f", x / 1e6}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", a / b}'; }
added() { awk -v a="$1" -v b="$2" -v n="$N" 'BEGIN {printf "%.0f", (a - b) / n / 1000}'; }

printf '| workload | variant | total (ms) | ratio to bare | added per exec (µs) |\n|---|---|---:|---:|---:|\n'
for workload in "ls" "git --version"; do
  prog=${workload%% *}
  rest=${workload#"$prog"}
  loop="for i in \$(seq $N); do $workload; done"
  floor_loop="for i in \$(seq $N); do env -i $(command -v "$prog")$rest; done"
  bare=$(median_ns bash -c "$loop")
  floor=$(median_ns bash -c "$floor_loop")
  printf '| `%s` x%s | bare | %s | 1.00 | 0 |\n' "$workload" "$N" "$(ms "$bare")"
  printf '| | floor (`env -i`) | %s | %s | %s |\n' "$(ms "$floor")" "$(ratio "$floor" "$bare")" "$(added "$floor" "$bare")"
  echo "$workload bare_ns=$bare floor_ns=$floor" >> "$raw"
  for variant in shim shim-static; do
    bin=$AQ
    [[ $variant == shim-static ]] && bin=$AQ_STATIC
    [[ -n $bin ]] || continue
    total=$(median_ns "$bin" run -q -- bash -c "$loop")
    empty=$(median_ns "$bin" run -q -- bash -c "true")
    bare_empty=$(median_ns bash -c "true")
    loop_ns=$((total - (empty - bare_empty)))
    printf '| | %s | %s | %s | %s |\n' "$variant" "$(ms "$loop_ns")" "$(ratio "$loop_ns" "$bare")" "$(added "$loop_ns" "$bare")"
    echo "$workload $variant total_ns=$total session_ns=$((empty - bare_empty)) loop_ns=$loop_ns" >> "$raw"
  done
done
echo "raw: $raw" >&2
