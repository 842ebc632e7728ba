"""Tables and charts from one harness run's JSON (see run.py).

    python benches/harness/report.py benches/results/2026-11-30.json   # writes .md and .png next to it

Per condition, workload and variant: the median over rounds of throughput (MiB/s, with
min..max), the median of per-round ratios to stock S3A (disk, Hadoop 3.4) and to the
ceiling measured in the same round (with min..max); the medians of CPU seconds per GiB
(user + system of the writing process), local disk MiB written, requests per file and
seconds writers were blocked by s3native's memory budget; the largest over rounds of peak
RSS and of buffer memory (s3native's part buffers, or S3A's direct ByteBuffers); the median
peak of TCP connections to the endpoint (read from outside the process).

A run with `--issue13` also gets the "Issue 13 figures" table (`issue13`): each of
the issue's "Speed and memory" figures as the median over rounds of its per-round value
(min..max), next to its target, with what the same run shows of the bound.
"""

import json
import os
import statistics
import sys

MIB = 1 << 20
GIB = 1 << 30
COLORS = {"s3native": "#1f77b4", "s3a": "#ff7f0e", "object_store": "#2ca02c", "ceiling": "#7f7f7f"}


S3A_PROBES = ("s3a.object_list_request", "s3a.object_metadata_request", "s3a.object_bulk_delete_request",
              "s3a.object_delete_request")


def requests_per_file(r):
    """Requests on the wire per file: s3native's own counts plus, through NativeS3AFileSystem,
    S3A's probes (LIST, HEAD, DELETE: the writes S3A's counters show there are s3native's own,
    published in S3A's names); for stock S3A its store_io_request counter; object_store's."""
    req = r.get("requests", {})
    native = sum(v for k, v in req.items() if k.startswith("s3native.") or k.startswith("object_store."))
    if any(k.startswith("s3native.") for k in req):
        return (native + sum(req.get(k, 0) for k in S3A_PROBES)) / r["files"]
    return (native + req.get("s3a.store_io_request", 0)) / r["files"]


def requests_by_kind(r):
    req, kinds = r.get("requests", {}), {}

    def add(k, v):
        if v:
            kinds[k] = kinds.get(k, 0) + v

    listed = req.get("s3a.object_list_request", 0)
    head = req.get("s3a.object_metadata_request", 0)
    delete = req.get("s3a.object_bulk_delete_request", 0) + req.get("s3a.object_delete_request", 0)
    add("LIST", listed)
    add("HEAD", head)
    add("DELETE", delete)
    if not any(k.startswith("s3native.") for k in req):  # else they are s3native's, counted below
        add("S3A writes", req.get("s3a.store_io_request", 0) - listed - head - delete)
    names = {"create_multipart_upload": "create", "upload_part": "part", "complete_multipart_upload": "complete",
             "put_object": "PUT", "head_object": "HEAD", "abort_multipart_upload": "abort", "other": "other"}
    for k, v in req.items():
        fam, _, kind = k.partition(".")
        if fam in ("s3native", "object_store"):
            add(names.get(kind, kind), v)
    return ", ".join(f"{k} {v / r['files']:.3g}" for k, v in kinds.items())


def median(xs):
    return statistics.median(xs) if xs else float("nan")


def spread(xs, fmt):
    return f"{fmt.format(min(xs))}..{fmt.format(max(xs))}" if len(xs) > 1 else ""


