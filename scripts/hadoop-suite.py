#!/usr/bin/env python3
"""Hadoop's own hadoop-aws integration suite against the local S3 server, on stock S3AFileSystem
and on NativeS3AFileSystem (fs.s3a.native.fallback=fail), with a parity table.

    make hadoop-suite                       # starts the server, builds the jar, runs this
    scripts/hadoop-suite.py --lines 3.4.1,3.5.0 --classes ITestS3AContractCreate,ITestCreateFileCost
    scripts/hadoop-suite.py --baseline --jobs 2   # CI (make hadoop-suite-ci, make test): native only
    scripts/hadoop-suite.py --modes stock && hadoop-suite/baseline/generate.py 3.4.1   # a new baseline

Needs S3NATIVE_TEST_ENDPOINT and AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY (scripts/s3-server.sh
start) and the s3native jar (make jar). For each Hadoop line, hadoop-suite/pom.xml unpacks
hadoop-aws-<line>-test-sources.jar from Maven Central and compiles it unmodified (under
target/hadoop-suite/<line>/); then each filesystem runs the classes, one JVM per class, on a
bucket of the line's own. The table says, per class, tests passed/failed/skipped on each
filesystem and the seconds each took. It fails (exit 1) when
  - a test that passes on stock does not pass on native, unless hadoop-suite/exclusions.txt
    lists it with its reason, or
  - a class's native run cannot prove it ran on NativeS3AFileSystem and wrote natively (the
    harness's ParityProbe records, per class, the NativeS3AFileSystem instances and their native
    create count; none, or a count of 0, fails the class), or
  - a class gave no report on stock (it did not compile or its JVM died).
With --baseline (CI) only the native side runs, and the stock results are those committed in
hadoop-suite/baseline/<line>.txt (CLASS#TEST pass|fail|skip, written from a stock run's reports
by hadoop-suite/baseline/generate.py: make hadoop-suite-baseline); a class the baseline lacks fails. --jobs N runs each filesystem's classes as N Maven runs at once
(each with its own fork id, so its own paths in the bucket, and its own local directories).
The last line is `hadoop-suite: N passed, N failed`: tests at parity, tests that are not.
A run of one filesystem (--modes) or of a few classes compares with the last results of the
rest; run one line at a time (each run writes the line's test-classes/auth-keys.xml).
"""
import argparse
import fnmatch
import glob
import os
import re
import string
import subprocess
import sys
import time
import urllib.error
import urllib.request
import xml.etree.ElementTree as ET

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
POM = os.path.join(ROOT, "hadoop-suite", "pom.xml")
EXCLUSIONS = os.path.join(ROOT, "hadoop-suite", "exclusions.txt")
AUTH_KEYS = os.path.join(ROOT, "hadoop-suite", "auth-keys.xml.in")
OUT = os.path.join(ROOT, "target", "hadoop-suite")
BASELINE = os.path.join(ROOT, "hadoop-suite", "baseline")

# The write and commit classes of issue 12 (simple names: packages move between lines).
WRITE_CLASSES = [
    "ITestS3AContractCreate",
    "ITestS3ABlockOutputArray",
    "ITestS3ABlockOutputByteBuffer",
    "ITestS3ABlockOutputDisk",
    "ITestS3AMiscOperations",
    "ITestS3AEmptyDirectory",
    "ITestS3AFileOperationCost",
    "ITestCreateFileCost",
    "ITestCommitOperations",
    "ITestCommitOperationCost",
    "ITestMagicCommitProtocol",
    "ITestS3AHugeMagicCommits",
    "ITestS3ACommitterMRJob",
    "ITestS3AContractMultipartUploader",
]

# The read classes: S3A's contract open/seek/vectored tests and the open cost test (all four are
# in the test sources of 3.4.1, 3.4.3 and 3.5.0). Their native run must open natively too.
READ_CLASSES = [
    "ITestS3AContractOpen",
    "ITestS3AContractSeek",
    "ITestS3AContractVectoredRead",
    "ITestS3AOpenCost",
]

CLASSES = WRITE_CLASSES + READ_CLASSES

