#!/usr/bin/env bash
# What workspace checkpoints cost, in a git repository of 20,000
# committed files (~100 MB, 1,000 directories), every figure paired in the
# same run against the same thing with `[undo] enabled = false`:
#   1. the first session in the workspace (no store yet): `aq run -q -- /bin/true`;
#   2. a later session with a handful of changed files: the same command;
#   3. a checkpoint before a command: a loop inside one session where each
#      iteration changes a file and execs /bin/true, with `coalesce_ms = 0`
#      so that every exec takes one; (on - off) / iterations;
#   4. a 600-command shell loop (`/bin/true` 600 times, nothing changes);
#   5. where the big workspace's start cost comes from without checkpoints:
#      big against a one-file repository, undo off.
#
# Usage: bench/undo/run.sh [RUNS]   (default 15)
# Output on stdout; keep it in bench/undo/RESULTS.md.
set -euo pipefail
cd "$(dirname "$0")/../.."
N=${1:-15}
cargo build --release --quiet --bin aq
AQ=${CARGO_TARGET_DIR:-$PWD/target}/release/aq
PAIRS=$PWD/bench/start/pairs.py
REV=$(git rev-parse --short HEAD 2>/dev/null || echo ?)
RUSTC=$(rustc --version)

# The state directory is kept where a user's is, in the home: one inside
# /tmp would make each entry of /tmp a Landlock rule of its own (the state
# is cut out of the readable /tmp), which every nested exec copies.
scratch=$(mktemp -d -p "${AQ_BENCH_DIR:-$HOME}" aq-bench.XXXXXX)
trap 'rm -rf "$scratch"' EXIT
export HOME=$scratch/home XDG_STATE_HOME=$scratch/state XDG_CONFIG_HOME=$scratch/config
export GIT_AUTHOR_NAME=b GIT_AUTHOR_EMAIL=b@example.invalid GIT_COMMITTER_NAME=b GIT_COMMITTER_EMAIL=b@example.invalid
mkdir -p "$HOME" "$XDG_CONFIG_HOME"
off=$scratch/off.toml; printf '[undo]\nenabled = false\n' > "$off"
eager=$scratch/eager.toml; printf '[undo]\ncoalesce_ms = 0\n' > "$eager"
cd "$scratch"
git init -q big && (cd big && python3 -c "
import os, random
random.seed(1)
for d in range(1000):
    p = f'src/m{d // 50}/d{d}'
    os.makedirs(p, exist_ok=True)
    for f in range(20):
        open(f'{p}/f{f}.txt', 'wb').write(random.randbytes(5000))
" && git add . && git commit -q -m big)
git init -q small && (cd small && echo x > README.md && git add . && git commit -q -m small)

echo "# $(date -u +%FT%TZ) $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg), aq $REV, $RUSTC, Linux $(uname -r)"
echo "big: $(cd big && git ls-files | wc -l) files, $(du -sm --exclude=.git big | cut -f1) MB outside .git, $(find big -type d -not -path '*/.git*' | wc -l) directories"
echo
cd "$scratch/big"
echo "## 1. first session in big (no store yet), $N runs each, alternating"
python3 - "$N" "$AQ" "$off" "$XDG_STATE_HOME" <<'PY'
import os, shutil, statistics, subprocess, sys, time
n, aq, off, state = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
def once(extra):
    shutil.rmtree(os.path.join(state, "agent-quarantine", "undo"), ignore_errors=True)
    t = time.perf_counter()
    subprocess.run([aq, *extra, "run", "-q", "--", "/bin/true"], check=True, stderr=subprocess.DEVNULL)
    return (time.perf_counter() - t) * 1000
on_, off_ = [], []
for _ in range(n):
    on_.append(once([])); off_.append(once(["--policy", off]))
for name, xs in (("checkpoints on", on_), ("checkpoints off", off_)):
    print(f"  {name:16} median {statistics.median(xs):8.1f} ms  min {min(xs):8.1f}  max {max(xs):8.1f}  (raw: {' '.join(f'{x:.0f}' for x in xs)})")
print(f"  first session adds {statistics.median(on_) - statistics.median(off_):.1f} ms (median on - median off)")
PY
echo
echo "## 2. a later session in big, 5 files changed before each run (on = A, off = B)"
"$AQ" run -q -- /bin/true
for i in 1 2 3 4 5; do echo "$RANDOM" >> "src/m0/d0/f$i.txt"; done
python3 "$PAIRS" "$N" "$AQ run -q -- /bin/true" "$AQ --policy $off run -q -- /bin/true"
echo "(pairs.py repeats the same two commands: after the first on-run the 5 changes are in the store, so later on-runs find them unchanged; run 2b changes files between runs)"
echo
echo "## 2b. later sessions, each after 5 files changed, $N runs each"
python3 - "$N" "$AQ" "$off" <<'PY'
import random, statistics, subprocess, sys, time
n, aq, off = int(sys.argv[1]), sys.argv[2], sys.argv[3]
def once(extra):
    for i in range(1, 6):
        with open(f"src/m1/d{50 + i}/f{i}.txt", "a") as f: f.write(str(random.random()))
    t = time.perf_counter()
    subprocess.run([aq, *extra, "run", "-q", "--", "/bin/true"], check=True, stderr=subprocess.DEVNULL)
    return (time.perf_counter() - t) * 1000
for _ in range(3): once([]); once(["--policy", off])
on_, off_ = [], []
for _ in range(n):
    on_.append(once([])); off_.append(once(["--policy", off]))
for name, xs in (("checkpoints on", on_), ("checkpoints off", off_)):
    print(f"  {name:16} median {statistics.median(xs):8.1f} ms  min {min(xs):8.1f}  max {max(xs):8.1f}  (raw: {' '.join(f'{x:.0f}' for x in xs)})")
print(f"  a later session adds {statistics.median(on_) - statistics.median(off_):.1f} ms (median on - median off)")
PY
echo
echo "## 3. a checkpoint before a command: 100 iterations of (change a file; /bin/true), coalesce_ms = 0"
loop='for i in $(seq 1 100); do echo $i >> src/m2/d100/f$((i % 20)).txt; /bin/true; done'
python3 - "$N" "$AQ" "$off" "$eager" "$loop" <<'PY'
import statistics, subprocess, sys, time
n, aq, off, eager, loop = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5]
def once(policy):
    t = time.perf_counter()
    subprocess.run([aq, "--policy", policy, "run", "-q", "--", "sh", "-c", loop], check=True, stderr=subprocess.DEVNULL)
    return (time.perf_counter() - t) * 1000
