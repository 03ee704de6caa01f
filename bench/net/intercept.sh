#!/usr/bin/env bash
# Cost of an HTTPS request the broker reads inside TLS (an HTTP rule and a
# credential on the host), against the same request made directly, in the
# same run, on loopback. Usage: bench/net/intercept.sh [N]
# Writes bench/net/runs/intercept-<UTC timestamp>.txt with the raw output.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$root/target}"
cargo build --quiet --release -p aq-net --example intercept_bench --manifest-path "$root/Cargo.toml"
bin="$CARGO_TARGET_DIR/release/examples/intercept_bench"
ts="$(date -u +%Y%m%dT%H%M%SZ)"
out="$root/bench/net/runs/intercept-$ts.txt"
mkdir -p "$(dirname "$out")"
{
  echo "# command: bench/net/intercept.sh $*"
  echo "# git: $(git -C "$root" rev-parse --short HEAD)"
  echo "# kernel: $(uname -sr)  cpus: $(nproc)  load: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "# $(rustc --version)"
  for run in 1 2 3; do echo "## run $run"; "$bin" "$@"; done
  echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)"
} | tee "$out"
echo "recorded in ${out#$root/}"
