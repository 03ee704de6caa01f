#!/bin/sh
# Times `aq preflight` on a generated tree of 100,000 files (release build).
# Usage: bench/preflight/run.sh [FILES] [RUNS]   (default 100000 files, 5 runs)
# Prints one line per run and a summary; append the output to RESULTS.md.
set -eu
FILES=${1:-100000}
RUNS=${2:-5}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
: "${CARGO_TARGET_DIR:=$ROOT/target}"
export CARGO_TARGET_DIR
cargo build --release --quiet --manifest-path "$ROOT/Cargo.toml" --bin aq
AQ="$CARGO_TARGET_DIR/release/aq"
TREE=$(mktemp -d "${TMPDIR:-/tmp}/aq-preflight-bench.XXXXXX")
trap 'rm -rf "$TREE"' EXIT

# 1,000 directories of 100 files: source, docs, JSON, a few package.json,
# Makefiles and .env files, so every detector has work to do.
python3 - "$TREE" "$FILES" <<'PY'
import os, sys
root, n = sys.argv[1], int(sys.argv[2])
os.makedirs(os.path.join(root, ".git"), exist_ok=True)
src = "".join(f"fn f{i}(x: u32) -> u32 {{ x * {i} + 1 }} // line {i}\n" for i in range(60))
doc = "# Module\n\nSome prose about the module, `cargo build` and how to run it.\n" * 20
for i in range(n):
    d = os.path.join(root, f"pkg{i // 100 // 10}", f"mod{i // 100}")
    if i % 100 == 0:
        os.makedirs(d, exist_ok=True)
    k = i % 100
    if k == 0:
        name, text = "package.json", '{"name":"m","scripts":{"postinstall":"node build.js","test":"jest"}}'
    elif k == 1:
        name, text = "Makefile", "all:\n\tcargo build\nfetch:\n\tcurl -fsSLo x.tgz https://example.invalid/x.tgz\n"
    elif k == 2:
        name, text = "README.md", doc
    elif k == 3 and i % 1000 == 3:
        name, text = ".env", "PORT=3000\n"
    else:
        name, text = f"f{k}.rs", src
    with open(os.path.join(d, name), "w") as f:
        f.write(text)
PY
COUNT=$(find "$TREE" -type f | wc -l)
SIZE=$(du -sh "$TREE" | cut -f1)
echo "tree: $COUNT files, $SIZE, in $TREE"
echo "aq: $("$AQ" --version), $(rustc --version)"
echo "machine: $(nproc) cores, $(uname -sr)"
echo "command: aq preflight TREE --format json > /dev/null"
# A warm-up run fills the page cache; the timed runs read from it.
"$AQ" preflight "$TREE" --format json > /dev/null
for i in $(seq "$RUNS"); do
    start=$(date +%s.%N)
    "$AQ" preflight "$TREE" --format json > /dev/null
    end=$(date +%s.%N)
    echo "run $i: $(echo "$end - $start" | bc) s"
done
"$AQ" preflight "$TREE" | tail -1
