"""readme_table.py: the README's tables of results, made from committed run
folders (docs/reference-run/, a default run, and docs/reference-dimensions/,
a run of the dimensions suite: their summary.csv and meta.json), so that
every figure in the README can be traced to a run and made again. It prints
the tables, or with --write puts each into the README between its two marker
lines. It computes nothing but ratios of summary.csv's medians; each
workload's fastest group is the run's (groups.csv, or its samples).

  python3 -m report.readme_table [RUN [DIMENSIONS_RUN]] [--write README.md]"""
import os
import sys

from report import dimensions
from runfolder import cells, outputs, rundir
from runfolder.aggregate import GROUP_RULE
from runfolder.catalog import ROOT
from runfolder.errors import RunError
from runfolder.outputs import write_atomic
from runfolder.schema import MEDIAN, fmt

REFERENCE_RUN = os.path.join("docs", "reference-run")
DIMENSIONS_RUN = os.path.join("docs", "reference-dimensions")
DIMENSIONS_BEGIN = ("<!-- dimensions table: made by report/readme_table.py from docs/reference-dimensions; "
                    "do not edit -->")
DIMENSIONS_END = "<!-- end of the dimensions table -->"
BEGIN = "<!-- results table: made by report/readme_table.py from docs/reference-run; do not edit -->"
END = "<!-- end of the results table -->"
# the node-container workloads of the 2009 Boost monotonic comparison, and two list workloads
WORKLOADS = ("thrash_pool_map_list_unaligned", "thrash_pool_sort_list_int", "list_dupe", "list_iterate")
# columns after the fastest group: (strategy, header); each C model of the
# 2009 comparison stands beside the library it models, so that a reader sees
# both the strategy and what a C++ program would ship
COLUMNS = (("system", "glibc"), ("system-jemalloc", "jemalloc"), ("system-tcmalloc", "tcmalloc"),
           ("system-mimalloc", "mimalloc"), ("monotonic", "`monotonic`"),
           ("pmr-monotonic", "`std::pmr::monotonic_buffer_resource`"),
           ("pool", "`pool` (model of Boost `pool_allocator`)"), ("boost-pool", "Boost `pool_allocator`"),
           ("fast_pool", "`fast_pool` (model of Boost `fast_pool_allocator`)"),
           ("boost-fast_pool", "Boost `fast_pool_allocator`"), ("minimal", "`minimal` (bump, LIFO reuse)"))
# not candidates for "fastest of the others": the malloc libraries, minimal (the
# floor) and the A/A control (a second build of the baseline)
NOT_OTHERS = ("system", "minimal", "control")


def figure(ns):
    """A median in ns with three significant digits, thousands separated."""
    if ns >= 100:
        return f"{ns:,.0f}"
    return f"{ns:.1f}" if ns >= 10 else f"{ns:.2f}"


def _cell_text(entry):
    if entry is None:
        return "-"
    if entry["status"] != "ok" or entry[MEDIAN] is None:
        return entry["status"]
    return figure(entry[MEDIAN])


def _largest_size(run, workload):
    sizes = [k[3] for k in run.by_key if k[2] == workload and k[4] == 1 and k[5] == 0]
    return max(sizes) if sizes else None


def _compilers_text(run):
    parts = []
    for name in run.compiler_names():
        info = run.compiler_info(name)
        parts.append(f"{name}: {info.get('version_line') or info.get('version') or '?'}")
    return "; ".join(parts)


def groups_of(run):
    """{(compiler, workload, size, threads, param): the fastest group's strategies,
    fastest first}, from the folder's groups.csv or else its samples.csv; None
    when it kept neither (a run folder written before groups were)."""
    if run.group_entries:
        out = {}
        for e in sorted(run.group_entries, key=lambda e: e["rank"]):
            point = tuple(e[k] for k in ("compiler", "workload", "size", "threads", "param"))
            members = out.setdefault(point, [])
            if e["in_group"]:
                members.append(e["strategy"])
        return out
    if run.samples_of:
        return {p: g.members for p, g in cells.fastest_groups_of(run).items()}
    return None