def summarise(data):
    """{(condition, workload): [row per variant in run order]}"""
    runs = [r for r in data["runs"] if "error" not in r]
    meta = data["meta"]
    groups = {}
    for r in data["runs"]:
        groups.setdefault((r["condition"], r["workload"]), {}).setdefault(r["variant"], []).append(r)
    out = {}
    for key, by_variant in groups.items():
        ok = {v: [r for r in rs if "error" not in r] for v, rs in by_variant.items()}
        rate = {v: {r["round"]: r["bytes"] / MIB / r["seconds"] for r in rs} for v, rs in ok.items()}

        def ratio(v, ref):
            rounds = [n for n in rate.get(v, {}) if n in rate.get(ref, {})]
            return [rate[v][n] / rate[ref][n] for n in rounds]

        # Stock S3A (disk, Hadoop 3.4), or the group's first S3A variant (the Spark job's).
        reference = meta["reference"] if meta["reference"] in by_variant else next(
            (v for v, rs in by_variant.items() if rs[0]["family"] == "s3a"), None)

        def med(f):
            xs = [x for x in (f(r) for r in good) if x is not None]
            return median(xs) if xs else None

        rows = []
        for v, rs in by_variant.items():
            good = ok[v]
            row = {"variant": v, "family": rs[0]["family"], "failed": len(rs) - len(good)}
            if good:
                rates = list(rate[v].values())
                measured = "cpu_seconds" in good[0]  # a worker's own figures (not the Spark job's)
                row.update(
                    mib_s=median(rates), mib_s_all=rates,
                    vs_reference=ratio(v, reference) if reference else [], vs_ceiling=ratio(v, meta["ceiling"]),
                    cpu_s_per_gib=med(lambda r: r["cpu_seconds"] / (r["bytes"] / GIB) if measured else None),
                    disk_mib=med(lambda r: r["disk_write_bytes"] / MIB if measured else None),
                    cancelled_mib=med(lambda r: r.get("disk_cancelled_write_bytes", 0) / MIB if measured else None),
                    rss_mib=max(r["peak_rss_bytes"] for r in good) / MIB if measured else None,
                    buffer_mib=max(max(r.get("native_buffer_peak_bytes", 0), r.get("direct_peak_bytes", 0))
                                   for r in good) / MIB if measured else None,
                    requests_per_file=med(lambda r: requests_per_file(r) if measured else None),
                    requests_by_kind=requests_by_kind(good[0]) if measured else "",
                    blocked_s=med(lambda r: r.get("budget_blocked_seconds", 0) if measured else None),
                    connections=med(lambda r: r.get("peak_connections")),
                )
            rows.append(row)
        out[key] = rows
    del runs
    return out


HEADLINE = ["S3A disk, Hadoop 3.4 (SDK v2)", "S3A bytebuffer, Hadoop 3.4", "S3A disk, Hadoop 3.3 (SDK v1)",
            "object_store WriteMultipart (Rust)", "ceiling: prebuilt parts (Rust)"]


def headline(data):
    """s3native's Java stream (the Spark job: s3native's run) against the others, per condition
    and workload: medians of per-round ratios of throughput, and CPU per GiB side by side."""
    rate, cpu = {}, {}
    for r in data["runs"]:
        if "error" in r:
            continue
        key = (r["condition"], r["workload"])
        rate.setdefault(key, {}).setdefault(r["variant"], {})[r["round"]] = r["bytes"] / MIB / r["seconds"]
        if "cpu_seconds" in r:
            cpu.setdefault(key, {}).setdefault(r["variant"], []).append(r["cpu_seconds"] / (r["bytes"] / GIB))
    lines = ["| condition | workload | s3native MiB/s | x S3A disk 3.4 (Spark: 3.3) | x S3A bytebuffer 3.4 | x S3A disk 3.3 "
             "| x WriteMultipart | x ceiling | CPU s/GiB: s3native / S3A disk 3.4 |", "|---|---|---|---|---|---|---|---|---|"]
    for key, by_v in rate.items():
        ours = "s3native stream (JVM)" if "s3native stream (JVM)" in by_v else "Spark, s3native (NativeS3AFileSystem)"
        if ours not in by_v:
            continue
        others = HEADLINE if ours.startswith("s3native") else ["Spark, stock S3A (disk)"] + [None] * 4

        def cell(other):
            if other not in by_v:
                return "-"
            return ratio_cell([by_v[ours][n] / by_v[other][n] for n in by_v[ours] if n in by_v[other]])

        c = cpu.get(key, {})
        cpus = (f"{median(c[ours]):.2f} / {median(c[HEADLINE[0]]):.2f}" if ours in c and HEADLINE[0] in c else "-")
        lines.append(f"| {key[0]} | {key[1]} | {median(list(by_v[ours].values())):.0f} | "
                     + " | ".join(cell(o) for o in others) + f" | {cpus} |")
    return lines


