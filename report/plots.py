"""plots.py: draws a results folder's plots with gnuplot (scripts in plots/), as SVG and PNG
in results/<run>/plots/, with the .dat files gnuplot read in plots/data/.
It does no statistics: medians, intervals and ratios come from the runner's CSV files.
Usage: python3 -m report.plots results/<run>   (GNUPLOT=path overrides the gnuplot binary)"""
import concurrent.futures
import json
import math
import os
import shutil
import subprocess
import sys

from report import results
from runfolder.outputs import write_atomic
from runfolder.schema import MEDIAN

ROOT = results.ROOT
SCRIPTS = os.path.join(ROOT, "plots")
COLOURS = ("#0072B2 #D55E00 #009E73 #CC79A7 #E69F00 #56B4E9 #000000 #882255 #44AA99 #999933 "
           "#332288 #AA4499 #666666 #117733 #DDAA33 #6699CC").split()
MANIFEST = "index.json"
BARS_LOG_SPAN = 30  # bars that span more than this ratio get a log axis


# gnuplot exits 0 when a full disk cuts its output short: an image counts only
# when it ends as its format does (a PNG with its IEND chunk)
PNG_END = b"IEND\xaeB`\x82"
SVG_END = b"</svg>"


def ends_with(path, end):
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            f.seek(max(0, f.tell() - 64))
            return f.read().rstrip().endswith(end)
    except OSError:
        return False


def find_gnuplot():
    """(path, None) or (None, reason). GNUPLOT in the environment skips tools/need.sh."""
    override = os.environ.get("GNUPLOT")
    if override:
        path = shutil.which(override)
        return (path, None) if path else (None, f"GNUPLOT={override} is not an executable")
    need = os.path.join(ROOT, "tools", "need.sh")
    if os.path.exists(need) and os.name != "nt":  # apt-get: not on Windows, which may lack sh
        try:
            subprocess.run(["sh", need, "gnuplot", "gnuplot-nox"], stdout=subprocess.DEVNULL)
        except OSError:
            pass
    path = shutil.which("gnuplot")
    return (path, None) if path else (None, "gnuplot not found (install the gnuplot-nox package)")


STYLES = 32  # plots/style.gp's line styles, no two alike


def style_of(run, strategy):
    """Line style number (1-32) of a strategy: fixed per run, so colours agree across plots."""
    return run.strategies.index(strategy) % STYLES + 1 if strategy in run.strategies else STYLES


def gp_string(s):
    return "'" + str(s).replace("'", "''") + "'"


def num(x):
    return repr(float(x))


def bars_axis(fast, slow):
    """(log axis?, where the bars start) for bars from fast to slow: a log axis
    once they span more than BARS_LOG_SPAN, starting at the power of ten below
    half the fastest, so the shortest bar still shows."""
    if fast > 0 and slow / fast > BARS_LOG_SPAN:
        return True, 10.0 ** math.floor(math.log10(fast / 2))
    return False, 0.0


