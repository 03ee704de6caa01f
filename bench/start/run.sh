#!/usr/bin/env bash
# Start-up figures: what one `aq` process costs, paired in turn
# against a bare /bin/true in the same run (pairs.py: medians, p90, p99 of
# each and of the difference, in ms).
#
#   aq run -- /bin/true            strict (sandbox + exec guard), shims-only
#   aq hook claude < event.json    Claude Code's PreToolUse hook on a Bash call
#   aq-shim, aq --version          the shim binary's and aq's own start
#
# Usage: bench/start/run.sh [PAIRS]   (default 40; the hook 3x as many)
# Output on stdout; keep it in bench/start/RESULTS.md.
set -euo pipefail
cd "$(dirname "$0")/../.."
N=${1:-40}
cargo build --release --quiet --bins
BIN=${CARGO_TARGET_DIR:-$PWD/target}/release
PAIRS=$PWD/bench/start/pairs.py

# The state directory is kept where a user's is, in the home: one inside
# /tmp would make each entry of /tmp a Landlock rule of its own (the state
# is cut out of the readable /tmp), which every nested exec copies.
scratch=$(mktemp -d -p "${AQ_BENCH_DIR:-$HOME}" aq-bench.XXXXXX)
trap 'rm -rf "$scratch"' EXIT
export XDG_STATE_HOME=$scratch/state XDG_CONFIG_HOME=$scratch/config
mkdir -p "$scratch/ws" && cd "$scratch/ws" && git init -q . && echo x > README.md
printf '%s' "{\"session_id\":\"bench\",\"transcript_path\":\"$scratch/t.jsonl\",\"cwd\":\"$scratch/ws\",\"hook_event_name\":\"PreToolUse\",\"tool_name\":\"Bash\",\"tool_input\":{\"command\":\"ls -la && git status\"}}" > "$scratch/event.json"

echo "# $(date -u +%FT%TZ) $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg), aq $(git -C "$OLDPWD" rev-parse --short HEAD 2>/dev/null || echo ?)"
for profile in strict shims-only; do
  echo; echo "## aq run --profile $profile -- /bin/true"
  python3 "$PAIRS" "$N" "$BIN/aq run -q --profile $profile -- /bin/true" /bin/true
done
echo; echo "## aq hook claude (a Bash tool call on stdin)"
python3 "$PAIRS" $((N * 3)) "$BIN/aq hook claude" /bin/true "$scratch/event.json"
echo; echo "## aq-shim (no session: prints its usage) and aq --version"
python3 "$PAIRS" $((N * 3)) "$BIN/aq-shim" /bin/true
python3 "$PAIRS" $((N * 3)) "$BIN/aq --version" /bin/true