# Issue 13's figures: (cell, what, target text, test of the median). A cell is (profile,
# workload); the values are per round, from the records of that round (run.py's ISSUE13_CELLS).
NETBOUND, LOOP_2G = ("netbound", "1 x 2 GiB"), ("loopback", "1 x 2 GiB")
SMALL, MEM64 = ("s3like", "2000 x 100 KiB, 8 threads"), ("loopback", "64 x 32 MiB, 64 threads")
FAIR = ("s3like", "fairness: 2000 x 100 KiB (8 threads) + 1 x 2 GiB")
STREAM, STREAM_256, STREAM_1G = "s3native stream (JVM)", "s3native stream, 256 MiB budget", "s3native stream, 1 GiB budget"
S3A_DISK, FS_PERF, S3A_PERF = "S3A disk, Hadoop 3.4 (SDK v2)", "s3native FileSystem, create.performance", \
    "S3A disk 3.4, create.performance"
WM, CEIL = "object_store WriteMultipart (Rust)", "ceiling: prebuilt parts (Rust)"
# The CPU figures' bound: the ceiling plus the one copy of every byte a stream API makes.
CEIL_COPY = "ceiling + one copy into recycled part buffers (Rust)"
RUST64 = "s3native Writer (Rust), 64 writers, 256 MiB budget"
RUST = "s3native Writer (Rust)"
ALONE, WITH_BIG = "small writers alone (Rust), 256 MiB budget", "small writers + one 2 GiB writer (Rust), 256 MiB budget"
# The fairness cell's bound: the small writers beside the same upload from another process.
BESIDE = "small writers alone (Rust), 256 MiB budget, beside a 2 GiB ceiling upload in another process"
# Blocked time "near 0": at most 1% of the run's wall time.
NEAR_ZERO = 0.01


def rate(r):
    return r["bytes"] / MIB / r["seconds"]


def cpu_gib(r):
    return r["cpu_seconds"] / (r["bytes"] / GIB)


def small_rate(r):
    c = r.get("classes", {}).get("small")
    return c["bytes"] / MIB / c["seconds"] if c and c["seconds"] else rate(r)