# Named class sets, for --classes and a line's `LINE:SET` (see parse_plan).
CLASS_SETS = {"all": CLASSES, "write": WRITE_CLASSES, "read": READ_CLASSES}

# Seconds a class took on native, Hadoop 3.4.1, two at a time (--jobs 2) on the 2-core machine at
# load ~30 (2026-12-01): --jobs deals the classes out to its Maven runs, longest first, each to the
# least loaded run.
COST = {
    "ITestS3ACommitterMRJob": 347, "ITestMagicCommitProtocol": 263, "ITestS3AFileOperationCost": 164,
    "ITestS3AContractCreate": 61, "ITestS3AHugeMagicCommits": 50, "ITestS3ABlockOutputByteBuffer": 45,
    "ITestS3ABlockOutputArray": 44, "ITestS3AContractMultipartUploader": 41, "ITestCommitOperationCost": 40,
    "ITestCreateFileCost": 34, "ITestS3AEmptyDirectory": 32, "ITestCommitOperations": 29,
    "ITestS3ABlockOutputDisk": 28, "ITestS3AMiscOperations": 25,
    # the read classes: stock, one at a time, 3.4.1, load ~34 (2026-12-01)
    "ITestS3AContractSeek": 193, "ITestS3AContractVectoredRead": 164, "ITestS3AContractOpen": 96, "ITestS3AOpenCost": 95,
}

# The classes that start a MiniYARN cluster (see deal()).
MINIYARN = {"ITestS3ACommitterMRJob"}

# mode: fs.s3a.impl, fs.AbstractFileSystem.s3a.impl, the digits of test.unique.fork.id (test paths)
MODES = {
    "stock": ("org.apache.hadoop.fs.s3a.S3AFileSystem", "org.apache.hadoop.fs.s3a.S3A", "0001"),
    "native": ("io.s3native.hadoopsuite.ObservedNativeS3AFileSystem", "io.s3native.hadoopsuite.ObservedNativeS3A", "0002"),
}


def log(msg):
    print(f"hadoop-suite: {msg}", flush=True)


def mvn(args, logfile):
    cmd = (os.environ.get("MVN") or "mvn -B -ntp").split() + ["-f", POM] + args
    with open(logfile, "w") as f:
        f.write(" ".join(cmd) + "\n")
        f.flush()
        return subprocess.call(cmd, stdout=f, stderr=subprocess.STDOUT, cwd=ROOT)


def mvn_start(args, logfile):
    """mvn in the background, its output to logfile: the Popen (the file stays open with it)."""
    cmd = (os.environ.get("MVN") or "mvn -B -ntp").split() + ["-f", POM] + args
    f = open(logfile, "w")
    f.write(" ".join(cmd) + "\n")
    f.flush()
    return subprocess.Popen(cmd, stdout=f, stderr=subprocess.STDOUT, cwd=ROOT)


def read_exclusions():
    """Lines `LINES CLASS#TEST-GLOB  reason`: LINES is a glob on the Hadoop line (`*`, `3.4.*`)."""
    rules = []
    if not os.path.exists(EXCLUSIONS):
        return rules
    for raw in open(EXCLUSIONS):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        parts = line.split(None, 2)
        if len(parts) < 3 or "#" not in parts[1]:
            sys.exit(f"{EXCLUSIONS}: '{line}' is not `LINES CLASS#TEST-GLOB reason`")
        cls, test = parts[1].split("#", 1)
        rules.append((parts[0], cls, test, parts[2]))
    return rules


def excluded(rules, line, cls, test):
    for lines, c, t, reason in rules:
        if fnmatch.fnmatch(line, lines) and c == cls and fnmatch.fnmatchcase(test, t):
            return reason
    return None


def create_bucket(endpoint, bucket):
    req = urllib.request.Request(f"{endpoint.rstrip('/')}/{bucket}", method="PUT", data=b"")
    try:
        urllib.request.urlopen(req, timeout=30).read()
    except urllib.error.HTTPError as e:
        if e.code != 409:  # BucketAlreadyOwnedByYou
            raise


STATUSES = ("pass", "fail", "skip")


