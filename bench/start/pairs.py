#!/usr/bin/env python3
"""Paired start-up timing: runs command A and command B in turn N times
(after warm-ups; A first in even pairs, B first in odd ones), each as a whole process (posix_spawn + wait), and prints
the median, p90 and p99 of each and of A minus B in milliseconds.

Usage: pairs.py N 'A command' 'B command' [stdin-file]
The commands are split on spaces (no shell), so the shell's own start is
not counted; stdin-file, if given, is each run's standard input."""
import os, shlex, statistics, sys, time

def run(argv, stdin_path):
    fd = os.open(stdin_path or os.devnull, os.O_RDONLY)
    null = os.open(os.devnull, os.O_WRONLY)
    t0 = time.perf_counter_ns()
    pid = os.posix_spawn(argv[0], argv, os.environ,
                         file_actions=[(os.POSIX_SPAWN_DUP2, fd, 0),
                                       (os.POSIX_SPAWN_DUP2, null, 1),
                                       (os.POSIX_SPAWN_DUP2, null, 2)])
    _, status = os.waitpid(pid, 0)
    dt = time.perf_counter_ns() - t0
    os.close(fd); os.close(null)
    if os.waitstatus_to_exitcode(status) not in (0, 2):
        sys.exit(f"{argv} exited {os.waitstatus_to_exitcode(status)}")
    return dt / 1e6

def q(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(p * len(xs)))]

n = int(sys.argv[1]); a = shlex.split(sys.argv[2]); b = shlex.split(sys.argv[3])
stdin_path = sys.argv[4] if len(sys.argv) > 4 else None
for _ in range(3):
    run(a, stdin_path); run(b, stdin_path)
ta, tb = [], []
for i in range(n):
    # Each runs first in every other pair: what one leaves behind (a
    # network namespace torn down by a kernel worker after its exit) falls
    # on the other as often as on itself.
    if i % 2 == 0:
        ta.append(run(a, stdin_path)); tb.append(run(b, stdin_path))
    else:
        tb.append(run(b, stdin_path)); ta.append(run(a, stdin_path))
d = [x - y for x, y in zip(ta, tb)]
print(f"A = {sys.argv[2]}\nB = {sys.argv[3]}\nn = {n} pairs, load {open('/proc/loadavg').read().split()[0]}")
for name, xs in (("A", ta), ("B", tb), ("A-B", d)):
    print(f"  {name:4} median {statistics.median(xs):7.3f} ms   p90 {q(xs, .9):7.3f}   p99 {q(xs, .99):7.3f}   min {min(xs):7.3f}")