def issue13(data):
    """The "Issue 13 figures" table: one row per figure."""
    by = {}  # (profile, workload) -> round -> variant -> record
    for r in data["runs"]:
        if "error" not in r and r.get("tls"):
            by.setdefault((r["profile"], r["workload"]), {}).setdefault(r["round"], {})[r["variant"]] = r

    def per_round(cell, f):
        """f(records of one round) for every round where it can be computed."""
        out = []
        for recs in by.get(cell, {}).values():
            try:
                out.append(f(recs))
            except (KeyError, ZeroDivisionError, TypeError):
                pass
        return out

    def same_ceiling(v):
        return lambda rs: rate(rs[v]) / rate(rs[rs[v]["same_connections_ceiling"]])

    def conns(cell, v):
        xs = per_round(cell, lambda rs: rs[v]["peak_connections"])
        return f"{median(xs):.0f}" if xs else "-"

    def mib_s(cell, v, f=rate):
        xs = per_round(cell, lambda rs: f(rs[v]))
        return f"{median(xs):.1f}" if xs else "-"

    def p99_ms(cell, v, cls, what="queue_wait_p99_us"):
        xs = per_round(cell, lambda rs: rs[v]["classes"][cls][what] / 1000)
        return f"{median(xs):.1f} ms" if xs else "n/a"

    rows = []

    def row(name, xs, target, ok, context, fmt="{:.2f}"):
        if not xs:
            rows.append(f"| {name} | not measured | {target} | - | {context} |")
            return
        s = spread(xs, fmt)
        verdict = "meets" if ok(median(xs)) else "**short**"
        rows.append(f"| {name} | {fmt.format(median(xs))}" + (f" ({s})" if s else "") + f" | {target} | {verdict} | {context} |")

    for v, label in ((STREAM, "defaults"), (STREAM_256, "256 MiB")):
        row(f"netbound 1 x 2 GiB, stream ({label}) / stock S3A disk 3.4",
            per_round(NETBOUND, lambda rs, v=v: rate(rs[v]) / rate(rs[S3A_DISK])), ">= 3", lambda x: x >= 3,
            f"{mib_s(NETBOUND, v)} vs {mib_s(NETBOUND, S3A_DISK)} MiB/s; connections {conns(NETBOUND, v)} vs "
            f"{conns(NETBOUND, S3A_DISK)}; bound: ceiling at the stream's connections / S3A = "
            + ratio_cell(per_round(NETBOUND, lambda rs, v=v: rate(rs[rs[v]["same_connections_ceiling"]]) / rate(rs[S3A_DISK]))))
        row(f"netbound 1 x 2 GiB, stream ({label}) / ceiling at the same connections",
            per_round(NETBOUND, same_ceiling(v)), ">= 0.9", lambda x: x >= 0.9,
            f"{conns(NETBOUND, v)} connections")
    # Older results lack the bound (ceiling-copy, from 2026-12-08): their context leaves it out.
    copy_bound = per_round(LOOP_2G, lambda rs: cpu_gib(rs[CEIL_COPY]) / cpu_gib(rs[CEIL]))
    row("loopback TLS 1 x 2 GiB, CPU s/GiB: stream / ceiling",
        per_round(LOOP_2G, lambda rs: cpu_gib(rs[STREAM]) / cpu_gib(rs[CEIL])), "<= 1.3", lambda x: x <= 1.3,
        "CPU s/GiB " + " / ".join(f"{median(xs):.2f}" if xs else "-" for xs in
                                 (per_round(LOOP_2G, lambda rs, v=v: cpu_gib(rs[v])) for v in (STREAM, CEIL, WM, RUST, CEIL_COPY)))
        + " (stream / ceiling / WriteMultipart / s3native Writer in Rust / ceiling + one copy)"
        + (f"; bound: ceiling + one copy / ceiling = {ratio_cell(copy_bound)}" if copy_bound else ""))
    row("loopback TLS 1 x 2 GiB, CPU s/GiB: stream / WriteMultipart",
        per_round(LOOP_2G, lambda rs: cpu_gib(rs[STREAM]) / cpu_gib(rs[WM])), "<= 1", lambda x: x <= 1,
        "stream / ceiling + one copy = " + ratio_cell(per_round(LOOP_2G, lambda rs: cpu_gib(rs[STREAM]) / cpu_gib(rs[CEIL_COPY])))
        + "; WriteMultipart / ceiling + one copy = "
        + ratio_cell(per_round(LOOP_2G, lambda rs: cpu_gib(rs[WM]) / cpu_gib(rs[CEIL_COPY]))) if copy_bound else "")
    row("s3like 2000 x 100 KiB: stream at 256 MiB / at 1 GiB budget",
        per_round(SMALL, lambda rs: rate(rs[STREAM_256]) / rate(rs[STREAM_1G])), ">= 0.95", lambda x: x >= 0.95,
        f"{mib_s(SMALL, STREAM_256)} vs {mib_s(SMALL, STREAM_1G)} MiB/s")
    row("s3like 2000 x 100 KiB at 256 MiB: blocked time / wall time",
        per_round(SMALL, lambda rs: rs[STREAM_256]["budget_blocked_seconds"] / rs[STREAM_256]["seconds"]),
        f"near 0 (<= {NEAR_ZERO:g})", lambda x: x <= NEAR_ZERO,
        "blocked " + ratio_cell(per_round(SMALL, lambda rs: rs[STREAM_256]["budget_blocked_seconds"])) + " s", "{:.3f}")
    row("s3like 2000 x 100 KiB: NativeS3AFileSystem (create.performance) / stream",
        per_round(SMALL, lambda rs: rate(rs[FS_PERF]) / rate(rs[STREAM])), ">= 0.95", lambda x: x >= 0.95,
        f"{mib_s(SMALL, FS_PERF)} vs {mib_s(SMALL, STREAM)} MiB/s; stock S3A in the same mode {mib_s(SMALL, S3A_PERF)}")
    row("s3like 2000 x 100 KiB: requests per file, NativeS3AFileSystem - stock S3A (both create.performance)",
        per_round(SMALL, lambda rs: requests_per_file(rs[FS_PERF]) - requests_per_file(rs[S3A_PERF])), "0",
        lambda x: abs(x) < 0.005,
        "; ".join(f"{n}: " + next((requests_by_kind(rs[v]) for rs in by.get(SMALL, {}).values() if v in rs), "-")
                  for n, v in (("native", FS_PERF), ("stock", S3A_PERF))), "{:.3g}")

    def native_peak(r):
        return (r["outside_peak_rss_bytes"] - r["idle_rss_bytes"]) / (r["budget_bytes"] + 32 * MIB)

    row("64 writers: (peak RSS - RSS with no writer) / (budget + 32 MiB), read from /proc outside",
        per_round(MEM64, lambda rs: native_peak(rs[RUST64])), "<= 1", lambda x: x <= 1,
        "peak over idle " + ratio_cell(per_round(
            MEM64, lambda rs: (rs[RUST64]["outside_peak_rss_bytes"] - rs[RUST64]["idle_rss_bytes"]) / MIB))
        + " MiB; idle " + ratio_cell(per_round(MEM64, lambda rs: rs[RUST64]["idle_rss_bytes"] / MIB)) + " MiB; "
        "part buffers (own counter) " + ratio_cell(per_round(MEM64, lambda rs: rs[RUST64]["native_buffer_peak_bytes"] / MIB))
        + " MiB")
    row("fairness: small writers' throughput with one 2 GiB writer / alone (256 MiB)",
        per_round(FAIR, lambda rs: small_rate(rs[WITH_BIG]) / small_rate(rs[ALONE])), ">= 0.8", lambda x: x >= 0.8,
        f"{mib_s(FAIR, WITH_BIG, small_rate)} vs {mib_s(FAIR, ALONE, small_rate)} MiB/s; the big writer "
        + mib_s(FAIR, WITH_BIG, lambda r: r["classes"]["big"]["bytes"] / MIB / r["classes"]["big"]["seconds"])
        + " MiB/s, " + ratio_cell(per_round(FAIR, lambda rs: rs[WITH_BIG]["classes"]["big"]["seconds"]
                                            / rs[WITH_BIG]["classes"]["small"]["seconds"]))
        + "x the small ones' time (below 1: the small ones ran alone at the end); bound: the same small writers "
        "beside a 2 GiB upload from another process (ceiling way, "
        + next((f"{rs[BESIDE]['beside']['in_flight']} connections, {rs[BESIDE]['beside']['part_bytes'] // MIB} MiB parts"
                for rs in by.get(FAIR, {}).values() if BESIDE in rs), "-")
        + ") / alone = " + ratio_cell(per_round(FAIR, lambda rs: small_rate(rs[BESIDE]) / small_rate(rs[ALONE])))
        + " (its upload " + mib_s(FAIR, BESIDE, lambda r: r["beside"]["mib_s"]) + " MiB/s, "
        + ratio_cell(per_round(FAIR, lambda rs: rs[BESIDE]["beside"]["seconds"] / rs[BESIDE]["classes"]["small"]["seconds"]))
        + "x the small ones' time); with one writer / beside another process = "
        + ratio_cell(per_round(FAIR, lambda rs: small_rate(rs[WITH_BIG]) / small_rate(rs[BESIDE])))
        + " (near 1 or above: the machine binds, not s3native's scheduling)")

    def busy(v, k):
        xs = per_round(FAIR, lambda rs: rs[v]["cpu"][k])
        return f"{median(xs):.2f}" if xs else "-"

    cpus = next((rs[v]["cpus"] for rs in by.get(FAIR, {}).values() for v in rs if "cpus" in rs[v]), None)
    rows.append("| fairness: CPUs busy while the small writers ran (machine / writer process / its s3native runtime "
                "/ other process / s3s-fs / stunnel / toxiproxy / rest) | "
                + "; ".join(f"{n} " + " / ".join(busy(v, k) for k in ("machine", "client", "client_runtime",
                                                                      "other_process", "s3s-fs", "stunnel",
                                                                      "toxiproxy", "rest"))
                            for n, v in (("small alone", ALONE), ("small with big", WITH_BIG),
                                         ("small beside another process", BESIDE)))
                + f" | reported | - | CPU seconds over the small writers' wall time, of {cpus or '-'} CPUs "
                "(/proc/stat, /proc/<pid>/stat read by the harness); rest: everything else on the machine |")
    conn = [f"{n} {conns(FAIR, v)} / " + (lambda xs: f"{median(xs):.0f}" if xs else "-")(
        per_round(FAIR, lambda rs, v=v: rs[v]["connections_opened"]))
        for n, v in (("small alone", ALONE), ("small with big", WITH_BIG), ("small beside another process", BESIDE))]
    rows.append("| fairness: the writer process's connections, peak / opened while measured | " + "; ".join(conn)
                + " | reported | - | established TCP connections read from /proc every 0.1 s; each opened one is "
                "a TLS handshake |")

    def waits(what):
        return (f"small alone {p99_ms(FAIR, ALONE, 'small', what)}; small with big "
                f"{p99_ms(FAIR, WITH_BIG, 'small', what)}; big {p99_ms(FAIR, WITH_BIG, 'big', what)}; small beside "
                f"another process {p99_ms(FAIR, BESIDE, 'small', what)}")

    rows.append(f"| fairness: part queue wait p99 per writer class | {waits('queue_wait_p99_us')} | reported | - "
                "| p99 over the class's writers of each writer's p99; n/a: no parts (a file within one part is one "
                "PUT at close, queued nowhere) |")
    rows.append(f"| fairness: budget-blocked time p99 per writer | {waits('blocked_p99_us')} | reported | - | |")
    rows.append(f"| fairness: file open-to-close p99 | {waits('file_p99_us')} | reported | - | |")
    return ["## Issue 13 figures", "",
            "Each figure is the median over rounds of its per-round value (min..max), computed from the runs of "
            "that round; the cells' own tables follow. Ratios of throughput are MiB/s over MiB/s.", "",
            "| figure | measured | target | verdict | context |", "|---|---|---|---|---|"] + rows + [""]


