#!/usr/bin/env bash
# Two builds paired, in one run, where a user's state is (the home):
# `aq run -q -- /bin/true` in shims-only and strict, and `aq hook claude` on
# a Bash tool call (3x as many pairs), new (A) against before (B); then the
# new build against a bare /bin/true. pairs.py prints medians, p90, p99 of
# each and of the differences, in ms.
#
# Usage: bench/start/builds.sh AQ_NEW AQ_BEFORE [PAIRS]   (default 40)
set -euo pipefail
NEW=$1 OLD=$2 N=${3:-40}
PAIRS=$(cd "$(dirname "$0")" && pwd)/pairs.py
scratch=$(mktemp -d -p "${AQ_BENCH_DIR:-$HOME}" aq-bench.XXXXXX)
trap 'rm -rf "$scratch"' EXIT
export XDG_STATE_HOME=$scratch/state XDG_CONFIG_HOME=$scratch/config
mkdir -p "$scratch/ws" && cd "$scratch/ws" && git init -q . && echo x > README.md
printf '%s' "{\"session_id\":\"bench\",\"transcript_path\":\"$scratch/t.jsonl\",\"cwd\":\"$scratch/ws\",\"hook_event_name\":\"PreToolUse\",\"tool_name\":\"Bash\",\"tool_input\":{\"command\":\"ls -la && git status\"}}" > "$scratch/event.json"
echo "# $(date -u +%FT%TZ) $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# NEW=$NEW OLD=$OLD"
for profile in shims-only strict; do
  echo; echo "## aq run --profile $profile -- /bin/true: NEW (A) vs OLD (B)"
  python3 "$PAIRS" "$N" "$NEW run -q --profile $profile -- /bin/true" "$OLD run -q --profile $profile -- /bin/true"
done
echo; echo "## aq hook claude: NEW (A) vs OLD (B)"
python3 "$PAIRS" $((N * 3)) "$NEW hook claude" "$OLD hook claude" "$scratch/event.json"
for profile in shims-only strict; do
  echo; echo "## NEW aq run --profile $profile -- /bin/true (A) vs /bin/true (B)"
  python3 "$PAIRS" "$N" "$NEW run -q --profile $profile -- /bin/true" /bin/true
done
echo; echo "## NEW aq hook claude (A) vs /bin/true (B)"
python3 "$PAIRS" $((N * 3)) "$NEW hook claude" /bin/true "$scratch/event.json"
