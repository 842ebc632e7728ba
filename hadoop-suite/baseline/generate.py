#!/usr/bin/env python3
"""Write hadoop-suite/baseline/<line>.txt from a line's last stock run (format: hadoop-suite/README.md).

    python3 hadoop-suite/baseline/generate.py 3.4.1 [3.4.3 ...]

Reads target/hadoop-suite/<line>/reports/stock with scripts/hadoop-suite.py's own reader, so the
test names are the ones the harness compares.
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
    for line in lines:
        build = os.path.join(suite.OUT, line)
        fq = suite.find_classes(os.path.join(build, "hadoop-aws-test-sources"), suite.CLASSES)
        rows, comments = [], []
        for c in suite.CLASSES:
            if not fq[c]:
                continue
            results, _ = suite.read_reports(os.path.join(build, "reports", "stock"), fq[c])
            if results is None:
                comments.append(f"# {c}: no stock report")
                continue
            for test, status in sorted(results.items()):
                if any(ch.isspace() for ch in test):
                    sys.exit(f"{c}#{test}: whitespace in a test name")
                rows.append(f"{c}#{test} {status}")
        out = os.path.join(os.path.dirname(os.path.abspath(__file__)), f"{line}.txt")
        present = [c for c in suite.CLASSES if fq[c]]
        with open(out, "w") as f:
            f.write(f"# Stock S3AFileSystem results, Hadoop {line} (hadoop-aws-{line}-test-sources), local moto "
                    f"{moto_version()}, {datetime.date.today().isoformat()}\n")
            f.write("# Format: hadoop-suite/README.md (CLASS#TEST pass|fail|skip). Classes: " + " ".join(present) + "\n")
            for cmt in comments:
                f.write(cmt + "\n")
            for r in rows:
                f.write(r + "\n")
        print(f"{out}: {len(rows)} tests")


if __name__ == "__main__":
    main(sys.argv[1:] or ["3.4.1"])
