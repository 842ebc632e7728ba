"""Where a harness run writes its results: one stem per run, never another run's."""

import os
import string


def stem(out, name, when, fresh=True):
    """The path without extension for a run started at `when` (a datetime) that writes
    `name` results into the folder `out`: `out/<YYYY-MM-DD>-<name>` (`out/<YYYY-MM-DD>` for an
    empty name), or, when `fresh` and an earlier run of the same day already wrote files
    under that stem, the first of `<YYYY-MM-DD>b-<name>`, `<YYYY-MM-DD>c-<name>`, ... that no
    file in `out` uses. So a second full run on one day keeps the first's files, which the
    README may cite. A smoke run passes `fresh=False` and overwrites its own (they live under
    target/ and nothing cites them).

    Raises ValueError when all 26 stems of the day are taken."""
    day = when.strftime("%Y-%m-%d")
    taken = set(os.listdir(out)) if os.path.isdir(out) else set()
    for suffix in [""] + list(string.ascii_lowercase[1:]):
        base = day + suffix + (f"-{name}" if name else "")
        if not fresh or not any(f.startswith(base + ".") for f in taken):
            return os.path.join(out, base)
    raise ValueError(f"{out}: every results stem of {day} for {name or 'this bench'} is taken")