for _ in range(2): once(eager); once(off)
on_, off_ = [], []
for _ in range(max(3, n // 3)):
    on_.append(once(eager)); off_.append(once(off))
for name, xs in (("checkpoints on", on_), ("checkpoints off", off_)):
    print(f"  {name:16} median {statistics.median(xs):8.1f} ms  (raw: {' '.join(f'{x:.0f}' for x in xs)})")
print(f"  per checkpoint: {(statistics.median(on_) - statistics.median(off_)) / 100:.2f} ms ((median on - median off) / 100)")
PY
echo
echo "## 4. a 600-command shell loop in big (nothing changes; on = A, off = B)"
printf 'for i in $(seq 1 600); do /bin/true; done\n' > "$scratch/loop.sh"
python3 "$PAIRS" "$((N / 3 > 3 ? N / 3 : 3))" "$AQ run -q -- sh $scratch/loop.sh" "$AQ --policy $off run -q -- sh $scratch/loop.sh"
echo
echo "## 4b. the same loop, changing a file every iteration, default coalescing (on = A, off = B)"
printf 'for i in $(seq 1 600); do echo $i >> src/m3/d150/f1.txt; /bin/true; done\n' > "$scratch/loop2.sh"
python3 "$PAIRS" "$((N / 3 > 3 ? N / 3 : 3))" "$AQ run -q -- sh $scratch/loop2.sh" "$AQ --policy $off run -q -- sh $scratch/loop2.sh"
echo
echo "## 5. big against a one-file repository, checkpoints off (A = big, B = small)"
python3 "$PAIRS" "$N" "$AQ --policy $off run -q -- /bin/true" "/usr/bin/env -C $scratch/small $AQ --policy $off run -q -- /bin/true"