def baseline_path(line):
    return os.path.join(BASELINE, f"{line}.txt")


def read_baseline(line):
    """{class: {test: 'pass'|'fail'|'skip'}} from hadoop-suite/baseline/<line>.txt, or None without one.

    One test a line, `CLASS#TEST STATUS` (simple class name, the test's name as the run's surefire
    report gives it, STATUS pass, fail or skip); `#` starts a comment line."""
    path = baseline_path(line)
    if not os.path.exists(path):
        return None
    base = {}
    for n, raw in enumerate(open(path), 1):
        text = raw.strip()
        if not text or text.startswith("#"):
            continue
        head, _, last = text.rpartition(" ")
        first, _, rest = text.partition(" ")
        if last in STATUSES and "#" in head:
            name, status = head.strip(), last
        elif first in STATUSES and "#" in rest:
            name, status = rest.strip(), first
        else:
            sys.exit(f"{path}:{n}: '{text}' is not `CLASS#TEST STATUS` (STATUS pass, fail or skip)")
        cls, test = name.split("#", 1)
        base.setdefault(cls, {})[test] = status
    return base


def deal(classes, jobs):
    """The classes in `jobs` groups of about equal cost (longest first, each to the lightest group).
    Classes that start MiniYARN go to the first: MiniYARN's JVMs log their native creates to
    reports/native-proof/remote-creates.log (auth-keys.xml names one directory for all), and only
    the first run's ParityProbe reads that directory (the others have reports/native-proof-wK), so
    a class running beside them is not credited with MiniYARN's creates."""
    groups = [[] for _ in range(max(1, min(jobs, len(classes))))]
    load = [0] * len(groups)
    for c in sorted(classes, key=lambda c: (c.rsplit(".", 1)[-1] not in MINIYARN, -COST.get(c.rsplit(".", 1)[-1], 30))):
        i = 0 if c.rsplit(".", 1)[-1] in MINIYARN else load.index(min(load))
        groups[i].append(c)
        load[i] += COST.get(c.rsplit(".", 1)[-1], 30)
    return [g for g in groups if g]


def find_classes(src, names):
    """Simple name -> fully qualified name in this line's test sources (None when absent)."""
    found = {}
    for path in glob.glob(os.path.join(src, "**", "*.java"), recursive=True):
        name = os.path.basename(path)[:-5]
        if name in names:
            found[name] = os.path.relpath(path, src)[:-5].replace(os.sep, ".")
    return {n: found.get(n) for n in names}


MESSAGES = {}  # (reports dir, fqcn, test) -> the first line of its failure, error or skip message
FLAKY = {}  # (reports dir, fqcn, test) -> the first failure of a test that passed on surefire's rerun


def read_reports(reports, fqcn):
    """{test: 'pass'|'fail'|'skip'} and the seconds the class took, or (None, None) without a report."""
    path = os.path.join(reports, f"TEST-{fqcn}.xml")
    if not os.path.exists(path):
        return None, None
    root = ET.parse(path).getroot()
    results = {}
    seen = {}
    for case in root.iter("testcase"):
        # JUnit 4 parameterized names may hold spaces (3.4's `testX[Buffer type : array]`): each
        # run of whitespace becomes `_`, so a name is one word in the baseline and exclusions.
        name = "_".join((case.get("name") or "").split())
        # JUnit 5 @ParameterizedClass (3.5) reports each parameter's tests under the same
        # names: the k-th occurrence becomes `name[#k]` (the order is the same in both runs).
        seen[name] = seen.get(name, 0) + 1
        if seen[name] > 1:
            name = f"{name}[#{seen[name]}]"
        if case.find("failure") is not None or case.find("error") is not None:
            status = "fail"
        elif case.find("skipped") is not None:
            status = "skip"
        else:
            status = "pass"
            # Failed, then passed when surefire ran it once more (hadoop-suite/pom.xml's
            # rerunFailingTestsCount): a pass, listed as FLAKY with its first failure.
            first = case.find("flakyFailure")
            if first is None:
                first = case.find("flakyError")
            if first is not None:
                msg = (first.get("type") or "failure").rsplit(".", 1)[-1] + ": " + (first.get("message") or "").strip()
                FLAKY.setdefault((reports, fqcn, name), " ".join(msg.split())[:300])
        for kind in ("failure", "error", "skipped"):
            e = case.find(kind)
            if e is not None:
                msg = (e.get("type") or kind).rsplit(".", 1)[-1] + ": " + (e.get("message") or "").strip()
                MESSAGES.setdefault((reports, fqcn, name), " ".join(msg.split())[:300])
        results[name] = status
    return results, float(root.get("time") or 0)


