#!/usr/bin/env bash
# The socket guard's cost per connect: a Python loop of connects (a Unix
# socket in the workspace and TCP on the sandbox's own loopback, each
# accepted at once) in the strict sandbox with and without the guard, in
# the same run. Raw output goes to runs/<UTC time>.txt.
set -euo pipefail
cd "$(dirname "$0")/../.."
rounds=${1:-9}
connects=${2:-1000}
cargo build --release -q -p aq-sandbox --example socket_guard_bench
mkdir -p bench/sockets/runs
out=bench/sockets/runs/$(date -u +%Y%m%dT%H%M%SZ).txt
{
  echo "# socket_guard_bench, $(git rev-parse --short HEAD), $(uname -r), $(nproc) CPUs, load: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "# cargo run --release -p aq-sandbox --example socket_guard_bench -- $rounds $connects"
  ./target/release/examples/socket_guard_bench "$rounds" "$connects"
} | tee "$out"
