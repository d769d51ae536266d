"""compare.py: puts several finished runs side by side (another machine, another
day, another compiler version): cells matched by (compiler, strategy, workload,
size, threads, param), one column a run, each run's ratio to the first with an
interval from the two runs' visits (Hodges-Lehmann with the Mann-Whitney
interval: the runs share no rounds). Cells missing from some run are listed
at the end, never dropped. With --base, it is a regression gate (gate.py):
it says which cells of the other runs moved against the base beyond the
noise, exits 1 when one did, and 3 when a run cannot be judged (either run
not finished, cells of the base failed, missing or failed in the other, no
cells, an A/A control that moved); 0 only when every cell was judged. Folders with
counts (counts.csv, make count) are also compared count by count: with --base
a cell whose instructions or estimated cycles per operation changed by 1% or
more moved (counts repeat exactly: no noise to clear). It measures nothing.

  python3 -m runner.compare RUN RUN... [--margin M] [--out DIR]
  python3 -m runner.compare --base RUN RUN... [--margin M] [--out DIR]
writes compare.txt, compare.md and compare.csv to DIR (results/compare-<timestamp>/).
Exit status: 0, 1 (with --base: a cell moved), 2 bad input, 3 (with --base: a
run cannot be judged; before 1 when both hold)."""
import argparse
import datetime
import os
import sys

from runner.cli import margin_arg
from runfolder import aggregate, gate, outputs, rundir, schema, stats, tables
from runfolder.catalog import ROOT
from runfolder.errors import RunError, UsageError

EXIT_UNJUDGED = 3  # with --base: a run cannot be judged

CSV_COLS = ["compiler", "strategy", "workload", "size", "threads", "param", "run", "label", "status",
            schema.MEDIAN, "base", "ratio", "ci_low", "ci_high", "significant"]


def legend(margin):
    return ("median time per operation in each run; X/A = run X / run A (above 1: slower than in A) from "
            "the visits of the two runs, with its 95% interval; " + tables.NOT_SIGNIFICANT +
            f" = not marked as a difference (the interval holds 1 or the ratio is within {100 * margin:g}% of 1; "
            "the machine's state differs between runs more than within one: see the gate, --base); "
            "n/a = the workload does not apply to the strategy; - = not in that run")


def letters(n):
    out = []
    for i in range(n):
        s, j = "", i
        while True:
            s = chr(ord("A") + j % 26) + s
            j = j // 26 - 1
            if j < 0:
                break
        out.append(s)
    return out


def run_labels(runs):
    """run id @ host, made unique when the same run is given twice."""
    out, seen = [], {}
    for r in runs:
        base = f"{r.run_id}@{r.host}"
        seen[base] = seen.get(base, 0) + 1
        out.append(base if seen[base] == 1 else f"{base}#{seen[base]}")
    return out


def compiler_text(run, name):
    info = run.compiler_info(name)
    text = info.get("version") or info.get("version_line") or name
    return text + (f" {info['opt']}" if info.get("opt") else "")


def _order(runs):
    """Every cell of every run: groups (compiler, workload, threads, param) in
    first-seen order, strategies in the runs' order, sizes ascending."""
    strategies, workloads = [], []
    for r in runs:
        for s in r.meta.get("strategies") or []:
            if s not in strategies:
                strategies.append(s)
        for w in r.meta.get("workloads") or []:
            if w not in workloads:
                workloads.append(w)
    keys = []
    seen = set()
    for r in runs:
        for k in r.by_key:
            if k not in seen:
                seen.add(k)
                keys.append(k)

    def pos(lst, v):
        return (lst.index(v) if v in lst else len(lst), v)

    def sort_key(k):
        c, s, w, size, t, p = k
        return (c, pos(workloads, w), t, p, pos(strategies, s), size)
    return sorted(keys, key=sort_key)