def read_proof(proof_dir, fqcn):
    """The class's ParityProbe record, from proof_dir or a worker's proof_dir-wK (--jobs)."""
    found = sorted(glob.glob(glob.escape(proof_dir) + "*" + os.sep + f"{fqcn}.properties"), key=os.path.getmtime)
    if not found:
        return None
    path = found[-1]
    proof = {}
    for line in open(path):
        if "=" in line:
            k, v = line.rstrip("\n").split("=", 1)
            proof[k] = v
    return proof


def counts(results):
    if results is None:
        return "no report"
    c = [sum(1 for s in results.values() if s == k) for k in ("pass", "fail", "skip")]
    return "/".join(map(str, c))


def line_flags(line):
    """The pom's line properties: 3.5+ tests are JUnit 5 only, and their @ParameterizedClass
    tests repeat one name per parameter, which surefire's rerun of failed tests takes for reruns
    of one test (it merged ITestS3AContractSeek's three parameters' reports into two), so 3.5+
    runs without it; 3.4.2+ need the S3 encryption client."""
    v = tuple(int(x) for x in re.findall(r"\d+", line)[:3])
    flags = []
    if v >= (3, 5):
        flags += ["-Dsuite.junit5", "-Dsuite.rerun.failing=0"]
    if v >= (3, 4, 2):
        flags.append("-Dsuite.cse.client")
    return flags


