"""results.py: reads one allocmark results folder (results/<run>/) for plots.py and report.py.
A missing or damaged file becomes a Problem naming the file, and everything else still loads.
It computes no statistics of its own beyond a ratio of two medians when ratios.csv lacks one."""
import csv
import io
import json
import math
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

COLUMNS = {
    "samples.csv": "compiler,strategy,workload,size,threads,param,sample,reps,ns,ns_per_op",
    "summary.csv": "compiler,strategy,workload,size,threads,param,status,reason,samples,reps,"
                   "ops_per_rep,median_ns_per_op,min_ns_per_op,ci_low_ns,ci_high_ns,cv,peak_rss_bytes,"
                   "bytes_requested,bytes_peak,reserved_peak,overhead_pct,allocs,frees,"
                   "instructions_per_op,cycles_per_op",
    "ratios.csv": "compiler,workload,size,threads,param,strategy,baseline,ratio,ci_low,ci_high,significant",
    "metrics.csv": "compiler,strategy,workload,size,threads,param,metric,value",
}
COLUMNS = {k: v.split(",") for k, v in COLUMNS.items()}
# columns kept as text; every other column is a number (empty = not available)
TEXT = {"compiler", "strategy", "workload", "size", "threads", "param", "status", "reason",
        "baseline", "metric"}
# identify one cell; size/threads/param are normalised text so "64" == "64.0"
KEY = ("compiler", "strategy", "workload", "size", "threads", "param")
LOWER_BOUNDS = {"ideal"}  # rows that are a bound, not a usable allocator


class Problem:
    def __init__(self, file, message):
        self.file = file
        self.message = message

    def __str__(self):
        return f"{self.file}: {self.message}"


def norm(v):
    """Canonical text of a size/threads/param value, so keys from different files match."""
    v = (v or "").strip()
    try:
        f = float(v)
    except ValueError:
        return v
    if math.isfinite(f) and f == int(f):
        return str(int(f))
    return repr(f)


def as_number(v):
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


def _strategy_order():
    """Row order of allocators/strategies.txt, so every table and plot lists rows alike."""
    order = []
    try:
        with open(os.path.join(ROOT, "allocators", "strategies.txt"), encoding="utf-8") as f:
            for line in f:
                if line.strip() and not line.startswith("#"):
                    order.append(line.split()[0])
    except OSError:
        pass
    return order


