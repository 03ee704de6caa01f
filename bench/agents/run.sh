#!/usr/bin/env bash
# What `aq run` costs a real agent: the same scripted task, run bare and
# under `aq run` (strict profile, no policy file, the agent's preset, the
# key proxy, the exec guard on every exec), in turn, R rounds each
# (default 5), in one run.
#
# The agents are the pinned CLIs of the tests (npm ci --prefix tests/agents);
# the model is the tests' fake server on loopback, scripted to have the
# agent run six ordinary commands (git status, ls, a file write, grep, cat,
# wc) and then answer. The figure is the agent's whole run, start to exit.
# Each is configured as its test drives it (tests/real_agents.rs,
# tests/agent_opencode.rs, tests/agent_kilo.rs, tests/agent_qwen.rs):
# OpenCode and Kilo CLI with a custom OpenAI-compatible provider in their
# config file, Qwen Code with OPENAI_BASE_URL/OPENAI_MODEL, all three on
# the fake server's Chat Completions dialect (`chat`).
#
# Usage: bench/agents/run.sh [R] [claude|codex|gemini|opencode|kilo|qwen ...]
# Output: a Markdown table on stdout; raw times in bench/agents/runs/:
# per round the wall time (ms) and the CPU (user + sys, ms, of the whole
# process tree as /usr/bin/time reports it), and under aq the number of
# execs the exec guard judged (command_decision events in the session log)
# and how many of them were the agent's housekeeping.
#
# For a profile: BENCH_WRAP (words put before the agent's command line,
# e.g. "perf record -e cpu-clock -g -o @RUN@/perf.data --", @RUN@ the run's
# directory) and BENCH_KEEP (a
# directory: each run's home, workspace, XDG dirs and output are kept
# there, as MODE-N, the warm-ups as MODE-0).
set -euo pipefail
cd "$(dirname "$0")/../.."
R=${1:-5}; shift || true
AGENTS=("${@:-claude codex gemini opencode kilo qwen}")
read -r -a AGENTS <<<"${AGENTS[*]}"
root=$PWD
[ -n "${BENCH_NO_BUILD:-}" ] || cargo build --release --quiet --bin aq
AQ=${CARGO_TARGET_DIR:-$root/target}/release/aq
BIN=$root/tests/agents/node_modules/.bin
[ -x "$BIN/claude" ] || { echo "install the agents first: npm ci --prefix tests/agents" >&2; exit 2; }

scratch=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$scratch"' EXIT
cat > "$scratch/steps.json" <<'STEPS'
{"steps": [{"command": "git status --short"}, {"command": "ls -la"}, {"command": "echo hello > out.txt"},
 {"command": "grep -n a notes.txt"}, {"command": "cat out.txt"}, {"command": "wc -l notes.txt"}, {"text": "Done."}]}
STEPS

stamp=$(date -u +%Y%m%dT%H%M%SZ)
mkdir -p bench/agents/runs
raw=bench/agents/runs/$stamp.txt
echo "# $(uname -r) $(nproc) cpus; load $(cut -d' ' -f1-3 /proc/loadavg); aq $(git rev-parse --short HEAD); R=$R" > "$raw"
echo "# per round: wall_ms cpu_ms [execs_judged housekeeping]" >> "$raw"

# OpenCode's and Kilo's config: a custom OpenAI-compatible provider, as in
# their tests.
provider_config() { # schema port
  cat <<JSON
{
  "\$schema": "$1",
  "provider": {
    "gateway": {
      "npm": "@ai-sdk/openai-compatible",
      "name": "My gateway",
      "options": { "baseURL": "http://127.0.0.1:$2/v1", "apiKey": "{env:OPENAI_API_KEY}" },
      "models": { "fake-model": { "name": "Fake model" } }
    }
  }
  ,"model": "gateway/fake-model"
}
JSON
}

