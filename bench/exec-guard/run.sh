#!/bin/sh
# The exec guard's cost: 600 x /bin/true from a shell, outside any sandbox,
# in the sandbox, and in the sandbox with the exec guard (a judge that allows
# everything: the mechanism is what is measured). Records the raw run with
# the command, kernel, CPU count, load and toolchain in runs/<UTC time>.txt.
#
#   bench/exec-guard/run.sh [rounds] [execs]      (default 15 600)
set -eu
cd "$(dirname "$0")/../.."
rounds=${1:-15}
execs=${2:-600}
out="bench/exec-guard/runs/$(date -u +%Y%m%dT%H%M%SZ).txt"
target=${CARGO_TARGET_DIR:-target}
cargo build -q --release -p aq-sandbox --example exec_guard_bench
{
  echo "command: $target/release/examples/exec_guard_bench $rounds $execs"
  echo "commit: $(git rev-parse --short HEAD)"
  echo "kernel: $(uname -r)   cpus: $(nproc)   user: $(id -un)"
  echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "rustc: $(rustc --version)"
  echo "sh: $(readlink -f /bin/sh)"
  echo
  "$target/release/examples/exec_guard_bench" "$rounds" "$execs"
  echo
  echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
} | tee "$out"
