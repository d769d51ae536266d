#!/usr/bin/env python3
"""crosscc.py: the cross-compiler tables of a run measured with several
compilers: for each workload and strategy, a row per size, each compiler's
median time per op, then each compiler's ratio to the reference compiler (the
first named) with its bootstrap interval from the raw samples. Writes
compilers.txt, compilers.md and compilers.csv into the run folder; nothing
when the run has one compiler. It measures nothing.

  runner/crosscc.py RUN [--reference NAME]   (re)writes RUN/compilers.*"""
import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import rundir  # noqa: E402
import stats  # noqa: E402
import tables  # noqa: E402

CSV_COLS = ["workload", "strategy", "size", "threads", "param", "compiler", "reference",
            "median_ns_per_op", "ratio", "ci_low", "ci_high", "significant"]
LEGEND = ("median time per operation; ratio = compiler / {ref} (above 1: slower than the {ref} "
          "build) with its 95% bootstrap interval; " + tables.NOT_SIGNIFICANT +
          " = not significant (the interval contains 1)")


def _num(v):
    if isinstance(v, float):
        return f"{v:.6g}"
    return "" if v is None else str(v)


def build(run, compilers=None, reference=None):
    """(csv rows, tables for tables.render_*). compilers: order of the columns
    (default: the run's order); reference: the one ratios divide by (the first)."""
    compilers = list(compilers or run.compiler_names())
    reference = reference or compilers[0]
    if reference not in compilers:
        raise rundir.RunError(f"reference compiler '{reference}' is not in the run; "
                              f"it has {', '.join(compilers)}")
    compilers = [reference] + [c for c in compilers if c != reference]
    others = compilers[1:]
    seed = run.meta.get("seed") or 0
    strategies = list(run.meta.get("strategies") or [])
    workloads = list(run.meta.get("workloads") or [])
    groups = {}
    for k in run.summary:
        _, strategy, workload, size, threads, param = k
        groups.setdefault((workload, strategy, threads, param), set()).add(size)

    def order(g):
        w, s, t, p = g
        return (workloads.index(w) if w in workloads else len(workloads), w,
                strategies.index(s) if s in strategies else len(strategies), s, int(t), float(p or 0))

    rows, out = [], []
    for g in sorted(groups, key=order):
        workload, strategy, threads, param = g
        header = ["size"] + compilers + [f"{c}/{reference}" for c in others]
        lines = []
        for size in sorted(groups[g], key=int):
            def key(c):
                return (c, strategy, workload, size, threads, param)
            ref_row = run.summary.get(key(reference))
            ref_med = rundir.median_of(ref_row) if ref_row else None
            line, ratio_cells = [size], []
            for c in compilers:
                r = run.summary.get(key(c))
                med = rundir.median_of(r) if r else None
                line.append("-" if r is None else "failed" if med is None else tables.format_time(med))
                if c == reference:
                    rows.append([workload, strategy, size, threads, param, c, reference,
                                 _num(med), "1" if med is not None else "", "", "", ""])
                    continue
                xs, base = run.samples.get(key(c)), run.samples.get(key(reference))
                if med is None or ref_med is None or not xs or not base:
                    ratio_cells.append("-")
                    rows.append([workload, strategy, size, threads, param, c, reference,
                                 _num(med), "", "", "", ""])
                    continue
                ratio, lo, hi = stats.ratio_ci(xs, base, stats.seed_for(seed, "compilers", *key(c)))
                sig = stats.significant(lo, hi)
                ratio_cells.append(tables.format_ratio(ratio, lo, hi, sig))
                rows.append([workload, strategy, size, threads, param, c, reference,
                             _num(med), _num(ratio), _num(lo), _num(hi), "1" if sig else "0"])
            lines.append(line + ratio_cells)
        out.append({"title": f"{workload}: {strategy}" + tables.variant_suffix(threads, param),
                    "header": header, "rows": lines, "legend": LEGEND.format(ref=reference)})
    return rows, out


def compilers_line(run, compilers):
    parts = []
    for c in compilers:
        info = run.compiler_info(c)
        desc = info.get("version_line") or info.get("version") or ""
        opt = info.get("opt")
        parts.append(f"{c}" + (f" = {desc}" if desc else "") + (f", {opt}" if opt else ""))
    return "; ".join(parts)


def write(out_dir, compilers=None, reference=None, run=None):
    """Writes the three files when the run has more than one compiler; returns
    the text table, or None when there was nothing to compare."""
    run = run or rundir.load(out_dir)
    names = list(compilers or run.compiler_names())
    if len(names) < 2:
        return None
    rows, tbls = build(run, names, reference)
    ref = reference or names[0]
    names = [ref] + [c for c in names if c != ref]
    head = f"Compilers of run {run.run_id} ({run.host}): {compilers_line(run, names)}\n\n"
    text = head + tables.render_text(tbls)
    md = f"# allocmark run {run.run_id}: compilers\n\n{head}" + tables.render_markdown(tbls)
    rundir.write_atomic(os.path.join(out_dir, "compilers.csv"), rundir.csv_text(CSV_COLS, rows))
    rundir.write_atomic(os.path.join(out_dir, "compilers.txt"), text)
    rundir.write_atomic(os.path.join(out_dir, "compilers.md"), md)
    return text


def main(argv=None):
    ap = argparse.ArgumentParser(prog="crosscc.py", description=__doc__.split("\n\n")[0])
    ap.add_argument("run", help="run folder (results/<run-id>)")
    ap.add_argument("--reference", help="compiler the ratios divide by (default: the first the run named)")
    args = ap.parse_args(argv)
    try:
        text = write(args.run, reference=args.reference)
    except rundir.RunError as e:
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