def table(folder):
    """The README's block for the run folder, marker lines included."""
    run = rundir.load_strict(folder, need=("summary.csv", "meta.json"))
    meta = run.meta
    groups = groups_of(run)
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
            others = [e for s, e in at.items()
                      if not s.startswith(NOT_OTHERS) and not s.endswith("@virtual") and e["status"] == "ok"]
            if groups is not None:
                members = groups.get((compiler, workload, size, 1, 0.0), [])
                fastest = (f"{', '.join(members)} ({len(members)} of "
                           f"{sum(e['status'] == 'ok' for e in at.values())})") if members else "-"
            else:
                best = min(others, key=lambda e: e[MEDIAN], default=None)
                fastest = f"{best['strategy']} {figure(best[MEDIAN])}" if best else "-"
            lines.append(f"| `{workload}` | {compiler} | {fastest} | " +
                         " | ".join(_cell_text(at.get(s)) for s, _ in COLUMNS) + " |")
    if not lines:
        raise RunError(f"{folder} has none of the workloads {', '.join(WORKLOADS)}")
    where, source = _run_line(folder, run)
    size_text = " and ".join(str(s) for s in sorted(sizes))
    if groups is not None:
        chosen = f"{GROUP_RULE} (every row counts)"
        column = "fastest group"
    else:
        chosen = ("the fastest of the others leaves out the malloc libraries, `minimal` and the A/A control, "
                  "by median alone: this run kept neither groups.csv nor samples.csv, so the rows it cannot "
                  "tell apart from that one are not known here")
        column = "fastest of the others (median alone)"
    head = (source + f" Median ns per operation at size {size_text}, one thread; {chosen}; `-` where the "
            f"row was not in that run. Every workload, size and ratio of that run: "
            f"[{where}/tables.md]({where}/tables.md).")
    header = f"| workload | compiler | {column} | " + " | ".join(h for _, h in COLUMNS) + " |"
    rule = "| --- | --- | --- | " + " | ".join("---:" for _ in COLUMNS) + " |"
    return "\n".join([BEGIN, head, "", header, rule] + lines + [END]) + "\n"


TRACES_BEGIN = "<!-- traces table: made by report/readme_table.py from docs/reference-run; do not edit -->"
TRACES_END = "<!-- end of the traces table -->"
TRACE_PREFIX = "trace:"


def trace_table(folder):
    """The README's block of the shipped traces' replays in the committed
    reference run: each trace's fastest group and the columns' times per
    call; None when the run replayed no trace."""
    run = rundir.load_strict(folder, need=("summary.csv", "meta.json"))
    groups = groups_of(run)
    traces = sorted({k[2] for k in run.by_key if k[2].startswith(TRACE_PREFIX)})
    lines = []
    for workload in traces:
        for compiler in run.compiler_names():
            at = {k[1]: e for k, e in run.by_key.items() if (k[0], k[2]) == (compiler, workload)}
            if not at:
                continue
            members = (groups or {}).get(next((k[0], k[2], k[3], k[4], k[5]) for k in run.by_key
                                              if (k[0], k[2]) == (compiler, workload)), [])
            ok = sum(e["status"] == "ok" for e in at.values())
            fastest = f"{', '.join(members)} ({len(members)} of {ok})" if members else "-"
            lines.append(f"| `{workload}` | {compiler} | {fastest} | " +
                         " | ".join(_cell_text(at.get(s)) for s, _ in COLUMNS) + " |")
    if not lines:
        return None
    where, source = _run_line(folder, run)
    head = (source + f" Median ns per call of each replay of a trace of a real program ([traces/](traces/README.md)); "
            f"{GROUP_RULE} (every row counts); `skipped` where a row does not apply (a trace of several threads "
            f"on a heap that is not thread-safe). Each row's memory for the trace: [{where}/tables.md]"
            f"({where}/tables.md).")
    header = "| trace | compiler | fastest group | " + " | ".join(h for _, h in COLUMNS) + " |"
    rule = "| --- | --- | --- | " + " | ".join("---:" for _ in COLUMNS) + " |"
    return "\n".join([TRACES_BEGIN, head, "", header, rule] + lines + [TRACES_END]) + "\n"


def _ratio(v):
    return f"{v:.2f}" if v is not None else "-"


def command_text(line):
    """The runner's command line with its run folder as <run>: the folder was
    a path of the machine that ran it, which names nothing on another."""
    words = line.split()
    for i, word in enumerate(words):
        if word.startswith("--out="):
            words[i] = "--out=<run>"
        elif i and words[i - 1] == "--out":
            words[i] = "<run>"
    return " ".join(words)


def _run_line(folder, run):
    meta = run.meta
    where = os.path.relpath(os.path.abspath(folder), ROOT)
    return where, (f"From the run `{where}/` ({meta.get('date', 'date not recorded')}; "
                   f"{meta.get('cpu_model', '?')}, {meta.get('cpu_count', '?')} CPUs; {_compilers_text(run)}; "
                   f"runner command: `{command_text(meta.get('command_line', '?'))}`, seed {meta.get('seed', '?')}).")


