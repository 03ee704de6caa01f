#!/usr/bin/env bash
# What an exec-based shim must cost at least: a bash loop of 300 `ls`
# through PATH, bare against the same loop where `ls` is first a wrapper
# that only execs /usr/bin/ls, paired with farm-bench (A = through the
# wrapper, B = bare). Three wrappers, the same five lines of C:
#   nolibc  a static program with no C library (its own _start), as the
#           shim program without a C library is (crates/aq-shim/tiny/);
#   static  the same with glibc, linked statically;
#   dynamic the same with glibc, linked dynamically (as aq-shim is).
# Needs gcc. Usage: bench/loop/wrapper-floor.sh [PAIRS]   (default 6)
set -euo pipefail
RUNS=${1:-6}
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
cd "$scratch"
cat > nolibc.c <<'C'
static long sys3(long n, long a, long b, long c) {
  long r;
  __asm__ volatile("syscall" : "=a"(r) : "a"(n), "D"(a), "S"(b), "d"(c) : "rcx", "r11", "memory");
  return r;
}
void __attribute__((noreturn)) cstart(long *sp) {
  char **argv = (char **)(sp + 1);
  sys3(59, (long)"/usr/bin/ls", (long)argv, (long)(argv + sp[0] + 1));
  sys3(60, 127, 0, 0);
  for (;;) {}
}
__asm__(".globl _start\n_start:\n mov %rsp,%rdi\n and $-16,%rsp\n call cstart\n");
C
cat > libc.c <<'C'
#include <unistd.h>
extern char **environ;
int main(int argc, char **argv) { (void)argc; execve("/usr/bin/ls", argv, environ); return 127; }
C
gcc -O2 -static -nostdlib -fno-stack-protector -o nolibc nolibc.c
gcc -O2 -static -o static libc.c
gcc -O2 -o dynamic libc.c
loop='for i in $(seq 300); do ls >/dev/null; done'
echo "# $(date -u +%FT%TZ) $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg), $(uname -r)"
for w in nolibc static dynamic; do
  mkdir -p "$w.d" && ln -s "$scratch/$w" "$w.d/ls"
  echo
  echo "## through the $w wrapper (A) vs bare (B)"
  farm-bench -n "$RUNS" --vs "bash -c '$loop'" -- env PATH="$scratch/$w.d:$PATH" bash -c "$loop"
done
