#!/usr/bin/env python3
"""Run shell commands a few at a time, each with its own log; fail when any fails.

    scripts/run-jobs.py [--jobs N] [--logs DIR] NAME=COMMAND [NAME=COMMAND ...]

Jobs start in the order given (put the longest first), at most N at once (default 2). Each
COMMAND runs in `bash -c` with its output in DIR/NAME.log (default target/run-jobs). As a
job ends, its whole log is printed between `== NAME` markers with its exit status and seconds,
so a failed job's output is in the caller's log as it would be for a job run alone. At the
end: one line per job (seconds, ok or FAILED); the exit status is 1 when a job failed (every
job still runs to its end), 130 when interrupted (the jobs' process groups are stopped).
"""

import argparse
import os
import re
import signal
import subprocess
import sys
import time


def say(msg):
    print(f"== run-jobs: {msg}", flush=True)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--logs", default="target/run-jobs")
    p.add_argument("job", nargs="+", help="NAME=COMMAND")
    a = p.parse_args()
    jobs = []
    for spec in a.job:
        name, sep, cmd = spec.partition("=")
        if not sep or not re.fullmatch(r"[A-Za-z0-9._+-]+", name) or not cmd.strip():
            sys.exit(f"run-jobs: '{spec}' is not NAME=COMMAND (NAME of letters, digits and ._+-)")
        if any(name == j[0] for j in jobs):
            sys.exit(f"run-jobs: two jobs are named {name}")
        jobs.append((name, cmd))
    os.makedirs(a.logs, exist_ok=True)

    running = {}  # Popen -> (name, log path, start time, open log file)
    done = []  # (name, rc, seconds, log path)

    def stop(signum, _frame):
        for proc in running:
            try:
                os.killpg(proc.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
        for proc in running:
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
        say(f"interrupted (signal {signum}); stopped {', '.join(v[0] for v in running.values()) or 'no job'}")
        sys.exit(130)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)

    queue = list(jobs)
    t0 = time.time()
    while queue or running:
        while queue and len(running) < max(1, a.jobs):
            name, cmd = queue.pop(0)
            log = os.path.join(a.logs, f"{name}.log")
            f = open(log, "w")
            f.write(f"$ {cmd}\n")
            f.flush()
            # A process group of its own, so an interrupt stops the job's children too.
            proc = subprocess.Popen(["bash", "-c", cmd], stdout=f, stderr=subprocess.STDOUT,
                                    stdin=subprocess.DEVNULL, start_new_session=True)
            running[proc] = (name, log, time.time(), f)
            say(f"{name} started (+{time.time() - t0:.0f} s; log {log})")
        pid, status = os.wait()
        proc = next((p for p in running if p.pid == pid), None)
        if proc is None:
            continue
        proc.returncode = os.waitstatus_to_exitcode(status)
        name, log, start, f = running.pop(proc)
        f.close()
        secs = time.time() - start
        rc = proc.returncode
        print(f"== {name}: log {log}", flush=True)
        with open(log, errors="replace") as lf:
            for line in lf:
                sys.stdout.write(line)
        print(f"== {name}: {'ok' if rc == 0 else f'FAILED (exit {rc})'} in {secs:.0f} s", flush=True)
        done.append((name, rc, secs, log))

    order = {name: i for i, (name, _) in enumerate(jobs)}
    say(f"{len(done)} jobs, {max(1, a.jobs)} at once, {time.time() - t0:.0f} s in all")
    for name, rc, secs, log in sorted(done, key=lambda d: order[d[0]]):
        print(f"{secs:6.0f} s  {name}{'' if rc == 0 else f': FAILED (exit {rc}; {log})'}", flush=True)
    failed = [d[0] for d in done if d[1] != 0]
    if failed:
        say(f"failed: {', '.join(failed)}")
        sys.exit(1)


if __name__ == "__main__":
    main()