class Run:
    """Everything read from one results folder; .problems lists what was missing or bad."""

    def __init__(self, folder):
        self.folder = folder
        self.run_id = os.path.basename(os.path.realpath(folder).rstrip("/"))
        self.problems = []
        self.files = []
        if not os.path.isdir(folder):
            self.problem(folder, "not a folder")
        else:
            self.files = sorted(os.listdir(folder))
        self.meta = self._read_meta()
        self.summary = self._read_csv("summary.csv", required=True)
        self.samples = self._read_csv("samples.csv", required=False)
        self.ratios = self._read_csv("ratios.csv", required=False)
        self.metrics = self._read_csv("metrics.csv", required=False)
        if self.ratios is None and self.summary:
            self.problem("ratios.csv", "missing: ratios are medians divided, without intervals")
        self.summary = self.summary or []
        self.ratios = self.ratios or []
        self.metrics = self.metrics or []
        self.samples = self.samples or []
        self.cells = {tuple(r[k] for k in KEY): r for r in self.summary}
        self.ratio_of = {tuple(r[k] for k in KEY): r for r in self.ratios}
        self.baseline = self._baseline()
        known = _strategy_order()
        seen = sorted({r["strategy"] for r in self.summary if r["strategy"]})
        self.strategies = [s for s in known if s in seen] + [s for s in seen if s not in known]
        self.workloads = sorted({r["workload"] for r in self.summary if r["workload"]})
        self.compilers = sorted({r["compiler"] for r in self.summary})

    def problem(self, file, message):
        self.problems.append(Problem(file, message))

    def path(self, name):
        return os.path.join(self.folder, name)

    def _read_meta(self):
        name = "meta.json"
        try:
            with open(self.path(name), encoding="utf-8") as f:
                meta = json.load(f)
        except FileNotFoundError:
            self.problem(name, "missing: environment and method details unknown")
            return {}
        except (OSError, ValueError) as e:
            self.problem(name, f"unreadable JSON ({e})")
            return {}
        if not isinstance(meta, dict):
            self.problem(name, "not a JSON object")
            return {}
        return meta

    def _read_csv(self, name, required):
        """Rows as dicts; bad lines are skipped and named. None when the file is absent."""
        try:
            with open(self.path(name), encoding="utf-8", errors="replace", newline="") as f:
                text = f.read()
        except FileNotFoundError:
            if required:
                self.problem(name, "missing: no timing results to show")
            return None
        except OSError as e:
            self.problem(name, f"unreadable ({e})")
            return None
        lines = list(csv.reader(io.StringIO(text)))
        if not lines:
            self.problem(name, "empty file (no header)")
            return []
        header = [h.strip() for h in lines[0]]
        expected = COLUMNS[name]
        missing = [c for c in expected if c not in header]
        if missing:
            self.problem(name, "header lacks column(s) " + ", ".join(missing))
        bad = []
        rows = []
        for lineno, fields in enumerate(lines[1:], start=2):
            if not fields or fields == [""]:
                continue
            if len(fields) != len(header):
                cut = " (truncated?)" if lineno == len(lines) and not text.endswith("\n") else ""
                bad.append(f"line {lineno} has {len(fields)} fields, expected {len(header)}{cut}")
                continue
            raw = dict(zip(header, (x.strip() for x in fields)))
            row = {}
            for c in set(expected) | set(header):
                v = raw.get(c, "")
                if c in ("size", "threads", "param"):
                    row[c] = norm(v)
                elif c in TEXT:
                    row[c] = v
                elif v == "":
                    row[c] = None
                else:
                    n = as_number(v)
                    if n is None or math.isnan(n):
                        bad.append(f"line {lineno}: {c} is not a number ('{v[:20]}')")
                    row[c] = n
            rows.append(row)
        for msg in bad[:5]:
            self.problem(name, msg)
        if len(bad) > 5:
            self.problem(name, f"{len(bad) - 5} more bad lines")
        if name == "summary.csv":
            for r in rows:
                if not r["status"]:
                    r["status"] = "ok" if r["median_ns_per_op"] is not None else "failed"
                if r["status"] == "ok" and r["median_ns_per_op"] is None:
                    r["status"] = "failed"
                    r["reason"] = r["reason"] or "no median in summary.csv"
        return rows

    def _baseline(self):
        b = self.meta.get("baseline")
        if isinstance(b, str) and b:
            return b
        names = [r["baseline"] for r in self.ratios if r["baseline"]]
        if names:
            return max(set(names), key=names.count)
        strategies = {r["strategy"] for r in self.summary}
        return "system" if "system" in strategies or not strategies else sorted(strategies)[0]

    # ---- questions the report and the plots ask ----
    def ok(self, row):
        return row is not None and row["status"] == "ok" and row["median_ns_per_op"] is not None

    def skipped(self, row):
        """The workload does not apply to the strategy (the cell says why): not a failure."""
        return row is not None and row["status"] == "skipped"

    def groups(self):
        """One Group per (workload, compiler, variant): the cells of one plot/table."""
        out = []
        for w in self.workloads:
            for c in self.compilers:
                rows = [r for r in self.summary if r["workload"] == w and r["compiler"] == c]
                if not rows:
                    continue
                axis = "size"
                for a in ("size", "threads", "param"):
                    if len({r[a] for r in rows}) > 1:
                        axis = a
                        break
                others = [a for a in ("size", "threads", "param") if a != axis]
                variants = sorted({tuple(r[a] for a in others) for r in rows}, key=_numeric_key)
                for v in variants:
                    vrows = [r for r in rows if tuple(r[a] for a in others) == v]
                    label = ", ".join(f"{a} {x}" for a, x in zip(others, v)
                                      if x and len({r[a] for r in rows}) > 1)
                    out.append(Group(self, w, c, axis, dict(zip(others, v)), label, vrows))
        return out

    def ratio(self, row, against=None):
        """(ratio, ci_low, ci_high, significant or None) of row's median to `against`'s."""
        against = against or self.baseline
        if not self.ok(row):
            return None
        key = tuple(row[k] for k in KEY)
        if against == self.baseline:
            r = self.ratio_of.get(key)
            if r is not None and r["ratio"] is not None and r.get("baseline", against) in (against, ""):
                sig = r["significant"]
                lo, hi = r["ci_low"], r["ci_high"]
                if sig is None and lo is not None and hi is not None:
                    sig = 1.0 if hi < 1 or lo > 1 else 0.0
                return (r["ratio"], lo, hi, None if sig is None else bool(sig))
        base = self.cells.get(key[:1] + (against,) + key[2:])
        if not self.ok(base) or base["median_ns_per_op"] <= 0:
            return None
        return (row["median_ns_per_op"] / base["median_ns_per_op"], None, None, None)

    def ci_per_op(self, row):
        """The median's interval in ns per op. The runner may write it per op or per sample:
        whichever brackets the median is taken."""
        lo, hi, med = row.get("ci_low_ns"), row.get("ci_high_ns"), row.get("median_ns_per_op")
        if lo is None or hi is None or med is None:
            return None, None
        tol = 1e-9 * max(1.0, abs(med))
        if lo - tol <= med <= hi + tol:
            return lo, hi
        per = (row.get("reps") or 0) * (row.get("ops_per_rep") or 0)
        if per > 0 and lo / per - tol <= med <= hi / per + tol:
            return lo / per, hi / per
        return None, None

    def host_line(self):
        m = self.meta
        parts = [str(m[k]) for k in ("host", "cpu") if m.get(k)]
        return " · ".join(parts) if parts else "unknown machine"

    def compiler_label(self, name):
        for c in self.meta.get("compilers") or []:
            if isinstance(c, dict) and c.get("name") == name:
                ver = str(c.get("version") or "").splitlines()[0:1]
                return f"{name} ({ver[0]})" if ver and ver[0] and name not in ver[0] else (
                    ver[0] if ver and ver[0] else name)
        return name or "compiler ?"


