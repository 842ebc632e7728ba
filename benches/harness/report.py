"""Tables and charts from one harness run's JSON (see run.py).

    python benches/harness/report.py benches/results/2026-11-30.json   # writes .md and .png next to it

Per condition, workload and variant: the median over rounds of throughput (MiB/s, with
min..max), the median of per-round ratios to stock S3A (disk, Hadoop 3.4) and to the
ceiling measured in the same round (with min..max); the medians of CPU seconds per GiB
(user + system of the writing process), local disk MiB written, requests per file and
seconds writers were blocked by s3native's memory budget; the largest over rounds of peak
RSS and of buffer memory (s3native's part buffers, or S3A's direct ByteBuffers).
"""

import json
import os
import statistics
import sys

MIB = 1 << 20
GIB = 1 << 30
COLORS = {"s3native": "#1f77b4", "s3a": "#ff7f0e", "object_store": "#2ca02c", "ceiling": "#7f7f7f"}


def requests_per_file(r):
    """Requests on the wire per file: S3A's store_io_request counter plus s3native's own."""
    req = r.get("requests", {})
    total = req.get("s3a.store_io_request", 0)
    total += sum(v for k, v in req.items() if k.startswith("s3native.") or k.startswith("object_store."))
    return total / r["files"]


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
        f"and direction (toxiproxy). Server: s3s-fs on tmpfs; TLS by stunnel.",
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
                  "| requests/file | blocked s |",
                  "|---|---|---|---|---|---|---|---|---|---|"]
        for r in rows:
            if "mib_s" not in r:
                lines.append(f"| {r['variant']} | failed | | | | | | | | |")
                continue
            s = spread(r["mib_s_all"], "{:.0f}")
            f = lambda k, fmt: "-" if r[k] is None else fmt.format(r[k])  # noqa: E731
            reqs = "-" if r["requests_per_file"] is None else f"{r['requests_per_file']:.3g} ({r['requests_by_kind']})"
            lines.append(
                f"| {r['variant']} | {r['mib_s']:.0f}" + (f" ({s})" if s else "") +
                f" | {ratio_cell(r['vs_reference'])} | {ratio_cell(r['vs_ceiling'])} | {f('cpu_s_per_gib', '{:.2f}')} "
                f"| {f('disk_mib', '{:.0f}')}" + (f" ({r['cancelled_mib']:.0f})" if r.get("cancelled_mib") else "")
                + f" | {f('rss_mib', '{:.0f}')} | {f('buffer_mib', '{:.0f}')} "
                f"| {reqs} | {f('blocked_s', '{:.2f}')} |"
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


def write(stem):
    with open(stem + ".json") as f:
        data = json.load(f)
    summary = summarise(data)
    with open(stem + ".md", "w") as f:
        f.write(markdown(data, summary))
    chart(summary, "mib_s", "MiB/s (median, min..max over rounds)", stem + "-throughput.png")
    chart(summary, "cpu_s_per_gib", "CPU s per GiB written (user + system)", stem + "-cpu.png")


if __name__ == "__main__":
    if len(sys.argv) != 2 or not sys.argv[1].endswith(".json"):
        sys.exit("usage: report.py RESULTS.json")
    write(os.path.splitext(sys.argv[1])[0])
