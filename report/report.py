"""report.py: turns one results folder into results/<run>/report.html, a single self-contained
page (inline SVG plots and CSS, no scripts, no network). Python 3 standard library only.
It draws the plots first (report/plots.py) unless --no-plots; it measures nothing itself.
The page's parts: css.py, pieces.py (cells, tables, plots), result_sections.py, run_sections.py,
count_sections.py (counts.csv of make count).
Usage: python3 -m report.report results/<run> [--no-plots]"""
import json
import os
import sys

from report import plots, results
from report.css import CSS
from report.pieces import Pieces, esc
from report.count_sections import CountSections
from report.dimension_sections import DimensionSections
from report.result_sections import ResultSections
from report.run_sections import RunSections
from runfolder.outputs import write_atomic


class Page(Pieces, ResultSections, DimensionSections, RunSections, CountSections):
    def __init__(self, run, manifest):
        self.run = run
        self.manifest = manifest
        self.toc = []  # (id, title, children)
        self.parts = []
        self.svg_count = 0
        self.plots_by = {}
        for p in manifest.get("plots", []):
            self.plots_by.setdefault((p["workload"], p["compiler"], p["variant"]), []).append(p)

    def add(self, s):
        self.parts.append(s)

    # ---- pieces ----
    def section(self, sid, title, body, children=None):
        self.toc.append((sid, title, children or []))
        self.add(f'<section class="card" id="{esc(sid)}"><h2>{esc(title)}</h2>\n{body}\n</section>')

    # ---- sections ----

    # ---- whole page ----
    def render(self):
        run = self.run
        groups = run.groups()
        self.summary_section(groups)
        self.dimension_section()
        self.workload_sections(groups)
        self.compilers_section(groups)
        self.counts_section()
        self.hyperfine_section()
        self.preload_section()
        self.stats_section(groups)
        self.metrics_section()
        self.failed_section()
        self.method_section()
        self.env_section()
        self.files_section()
        m = run.meta
        toc = []
        for sid, title, children in self.toc:
            sub = "".join(f'<li><a href="#{esc(c)}">{esc(t)}</a></li>' for c, t in children)
            toc.append(f'<li><a href="#{esc(sid)}">{esc(title)}</a>{"<ol>" + sub + "</ol>" if sub else ""}</li>')
        compilers = ", ".join(run.compiler_label(c) for c in run.compilers) or "no compiler recorded"
        when = m.get("date") or "date not recorded"
        nstrat, nwork = len(run.strategies), len(run.workloads)
        problems = self.problems_box()  # after the sections: they may add problems
        return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>allocmark report — {esc(run.run_id)}</title>
<style>{CSS}</style>
</head>
<body>
<header class="top">
<h1>allocmark <span>report</span></h1>
<p>Run <strong>{esc(run.run_id)}</strong> · {esc(str(when))} · {esc(run.host_line())}</p>
<p>{nstrat} strategies × {nwork} workloads · {esc(compilers)} · baseline <strong>{esc(run.baseline)}</strong>{' · quick run' if m.get("quick") else ''}</p>
</header>
<div class="page">
<nav class="toc" aria-label="Contents"><h2>Contents</h2><ol>{"".join(toc)}</ol></nav>
<main>
{problems}
{"".join(self.parts)}
<p class="muted">Made by report/report.py from the files in this folder.</p>
</main>
</div>
</body>
</html>
"""



def build(folder, draw_plots=True, prog="report"):
    """Loads the folder, draws the plots, writes report.html; returns (path, run)."""
    run = results.load(folder)
    if draw_plots:
        manifest = plots.make_plots(run)
    else:
        try:
            with open(os.path.join(folder, "plots", plots.MANIFEST), encoding="utf-8") as f:
                manifest = json.load(f)
        except (OSError, ValueError):
            manifest = {"status": "skipped", "reason": "not drawn (--no-plots; run make plots)", "plots": []}
    page = Page(run, manifest).render()
    results.warn(run, prog)
    out = os.path.join(folder, "report.html")
    write_atomic(out, page)
    return out, run


def main(argv):
    args = [a for a in argv[1:] if not a.startswith("-")]
    flags = [a for a in argv[1:] if a.startswith("-")]
    if len(args) != 1 or any(f not in ("--no-plots",) for f in flags):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    folder = args[0]
    if not os.path.isdir(folder):
        print(f"report: {folder}: no such results folder", file=sys.stderr)
        return 2
    try:
        out, run = build(folder, draw_plots="--no-plots" not in flags)
    except OSError as e:
        print(f"report: cannot write the report: {e}", file=sys.stderr)
        return 2
    print(f"report: wrote {out}")
    return 1 if run.problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