def _numeric_key(values):
    out = []
    for v in values:
        n = as_number(v)
        out.append((0, n, "") if n is not None else (1, 0, v))
    return out


class Group:
    """Cells sharing workload, compiler and every parameter except the x axis."""

    def __init__(self, run, workload, compiler, axis, fixed, label, rows):
        self.run = run
        self.workload = workload
        self.compiler = compiler
        self.axis = axis
        self.fixed = fixed
        self.label = label
        self.rows = rows
        self.xs = sorted({r[axis] for r in rows}, key=lambda x: _numeric_key([x]))
        self.strategies = [s for s in run.strategies if any(r["strategy"] == s for r in rows)]
        self.cell = {(r["strategy"], r[axis]): r for r in rows}

    def slug(self):
        parts = [self.workload, self.compiler] + ([self.label] if self.label else [])
        return re.sub(r"[^A-Za-z0-9_.+-]+", "_", "-".join(p for p in parts if p)).strip("_")

    def largest_x(self):
        """The largest x at which at least one strategy measured fine."""
        for x in reversed(self.xs):
            if any(self.run.ok(self.cell.get((s, x))) for s in self.strategies):
                return x
        return self.xs[-1] if self.xs else None

    def axis_label(self):
        return {"size": "size (elements)", "threads": "threads", "param": "parameter"}[self.axis]


def compiler_sets(groups):
    """(workload, variant label, groups) for each workload and variant measured
    with more than one compiler, the groups in the run's compiler order."""
    by = {}
    for g in groups:
        by.setdefault((g.workload, g.label), []).append(g)
    return [(w, label, gs) for (w, label), gs in by.items() if len(gs) >= 2]


def load(folder):
    return Run(folder)


def warn(run, prog):
    """Each problem on stderr, naming the file by its path."""
    for p in run.problems:
        where = p.file if p.file == run.folder else os.path.join(run.folder, p.file)
        print(f"{prog}: {where}: {p.message}", file=sys.stderr)