class Plotter:
    def __init__(self, run, gnuplot, out):
        self.run = run
        self.gnuplot = gnuplot
        self.out = out
        self.data = os.path.join(out, "data")
        os.makedirs(self.data, exist_ok=True)
        self.made = []
        self.failed = []
        self.jobs = []

    def draw(self, script, name, dat, meta, **params):
        """Queues plots/<script>.gp on its data; run() draws the queue."""
        self.jobs.append((script, name, dat, meta, params))

    def draw_all(self):
        """Draws the queued plots, one gnuplot per CPU at a time (each takes
        a tenth of a second, and a run has about a hundred); keeps their order."""
        workers = max(1, min(os.cpu_count() or 1, 4))
        with concurrent.futures.ThreadPoolExecutor(workers) as pool:
            outcomes = list(pool.map(lambda job: self.render(*job), self.jobs))
        self.jobs = []
        for made, failed in outcomes:
            if made:
                self.made.append(made)
            if failed:
                self.failed.append(failed)

    def render(self, script, name, dat, meta, params):
        """Writes the data file, runs the script: (plot's manifest entry or
        None, failure or None); a plot counts only when both images exist."""
        dat_path = os.path.join(self.data, name + ".dat")
        write_atomic(dat_path, dat)
        svg = os.path.join(self.out, name + ".svg")
        png = os.path.join(self.out, name + ".png")
        tmp_svg, tmp_png = svg + ".tmp", png + ".tmp"
        params.update(dir=SCRIPTS, data=dat_path, svg=tmp_svg, png=tmp_png)
        assign = "; ".join(f"{k}={gp_string(v) if isinstance(v, str) else v}" for k, v in params.items())
        try:
            p = subprocess.run([self.gnuplot, "-e", assign, os.path.join(SCRIPTS, script + ".gp")],
                               capture_output=True, text=True, timeout=60)
        except (OSError, subprocess.TimeoutExpired) as e:
            return None, f"{name}: {e}"
        cut = [t for t, end in ((tmp_svg, SVG_END), (tmp_png, PNG_END)) if not ends_with(t, end)]
        if p.returncode != 0 or cut:
            err = (p.stderr.strip().splitlines() or ["no output"])[-1]
            if p.returncode == 0:
                err = "an image ends short (a full disk?): " + ", ".join(os.path.basename(t) for t in cut)
            for t in (tmp_svg, tmp_png):
                if os.path.exists(t):
                    os.remove(t)
            return None, f"{name}: gnuplot: {err}"
        os.replace(tmp_svg, svg)
        os.replace(tmp_png, png)
        meta.update(title=str(params.get("title", "")).replace("\n", " — "),
                    svg=os.path.relpath(svg, self.run.folder), png=os.path.relpath(png, self.run.folder),
                    data=os.path.relpath(dat_path, self.run.folder))
        return meta, None

    def series(self, g, value):
        """Data sets of 'x v...' lines, one per strategy with at least one point;
        value(strategy, entry) -> tuple or None."""
        names, styles, blocks = [], [], []
        for s in g.strategies:
            lines = []
            for x in g.xs:
                row = g.cell.get((s, x))
                v = value(s, row) if self.run.ok(row) else None
                xv = results.as_number(x)
                if v is None or xv is None or xv <= 0 or any(c is None or c <= 0 for c in v):
                    continue
                lines.append(" ".join(num(c) for c in (xv,) + tuple(v)))
            if lines:
                names.append(s)
                styles.append(str(style_of(self.run, s)))
                blocks.append(f"# {s}\n" + "\n".join(lines) + "\n")
        return names, styles, "\n\n".join(blocks)

    def title(self, g, what):
        first = f"{g.workload}: {what}" + (f" ({g.label})" if g.label else "")
        return first + "\n" + " · ".join([self.run.compiler_label(g.compiler), self.run.host_line()])

    def group_plots(self, g):
        run = self.run
        base = g.slug()
        meta = dict(workload=g.workload, compiler=g.compiler, variant=g.label)

        def time_value(s, row):
            lo, hi = run.ci_per_op(row)
            m = row[MEDIAN]
            return (m, lo if lo is not None else m, hi if hi is not None else m)
        over_sizes = len([x for x in g.xs if results.as_number(x)]) > 1  # a line needs two points
        names, styles, dat = self.series(g, time_value)
        if names and over_sizes:
            self.draw("time", base + "-time", dat, dict(meta, kind="time", caption="Median time per "
                      "operation against " + g.axis + ", 95% interval of the median as error bars"),
                      title=self.title(g, "time per operation"), xlabel=g.axis_label() + ", log scale",
                      names=" ".join(names), styles=" ".join(styles))

        def ratio_value(s, row):
            if s == run.baseline:
                return None
            r = run.ratio(row)
            if r is None:
                return None
            return (r[0], r[1] if r[1] is not None else r[0], r[2] if r[2] is not None else r[0])
        names, styles, dat = self.series(g, ratio_value)
        if names and over_sizes:
            self.draw("ratio", base + "-ratio", dat, dict(meta, kind="ratio", caption=f"Each strategy's "
                      f"median divided by {run.baseline}'s; below the dashed line is faster"),
                      title=self.title(g, f"ratio to {run.baseline}"),
                      xlabel=g.axis_label() + ", log scale", baseline=run.baseline,
                      names=" ".join(names), styles=" ".join(styles))

        for x in g.xs:
            self.forest(g, x, base, meta)

        x = g.largest_x()
        bars = []
        for s in g.strategies:
            row = g.cell.get((s, x))
            if run.ok(row):
                lo, hi = run.ci_per_op(row)
                m = row[MEDIAN]
                colour = int(COLOURS[(style_of(run, s) - 1) % len(COLOURS)][1:], 16)
                bars.append((m, f"{s} {num(m)} {num(lo if lo is not None else m)} "
                                f"{num(hi if hi is not None else m)} {colour}"))
        if bars:
            bars.sort(key=lambda b: -b[0])
            logx, xlo = bars_axis(bars[-1][0], bars[0][0])
            self.draw("bars", base + "-bars", "\n".join(b[1] for b in bars) + "\n",
                      dict(meta, kind="bars", caption=f"All strategies at {g.axis} {x}, fastest at the top"
                           + (", log scale (they span more than 30x)" if logx else "")),
                      title=self.title(g, f"{g.axis} {x}"), svg_h=max(260, 130 + 28 * len(bars)),
                      logx=int(logx), xlo=float(xlo))

        def rss(s, row):
            v = row.get("peak_rss_bytes")
            return (v / 1048576.0,) if v else None
        names, styles, dat = self.series(g, rss)
        if names and over_sizes:
            self.draw("memory", base + "-rss", dat, dict(meta, kind="rss", caption="Peak resident set "
                      "size of the measuring process"), title=self.title(g, "peak RSS"),
                      xlabel=g.axis_label() + ", log scale", ylabel="peak RSS (MiB, log scale)", logy=1,
                      names=" ".join(names), styles=" ".join(styles))

        def overhead(s, row):
            res, peak = row.get("reserved_peak"), row.get("bytes_peak")
            if res and peak:
                return (res / peak,)
            pct = row.get("overhead_pct")
            return (1 + pct / 100.0,) if pct is not None else None
        names, styles, dat = self.series(g, overhead)
        if names and over_sizes:
            self.draw("memory", base + "-overhead", dat, dict(meta, kind="overhead", caption="Bytes the "
                      "allocator reserved at its peak per byte requested at the peak (1 = no overhead)"),
                      title=self.title(g, "allocator overhead"), xlabel=g.axis_label() + ", log scale",
                      ylabel="reserved / requested at peak (ratio, log scale)", logy=1,
                      names=" ".join(names), styles=" ".join(styles))

    def forest(self, g, x, base, meta):
        """Each strategy's ratio to the baseline at one point, ranked, the
        fastest group (marked " =") in green."""
        run = self.run
        members = run.fastest_group(g, x)
        lines = []
        for s in g.strategies:
            row = g.cell.get((s, x))
            if not run.ok(row):
                continue
            if s == run.baseline:
                r = (1.0, 1.0, 1.0)
            else:
                q = run.ratio(row)
                if q is None or q[0] is None:
                    continue
                r = (q[0], q[1] if q[1] is not None else q[0], q[2] if q[2] is not None else q[0])
            if min(r) <= 0:
                continue
            colour = 0x009E73 if s in members else 0x555555
            name = f"{s} =" if s in members else s  # a quoted name: gnuplot's data files take double quotes
            lines.append((r[0], f'"{name}" {num(r[0])} {num(r[1])} {num(r[2])} {colour}'))
        if len(lines) < 2:
            return
        lines.sort(key=lambda b: -b[0])
        self.draw("forest", f"{base}-{results.file_slug(str(x))}-forest", "\n".join(b[1] for b in lines) + "\n",
                  dict(meta, kind="forest", x=str(x), caption=f"Each strategy's ratio to {run.baseline} at "
                       f"{g.axis} {x} with its 95% interval, fastest at the top; in green (=) the fastest "
                       "group: the fastest and those not marked as different from it"),
                  title=self.title(g, f"ratio to {run.baseline} at {g.axis} {x}"), baseline=run.baseline,
                  svg_h=max(220, 110 + 22 * len(lines)))

    def compiler_plots(self, groups):
        """Per workload and variant with several compilers: each strategy under each compiler."""
        run = self.run
        for w, label, gs in results.compiler_sets(groups):
            x = gs[0].largest_x()
            compilers = [g.compiler for g in gs]
            lines = []
            for s in run.strategies:
                cols = []
                for g in gs:
                    row = g.cell.get((s, x))
                    if run.ok(row):
                        lo, hi = run.ci_per_op(row)
                        m = row[MEDIAN]
                        cols += [m, lo if lo is not None else m, hi if hi is not None else m]
                    else:
                        cols += [None, None, None]
                if any(c is not None for c in cols):
                    lines.append(s + " " + " ".join("NaN" if c is None else num(c) for c in cols))
            if not lines:
                continue
            name = results.file_slug(f"{w}-{label}".strip("-")) + "-compilers"
            title = f"{w}: compilers at {gs[0].axis} {x}" + (f" — {label}" if label else "")
            self.draw("compilers", name, "\n".join(lines) + "\n",
                      dict(workload=w, compiler="", variant=label, kind="compilers",
                           caption=f"Each strategy built by each compiler, at {gs[0].axis} {x}"),
                      title=title + "\n" + run.host_line(), compilers=" ".join(compilers))