def ratio_cell(xs):
    if not xs:
        return "-"
    s = spread(xs, "{:.2f}")
    return f"{median(xs):.2f}" + (f" ({s})" if s else "")


def markdown(data, summary):
    m = data["meta"]
    lines = [
        f"# s3native benchmark, {m['started']}",
        "",
    ] + ([] if m.get("complete", True) else [
        f"**Incomplete: the run was stopped at {m['finished']}; the tables hold the rounds done by then.**", ""]) + [
        f"Command: `benches/harness/run.py {m['command']}`; {m['rounds']} measured rounds, variants interleaved in "
        f"each round, after {m['warmup_rounds']} warm-up round(s); scale {m['scale']:g}. Machine: {m['machine']}.",
        f"Parts of {m['part_bytes'] // MIB} MiB and {m['active_blocks']} in flight per file for every writer; "
        f"S3-like profile: +{m['latency_ms']} ms per response and {m['rate_kb_s'] // 1000} MB/s per connection "
        f"and direction (toxiproxy)"
        + (f"; network-bound profile (netbound): +{m['profiles']['netbound'][0]} ms per response and "
           f"{m['profiles']['netbound'][1] / 1000:g} MB/s per connection and direction" if "profiles" in m else "")
        + ". Server: s3s-fs on tmpfs; TLS by stunnel."
        + (" Issue 13 cells: every writer at its own defaults (multipart size and active blocks unset) unless "
           "its name gives a budget." if m.get("issue13") else ""),
        "",
        "Columns: MiB/s is the median over rounds (min..max); the ratios are medians of per-round ratios to "
        f"stock S3A (`{m['reference']}`; in the Spark job, stock S3A with its default disk buffer) and to "
        f"`{m['ceiling']}` in the same round (min..max); CPU is user + system seconds "
        "of the writing process per GiB written; disk is local disk MiB that process wrote (/proc/self/io "
        "write_bytes; in brackets cancelled_write_bytes, the part of them dropped before reaching the disk "
        "because the file was deleted first); RSS is its peak resident memory; buffers is the peak of s3native's part buffers or of "
        "S3A's direct ByteBuffers (S3A's array buffers are heap, within RSS); blocked is the seconds writers "
        "waited for s3native's memory budget.",
        "",
    ] + (issue13(data) if m.get("issue13") else []) + [
        "## Headline: s3native's Java stream against the others",
        "",
        "Medians of per-round throughput ratios (min..max); above 1 means s3native was faster. "
        "In the Spark rows, the Spark job through NativeS3AFileSystem against stock S3A.",
        "",
    ] + headline(data)
    for (cond, workload), rows in summary.items():
        if workload == "warm-up":
            continue
        shape = m.get("workloads", {}).get(workload)
        ran = f" (run as {shape['files']} x {shape['file_bytes']:,} B)" if shape and m["scale"] != 1 else ""
        lines += ["", f"## {cond}: {workload}{ran}", "",
                  "| variant | MiB/s | x stock S3A | x ceiling | CPU s/GiB | disk MiB | RSS MiB | buffers MiB "
                  "| requests/file | blocked s | conns |",
                  "|---|---|---|---|---|---|---|---|---|---|---|"]
        for r in rows:
            if "mib_s" not in r:
                lines.append(f"| {r['variant']} | failed | | | | | | | | | |")
                continue
            s = spread(r["mib_s_all"], "{:.0f}")
            f = lambda k, fmt: "-" if r[k] is None else fmt.format(r[k])  # noqa: E731
            reqs = "-" if r["requests_per_file"] is None else f"{r['requests_per_file']:.3g} ({r['requests_by_kind']})"
            lines.append(
                f"| {r['variant']} | {r['mib_s']:.0f}" + (f" ({s})" if s else "") +
                f" | {ratio_cell(r['vs_reference'])} | {ratio_cell(r['vs_ceiling'])} | {f('cpu_s_per_gib', '{:.2f}')} "
                f"| {f('disk_mib', '{:.0f}')}" + (f" ({r['cancelled_mib']:.0f})" if r.get("cancelled_mib") else "")
                + f" | {f('rss_mib', '{:.0f}')} | {f('buffer_mib', '{:.0f}')} "
                f"| {reqs} | {f('blocked_s', '{:.2f}')} | {f('connections', '{:.0f}')} |"
                + (f" {r['failed']} failed" if r["failed"] else ""))
    failed = [r for r in data["runs"] if "error" in r]
    if failed:
        lines += ["", "## Failed runs", ""]
        lines += [f"- {r['condition']} / {r['workload']} / {r['variant']}: `{r['error'].splitlines()[0]}`"
                  for r in failed]
    return "\n".join(lines) + "\n"