def run_line(line, classes, modes, jar, endpoint, rules, jobs=1):
    build = os.path.join(OUT, line)
    os.makedirs(build, exist_ok=True)
    common = [f"-Dhadoop.version={line}", f"-Ds3native.jar={jar}", f"-Dsuite.build.dir={build}"] + line_flags(line)
    t0 = time.time()
    rc = mvn(common + ["test-compile"], os.path.join(build, "mvn-compile.log"))
    log(f"{line}: hadoop-aws {line} test sources compiled in {time.time() - t0:.0f} s (rc {rc}; {build}/mvn-compile.log)")
    if rc != 0:
        return None
    fq = find_classes(os.path.join(build, "hadoop-aws-test-sources"), classes)
    present = [fq[c] for c in classes if fq[c]]
    bucket = "hadoop-suite-" + line.replace(".", "-")
    create_bucket(endpoint, bucket)
    wall = {}
    for mode in modes:
        fs_impl, afs_impl, fork = MODES[mode]
        # Only this run's classes lose their last results (a run of a few classes keeps the rest).
        for fqcn in present:
            for f in ([f"reports/{mode}/TEST-{fqcn}.xml", f"reports/{mode}/{fqcn}.txt", f"reports/{mode}/{fqcn}-output.txt"]
                      + glob.glob(os.path.join(build, "reports", f"{mode}-proof*", f"{fqcn}.properties"))):
                if os.path.exists(os.path.join(build, f)):
                    os.remove(os.path.join(build, f))
        with open(AUTH_KEYS) as f:
            keys = string.Template(f.read()).substitute(
                bucket=bucket, endpoint=endpoint, fs_impl=fs_impl, afs_impl=afs_impl,
                proof_dir=os.path.join(build, "reports", f"{mode}-proof"),
                access_key=os.environ["AWS_ACCESS_KEY_ID"], secret_key=os.environ["AWS_SECRET_ACCESS_KEY"])
        with open(os.path.join(build, "test-classes", "auth-keys.xml"), "w") as f:
            f.write(keys)
        t0 = time.time()

        def start(k, group, tail=""):
            # Worker k: its own test/tmp/log directories and fork id (its paths in the bucket):
            # stock 0001, native 0002 for the first, 0011/0012 for the second, ...
            digits = f"00{k - 1}{fork[-1]}"
            suffix = "" if k == 1 else f"-{k}"
            logfile = os.path.join(build, f"mvn-{mode}{suffix}{tail}.log")
            args = common + ["surefire:test", f"-Dsuite.mode={mode}", f"-Dsuite.fork.digits={digits}",
                             f"-Dsuite.worker={suffix.replace('-', '-w')}",
                             "-Dtest=" + ",".join(group), "-Dsurefire.failIfNoSpecifiedTests=false"]
            return mvn_start(args, logfile), logfile

        groups = deal(present, jobs)
        runs = [start(k, group) for k, group in enumerate(groups, 1)]
        rcs = [proc.wait() for proc, _ in runs]
        # A class of a run's -Dtest list that left no report (fresh-clone CI once saw surefire
        # run 5 of 6 classes, BUILD SUCCESS) runs once more, alone with the others so missing,
        # as the same worker; still none, and report_line counts it as having no report.
        reports = os.path.join(build, "reports", mode)
        reruns = []
        for k, group in enumerate(groups, 1):
            missing = [c for c in group if not os.path.exists(os.path.join(reports, f"TEST-{c}.xml"))]
            if missing:
                proc, logfile = start(k, missing, "-rerun")
                log(f"{line}: {mode}: no report from {', '.join(missing)} in {runs[k - 1][1]} (rc {rcs[k - 1]}); "
                    f"running {'it' if len(missing) == 1 else 'them'} once more ({logfile})")
                reruns.append((proc, logfile, missing))
        for proc, logfile, missing in reruns:
            rc = proc.wait()
            for c in missing:
                got = os.path.exists(os.path.join(reports, f"TEST-{c}.xml"))
                log(f"{line}: {mode}: rerun of {c}: {'report written' if got else 'still no report'} (rc {rc}; {logfile})")
        wall[mode] = time.time() - t0
        log(f"{line}: {mode} run took {wall[mode]:.0f} s in {len(runs)} Maven run(s) at once"
            f"{f' and {len(reruns)} rerun(s)' if reruns else ''} "
            f"(rc {','.join(map(str, rcs))}; {', '.join(l for _, l in runs)})")
    return build, fq, wall