def drawn_before(folder):
    """The manifest of plots drawn before whose images are all still there, or
    None: plots that cannot be drawn again (no gnuplot) keep those."""
    try:
        with open(os.path.join(folder, "plots", MANIFEST), encoding="utf-8") as f:
            manifest = json.load(f)
        plots = manifest["plots"]
        if manifest.get("status") != "ok" or not plots or \
                not all(os.path.isfile(os.path.join(folder, p[k])) for p in plots for k in ("svg", "png")):
            return None
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return manifest


def make_plots(run, quiet=False):
    """Draws every plot of a loaded run (results.Run); returns and writes the manifest (plots/index.json).
    When they cannot be drawn, plots drawn before are kept: their manifest is
    returned, with `kept` the reason, and left as it was."""
    out = os.path.join(run.folder, "plots")
    manifest = {"status": "skipped", "reason": "", "plots": [], "failed": []}
    gnuplot, reason = find_gnuplot()
    if not run.summary:
        reason = "no timing results (summary.csv missing or empty)"
    elif gnuplot is None:
        pass
    else:
        try:
            os.makedirs(out, exist_ok=True)
        except OSError as e:
            reason = f"cannot create {out}: {e}"
    drawn = drawn_before(run.folder) if reason else None
    if drawn:
        if not quiet:
            print(f"plots: not drawn again: {reason}; the {len(drawn['plots'])} plots drawn before are kept",
                  file=sys.stderr)
        return dict(drawn, kept=reason)
    if reason:
        manifest["reason"] = reason
        if not quiet:
            print(f"plots: skipped: {reason}", file=sys.stderr)
    else:
        p = Plotter(run, gnuplot, out)
        groups = run.groups()
        for g in groups:
            p.group_plots(g)
        p.compiler_plots(groups)
        p.draw_all()
        manifest.update(status="ok", plots=p.made, failed=p.failed)
        for f in p.failed:
            print(f"plots: {f}", file=sys.stderr)
    if os.path.isdir(out):
        write_atomic(os.path.join(out, MANIFEST), json.dumps(manifest, indent=1))
    return manifest


def main(argv):
    if len(argv) != 2 or argv[1].startswith("-"):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    run = results.load(argv[1])
    results.warn(run, "plots")
    m = make_plots(run)
    if m["status"] == "ok" and not m.get("kept"):
        print(f"plots: {len(m['plots'])} plots in {os.path.join(run.folder, 'plots')}")
    return 0 if m["status"] == "ok" and not m["failed"] and not m.get("kept") else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
