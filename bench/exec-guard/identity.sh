#!/bin/sh
# The exec judge's identity check alone, per exec (crates/aq-session/examples/
# identity_bench.rs): a system binary, workspace binaries the first time and
# cached, and the known-tool index the session builds at its start. Records
# the raw run with the command, kernel, CPU count, load and toolchain in
# runs/<UTC time>-identity.txt.
#
#   bench/exec-guard/identity.sh [rounds]      (default 2000)
set -eu
cd "$(dirname "$0")/../.."
rounds=${1:-2000}
out="bench/exec-guard/runs/$(date -u +%Y%m%dT%H%M%SZ)-identity.txt"
target=${CARGO_TARGET_DIR:-target}
cargo build -q --release -p aq-session --example identity_bench
{
  echo "command: $target/release/examples/identity_bench $rounds"
  echo "commit: $(git rev-parse --short HEAD)"
  echo "kernel: $(uname -r)   cpus: $(nproc)   user: $(id -un)"
  echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "rustc: $(rustc --version)"
  echo "PATH: $PATH"
  echo
  "$target/release/examples/identity_bench" "$rounds"
  echo
  echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
} | tee "$out"