def report_line(line, classes, modes, build, fq, wall, rules, baseline=None):
    """The parity table; with a baseline (CI), its stock results stand for a stock run."""
    rows, problems, notes, stale_notes, flaky_notes = [], [], [], [], []
    parity = broken = 0
    for c in classes:
        if not fq[c]:
            rows.append((c, "absent", "", "absent", "", ""))
            continue
        res, secs = {}, {}
        for mode in MODES:  # both, so a run of one filesystem compares with the other's last run
            res[mode], secs[mode] = read_reports(os.path.join(build, "reports", mode), fq[c])
        if baseline is not None:
            res["stock"], secs["stock"] = baseline.get(c), None
        stock, nat = res.get("stock"), res.get("native")
        flag = ""
        if baseline is not None and stock is None:
            problems.append(f"{c}: not in {os.path.relpath(baseline_path(line), ROOT)} (make hadoop-suite-baseline)")
            flag = "NO BASELINE"
        if "stock" in modes and stock is None:
            problems.append(f"{c}: no stock report (see {build}/reports/stock, mvn-stock*.log)")
            flag = "NO STOCK REPORT"
        if "native" in modes and nat is not None and any(s != "skip" for s in nat.values()):
            proof = read_proof(os.path.join(build, "reports", "native-proof"), fq[c])
            if proof is None:
                problems.append(f"{c}: native run left no ParityProbe record: not proven to run on NativeS3AFileSystem")
                flag = "NOT PROVEN"
            else:
                local, remote = int(proof.get("native.creates", 0)), int(proof.get("remote.native.creates", 0))
                instances = int(proof.get("instances", 0)) + int(proof.get("remote.instances", 0))
                flag = f"{local} native creates" + (f" (+{remote} in MiniYARN)" if remote else "")
                if c in READ_CLASSES:
                    opens = int(proof.get("native.opens", 0))
                    flag += f", {opens} native opens"
                    if opens == 0:
                        problems.append(f"{c}: native run did not read natively: 0 native opens "
                                        f"({proof.get('stock.opens', '?')} stock opens)")
                        flag = "NOT NATIVE (reads)"
                if instances == 0 or local + remote == 0:
                    reason = excluded(rules, line, c, "@no-native-create")
                    if instances and reason:
                        notes.append(f"{c}: {instances} NativeS3AFileSystem instances, no native create: {reason}")
                        flag = "no native create (listed)"
                    else:
                        problems.append(f"{c}: native run not native: {instances} NativeS3AFileSystem instances, "
                                        f"{local + remote} native creates, fallback {proof.get('fallback.settings') or '-'}")
                        flag = "NOT NATIVE"
        elif "native" in modes and nat is None:
            problems.append(f"{c}: no native report (see {build}/reports/native, mvn-native*.log)")
            flag = "NO NATIVE REPORT"
        if stock is not None and nat is None and "native" in modes:
            broken += sum(1 for s in stock.values() if s == "pass")  # the class's one PROBLEM line says why
        elif stock is not None and nat is not None:
            for test, s in sorted(stock.items()):
                if s != "pass":
                    continue
                n = (nat or {}).get(test, "missing")
                if n == "pass":
                    parity += 1
                    first = FLAKY.get((os.path.join(build, "reports", "native"), fq[c], test))
                    if first:
                        flaky_notes.append(f"{c}#{test}: failed on native, passed on the rerun -- {first}")
                    stale = excluded(rules, line, c, test)
                    if stale:
                        # Not a failure (the rule may hold on another line), but a gap that closed.
                        stale_notes.append(f"{c}#{test}: passes on native, yet excluded ({stale}): "
                                           "drop the exclusion if it passes on every line it names")
                    continue
                reason = excluded(rules, line, c, test)
                if reason:
                    notes.append(f"{c}#{test}: native {n}, excluded: {reason}")
                    parity += 1
                else:
                    broken += 1
                    why = MESSAGES.get((os.path.join(build, "reports", "native"), fq[c], test), "")
                    problems.append(f"{c}#{test}: passes on stock, {n} on native" + (f" -- {why}" if why else ""))
        rows.append((c, counts(stock), "-" if baseline is not None else f"{secs.get('stock') or 0:.0f}",
                     counts(nat), f"{secs.get('native') or 0:.0f}", flag))
    head = ("class", "baseline p/f/s" if baseline is not None else "stock p/f/s", "s", "native p/f/s", "s", "native proof")
    widths = [max(len(str(r[i])) for r in rows + [head]) for i in range(len(head))]
    table = [f"Hadoop {line}: stock S3AFileSystem vs NativeS3AFileSystem (fs.s3a.native.fallback=fail)"
             + (f"; stock from {os.path.relpath(baseline_path(line), ROOT)}" if baseline is not None else "")]
    for r in [head] + rows:
        table.append("  ".join(str(v).ljust(w) if i in (0, 5) else str(v).rjust(w) for i, (v, w) in enumerate(zip(r, widths))).rstrip())
    table.append("wall: " + ", ".join(f"{m} {wall[m]:.0f} s" for m in modes if wall.get(m)))
    text = "\n".join(table + [""] + [f"excluded  {n}" for n in notes] + [f"STALE     {n}" for n in stale_notes]
                     + [f"FLAKY     {n}" for n in flaky_notes]
                     + [f"PROBLEM   {p}" for p in problems]) + "\n"
    with open(os.path.join(build, "parity.txt"), "w") as f:
        f.write(text)
    print(text, flush=True)
    return parity, broken, len(problems)


def expand(spec):
    """Class names from a spec: simple class names and set names (all, write, read), separated by
    commas, spaces or `+`; each class once, in order."""
    out = []
    for x in re.split(r"[,\s+]+", spec):
        for c in CLASS_SETS.get(x, [x]) if x else []:
            if c not in out:
                out.append(c)
    return out


