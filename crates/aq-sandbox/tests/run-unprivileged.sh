#!/usr/bin/env bash
# Run the aq-sandbox tests as an unprivileged user (CI runs as root; the
# sandbox must work for both). Builds as the current (root) user, copies the
# test binaries somewhere the other user can read, runs them as that user.
#
#   bash crates/aq-sandbox/tests/run-unprivileged.sh [user]   # default: aqtest
#
# The user is created when missing (needs root). AQ_SANDBOX_REQUIRE_FULL is
# passed through: with =1 a missing kernel feature fails instead of skipping.
set -euo pipefail
user="${1:-aqtest}"
cd "$(dirname "$0")/../../.."
id "$user" >/dev/null 2>&1 || useradd -m "$user"
dir="$(mktemp -d /tmp/aq-sandbox-unpriv.XXXXXX)"
trap 'rm -rf "$dir"' EXIT
cargo test -p aq-sandbox --no-run 2>&1 \
  | sed -n 's/.*Executable .*(\(.*\))$/\1/p' \
  | while read -r bin; do cp "$bin" "$dir/"; done
chmod 755 "$dir" "$dir"/*
for bin in "$dir"/*; do
  echo "== $(basename "$bin") as $user"
  su "$user" -s /bin/sh -c "cd '$dir' && AQ_SANDBOX_REQUIRE_FULL='${AQ_SANDBOX_REQUIRE_FULL:-}' '$bin'"
done
