"""crosscc.py: the cross-compiler tables of a run measured with several
compilers: for each workload and strategy, a line per size, each compiler's
median time per op, then each compiler's ratio to the base compiler (the
first named) with its interval, from the visits of the two made in the same
rounds (one block has every compiler's cells). Writes
compilers.txt, compilers.md and compilers.csv into the run folder; nothing
when the run has one compiler. It measures nothing.

  python3 -m runner.crosscc RUN [--base NAME]   (re)writes RUN/compilers.*"""
import argparse
import os
import sys

from runfolder import aggregate, outputs, rundir, schema, stats, tables
from runfolder.errors import RunError

CSV_COLS = ["workload", "strategy", "size", "threads", "param", "compiler", "base",
            schema.MEDIAN, "ratio", "ci_low", "ci_high", "pairs", "significant", "unstable"]


def legend(base, marks):
    return (f"median time per operation over the visits; ratio = compiler / {base} (above 1: slower than the "
            f"{base} build) from the visits of the two in the same rounds, with its 95% interval; " +
            tables.marks_legend(marks))


def build(run, compilers=None, base=None):
    """(csv lines, tables for tables.render_*). compilers: order of the columns
    (default: the run's order); base: the one ratios divide by (the first)."""
    compilers = list(compilers or run.compiler_names())
    base = base or compilers[0]
    if base not in compilers:
        raise RunError(f"base compiler '{base}' is not in the run; "
                       f"it has {', '.join(compilers)}")
    compilers = [base] + [c for c in compilers if c != base]
    others = compilers[1:]
    settings = aggregate.Settings.from_meta(run.meta)
    marks = tables.Marks(settings.margin, settings.unstable_width)
    strategies = list(run.meta.get("strategies") or [])
    workloads = list(run.meta.get("workloads") or [])
    groups = {}
    for k in run.by_key:
        _, strategy, workload, size, threads, param = k
        groups.setdefault((workload, strategy, threads, param), set()).add(size)

    def order(g):
        w, s, t, p = g
        return (workloads.index(w) if w in workloads else len(workloads), w,
                strategies.index(s) if s in strategies else len(strategies), s, t, p)

    csv_lines, out = [], []
    for g in sorted(groups, key=order):
        workload, strategy, threads, param = g
        header = ["size"] + compilers + [f"{c}/{base}" for c in others]
        lines = []
        for size in sorted(groups[g]):
            def key(c):
                return (c, strategy, workload, size, threads, param)
            base_med = rundir.median_of(run.by_key.get(key(base)))
            line, ratio_cells = [schema.fmt(size)], []
            for c in compilers:
                entry = run.by_key.get(key(c))
                med = rundir.median_of(entry)
                line.append("-" if entry is None else "failed" if med is None else tables.format_time(med))
                head = [workload, strategy, size, threads, param, c, base,
                        run.figure_text(key(c), schema.MEDIAN) if med is not None else None]
                if c == base:
                    csv_lines.append(head + ["1" if med is not None else "", "", "", "", "", ""])
                    continue
                iv = stats.paired_ratio(aggregate.visits_in(run, key(c)), aggregate.visits_in(run, key(base)))
                if med is None or base_med is None or iv is None:
                    ratio_cells.append("-")
                    csv_lines.append(head + ["", "", "", "", "", ""])
                    continue
                sig = stats.is_difference(iv, settings.margin)
                unstable = stats.is_undecided(iv, settings.margin)
                ratio_cells.append(tables.format_ratio(iv.estimate, iv.low, iv.high, sig, unstable))
                csv_lines.append(head + [iv.estimate, iv.low, iv.high, iv.n, sig, unstable])
            lines.append(line + ratio_cells)
        out.append({"title": f"{workload}: {strategy}" + tables.variant_suffix(threads, param),
                    "header": header, "lines": lines, "legend": legend(base, marks)})
    return csv_lines, out


def compilers_line(run, compilers):
    parts = []
    for c in compilers:
        info = run.compiler_info(c)
        desc = info.get("version_line") or info.get("version") or ""
        opt = info.get("opt")
        parts.append(f"{c}" + (f" = {desc}" if desc else "") + (f", {opt}" if opt else ""))
    return "; ".join(parts)


def write(out_dir, compilers=None, base=None, run=None):
    """Writes the three files when the run has more than one compiler; returns
    the text table, or None when there was nothing to compare."""
    run = run or rundir.load_strict(out_dir)
    names = list(compilers or run.compiler_names())
    if len(names) < 2:
        return None
    rows, tbls = build(run, names, base)
    base = base or names[0]
    names = [base] + [c for c in names if c != base]
    head = f"Compilers of run {run.run_id} ({run.host}): {compilers_line(run, names)}\n\n"
    text = head + tables.render_text(tbls, width=tables.WIDTH, legend_once=True)
    md = f"# allocmark run {run.run_id}: compilers\n\n{head}" + tables.render_markdown(tbls, legend_once=True)
    outputs.write_atomic(os.path.join(out_dir, "compilers.csv"), schema.csv_text(CSV_COLS, rows))
    outputs.write_atomic(os.path.join(out_dir, "compilers.txt"), text)
    outputs.write_atomic(os.path.join(out_dir, "compilers.md"), md)
    return text


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python3 -m runner.crosscc", description=__doc__.split("\n\n")[0])
    ap.add_argument("run", help="run folder (results/<run-id>)")
    ap.add_argument("--base", help="compiler the ratios divide by (default: the first the run named)")
    args = ap.parse_args(argv)
    try:
        text = write(args.run, base=args.base)
    except RunError as e:
        print(f"crosscc: {e}", file=sys.stderr)
        return 2
    if text is None:
        print(f"crosscc: {args.run} has one compiler; nothing to compare (make bench COMPILERS=\"gcc clang\")",
              file=sys.stderr)
        return 2
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
