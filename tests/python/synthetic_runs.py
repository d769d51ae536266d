"""synthetic_runs.py: writes small made-up run folders (summary.csv, samples.csv,
meta.json in the runner's columns) for the tests of the tools that read runs
back: cross-compiler tables and compare. Not a test module itself."""
import csv
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from runfolder import schema, stats  # noqa: E402


def write_run(path, cells, compilers, run_id=None, host="box", seed=1, opt="-O2", baseline=None, meta=None,
              partners=None):
    """cells: {(compiler, strategy, workload, size): [ns per op samples], None (failed)
    or "skipped" (the workload does not apply)}.
    compilers: their order, as meta.json names them; meta: more meta.json keys;
    partners: (partner row, {cell key: its partner's ns per op beside each sample})."""
    os.makedirs(path, exist_ok=True)
    summary, samples = [], []
    for (cc, strategy, workload, size), xs in cells.items():
        key = [cc, strategy, workload, size, 1, "0"]
        if xs is None or xs == "skipped":
            status = ["failed", "crashed (SIGSEGV)"] if xs is None else ["skipped", "does not apply"]
            summary.append(key + status + [""] * (len(schema.SUMMARY_COLS) - 8))
            continue
        row = {c: "" for c in schema.SUMMARY_COLS}
        row.update(zip(["compiler", "strategy", "workload", "size", "threads", "param"], key))
        iv = stats.median_interval(xs)
        row.update({"status": "ok", "samples": len(xs), "visits": len(xs), "reps": 1, "ops_per_rep": 1,
                    "median_ns_per_op": iv.estimate, "min_ns_per_op": min(xs),
                    "ci_low_ns": iv.low, "ci_high_ns": iv.high, "cv": stats.cv(xs)})
        summary.append([row[c] for c in schema.SUMMARY_COLS])
        beside = partners[1][(cc, strategy, workload, size)] if partners else None
        for i, x in enumerate(xs):
            samples.append(key + [i, 1, x, x, i + 1] + (["", "", partners[0], 1, beside[i]] if beside else []))
    write_lines(path, summary, samples)
    strategies = []
    for k in cells:
        if k[1] not in strategies:
            strategies.append(k[1])
    meta_json = {"run_id": run_id or os.path.basename(path), "host": host, "seed": seed, "state": "finished",
                 "strategies": strategies, "workloads": sorted({k[2] for k in cells}),
                 "compilers": [{"name": c, "command": c, "version": f"{c} 1.0", "opt": opt} for c in compilers]}
    if baseline:
        meta_json["baseline"] = baseline
    meta_json.update(meta or {})
    with open(os.path.join(path, "meta.json"), "w") as f:
        json.dump(meta_json, f)
    return path


def write_lines(path, summary, samples):
    """summary.csv and samples.csv in the run folder path, from lines in the schema's columns."""
    for name, cols, rows in (("summary.csv", schema.SUMMARY_COLS, summary),
                             ("samples.csv", schema.SAMPLE_COLS, samples)):
        with open(os.path.join(path, name), "w", newline="") as f:
            w = csv.writer(f, lineterminator="\n")
            w.writerow(cols)
            # lines written in fewer columns leave the later ones empty
            w.writerows(list(r) + [""] * (len(cols) - len(r)) for r in rows)


def read_csv(path):
    with open(path, newline="") as f:
        r = csv.reader(f)
        header = next(r)
        return header, [dict(zip(header, row)) for row in r]


def spread(center, n=9, step=0.01):
    """n samples around center, within +-step*n/2 of it (relative)."""
    return [center * (1 + step * (i - n // 2)) for i in range(n)]