def compare(runs, margin=aggregate.Settings.margin):
    """(csv lines, tables, mismatch lines) for loaded runs; the first (A) is the base."""
    labels = run_labels(runs)
    ids = letters(len(runs))
    records, groups, mismatches = [], {}, []
    for k in _order(runs):
        compiler, strategy, workload, size, threads, param = k
        base = runs[0]
        base_visits = list(aggregate.visits_in(base, k).values())
        base_ok = rundir.median_of(base.by_key.get(k)) is not None and base_visits
        line, ratio_cells = [strategy, schema.fmt(size)], []
        for i, r in enumerate(runs):
            entry = r.by_key.get(k)
            med = rundir.median_of(entry)
            status = "missing" if entry is None else entry.get("status") or "?"
            line.append("-" if entry is None else tables.format_time(med) if med is not None
                        else "n/a" if status == "skipped" else "failed")
            ratio = lo = hi = sig = None
            if i > 0:
                xs = list(aggregate.visits_in(r, k).values())
                if med is not None and xs and base_ok:
                    iv = stats.unpaired_ratio(xs, base_visits)
                    ratio, lo, hi, sig = iv.estimate, iv.low, iv.high, stats.is_difference(iv, margin)
                    ratio_cells.append(tables.format_ratio(ratio, lo, hi, sig))
                else:
                    ratio_cells.append("-")
            text = r.figure_text(k, schema.MEDIAN) if med is not None else None
            records.append(list(k) + [ids[i], f"{labels[i]} {compiler_text(r, compiler)}", status, text,
                                   ids[0], ratio if i else 1 if med is not None else None, lo, hi, sig])
        groups.setdefault((compiler, workload, threads, param), []).append(line + ratio_cells)
        absent = [ids[i] for i, r in enumerate(runs) if k not in r.by_key]
        if absent:
            present = [ids[i] for i, r in enumerate(runs) if k in r.by_key]
            extra = "" if (threads, param) == (1, 0) else f" threads {threads} param {schema.fmt(param)}"
            mismatches.append(f"{compiler} {strategy} {workload} size {size}{extra}: "
                              f"only in {', '.join(present)}; missing from {', '.join(absent)}")
    out = []
    for (compiler, workload, threads, param), lines in groups.items():
        header = ["strategy", "size"] + [f"{ids[i]} {labels[i]} {compiler_text(r, compiler)}"
                                         for i, r in enumerate(runs)] + [f"{x}/{ids[0]}" for x in ids[1:]]
        out.append({"title": f"{compiler}: {workload}" + tables.variant_suffix(threads, param),
                    "header": header, "lines": lines, "legend": legend(margin)})
    return records, out, mismatches


def runs_block(runs, markdown):
    labels, ids = run_labels(runs), letters(len(runs))
    out = []
    for i, r in enumerate(runs):
        cc = "; ".join(f"{c} = {compiler_text(r, c)}" for c in r.compiler_names())
        facts = ", ".join(x for x in (r.meta.get("date"), r.meta.get("cpu_model"),
                                      r.meta.get("git_revision") and "git " + r.meta["git_revision"][:12]) if x)
        text = f"{ids[i]} = {labels[i]}: {r.path}" + (f" ({facts})" if facts else "") + f"; compilers: {cc}"
        out.append(("- " if markdown else "  ") + text)
    return "\n".join(out)


WITHIN = 0.05  # the repeatability goal: medians within 5% of run A's


def thread_kind(threads):
    """A cell with several threads runs on every CPU, so a slow one slows it:
    agreement is counted apart for the two kinds."""
    return "one thread" if threads == 1 else "several threads"


def count(tally, key, ok):
    """tally[key] = (within, n) with one more cell, ok or not."""
    within, n = tally.get(key, (0, 0))
    tally[key] = (within + ok, n + 1)


def agreement(records, ids):
    """{run id: (cells within WITHIN of A, cells with a median in both, {workload: (within, n)},
    {"one thread" or "several threads": (within, n)})} from the CSV lines; how
    repeatable two runs of one machine were."""
    out = {}
    for record in records:
        run, ratio = record[6], record[11]
        if run == ids[0] or ratio is None:
            continue
        within, n, per, kind = out.setdefault(run, (0, 0, {}, {}))
        ok = abs(ratio - 1) <= WITHIN
        count(per, record[2], ok)
        count(kind, thread_kind(record[4]), ok)
        out[run] = (within + ok, n + 1, per, kind)
    return out


def ratio_agreement(runs, ids, baseline):
    """{run id: (cells whose ratio to the baseline is within WITHIN of A's, cells
    with such a ratio in both, {"one thread" or "several threads": (within, n)})}:
    whether two runs tell the same story, whatever the level of the machine."""
    def ratios(run):
        med = {k: rundir.median_of(entry) for k, entry in run.by_key.items()}
        out = {}
        for k, m in med.items():
            base = med.get((k[0], baseline) + tuple(k[2:]))
            if k[1] != baseline and m is not None and base:
                out[k] = m / base
        return out
    ref = ratios(runs[0])
    out = {}
    for i, run in enumerate(runs[1:], 1):
        within, n, kind = 0, 0, {}
        for k, r in ratios(run).items():
            if k not in ref:
                continue
            ok = abs(r / ref[k] - 1) <= WITHIN
            count(kind, thread_kind(k[4]), ok)
            within, n = within + ok, n + 1
        if n:
            out[ids[i]] = (within, n, kind)
    return out


def split_text(kind):
    return "; ".join(f"{k} {a} of {b}" for k, (a, b) in sorted(kind.items()))


