#!/usr/bin/env bash
# Does a large workspace cost `aq run` more at start than a small
# one? Three git workspaces under a scratch directory: `small` (one file),
# `big` (20,000 files in 200 directories, committed) and `bigu` (the same
# files untracked). `aq run -q -- /bin/true` in each, paired in turn with
# bench/start/pairs.py: the new build against the one before in the same
# workspace, and the new build's large workspace against its small one.
#
# Usage: bench/start/large.sh AQ_NEW AQ_BEFORE [PAIRS]   (default 40)
# With UNDO=off, checkpoints are off in every run (`[undo] enabled = false`
# in a --policy file): what the large workspace costs besides them.
set -euo pipefail
NEW_BIN=$1 OLD_BIN=$2 N=${3:-40}
PAIRS=$(cd "$(dirname "$0")" && pwd)/pairs.py
# The state directory is kept where a user's is, in the home: one inside
# /tmp would make each entry of /tmp a Landlock rule of its own (the state
# is cut out of the readable /tmp), which every nested exec copies.
scratch=$(mktemp -d -p "${AQ_BENCH_DIR:-$HOME}" aq-bench.XXXXXX)
trap 'rm -rf "$scratch"' EXIT
export XDG_STATE_HOME=$scratch/state XDG_CONFIG_HOME=$scratch/config
NEW=$NEW_BIN OLD=$OLD_BIN
if [ "${UNDO:-on}" = off ]; then
  printf '[undo]\nenabled = false\n' > "$scratch/undo-off.toml"
  NEW="$NEW_BIN --policy $scratch/undo-off.toml" OLD="$OLD_BIN --policy $scratch/undo-off.toml"
fi
commit() { git -c user.email=b@example.invalid -c user.name=b commit -qm "$1"; }
files() { python3 - "$1" <<'PY'
import os, sys
for i in range(200):
    d = os.path.join(sys.argv[1], "src", f"d{i:03}")
    os.makedirs(d, exist_ok=True)
    for j in range(100):
        with open(os.path.join(d, f"f{j:03}.rs"), "w") as f:
            f.write(f"// file {i} {j}\nfn f() {{}}\n")
PY
}
for w in small big bigu; do
  mkdir -p "$scratch/$w" && cd "$scratch/$w" && git init -q . && echo x > README.md
  case $w in
    small) git add -A && commit init ;;
    big) files . && git add -A && commit init ;;
    bigu) git add -A && commit init && files . ;;
  esac
done
cd "$scratch"
echo "# $(date -u +%FT%TZ) $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg), Linux $(uname -r), $(git --version)"
echo "# new: $NEW"; echo "# before: $OLD"; echo "# checkpoints: ${UNDO:-on}"
for w in small big bigu; do
  echo; echo "## $w: new (A) against before (B)"
  python3 "$PAIRS" "$N" "$NEW run -q --workspace $scratch/$w -- /bin/true" "$OLD run -q --workspace $scratch/$w -- /bin/true"
done
for w in big bigu; do
  echo; echo "## new: $w (A) against small (B)"
  python3 "$PAIRS" "$N" "$NEW run -q --workspace $scratch/$w -- /bin/true" "$NEW run -q --workspace $scratch/small -- /bin/true"
  echo; echo "## before: $w (A) against small (B)"
  python3 "$PAIRS" "$N" "$OLD run -q --workspace $scratch/$w -- /bin/true" "$OLD run -q --workspace $scratch/small -- /bin/true"
done
echo; echo "## new: strict /bin/true in small (A) against /bin/true (B)"
python3 "$PAIRS" "$N" "$NEW run -q --workspace $scratch/small -- /bin/true" /bin/true