def dimension_table(folder):
    """The README's block of the dimensions: for each dimension's workload,
    at its largest size, threads and param, the fastest strategy a program
    could use, those tied with it (when the run kept its groups), and how it
    and monotonic compare with system (below 1: faster); then the cost of
    run-time binding."""
    run = rundir.load_strict(folder, need=("summary.csv", "meta.json"))
    groups = groups_of(run)
    lines = []
    facts = run.meta.get("workload_facts")
    for dim, _, study in dimensions.dimensions(facts):
        mine = [f for f in dimensions.findings(run.summary, facts) if f["dimension"] == dim]
        last = {}
        for f in mine:  # sorted by compiler, workload, size, threads, param: keep each one's last
            last[f["point"][:2]] = f
        for f in last.values():
            tied = ""
            if groups is not None:
                tied = f" {', '.join(dimensions.tied(f['winner'], groups.get(f['point'], []))) or '-'} |"
            lines.append(f"| {dim} | {f['point'][0]} | `{dimensions.point_text(f['point'], fmt)}` | {f['winner']} |"
                         f"{tied} {_ratio(f['winner_vs_system'])} | {_ratio(f['monotonic_vs_system'])} | {study} |")
    virtual = dimensions.virtual_against_inline(run.summary)
    ratios = sorted(r for v in virtual.values() for r in v.values())
    if ratios:
        lines.append(f"| run-time binding | all | every `@virtual` row over its own row, every cell | - |"
                     f"{' - |' if groups is not None else ''} "
                     f"{_ratio(ratios[0])} to {_ratio(ratios[-1])}, median {_ratio(ratios[len(ratios) // 2])} | - | "
                     f"a virtual interface up to 2-4.8x with one compiler, under 1.9x with another |")
    if not lines:
        raise RunError(f"{folder} has none of the workloads of the dimensions")
    _, source = _run_line(folder, run)
    head = (source + " Median time per operation of the fastest strategy a program could use (not "
            "`minimal` nor a `@virtual` row), and of `monotonic`, over `system`'s (the malloc of global "
            "new/delete; below 1: faster); the study's figures are relative to new/delete at 100.")
    tied_head, tied_rule = "", ""
    if groups is not None:
        head += (" Tied: the others a program could use that the run cannot tell apart from the fastest "
                 "(its fastest group); where there are any, the fastest is no winner.")
        tied_head, tied_rule = " tied |", " --- |"
    header = (f"| dimension | compiler | cell | fastest |{tied_head} fastest / system | monotonic / system | "
              "the study (N4468, P0089) |")
    rule = f"| --- | --- | --- | --- |{tied_rule} ---: | ---: | --- |"
    return "\n".join([DIMENSIONS_BEGIN, head, "", header, rule] + lines + [DIMENSIONS_END]) + "\n"


def current_block(text, begin=BEGIN, end_line=END):
    """The results table's block in text (or the block between begin and end_line), or None."""
    return outputs.current_block(text, begin, end_line)


def replace_block(text, block, begin=BEGIN, end_line=END):
    """text with its block replaced by block; ValueError when it has none."""
    return outputs.replace_block(text, block, begin, end_line)


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
    if len(argv) > 2 or any(a.startswith("-") for a in argv):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    folder = argv[0] if argv else os.path.join(ROOT, REFERENCE_RUN)
    dims = argv[1] if len(argv) > 1 else os.path.join(ROOT, DIMENSIONS_RUN)
    try:
        blocks = [(table(folder), BEGIN, END)]
        traced = trace_table(folder)
        if traced:
            blocks.append((traced, TRACES_BEGIN, TRACES_END))
        if len(argv) > 1 or os.path.isdir(dims):
            blocks.append((dimension_table(dims), DIMENSIONS_BEGIN, DIMENSIONS_END))
    except RunError as e:
        print(f"readme_table: {e}", file=sys.stderr)
        return 2
    if not write:
        print("\n".join(b for b, _, _ in blocks), end="")
        return 0
    with open(write, encoding="utf-8") as f:
        text = f.read()
    try:
        for block, begin, end_line in blocks:
            text = replace_block(text, block, begin, end_line)
    except ValueError as e:
        print(f"readme_table: {write}: {e}", file=sys.stderr)
        return 2
    write_atomic(write, text)
    print(f"readme_table: wrote the tables into {write}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
