#!/usr/bin/env bash
# How many directory listings, stats, watches and opens one `aq run -q --
# /bin/true` makes in a committed 20,000-file workspace (`big` of
# bench/start/large.sh), and its CPU, for two builds in the same workspace:
# `strace -f -c` (counts only; ptrace slows every call, and the exec guard
# cannot trace the sandbox under it, so the session stops at the sandbox's
# setup, after the first checkpoint), `perf trace -s` (no ptrace: the whole
# session; its per-thread counts summed) and `perf stat -e task-clock` (CPU
# of the whole process tree).
# Each build has its own state directory, warmed by one run first (the
# store, the stat cache), so both start from the same state.
#
# Usage: bench/start/syscalls.sh AQ_NEW AQ_BEFORE [RUNS]   (default 10)
set -euo pipefail
NEW=$1 OLD=$2 N=${3:-10}
# The state directory is kept where a user's is, in the home: one inside
# /tmp would make each entry of /tmp a Landlock rule of its own (the state
# is cut out of the readable /tmp), which every nested exec copies.
scratch=$(mktemp -d -p "${AQ_BENCH_DIR:-$HOME}" aq-bench.XXXXXX)
trap 'sleep 1; rm -rf "$scratch" || true' EXIT
python3 - "$scratch/big" <<'PY'
import os, sys
for i in range(200):
    d = os.path.join(sys.argv[1], "src", f"d{i:03}")
    os.makedirs(d, exist_ok=True)
    for j in range(100):
        with open(os.path.join(d, f"f{j:03}.rs"), "w") as f:
            f.write(f"// file {i} {j}\nfn f() {{}}\n")
PY
cd "$scratch/big" && git init -q . && echo x > README.md && git add -A &&
  git -c user.email=b@example.invalid -c user.name=b commit -qm init
cd "$scratch"
echo "# $(date -u +%FT%TZ) $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg), Linux $(uname -r)"
echo "# big: $(find big -path big/.git -prune -o -type f -print | wc -l) files, $(find big -path big/.git -prune -o -type d -print | wc -l) directories"
for which in before new; do
  aq=$NEW; [ $which = before ] && aq=$OLD
  export XDG_STATE_HOME=$scratch/state-$which XDG_CONFIG_HOME=$scratch/config
  "$aq" run -q --workspace "$scratch/big" -- /bin/true
  echo; echo "## $which: $aq"
  strace -f -c -e trace=getdents64,statx,inotify_add_watch,openat \
    "$aq" run -q --workspace "$scratch/big" -- /bin/true 2>&1 | grep -v '^strace: Process' || true
done
if command -v perf >/dev/null; then
  for which in before new; do
    aq=$NEW; [ $which = before ] && aq=$OLD
    export XDG_STATE_HOME=$scratch/state-$which
    echo; echo "## perf trace -s, $which: calls summed over threads"
    { perf trace -s -e getdents64,statx,inotify_add_watch,openat -- \
        "$aq" run -q --workspace "$scratch/big" -- /bin/true >/dev/null; } 2>&1 |
      awk '$1 ~ /^(getdents64|statx|inotify_add_watch|openat)$/ { n[$1] += $2; e[$1] += $3 }
           END { for (k in n) printf "  %-18s %7d calls %5d errors\n", k, n[k], e[k] }' | sort
  done
fi
if command -v perf >/dev/null; then
  for round in 1 2; do
    for which in before new; do
      aq=$NEW; [ $which = before ] && aq=$OLD
      export XDG_STATE_HOME=$scratch/state-$which
      echo; echo "## perf stat, $which, round $round (load $(cut -d' ' -f1 /proc/loadavg))"
      perf stat -r "$N" -e task-clock "$aq" run -q --workspace "$scratch/big" -- /bin/true 2>&1 |
        grep -E 'task-clock|elapsed'
    done
  done
fi
