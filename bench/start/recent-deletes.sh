#!/usr/bin/env bash
# Start-up right after many files were deleted on the state directory's
# file system, against the same a while later.
#
#   bench/start/recent-deletes.sh AQ [PAIRS] [FILES] [WAIT_S]
#
# ext4 without a journal (this project's VMs) does not reuse an inode
# freed in the last 60 s (360 s while its table block is dirty): each new
# inode looks at every recently freed one on its way (`recently_deleted`,
# one buffer lookup each). A session start makes about 15 inodes (its
# directory, log, socket, git guard records, checkpoint objects), so it
# slows down for minutes after a test run or a bench removed its scratch
# trees. Pairs `aq run -q --profile shims-only -- /bin/true` against
# /bin/true (pairs.py) right after FILES (default 20000) files were made
# and removed beside the state directory, then again WAIT_S (default 400)
# seconds later.
set -euo pipefail
AQ=$1 N=${2:-100} FILES=${3:-20000} WAIT=${4:-400}
PAIRS=$(cd "$(dirname "$0")" && pwd)/pairs.py
scratch=$(mktemp -d -p "${AQ_BENCH_DIR:-$HOME}" aq-bench.XXXXXX)
trap 'rm -rf "$scratch"' EXIT
export XDG_STATE_HOME=$scratch/state XDG_CONFIG_HOME=$scratch/config
mkdir -p "$scratch/ws" && cd "$scratch/ws" && git init -q . && echo x > README.md
fs=$(df --output=source "$scratch" | tail -1)
echo "# $(date -u +%FT%TZ) $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg), $fs, journal: $(cat /sys/fs/ext4/"$(basename "$fs")"/journal_task 2>/dev/null || echo '?')"
for _ in 1 2 3; do "$AQ" run -q --profile shims-only -- /bin/true; done
mkdir "$scratch/junk" && (cd "$scratch/junk" && seq "$FILES" | xargs touch) && rm -rf "$scratch/junk"
echo; echo "## right after $FILES files were removed: aq run --profile shims-only -- /bin/true (A) vs /bin/true (B)"
python3 "$PAIRS" "$N" "$AQ run -q --profile shims-only -- /bin/true" /bin/true
sleep "$WAIT"
echo; echo "## $WAIT s later (load $(cut -d' ' -f1-3 /proc/loadavg)): the same"
python3 "$PAIRS" "$N" "$AQ run -q --profile shims-only -- /bin/true" /bin/true
