#!/usr/bin/env bash
# What aq run's git guard costs: its start
# (find the git surface, pin, hash) and its end check, as it times itself
# (git-guard/snapshot.json `start_us`, git-guard/checked `check_us`), on a
# repository of 20,000 committed files in 1,000 directories with 3
# submodules; and a whole `aq run -q -- /bin/true` there, paired against
# the same in a repository of one file (bench/start/pairs.py).
#
# Usage: bench/git-guard/run.sh [RUNS]   (default 20)
# Output on stdout; keep it in bench/git-guard/RESULTS.md.
set -euo pipefail
cd "$(dirname "$0")/../.."
N=${1:-20}
cargo build --release --quiet --bin aq
AQ=${CARGO_TARGET_DIR:-$PWD/target}/release/aq
PAIRS=$PWD/bench/start/pairs.py
REV=$(git rev-parse --short HEAD 2>/dev/null || echo ?)
RUSTC=$(rustc --version)  # before HOME moves (rustup finds its toolchain there)

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
export HOME=$scratch/home XDG_STATE_HOME=$scratch/state XDG_CONFIG_HOME=$scratch/config
export GIT_AUTHOR_NAME=b GIT_AUTHOR_EMAIL=b@example.invalid GIT_COMMITTER_NAME=b GIT_COMMITTER_EMAIL=b@example.invalid
mkdir -p "$HOME" && printf '[protocol "file"]\n\tallow = always\n' > "$HOME/.gitconfig"
cd "$scratch"
for i in 1 2 3; do
  git init -q "lib$i"
  (cd "lib$i" && for j in $(seq 1 50); do echo "$j" > "f$j"; done && git add . && git commit -q -m lib)
done
git init -q big && (cd big && python3 -c "
import os
for d in range(1000):
    p = f'src/m{d // 50}/d{d}'
    os.makedirs(p, exist_ok=True)
    for f in range(20):
        open(f'{p}/f{f}.txt', 'w').write(str(f))
" && git add . && git commit -q -m big && for i in 1 2 3; do git submodule add -q "../lib$i" "sub$i"; done && git commit -q -m subs)
git init -q small && (cd small && echo x > README.md && git add . && git commit -q -m small)

echo "# $(date -u +%FT%TZ) $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg), aq $REV, $RUSTC, $(git --version), Linux $(uname -r)"
echo "big: $(cd big && git ls-files --recurse-submodules | wc -l) tracked files, $(find big -type f | wc -l) files in all (.git included), $(find big -type d | wc -l) directories"
echo
echo "## the guard's own timing in big, $N runs of: aq run -q -- /bin/true"
cd big
for _ in $(seq 1 3); do "$AQ" run -q -- /bin/true; done  # warm-up
rm -rf "$XDG_STATE_HOME"
for _ in $(seq 1 "$N"); do "$AQ" run -q -- /bin/true; done
python3 - "$XDG_STATE_HOME/agent-quarantine/sessions" <<'PY'
import json, os, statistics, sys
root = sys.argv[1]
start, check, files, pins = [], [], set(), set()
for s in sorted(os.listdir(root)):
    g = os.path.join(root, s, "git-guard")
    snap = json.load(open(os.path.join(g, "snapshot.json")))
    start.append(snap["start_us"] / 1000); files.add(len(snap["files"])); pins.add(len(snap["pinned"]))
    check.append(json.load(open(os.path.join(g, "checked")))["check_us"] / 1000)
def q(xs, p):
    xs = sorted(xs); return xs[min(len(xs) - 1, int(p * len(xs)))]
print(f"git files watched: {sorted(files)}, paths pinned read-only: {sorted(pins)}")
for name, xs in (("start", start), ("end check", check)):
    print(f"{name:9}  median {statistics.median(xs):6.2f} ms  p90 {q(xs, .9):6.2f} ms  max {max(xs):6.2f} ms  (raw: {' '.join(f'{x:.2f}' for x in xs)})")
PY
echo
echo "## whole session: big (A) against small (B)"
cd "$scratch/big"
python3 - "$PAIRS" "$N" "$AQ" "$scratch" <<'PY'
import os, subprocess, sys
pairs, n, aq, scratch = sys.argv[1:]
# pairs.py runs both commands in its own cwd: wrap B in `env -C small`.
subprocess.run([sys.executable, pairs, n, f"{aq} run -q -- /bin/true",
                f"/usr/bin/env -C {scratch}/small {aq} run -q -- /bin/true"], check=True)
PY
