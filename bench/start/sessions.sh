#!/usr/bin/env bash
# Start-up against the number of past sessions in the state directory, and
# against the kernel's own floor for the sandbox's namespaces.
#
#   bench/start/sessions.sh NEW_AQ BEFORE_AQ [PAIRS] [SESSIONS]
#
# Pairs (pairs.py, A and B in turn) `aq run -q --profile strict -- /bin/true`
# of two builds in a fresh state directory and in one holding SESSIONS past
# sessions (default 300, made by NEW_AQ), then NEW_AQ against /bin/true, and
# util-linux `unshare` with the namespaces strict uses (user, mount, PID, net,
# IPC) against /bin/true: what creating and tearing them down costs alone.
set -euo pipefail
NEW=$1 BEFORE=$2 N=${3:-40} S=${4:-300}
PAIRS=$(cd "$(dirname "$0")" && pwd)/pairs.py
# The state directory is kept where a user's is, in the home: one inside
# /tmp would make each entry of /tmp a Landlock rule of its own (the state
# is cut out of the readable /tmp), which every nested exec copies.
scratch=$(mktemp -d -p "${AQ_BENCH_DIR:-$HOME}" aq-bench.XXXXXX)
trap 'rm -rf "$scratch"' EXIT
export XDG_CONFIG_HOME=$scratch/config
mkdir -p "$scratch/ws" && cd "$scratch/ws" && git init -q . && echo x > README.md
echo "# $(date -u +%FT%TZ) $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg), kernel $(uname -r)"
echo "# NEW=$NEW BEFORE=$BEFORE"
export XDG_STATE_HOME=$scratch/fresh
echo; echo "## strict, fresh state directory: NEW (A) vs BEFORE (B)"
python3 "$PAIRS" "$N" "$NEW run -q --profile strict -- /bin/true" "$BEFORE run -q --profile strict -- /bin/true"
export XDG_STATE_HOME=$scratch/old
for _ in $(seq "$S"); do "$NEW" run -q --profile strict -- /bin/true; done
echo; echo "## strict, $S past sessions: NEW (A) vs BEFORE (B)"
python3 "$PAIRS" "$N" "$NEW run -q --profile strict -- /bin/true" "$BEFORE run -q --profile strict -- /bin/true"
echo; echo "## strict, $S past sessions: NEW (A) vs /bin/true (B)"
python3 "$PAIRS" "$N" "$NEW run -q --profile strict -- /bin/true" /bin/true
echo; echo "## shims-only, $S past sessions: NEW (A) vs /bin/true (B)"
python3 "$PAIRS" "$N" "$NEW run -q --profile shims-only -- /bin/true" /bin/true
echo; echo "## the kernel floor: unshare with strict's namespaces (A) vs /bin/true (B)"
python3 "$PAIRS" "$N" "$(command -v unshare) --user --map-root-user --mount --pid --fork --net --ipc /bin/true" /bin/true
