#!/usr/bin/env python3
"""Write hadoop-suite/baseline/<line>.txt from a line's last stock run (format: hadoop-suite/README.md).

    python3 hadoop-suite/baseline/generate.py 3.4.1 [3.4.3 ...]

Reads target/hadoop-suite/<line>/reports/stock with scripts/hadoop-suite.py's own reader, so the
test names are the ones the harness compares. A class with no stock report there keeps its lines
from the committed baseline (so a stock run of a few classes adds or refreshes those alone); the
header says which classes came from which run.
"""
import datetime
import importlib.util
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
spec = importlib.util.spec_from_file_location("hadoop_suite", os.path.join(ROOT, "scripts", "hadoop-suite.py"))
suite = importlib.util.module_from_spec(spec)
spec.loader.exec_module(suite)


def moto_version():
    try:
        out = subprocess.run([os.path.join(ROOT, ".venv", "bin", "python"), "-c", "import moto; print(moto.__version__)"],
                             capture_output=True, text=True, timeout=60)
        return out.stdout.strip() or "unknown"
    except OSError:
        return "unknown"


def main(lines):
    for token in lines:
        line = token.partition(":")[0]  # `3.5.0:read` (a line's own classes in HADOOP_SUITE_LINES)
        build = os.path.join(suite.OUT, line)
        fq = suite.find_classes(os.path.join(build, "hadoop-aws-test-sources"), suite.CLASSES)
        rows, comments, kept, fresh = [], [], [], []
        old = suite.read_baseline(line) or {}
        old_header = [l for l in open(suite.baseline_path(line)) if l.startswith("# Stock")] if old else []
        for c in suite.CLASSES:
            if not fq[c]:
                continue
            results, _ = suite.read_reports(os.path.join(build, "reports", "stock"), fq[c])
            if results is None and c in old:
                results = old[c]
                kept.append(c)
            elif results is None:
                comments.append(f"# {c}: no stock report")
                continue
            else:
                fresh.append(c)
            for test, status in sorted(results.items()):
                if any(ch.isspace() for ch in test):
                    sys.exit(f"{c}#{test}: whitespace in a test name")
                rows.append(f"{c}#{test} {status}")
        if not fresh:
            sys.exit(f"{line}: no stock report in {os.path.join(build, 'reports', 'stock')}: nothing to write")
        out = os.path.join(os.path.dirname(os.path.abspath(__file__)), f"{line}.txt")
        present = [c for c in suite.CLASSES if fq[c]]
        with open(out, "w") as f:
            f.write(f"# Stock S3AFileSystem results, Hadoop {line} (hadoop-aws-{line}-test-sources), local moto "
                    f"{moto_version()}, {datetime.date.today().isoformat()}: " + " ".join(fresh) + "\n")
            if kept:
                f.write("# Kept from the previous baseline (" + (old_header[0][2:].split(":")[0].strip() if old_header else "")
                        + "): " + " ".join(kept) + "\n")
            f.write("# Format: hadoop-suite/README.md (CLASS#TEST pass|fail|skip). Classes: " + " ".join(present) + "\n")
            for cmt in comments:
                f.write(cmt + "\n")
            for r in rows:
                f.write(r + "\n")
        print(f"{out}: {len(rows)} tests")


if __name__ == "__main__":
    main(sys.argv[1:] or ["3.4.1"])
