"""results.py: the questions the report and the plots ask of one run folder
(which cells are ok, the groups of a plot or table, a cell's ratio to the
baseline). The folder is read by runfolder/rundir.py, the one reader of run
folders; values are in their types. It computes no statistics of its own
beyond a ratio of two medians when ratios.csv lacks one; the fastest groups
are the runner's, from the samples."""
import os
import re
import sys

from runfolder import catalog, cells, rundir, schema
from runfolder.errors import RunError
from runfolder.schema import fmt

ROOT = catalog.ROOT
# floor rows: the least allocator work, not an allocator a program would use
FLOOR_ROWS = {"minimal"}
AXES = ("size", "threads", "param")


def as_number(v):
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


def _strategy_order():
    """Row order of allocators/strategies.txt, so every table and plot lists rows alike."""
    try:
        return catalog.row_names()
    except (OSError, ValueError):
        return []


def settle_status(summary):
    """A summary entry without a status, or ok without a median, says what it is."""
    for e in summary:
        if not e["status"]:
            e["status"] = "ok" if e[schema.MEDIAN] is not None else "failed"
        if e["status"] == "ok" and e[schema.MEDIAN] is None:
            e["status"] = "failed"
            e["reason"] = e["reason"] or "no median in summary.csv"


class Run:
    """A run folder as rundir.load read it (its attributes: folder, meta,
    summary, ratios, metrics, problems, files ...), with the report's questions."""

    def __init__(self, folder):
        self.data = rundir.load(folder)
        settle_status(self.data.summary)
        self.cells = self.data.by_key
        self.ratio_of = {schema.key_of(r): r for r in self.data.ratios}
        self.baseline = self._baseline()
        known = _strategy_order()
        seen = sorted({r["strategy"] for r in self.summary if r["strategy"]})
        self.strategies = [s for s in known if s in seen] + [s for s in seen if s not in known]
        self.workloads = sorted({r["workload"] for r in self.summary if r["workload"]})
        self.compilers = sorted({r["compiler"] for r in self.summary})

    def __getattr__(self, name):
        return getattr(self.data, name)

    @property
    def run_id(self):
        return os.path.basename(os.path.realpath(self.folder).rstrip("/"))

    def path(self, name):
        return self.data.file(name)

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
        return row is not None and row["status"] == "ok" and row[schema.MEDIAN] is not None

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
                axis = next((a for a in AXES if len({r[a] for r in rows}) > 1), "size")
                others = [a for a in AXES if a != axis]
                for v in sorted({tuple(r[a] for a in others) for r in rows}):
                    vrows = [r for r in rows if tuple(r[a] for a in others) == v]
                    label = ", ".join(f"{a} {fmt(x)}" for a, x in zip(others, v)
                                      if len({r[a] for r in rows}) > 1)
                    out.append(Group(self, w, c, axis, label, vrows))
        return out

    def ratio(self, row, against=None):
        """(ratio, ci_low, ci_high, significant or None) of the cell's median to `against`'s."""
        against = against or self.baseline
        if not self.ok(row):
            return None
        key = schema.key_of(row)
        if against == self.baseline:
            r = self.ratio_of.get(key)
            if r is not None and r["ratio"] is not None and r.get("baseline", against) in (against, ""):
                sig = r["significant"]
                lo, hi = r["ci_low"], r["ci_high"]
                if sig is None and lo is not None and hi is not None:
                    sig = 1.0 if hi < 1 or lo > 1 else 0.0
                return (r["ratio"], lo, hi, None if sig is None else bool(sig))
        base = self.cells.get(key[:1] + (against,) + key[2:])
        if not self.ok(base) or base[schema.MEDIAN] <= 0:
            return None
        return (row[schema.MEDIAN] / base[schema.MEDIAN], None, None, None)

    def fastest_groups(self):
        """{point: aggregate.Group}, from the samples as the tables mark them;
        {} when the folder's samples cannot give them."""
        if not hasattr(self, "_groups"):
            try:
                self._groups = cells.fastest_groups_of(self.data)
            except (RunError, ValueError, KeyError, TypeError):
                self._groups = {}
        return self._groups

    def fastest_group(self, g, x):
        """The strategies of the fastest group of group g at x (a list, fastest first)."""
        row = next((r for r in g.rows if fmt(r[g.axis]) == x), None)
        if row is None:
            return []
        group = self.fastest_groups().get(tuple(row[k] for k in ("compiler", "workload", "size", "threads", "param")))
        return group.members if group else []

    def ci_per_op(self, row):
        """The median's interval in ns per op. The runner may write it per op or per sample:
        whichever brackets the median is taken."""
        lo, hi, med = row.get("ci_low_ns"), row.get("ci_high_ns"), row.get(schema.MEDIAN)
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
        parts = [str(m[k]) for k in ("host", "cpu_model", "cpu") if m.get(k)]
        return " · ".join(parts) if parts else "unknown machine"

    def compiler_label(self, name):
        for c in self.meta.get("compilers") or []:
            if isinstance(c, dict) and c.get("name") == name:
                ver = str(c.get("version") or "").splitlines()[0:1]
                return f"{name} ({ver[0]})" if ver and ver[0] and name not in ver[0] else (
                    ver[0] if ver and ver[0] else name)
        return name or "compiler ?"


class Group:
    """Cells sharing workload, compiler and every parameter except the x axis.
    xs are the axis values as text (as the CSV writes them), in numeric order."""

    def __init__(self, run, workload, compiler, axis, label, rows):
        self.run = run
        self.workload = workload
        self.compiler = compiler
        self.axis = axis
        self.label = label
        self.rows = rows
        self.xs = [fmt(x) for x in sorted({r[axis] for r in rows})]
        self.strategies = [s for s in run.strategies if any(r["strategy"] == s for r in rows)]
        self.cell = {(r["strategy"], fmt(r[axis])): r for r in rows}

    def slug(self):
        parts = [self.workload, self.compiler] + ([self.label] if self.label else [])
        return file_slug("-".join(p for p in parts if p))

    def largest_x(self):
        """The largest x at which at least one strategy measured fine."""
        for x in reversed(self.xs):
            if any(self.run.ok(self.cell.get((s, x))) for s in self.strategies):
                return x
        return self.xs[-1] if self.xs else None

    def axis_label(self):
        return {"size": "size (elements)", "threads": "threads", "param": "parameter"}[self.axis]


def file_slug(text):
    """A file name of letters, digits and _.+- from text."""
    return re.sub(r"[^A-Za-z0-9_.+-]+", "_", text).strip("_")


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

