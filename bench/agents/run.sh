#!/usr/bin/env bash
# What `aq run` costs a real agent: the same scripted task, run bare and
# under `aq run` (strict profile, the agent's preset, the key proxy, the
# exec guard on every exec), in turn, R rounds each (default 5), in one run.
#
# The agents are the pinned CLIs of the tests (npm ci --prefix tests/agents);
# the model is the tests' fake server on loopback, scripted to have the
# agent run six ordinary commands (git status, ls, a file write, grep, cat,
# wc) and then answer. The figure is the agent's whole run, start to exit.
#
# Usage: bench/agents/run.sh [R] [claude|codex|gemini ...]
# Output: a Markdown table on stdout; raw times in bench/agents/runs/.
set -euo pipefail
cd "$(dirname "$0")/../.."
R=${1:-5}; shift || true
AGENTS=("${@:-claude codex gemini}")
read -r -a AGENTS <<<"${AGENTS[*]}"
root=$PWD
cargo build --release --quiet
AQ=$root/target/release/aq
BIN=$root/tests/agents/node_modules/.bin
[ -x "$BIN/claude" ] || { echo "install the agents first: npm ci --prefix tests/agents" >&2; exit 2; }

scratch=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$scratch"' EXIT
export XDG_STATE_HOME=$scratch/state XDG_CONFIG_HOME=$scratch/config
mkdir -p "$scratch/ws" && (cd "$scratch/ws" && git init -q . && printf 'a\nb\n' > notes.txt)
cat > "$scratch/steps.json" <<'STEPS'
{"steps": [{"command": "git status --short"}, {"command": "ls -la"}, {"command": "echo hello > out.txt"},
 {"command": "grep -n a notes.txt"}, {"command": "cat out.txt"}, {"command": "wc -l notes.txt"}, {"text": "Done."}]}
STEPS

stamp=$(date -u +%Y%m%dT%H%M%SZ)
mkdir -p bench/agents/runs
raw=bench/agents/runs/$stamp.txt
echo "# $(uname -r) $(nproc) cpus; aq $(git rev-parse --short HEAD); R=$R" > "$raw"

now_ms() { date +%s%3N; }
run_one() { # dialect mode cmd...
  local dialect=$1 mode=$2; shift 2
  local d=$scratch/run; rm -rf "$d"; mkdir -p "$d/home/.gemini"
  # Gemini CLI needs API-key auth chosen to accept a base URL (aq seeds the
  # same when it is missing).
  echo '{"security": {"auth": {"selectedType": "gemini-api-key"}}}' > "$d/home/.gemini/settings.json"
  (cd tests/agents && PYTHONDONTWRITEBYTECODE=1 python3 -m fake_model --dialect "$dialect" \
     --script "$scratch/steps.json" --log "$d/req.jsonl" --port-file "$d/port") &
  local spid=$!
  for _ in $(seq 100); do [ -s "$d/port" ] && break; sleep 0.02; done
  local port; port=$(cat "$d/port")
  local pre=() args=()
  [ "$mode" = aq ] && pre=("$AQ" run --quiet --)
  # Codex reads its base URL from its config only: bare, the run says it;
  # under aq, the preset points it at the key proxy.
  for a in "$@"; do
    case $a in
      @BASE@) [ "$mode" = bare ] && args+=(-c "openai_base_url=\"http://127.0.0.1:$port/v1\"") ;;
      *) args+=("$a") ;;
    esac
  done
  set -- "${args[@]}"
  local t0 t1
  t0=$(now_ms)
  (cd "$scratch/ws" && env -i PATH="$BIN:/usr/local/bin:/usr/bin:/bin" HOME="$d/home" TERM=dumb SHELL=/bin/bash \
     XDG_STATE_HOME="$XDG_STATE_HOME" XDG_CONFIG_HOME="$XDG_CONFIG_HOME" IS_SANDBOX=1 \
     ANTHROPIC_API_KEY=sk-ant-bench ANTHROPIC_BASE_URL="http://127.0.0.1:$port" \
     OPENAI_API_KEY=sk-bench OPENAI_BASE_URL="http://127.0.0.1:$port/v1" \
     GEMINI_API_KEY=bench GOOGLE_GEMINI_BASE_URL="http://127.0.0.1:$port" GEMINI_CLI_TRUST_WORKSPACE=true \
     "${pre[@]}" "$@" </dev/null >"$d/out" 2>&1) || { echo "failed: $mode $*" >&2; tail -5 "$d/out" >&2; }
  t1=$(now_ms)
  kill $spid 2>/dev/null; wait $spid 2>/dev/null || true
  echo $((t1 - t0))
}

cmd_for() {
  case $1 in
    claude) echo "anthropic claude -p task --dangerously-skip-permissions" ;;
    codex) echo "openai codex exec --skip-git-repo-check -c sandbox_mode=\"danger-full-access\" @BASE@ task" ;;
    gemini) echo "gemini gemini -p task --yolo" ;;
  esac
}

median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

echo "| agent | bare (median ms) | aq run (median ms) | ratio | added |"
echo "|---|---:|---:|---:|---:|"
for agent in "${AGENTS[@]}"; do
  read -r dialect rest <<<"$(cmd_for "$agent")"
  read -r -a cmd <<<"$rest"
  bare=(); guarded=()
  run_one "$dialect" bare "${cmd[@]}" >/dev/null   # warm-up
  run_one "$dialect" aq "${cmd[@]}" >/dev/null
  for _ in $(seq "$R"); do
    bare+=("$(run_one "$dialect" bare "${cmd[@]}")")
    guarded+=("$(run_one "$dialect" aq "${cmd[@]}")")
  done
  echo "$agent bare ${bare[*]}" >> "$raw"
  echo "$agent aq ${guarded[*]}" >> "$raw"
  b=$(printf '%s\n' "${bare[@]}" | median); g=$(printf '%s\n' "${guarded[@]}" | median)
  awk -v a="$agent" -v b="$b" -v g="$g" 'BEGIN { printf "| %s | %d | %d | %.2fx | %+d ms |\n", a, b, g, g / b, g - b }'
done
echo
echo "raw: $raw"