def agreement_block(records, ids, markdown, runs=None):
    lines = []
    for run, (within, n, per, kind) in agreement(records, ids).items():
        worst = sorted(per.items(), key=lambda kv: kv[1][0] / kv[1][1])[:3]
        split = split_text(kind)
        lines.append(f"{run}: {within} of {n} cells ({100.0 * within / n:.0f}%) have a median within "
                     f"{WITHIN:.0%} of A's ({split}); fewest: " +
                     ", ".join(f"{w} {a}/{b}" for w, (a, b) in worst))
    baseline = runs and runs[0].meta.get("baseline")
    if baseline:
        for run, (within, n, kind) in ratio_agreement(runs, ids, baseline).items():
            lines.append(f"{run}: {within} of {n} ratios to {baseline} ({100.0 * within / n:.0f}%) are within "
                         f"{WITHIN:.0%} of A's ({split_text(kind)})")
    if not lines:
        return ""
    head = "Agreement with A"
    return (f"## {head}\n\n" if markdown else f"\n{head}:\n") + \
        "".join(("- " if markdown else "  ") + x + "\n" for x in lines)


def mismatch_block(mismatches, markdown):
    if not mismatches:
        return ("" if markdown else "\n") + "Every cell is in every run.\n"
    head = f"Cells not in every run ({len(mismatches)}):"
    return (f"## {head}\n\n" if markdown else f"\n{head}\n") + \
        "".join(("- " if markdown else "  ") + m + "\n" for m in mismatches)


def gate_sections(runs, ids, margin):
    """The gate's verdict on each run against the base (A): ([(heading, lines)],
    cells moved, runs that cannot be judged). RunError when the base run names
    no baseline row."""
    baseline = runs[0].meta.get("baseline")
    if not baseline:
        raise RunError(f"{runs[0].file('meta.json')} names no baseline: the gate judges ratios to it")
    control = (runs[0].meta.get("control") or {}).get("row")
    out, moved, unjudgeable = [], 0, 0
    base_whole = gate.broken(runs[0], "the base")
    for i, run in enumerate(runs[1:], 1):
        found = gate.changes(runs[0], run, baseline)
        lost, whole = gate.unjudged(runs[0], run, baseline, found), base_whole + gate.broken(run)
        if not found and not lost:
            whole = whole or [f"no cell of it has a ratio to {baseline} that the base has too"]
        verdict = gate.judge(found, margin, control)
        whole = whole + gate.control_moved(found, verdict, control)
        lines, n = gate.report(found, verdict, margin, baseline, control, lost, whole,
                               gate.other_inputs(runs[0], run, found), gate.common_seed(runs[0], run))
        lines[1:1] = gate.layout_note(runs[0], run)
        moved += n
        unjudgeable += bool(lost or whole)
        out.append((f"Gate: {ids[i]} against {ids[0]}", lines))
    return out, moved, unjudgeable


def count_sections(paths, ids, gating):
    """The counts of the runs (counts.csv) against the first's: ([(heading, lines)],
    cells moved, runs that cannot be judged). Counts repeat exactly, so a cell
    moved when it changed by gate.COUNT_THRESHOLD or more, whatever the noise of the times."""
    base_meta, base = rundir.read_counts(paths[0])
    base_whole = gate.count_broken(base_meta, base, "the base")
    out, moved, unjudgeable = [], 0, 0
    for i, path in enumerate(paths[1:], 1):
        meta, entries = rundir.read_counts(path)
        found, lost = gate.count_changes(base, entries)
        whole = base_whole + gate.count_broken(meta, entries, "the run")
        lines = [f"cannot be judged: {x}" for x in whole] if gating else []
        if meta.get("compilers") != base_meta.get("compilers"):
            lines.append(f"compiler versions differ: {base_meta.get('compilers')} in {ids[0]}, "
                         f"{meta.get('compilers')} in {ids[i]}: a change may be the compiler's")
        other = sorted(k for k in ("tool", "caches", "reps", "seed") if meta.get(k) != base_meta.get(k))
        if other:
            lines.append(f"counted with other settings ({', '.join(other)}): the counts are not comparable")
        lines += [f"moved by {100 * gate.COUNT_THRESHOLD:g}% or more: {x}" for x in found]
        lines += [f"cannot be judged: {x}" for x in lost]
        if not found and not lost and not other and not whole:
            lines.append(f"no counted cell moved by {100 * gate.COUNT_THRESHOLD:g}% or more "
                         f"(instructions and estimated cycles per operation)")
        moved += len(found) if gating else 0
        unjudgeable += bool(whole or other or lost) and gating
        out.append((f"Counts: {ids[i]} against {ids[0]}", lines))
    return out, moved, unjudgeable