now_ms() { date +%s%3N; }
# Prints "wall_ms cpu_ms" and, under aq, "execs housekeeping".
run_one() { # agent dialect mode cmd...
  local agent=$1 dialect=$2 mode=$3; shift 3
  local d=$scratch/run; rm -rf "$d"; mkdir -p "$d/home/.gemini" "$d/ws"
  (cd "$d/ws" && git init -q . && printf 'a\nb\n' > notes.txt)
  # Gemini CLI needs API-key auth chosen to accept a base URL (aq seeds the
  # same when it is missing).
  echo '{"security": {"auth": {"selectedType": "gemini-api-key"}}}' > "$d/home/.gemini/settings.json"
  (cd tests/agents && PYTHONDONTWRITEBYTECODE=1 python3 -m fake_model --dialect "$dialect" \
     --script "$scratch/steps.json" --log "$d/req.jsonl" --port-file "$d/port") &
  local spid=$!
  for _ in $(seq 500); do [ -s "$d/port" ] && break; sleep 0.02; done
  local port; port=$(cat "$d/port")
  # The XDG directories, fresh each run: outside the home, as the tests'
  # harness has them, but in the home for Kilo (its test has them there).
  local xdg_config=$d/config xdg_state=$d/state extra=()
  case $agent in
    kilo) xdg_config=$d/home/.config xdg_state=$d/home/.local/state
          # aq sets it for Kilo (its telemetry retries at every exit for
          # seconds): set bare too, or bare would measure the retries.
          extra=(KILO_TELEMETRY_LEVEL=off) ;;
    qwen) extra=(OPENAI_MODEL=fake-model QWEN_CODE_NO_RELAUNCH=true) ;;
  esac
  mkdir -p "$xdg_config" "$xdg_state"
  case $agent in
    opencode) mkdir -p "$xdg_config/opencode"
              provider_config https://opencode.ai/config.json "$port" > "$xdg_config/opencode/opencode.json" ;;
    kilo) mkdir -p "$xdg_config/kilo"
          provider_config https://kilo.ai/config.json "$port" > "$xdg_config/kilo/kilo.json" ;;
  esac
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
  # Node 22 (for Qwen Code) is node_modules/.bin/node, first on PATH.
  local wrap=(); w=${BENCH_WRAP:-}; read -r -a wrap <<<"${w//@RUN@/$d}"
  (cd "$d/ws" && /usr/bin/time -f '%U %S' -o "$d/time" "${wrap[@]}" env -i PATH="$BIN:/usr/local/bin:/usr/bin:/bin" \
     HOME="$d/home" TERM=dumb SHELL=/bin/bash \
     XDG_STATE_HOME="$xdg_state" XDG_CONFIG_HOME="$xdg_config" IS_SANDBOX=1 \
     ANTHROPIC_API_KEY=sk-ant-bench ANTHROPIC_BASE_URL="http://127.0.0.1:$port" \
     OPENAI_API_KEY=sk-bench OPENAI_BASE_URL="http://127.0.0.1:$port/v1" \
     GEMINI_API_KEY=bench GOOGLE_GEMINI_BASE_URL="http://127.0.0.1:$port" GEMINI_CLI_TRUST_WORKSPACE=true \
     "${extra[@]}" "${pre[@]}" "$@" </dev/null >"$d/out" 2>&1) || { echo "failed: $mode $*" >&2; tail -5 "$d/out" >&2; }
  t1=$(now_ms)
  kill $spid 2>/dev/null; wait $spid 2>/dev/null || true
  grep -q 'cat out.txt' "$d/req.jsonl" 2>/dev/null || echo "warning: $agent $mode did not follow the script" >&2
  if [ -n "${BENCH_KEEP:-}" ]; then
    local k=0; while [ -e "$BENCH_KEEP/$agent-$mode-$k" ]; do k=$((k + 1)); done
    mkdir -p "$BENCH_KEEP" && cp -a "$d" "$BENCH_KEEP/$agent-$mode-$k"
  fi
  local cpu; cpu=$(awk '/^[0-9.]+ [0-9.]+$/ {printf "%d", ($1 + $2) * 1000}' "$d/time")
  if [ "$mode" = aq ]; then
    local log; log=$(ls "$xdg_state"/agent-quarantine/sessions/*/log.jsonl 2>/dev/null | head -1)
    local n=0 hk=0
    if [ -n "$log" ]; then
      n=$(grep -c '"command_decision"' "$log" || true)
      hk=$(grep '"command_decision"' "$log" | grep -c '"agent-housekeeping"' || true)
    fi
    echo "$((t1 - t0)) $cpu $n $hk"
  else
    echo "$((t1 - t0)) $cpu"
  fi
}

cmd_for() {
  case $1 in
    claude) echo "anthropic claude -p task --dangerously-skip-permissions" ;;
    codex) echo "openai codex exec --skip-git-repo-check -c sandbox_mode=\"danger-full-access\" @BASE@ task" ;;
    gemini) echo "gemini gemini -p task --yolo" ;;
    opencode) echo "chat opencode run --auto task" ;;
    kilo) echo "chat kilo run --auto task" ;;
    qwen) echo "chat qwen -p task --yolo" ;;
    *) echo "unknown agent: $1" >&2; exit 2 ;;
  esac
}

median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
col() { local i=$1; shift; printf '%s\n' "$@" | awk -v i="$i" '{print $i}'; }

echo "| agent | bare (median ms) | aq run (median ms) | ratio | added | CPU bare / aq (median s) | execs judged (housekeeping) |"
echo "|---|---:|---:|---:|---:|---:|---:|"
for agent in "${AGENTS[@]}"; do
  read -r dialect rest <<<"$(cmd_for "$agent")"
  read -r -a cmd <<<"$rest"
  bare=(); guarded=()
  run_one "$agent" "$dialect" bare "${cmd[@]}" >/dev/null   # warm-up
  run_one "$agent" "$dialect" aq "${cmd[@]}" >/dev/null
  for _ in $(seq "$R"); do
    bare+=("$(run_one "$agent" "$dialect" bare "${cmd[@]}")")
    guarded+=("$(run_one "$agent" "$dialect" aq "${cmd[@]}")")
  done
  { printf '%s bare' "$agent"; printf ' %s' "${bare[@]// /,}"; echo
    printf '%s aq' "$agent"; printf ' %s' "${guarded[@]// /,}"; echo; } >> "$raw"
  b=$(col 1 "${bare[@]}" | median); g=$(col 1 "${guarded[@]}" | median)
  bc=$(col 2 "${bare[@]}" | median); gc=$(col 2 "${guarded[@]}" | median)
  n=$(col 3 "${guarded[@]}" | median); hk=$(col 4 "${guarded[@]}" | median)
  awk -v a="$agent" -v b="$b" -v g="$g" -v bc="$bc" -v gc="$gc" -v n="$n" -v hk="$hk" \
    'BEGIN { printf "| %s | %d | %d | %.2fx | %+d ms | %.1f / %.1f | %d (%d) |\n", a, b, g, g / b, g - b, bc / 1000, gc / 1000, n, hk }'
done
echo
echo "raw: $raw"
