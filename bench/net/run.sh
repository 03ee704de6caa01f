#!/usr/bin/env bash
# Broker cost on loopback: bulk throughput and connection setup,
# direct vs through aq-net's in-process proxy, in the same run.
# Usage: bench/net/run.sh [--mib N] [--rounds R] [--conns C]
# Writes bench/net/runs/<UTC timestamp>.txt: command, machine, toolchain, raw output.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$root/target}"
cargo build --quiet --release -p aq-net --example net_bench --manifest-path "$root/Cargo.toml"
bin="$CARGO_TARGET_DIR/release/examples/net_bench"
ts="$(date -u +%Y%m%dT%H%M%SZ)"
out="$root/bench/net/runs/$ts.txt"
mkdir -p "$(dirname "$out")"
{
  echo "# command: bench/net/run.sh $*"
  echo "# git: $(git -C "$root" rev-parse --short HEAD)"
  echo "# kernel: $(uname -sr)  cpus: $(nproc)  load: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "# cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')"
  echo "# $(rustc --version)"
  "$bin" "$@"
  echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)"
} | tee "$out"
echo "recorded in ${out#$root/}"