def parse_plan(lines_spec, default_classes):
    """[(line, classes)] from `LINE[:CLASSES]` tokens (comma or space separated): `3.4.1:write
    3.5.0:read` runs the write set on 3.4.1 and the read set on 3.5.0; a line without `:` runs
    default_classes."""
    plan = []
    for token in re.split(r"[,\s]+", lines_spec):
        if token:
            line, _, spec = token.partition(":")
            plan.append((line, expand(spec) if spec else default_classes))
    return plan


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--lines", default=os.environ.get("HADOOP_SUITE_LINES") or "3.4.1",
                   help="Hadoop lines, comma or space separated, each LINE or LINE:CLASSES (e.g. 3.5.0:read; "
                        "HADOOP_SUITE_LINES; default 3.4.1)")
    p.add_argument("--classes", default=os.environ.get("HADOOP_SUITE_CLASSES") or "all",
                   help="test classes by simple name, or the sets all, write, read, separated by commas, spaces "
                        "or + (HADOOP_SUITE_CLASSES; default all: the write/commit and the read classes)")
    p.add_argument("--modes", default="stock,native", help="stock,native (default both)")
    p.add_argument("--baseline", action="store_true",
                   help="CI: run only native and compare with hadoop-suite/baseline/<line>.txt (stock's committed results)")
    p.add_argument("--jobs", type=int, default=int(os.environ.get("HADOOP_SUITE_JOBS") or 1),
                   help="Maven runs (one JVM each) at once per filesystem (HADOOP_SUITE_JOBS; default 1)")
    p.add_argument("--jar", default=None, help="the s3native jar (default jvm/target/s3native-*.jar)")
    p.add_argument("--report-only", action="store_true", help="print the tables of the last runs, run nothing")
    a = p.parse_args()
    plan = parse_plan(a.lines, expand(a.classes))
    modes = [x for x in a.modes.split(",") if x]
    if a.baseline:
        modes = ["native"]
    for m in modes:
        if m not in MODES:
            sys.exit(f"unknown mode {m}: stock or native")
    jar = a.jar or next(iter(sorted(g for g in glob.glob(os.path.join(ROOT, "jvm", "target", "s3native-*.jar"))
                                    if not g.endswith(("-sources.jar", "-javadoc.jar")))), None)
    if not jar or not os.path.exists(jar):
        sys.exit("no s3native jar: run `make jar` (or pass --jar)")
    jar = os.path.abspath(jar)  # Maven's systemPath must be absolute
    endpoint = os.environ.get("S3NATIVE_TEST_ENDPOINT")
    if not a.report_only and not (endpoint and os.environ.get("AWS_ACCESS_KEY_ID") and os.environ.get("AWS_SECRET_ACCESS_KEY")):
        sys.exit("S3NATIVE_TEST_ENDPOINT and AWS keys are unset: eval \"$(scripts/s3-server.sh start)\" first")
    rules = read_exclusions()
    total_ok = total_bad = total_problems = 0
    for line, classes in plan:
        if a.report_only:
            build = os.path.join(OUT, line)
            fq = find_classes(os.path.join(build, "hadoop-aws-test-sources"), classes)
            got = (build, fq, {m: 0.0 for m in modes})
        else:
            got = run_line(line, classes, modes, jar, endpoint, rules, a.jobs)
        if got is None:
            log(f"{line}: the test sources did not compile")
            total_problems += 1
            continue
        baseline = None
        if a.baseline:
            baseline = read_baseline(line)
            if baseline is None:
                log(f"{line}: no {os.path.relpath(baseline_path(line), ROOT)}: make hadoop-suite-baseline HADOOP_SUITE_LINES={line}")
                total_problems += 1
                continue
        ok, bad, problems = report_line(line, classes, modes, *got, rules, baseline)
        total_ok, total_bad, total_problems = total_ok + ok, total_bad + bad, total_problems + problems
    print(f"hadoop-suite: {total_ok} passed, {total_bad} failed", flush=True)
    return 1 if total_bad or total_problems else 0


if __name__ == "__main__":
    sys.exit(main())
