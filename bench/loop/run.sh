#!/usr/bin/env bash
# The headline figure: a bash loop of 600 ordinary commands through
# PATH (300 x `ls`, 300 x `git --version`), bare against `aq run` in each
# profile, paired in one run with farm-bench (A/B alternating; the ratio is
# taken pair by pair, so machine drift cancels).
#
# Usage: bench/loop/run.sh [RUNS]   (default 5 pairs per profile)
# Output: farm-bench's reports on stdout; keep them in bench/loop/RESULTS.md.
set -euo pipefail
cd "$(dirname "$0")/../.."
RUNS=${1:-5}
cargo build --release --quiet --bin aq
AQ=${CARGO_TARGET_DIR:-$PWD/target}/release/aq

# The state directory is kept where a user's is, in the home: one inside
# /tmp would make each entry of /tmp a Landlock rule of its own (the state
# is cut out of the readable /tmp), which every nested exec copies.
scratch=$(mktemp -d -p "${AQ_BENCH_DIR:-$HOME}" aq-bench.XXXXXX)
trap 'rm -rf "$scratch"' EXIT
export XDG_STATE_HOME=$scratch/state XDG_CONFIG_HOME=$scratch/config
mkdir -p "$scratch/ws" && cd "$scratch/ws" && git init -q . && echo x > README.md
loop='for i in $(seq 300); do ls >/dev/null; git --version >/dev/null; done'

echo "# $(date -u +%FT%TZ) $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg), aq $(git -C "$OLDPWD" rev-parse --short HEAD 2>/dev/null || echo ?)"
for profile in shims-only strict; do
  echo
  echo "## aq run --profile $profile (A) vs bare bash (B)"
  farm-bench -n "$RUNS" --timeout 600 --vs "bash -c '$loop'" -- \
    "$AQ" run --profile "$profile" -- bash -c "$loop"
done
