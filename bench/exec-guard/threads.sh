#!/bin/sh
# What the supervisor's own threads cost while the sandbox execs now and
# then, as an agent does (Kilo CLI: ~200 git execs spread over 30 s):
# `aq run` (strict, exec guard on) of a loop of N iterations of
# `/bin/true; sleep GAP` (two execs each, GAP seconds apart), for each of
# the given aq binaries in turn, R rounds. Per thread name of the `aq`
# process: CPU time (/proc/PID/task/TID/schedstat) and times it was
# scheduled in, summed over the threads of that name, medians over the
# rounds.
#
#   bench/exec-guard/threads.sh [rounds] [iterations] [gap] AQ_BINARY...
set -eu
cd "$(dirname "$0")/../.."
rounds=${1:-5}; iters=${2:-50}; gap=${3:-0.1}; shift 3
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
printf 'i=0\nwhile [ $i -lt %s ]; do /bin/true; sleep %s; i=$((i+1)); done\n' "$iters" "$gap" >"$dir/loop.sh"
echo "# $(uname -r) $(nproc) cpus; load $(cut -d' ' -f1-3 /proc/loadavg); $rounds rounds of $iters x (true; sleep $gap)"
cd "$dir"
python3 - "$rounds" "$@" <<'PY'
import os, subprocess, sys, time, statistics, collections
rounds, bins = int(sys.argv[1]), sys.argv[2:]
def sample(pid, last):
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except FileNotFoundError:
        return
    for t in tids:
        try:
            comm = open(f"/proc/{pid}/task/{t}/comm").read().strip()
            ns, _wait, slices = map(int, open(f"/proc/{pid}/task/{t}/schedstat").read().split())
            last[t] = (comm, ns, slices)
        except (FileNotFoundError, ProcessLookupError, ValueError):
            pass
results = {b: collections.defaultdict(list) for b in bins}
for r in range(rounds):
    for b in bins:
        last = {}
        t0 = time.monotonic()
        p = subprocess.Popen([b, "run", "-q", "--", "sh", "loop.sh"], stdout=subprocess.DEVNULL)
        while p.poll() is None:
            sample(p.pid, last)
            time.sleep(0.02)
        wall = time.monotonic() - t0
        per = collections.defaultdict(lambda: [0, 0])
        for comm, ns, slices in last.values():
            per[comm][0] += ns; per[comm][1] += slices
        for comm, (ns, slices) in per.items():
            results[b][comm].append((ns / 1e6, slices))
        results[b]["(all threads)"].append((sum(v[0] for v in per.values()) / 1e6, sum(v[1] for v in per.values())))
        results[b]["(wall)"].append((wall * 1000, 0))
for b in bins:
    print(f"\n{b}")
    print("| thread | CPU ms (median) | scheduled in (median) |")
    print("|---|---:|---:|")
    for comm, v in sorted(results[b].items()):
        print(f"| {comm} | {statistics.median(x[0] for x in v):.1f} | {statistics.median(x[1] for x in v):.0f} |")
PY
