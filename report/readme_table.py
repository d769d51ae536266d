#!/usr/bin/env python3
"""readme_table.py: the README's table of results, made from a committed run
folder (docs/reference-run/: its summary.csv and meta.json), so that every
figure in the README can be traced to a run and made again. It prints the
table, or with --write puts it into the README between its two marker lines.
It computes nothing: the medians are summary.csv's.

  python3 report/readme_table.py [RUN] [--write README.md]   (RUN: docs/reference-run)"""
import os
import sys

if __name__ == "__main__":
    sys.path[0] = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

from runner import rundir  # noqa: E402
from runner.catalog import ROOT  # noqa: E402
from runner.errors import RunError  # noqa: E402
from runner.outputs import write_atomic  # noqa: E402

REFERENCE_RUN = os.path.join("docs", "reference-run")
BEGIN = "<!-- results table: made by report/readme_table.py from docs/reference-run; do not edit -->"
END = "<!-- end of the results table -->"
# the node-container workloads of the 2009 Boost monotonic comparison, and two list workloads
WORKLOADS = ("thrash_pool_map_list_unaligned", "thrash_pool_sort_list_int", "list_dupe", "list_iterate")
# columns after the fastest of the others: (strategy, header)
COLUMNS = (("system", "glibc"), ("system-jemalloc", "jemalloc"), ("system-tcmalloc", "tcmalloc"),
           ("system-mimalloc", "mimalloc"), ("monotonic", "`monotonic`"),
           ("pool", "`pool` (Boost `pool_allocator`)"), ("ideal", "`ideal` (bump, LIFO reuse)"))
# not candidates for "fastest of the others": the malloc libraries and ideal
NOT_OTHERS = ("system", "ideal")


def figure(ns):
    """A median in ns with three significant digits, thousands separated."""
    if ns >= 100:
        return f"{ns:,.0f}"
    return f"{ns:.1f}" if ns >= 10 else f"{ns:.2f}"


def _cell_text(entry):
    if entry is None:
        return "-"
    if entry["status"] != "ok" or entry["median_ns_per_op"] is None:
        return entry["status"]
    return figure(entry["median_ns_per_op"])


def _largest_size(run, workload):
    sizes = [k[3] for k in run.by_key if k[2] == workload and k[4] == 1 and k[5] == 0]
    return max(sizes) if sizes else None


def _compilers_text(run):
    parts = []
    for name in run.compiler_names():
        info = run.compiler_info(name)
        parts.append(f"{name}: {info.get('version_line') or info.get('version') or '?'}")
    return "; ".join(parts)


def table(folder):
    """The README's block for the run folder, marker lines included."""
    run = rundir.load_strict(folder, need=("summary.csv", "meta.json"))
    meta = run.meta
    lines, sizes = [], set()
    for workload in WORKLOADS:
        size = _largest_size(run, workload)
        if size is None:
            continue
        sizes.add(size)
        for compiler in run.compiler_names():
            at = {k[1]: e for k, e in run.by_key.items() if (k[0], k[2], k[3], k[4], k[5]) ==
                  (compiler, workload, size, 1, 0)}
            if not at:
                continue
            others = [e for s, e in at.items() if not s.startswith(NOT_OTHERS) and e["status"] == "ok"]
            best = min(others, key=lambda e: e["median_ns_per_op"], default=None)
            fastest = f"{best['strategy']} {figure(best['median_ns_per_op'])}" if best else "-"
            lines.append(f"| `{workload}` | {compiler} | {fastest} | " +
                         " | ".join(_cell_text(at.get(s)) for s, _ in COLUMNS) + " |")
    if not lines:
        raise RunError(f"{folder} has none of the workloads {', '.join(WORKLOADS)}")
    where = os.path.relpath(os.path.abspath(folder), ROOT)
    size_text = " and ".join(str(s) for s in sorted(sizes))
    head = (f"From the run `{where}/` ({meta.get('date', 'date not recorded')}; {meta.get('cpu_model', '?')}, "
            f"{meta.get('cpu_count', '?')} CPUs; {_compilers_text(run)}; runner command: "
            f"`{meta.get('command_line', '?')}`, seed {meta.get('seed', '?')}). Median ns per operation "
            f"at size {size_text}, one thread; the fastest of the others leaves out the malloc "
            f"libraries and `ideal`. Every workload, size and ratio of that run: "
            f"[{where}/tables.md]({where}/tables.md).")
    header = "| workload | compiler | fastest of the others | " + " | ".join(h for _, h in COLUMNS) + " |"
    rule = "| --- | --- | --- | " + " | ".join("---:" for _ in COLUMNS) + " |"
    return "\n".join([BEGIN, head, "", header, rule] + lines + [END]) + "\n"


def current_block(text):
    """The block in text, from BEGIN to the end of END's line, or None."""
    start, end = text.find(BEGIN), text.find(END)
    if start < 0 or end < start:
        return None
    return text[start:text.index("\n", end) + 1 if "\n" in text[end:] else len(text)]


def replace_block(text, block):
    """text with its block replaced by block; ValueError when it has none."""
    old = current_block(text)
    if old is None:
        raise ValueError(f"no lines '{BEGIN}' ... '{END}'")
    return text.replace(old, block, 1)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    write = None
    if "--write" in argv:
        i = argv.index("--write")
        if i + 1 >= len(argv):
            print(__doc__.strip(), file=sys.stderr)
            return 2
        write = argv[i + 1]
        argv = argv[:i] + argv[i + 2:]
    if len(argv) > 1 or any(a.startswith("-") for a in argv):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    folder = argv[0] if argv else os.path.join(ROOT, REFERENCE_RUN)
    try:
        block = table(folder)
    except RunError as e:
        print(f"readme_table: {e}", file=sys.stderr)
        return 2
    if not write:
        print(block, end="")
        return 0
    with open(write, encoding="utf-8") as f:
        text = f.read()
    try:
        new = replace_block(text, block)
    except ValueError as e:
        print(f"readme_table: {write}: {e}", file=sys.stderr)
        return 2
    write_atomic(write, new)
    print(f"readme_table: wrote the table into {write}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
