#!/usr/bin/env bash
# What `[audit] export` costs a session: `aq run` (strict, the exec guard
# logging every exec) of a loop of 200 execs, with the live OTLP export to
# a collector on loopback (A) against the same session without export (B),
# in turn, in the same run (bench/start/pairs.py: medians, p90, p99 of each
# and of A minus B, in ms). Then the same with a collector that accepts
# connections and never answers: the end-of-session deadline (2 s) is the
# most a dead collector can cost.
#
# Usage: bench/export/run.sh [PAIRS]   (default 15)
# Output on stdout; keep it in bench/export/RESULTS.md.
set -euo pipefail
cd "$(dirname "$0")/../.."
N=${1:-15}
cargo build --release --quiet --bins
BIN=${CARGO_TARGET_DIR:-$PWD/target}/release
PAIRS=$PWD/bench/start/pairs.py

scratch=$(mktemp -d)
collector_pid=
trap 'kill $collector_pid 2>/dev/null || true; rm -rf "$scratch"' EXIT
mkdir -p "$scratch/ws" "$scratch/plain/agent-quarantine" "$scratch/live/agent-quarantine" "$scratch/dead/agent-quarantine"
cd "$scratch/ws" && git init -q . && echo x > README.md

# A collector that takes every POST (OTLP/HTTP), and a port that accepts
# and never answers.
cat > "$scratch/collector.py" <<'PY'
import http.server, socket, sys, threading
class H(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.send_response(200); self.send_header("Content-Length", "2"); self.end_headers(); self.wfile.write(b"{}")
    def log_message(self, *a): pass
live = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
dead = socket.socket(); dead.bind(("127.0.0.1", 0)); dead.listen(64)
print(live.server_address[1], dead.getsockname()[1], flush=True)
live.serve_forever()
PY
coproc COLLECTOR { exec python3 "$scratch/collector.py"; }
collector_pid=$COLLECTOR_PID
read -r live_port dead_port <&"${COLLECTOR[0]}"
policy() { printf 'version = 1\n\n[audit]\nexport = [{ format = "otlp", endpoint = "http://127.0.0.1:%s" }]\n' "$1"; }
policy "$live_port" > "$scratch/live/agent-quarantine/policy.toml"
policy "$dead_port" > "$scratch/dead/agent-quarantine/policy.toml"

export XDG_STATE_HOME=$scratch/state
loop='for i in $(seq 200); do /bin/true; done'
run() { echo "/usr/bin/env XDG_CONFIG_HOME=$scratch/$1 $BIN/aq run -q -- /bin/bash -c '$loop'"; }

echo "# $(date -u +%FT%TZ) $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg), aq $(git -C "$OLDPWD" rev-parse --short HEAD 2>/dev/null || echo ?)"
echo; echo "## A: live export to a collector on loopback; B: no export"
python3 "$PAIRS" "$N" "$(run live)" "$(run plain)"
echo; echo "## A: live export to a collector that never answers; B: no export"
python3 "$PAIRS" 5 "$(run dead)" "$(run plain)"
echo; echo "## what each session's export event says (target port, sent, dropped): sessions"
grep -h '"event":"export"' "$XDG_STATE_HOME"/agent-quarantine/sessions/*/log.jsonl \
  | sed -E 's/.*127.0.0.1:([0-9]+).*"sent":([0-9]+),"dropped":([0-9]+).*/port \1 (live '"$live_port"', dead '"$dead_port"'): sent \2, dropped \3/' \
  | sort | uniq -c