def sections_text(sections, markdown):
    return "".join((f"## {head}\n\n" if markdown else f"\n{head}:\n") +
                   "".join(("- " if markdown else "  ") + x + "\n" for x in lines) for head, lines in sections)


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python3 -m runner.compare", description=__doc__.split("\n\n")[0])
    ap.add_argument("runs", nargs="*", metavar="RUN",
                    help="run folders (results/<run-id>); the first (A) is the base the others are divided by")
    ap.add_argument("--base", metavar="RUN", help="the base run: A, and a gate that exits 1 when a "
                                                  "cell of another run moved against it beyond the noise, 3 when "
                                                  "a run cannot be judged (not finished, cells failed or "
                                                  "missing, no cells, an A/A control that moved), 0 only "
                                                  "when every cell was judged")
    ap.add_argument("--margin", type=margin_arg, default=aggregate.Settings.margin,
                    help="the smallest change marked, 0.02 or 2%% (default %(default)g)")
    ap.add_argument("--out", help="folder to write into (default results/compare-<timestamp>)")
    try:
        args = ap.parse_args(argv)
    except SystemExit as e:
        return e.code
    paths = ([args.base] if args.base else []) + args.runs
    if len(paths) < 2:
        print('compare: give at least two run folders, e.g. make compare RUNS="results/a results/b" or '
              'make compare BASE=results/a RUNS=results/b', file=sys.stderr)
        return 2
    if args.base:
        same = [p for p in args.runs if os.path.realpath(p) == os.path.realpath(args.base)]
        if same:
            print(f"compare: the base '{args.base}' and the run '{same[0]}' are the same folder: the gate would "
                  f"judge a run against itself and always pass; give the change's run folder", file=sys.stderr)
            return 2
    ids = letters(len(paths))
    counted = all(os.path.isfile(os.path.join(p, "counts.csv")) for p in paths)
    timed = not counted or all(os.path.isfile(os.path.join(p, "summary.csv")) for p in paths)
    try:
        # the gate judges only runs whose state it can read (meta.json)
        need = ("summary.csv", "samples.csv") + (("meta.json",) if args.base else ())
        runs = [rundir.load_strict(p, need) for p in paths] if timed else []
        sections, moved, unjudgeable = gate_sections(runs, ids, args.margin) if args.base and timed else ([], 0, 0)
        if counted:
            more, n_moved, n_unjudged = count_sections(paths, ids, bool(args.base))
            sections, moved, unjudgeable = sections + more, moved + n_moved, unjudgeable + n_unjudged
    except (RunError, UsageError) as e:
        print(f"compare: {e}", file=sys.stderr)
        return 2
    out_dir = args.out or os.path.join(ROOT, "results",
                                       "compare-" + datetime.datetime.now().strftime("%Y%m%d-%H%M%S"))
    try:
        os.makedirs(out_dir, exist_ok=True)
    except OSError as e:
        print(f"compare: cannot create '{out_dir}': {e.strerror or e}", file=sys.stderr)
        return 2
    gate_text, gate_md = sections_text(sections, False), sections_text(sections, True)
    if timed:
        records, tbls, mismatches = compare(runs, args.margin)
        text = (f"Runs compared (ratios to A):\n{runs_block(runs, False)}\n\n" + tables.render_text(tbls) +
                agreement_block(records, ids, False, runs) + mismatch_block(mismatches, False) + gate_text)
        md = (f"# allocmark: {len(runs)} runs compared\n\nRatios are to A.\n\n{runs_block(runs, True)}\n\n" +
              tables.render_markdown(tbls) + agreement_block(records, ids, True, runs) +
              mismatch_block(mismatches, True) + gate_md)
    else:
        names = "".join(f"  {i}: {p}\n" for i, p in zip(ids, paths))
        text = f"Count runs compared (counts.csv):\n{names}" + gate_text
        md = f"# allocmark: {len(paths)} count runs compared\n\n" + names.replace("  ", "- ") + gate_md
        records = []
    outputs.write_atomic(os.path.join(out_dir, "compare.csv"), schema.csv_text(CSV_COLS, records))
    outputs.write_atomic(os.path.join(out_dir, "compare.txt"), text)
    outputs.write_atomic(os.path.join(out_dir, "compare.md"), md)
    print(text)
    print(f"wrote {os.path.join(out_dir, 'compare.txt')}, compare.md and compare.csv")
    if moved:
        print(f"compare: {moved} cell(s) moved against {args.base} beyond the noise (or their counts by "
              f"{100 * gate.COUNT_THRESHOLD:g}% or more)", file=sys.stderr)
    if unjudgeable:
        print(f"compare: {unjudgeable} run(s) cannot be judged against {args.base}: a run not finished, cells "
              f"missing or failed, no cells, or an A/A control that moved (see the gate section)", file=sys.stderr)
        return EXIT_UNJUDGED
    return 1 if moved else 0


if __name__ == "__main__":
    sys.exit(main())
