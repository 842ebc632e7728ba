"""Where a harness run writes its results: one stem per run, never another run's."""

import os
import string


def stem(out, name, when, fresh=True):
    """The path without extension for a run started at `when` (a datetime) that writes
    `name` results into the folder `out`: `out/<YYYY-MM-DD>-<name>` (`out/<YYYY-MM-DD>` for an
    empty name), or, when `fresh` and an earlier run of the same day already wrote files
    under that stem, the first of `<YYYY-MM-DD>b-<name>`, `<YYYY-MM-DD>c-<name>`, ... that no
    file in `out` uses (a file is the stem's when it starts with the stem and a dot, or, for an
    empty name, a dash too: run.py's charts are `<stem>-throughput.png`); past `z`, the day
    and the time (`<YYYY-MM-DD>T<HHMMSS>-<name>`). So a second full run on one day keeps the
    first's files, which the README may cite. A smoke run passes `fresh=False` and overwrites
    its own (they live under target/ and nothing cites them)."""
    day = when.strftime("%Y-%m-%d")
    taken = set(os.listdir(out)) if os.path.isdir(out) else set()
    ends = (".", "-") if not name else (".",)
    for prefix in [day + s for s in [""] + list(string.ascii_lowercase[1:])] + [when.strftime("%Y-%m-%dT%H%M%S")]:
        base = prefix + (f"-{name}" if name else "")
        if not fresh or not any(f.startswith(base + e) for f in taken for e in ends):
            return os.path.join(out, base)
    return os.path.join(out, base)