def chart(summary, key, xlabel, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    conds = list(dict.fromkeys(c for c, w in summary if w != "warm-up"))
    works = list(dict.fromkeys(w for c, w in summary if w != "warm-up"))
    if not conds:
        return  # nothing ran
    fig, axes = plt.subplots(len(works), len(conds), figsize=(4.6 * len(conds) + 2.5, 0.32 * 15 * len(works) + 1),
                             squeeze=False)
    for i, w in enumerate(works):
        # One bar position per variant of the row, the same in every condition's panel.
        names = list(dict.fromkeys(r["variant"] for c in conds for r in summary.get((c, w), [])
                                   if r.get(key) is not None))
        for j, c in enumerate(conds):
            ax = axes[i][j]
            rows = {r["variant"]: r for r in summary.get((c, w), []) if r.get(key) is not None}
            if not rows:
                ax.axis("off")
                continue
            at = [names.index(v) for v in rows]
            vals = [r[key] for r in rows.values()]
            err = None
            if key == "mib_s":
                err = [[r[key] - min(r["mib_s_all"]) for r in rows.values()],
                       [max(r["mib_s_all"]) - r[key] for r in rows.values()]]
            ax.barh(at, vals, xerr=err, color=[COLORS.get(r["family"], "k") for r in rows.values()])
            ax.set_yticks(range(len(names)), names if j == 0 or not axes[i][0].axison else [""] * len(names),
                          fontsize=8)
            ax.set_ylim(len(names) - 0.5, -0.5)  # first variant on top
            ax.tick_params(axis="x", labelsize=8)
            ax.grid(axis="x", alpha=0.3)
            ax.set_title(f"{c}\n{w}", fontsize=8)
            ax.set_xlabel(xlabel, fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def cell_chart(summary, key, xlabel, path):
    """One panel per (condition, workload) cell, two to a row, each with its own variants:
    issue 13's cells share few variants, so the condition x workload grid would be sparse."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    cells = [(c, w) for c, w in summary if w != "warm-up"
             and any(r.get(key) is not None for r in summary[(c, w)])]
    if not cells:
        return
    rows_n = -(-len(cells) // 2)
    fig, axes = plt.subplots(rows_n, 2, figsize=(16, 2.6 * rows_n + 0.5), squeeze=False)
    for ax in axes.flat[len(cells):]:
        ax.axis("off")
    for ax, (c, w) in zip(axes.flat, cells):
        rows = [r for r in summary[(c, w)] if r.get(key) is not None]
        err = None
        if key == "mib_s":
            err = [[r[key] - min(r["mib_s_all"]) for r in rows], [max(r["mib_s_all"]) - r[key] for r in rows]]
        ax.barh(range(len(rows)), [r[key] for r in rows], xerr=err,
                color=[COLORS.get(r["family"], "k") for r in rows])
        ax.set_yticks(range(len(rows)), [r["variant"] for r in rows], fontsize=7)
        ax.set_ylim(len(rows) - 0.5, -0.5)
        ax.tick_params(axis="x", labelsize=7)
        ax.grid(axis="x", alpha=0.3)
        ax.set_title(f"{c}\n{w}", fontsize=8)
        ax.set_xlabel(xlabel, fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def write(stem):
    with open(stem + ".json") as f:
        data = json.load(f)
    summary = summarise(data)
    with open(stem + ".md", "w") as f:
        f.write(markdown(data, summary))
    draw = cell_chart if data["meta"].get("issue13") else chart
    draw(summary, "mib_s", "MiB/s (median, min..max over rounds)", stem + "-throughput.png")
    draw(summary, "cpu_s_per_gib", "CPU s per GiB written (user + system)", stem + "-cpu.png")


if __name__ == "__main__":
    if len(sys.argv) != 2 or not sys.argv[1].endswith(".json"):
        sys.exit("usage: report.py RESULTS.json")
    write(os.path.splitext(sys.argv[1])[0])
