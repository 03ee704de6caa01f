#!/bin/sh
# The full `aq run` with the real judge (policy engine, identity, audit log):
# a 600 x /bin/true loop under the strict profile (exec guard on), the same
# profile with `exec_guard = false`, and `shims-only` (no sandbox), each
# minus the same command with 0 iterations; median of `rounds`.
#
#   bench/exec-guard/aq-run.sh [rounds] [execs]      (default 9 600)
#   AQ=path/to/aq bench/exec-guard/aq-run.sh          (use that binary, no build)
set -eu
cd "$(dirname "$0")/../.."
rounds=${1:-9}
execs=${2:-600}
target=${CARGO_TARGET_DIR:-target}
if [ -z "${AQ:-}" ]; then
  cargo build -q --release --bin aq
  AQ="$target/release/aq"
fi
aq=$(realpath "$AQ")
# The state directory is kept where a user's is, in the home: one inside
# /tmp would make each entry of /tmp a Landlock rule of its own (the state
# is cut out of the readable /tmp), which every nested exec copies.
dir=$(mktemp -d -p "${AQ_BENCH_DIR:-$HOME}" aq-bench.XXXXXX)
trap 'rm -rf "$dir"' EXIT
printf 'i=0\nwhile [ $i -lt %s ]; do /bin/true; i=$((i+1)); done\n' "$execs" >"$dir/loop.sh"
printf 'i=0\nwhile [ $i -lt 0 ]; do /bin/true; i=$((i+1)); done\n' >"$dir/loop0.sh"
printf '[profile.noguard]\nextends = "strict"\nexec_guard = false\n' >"$dir/noguard.toml"
ms() { # command... -> elapsed ms
  s=$(date +%s%N); "$@" >/dev/null; e=$(date +%s%N); echo $(((e - s) / 1000000))
}
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
cd "$dir"
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
for mode in guarded noguard shims; do
  case $mode in
    guarded) set -- ;;
    noguard) set -- --policy noguard.toml --profile noguard ;;
    shims) set -- --profile shims-only ;;
  esac
  full=$(for _ in $(seq "$rounds"); do ms "$aq" run -q "$@" -- sh loop.sh; done | median)
  empty=$(for _ in $(seq "$rounds"); do ms "$aq" run -q "$@" -- sh loop0.sh; done | median)
  echo "$mode: loop $((full - empty)) ms = $(((full - empty) * 1000 / execs)) us/exec (full $full ms, empty $empty ms)"
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
