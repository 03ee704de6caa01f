#!/usr/bin/env bash
# Checks that everything but the Linux sandbox can build for macOS.
#
# 1. Dependencies: `cargo tree` resolves the workspace for each Apple target
#    (no standard library for it is needed) and fails if a Linux-only crate
#    is among the normal dependencies: each crate must gate those in its
#    Cargo.toml ([target.'cfg(target_os = "linux")'.dependencies]).
# 2. Code: `cargo check` for each Apple target, only where that target's
#    standard library is installed (`rustup target add x86_64-apple-darwin`).
#    Where it is not, the check says SKIPPED: it is not run, so it did not
#    pass.
set -euo pipefail
cd "$(dirname "$0")/.."

targets=(x86_64-apple-darwin aarch64-apple-darwin)

# Crates that exist for Linux only (kernel interfaces, or Linux's syscall
# ABI). Add to this list when one enters the tree.
linux_only=(
  landlock seccompiler libseccomp libseccomp-sys
  inotify inotify-sys linux-raw-sys io-uring procfs procfs-core
  caps memfd pidfd userfaultfd netlink-sys netlink-packet-core
)

status=0
for target in "${targets[@]}"; do
  crates=$(cargo tree --workspace --locked --target "$target" -e normal \
    --prefix none --format '{p}' | awk '{print $1}' | sort -u)
  found=()
  for c in "${linux_only[@]}"; do
    if grep -qx -- "$c" <<<"$crates"; then found+=("$c"); fi
  done
  if [ ${#found[@]} -eq 0 ]; then
    echo "ok: no Linux-only crate in the dependencies for $target"
  else
    echo "FAILED: Linux-only crates in the dependencies for $target: ${found[*]}" >&2
    for c in "${found[@]}"; do
      cargo tree --workspace --locked --target "$target" -e normal -i "$c" >&2 || true
    done
    status=1
  fi
done

sysroot=$(rustc --print sysroot)
for target in "${targets[@]}"; do
  if [ -d "$sysroot/lib/rustlib/$target/lib" ]; then
    if cargo check --workspace --locked --target "$target"; then
      echo "ok: cargo check for $target"
    else
      echo "FAILED: cargo check for $target" >&2
      status=1
    fi
  else
    echo "SKIPPED: cargo check for $target (no standard library for that target installed)"
  fi
done

exit "$status"
