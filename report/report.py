#!/usr/bin/env python3
"""report.py: turns one results folder into results/<run>/report.html, a single self-contained
page (inline SVG plots and CSS, no scripts, no network). Python 3 standard library only.
It draws the plots first (report/plots.py) unless --no-plots; it measures nothing itself.
Usage: python3 report/report.py results/<run> [--no-plots]"""
import csv
import html
import io
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import plots  # noqa: E402
import results  # noqa: E402

esc = html.escape


# ---- number formatting: three significant digits, thousands separated ----
def fmt(v, unit=""):
    if v is None:
        return "—"
    a = abs(v)
    if a >= 1000:
        s = f"{v:,.0f}"
    elif a == 0 or a >= 0.001:
        s = f"{v:.3g}"
    else:
        s = f"{v:.2e}"
    return s + unit


def fmt_ratio(r):
    if r is None:
        return "—"
    return f"{r:.2f}" if 0.01 <= r < 100 else f"{r:.3g}"


def fmt_int(v):
    return "—" if v is None else f"{v:,.0f}"


def slug(text):
    return re.sub(r"[^A-Za-z0-9_-]+", "-", text).strip("-") or "x"


CSS = """
:root { --ink:#1c2230; --muted:#5b6475; --line:#dde1e8; --head:#eef1f6; --accent:#1f5fa8;
  --fast-bg:#dcf1e2; --fast:#0d5a21; --slow-bg:#fbe1de; --slow:#8c1d12; --same-bg:#eeeeee; }
* { box-sizing: border-box; }
html { background:#f4f5f8; }
body { margin:0; color:var(--ink); font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,
  "Helvetica Neue",Arial,sans-serif; }
header.top { background:#17202e; color:#fff; padding:28px 40px 22px; }
header.top h1 { margin:0 0 4px; font-size:26px; font-weight:650; letter-spacing:.2px; }
header.top h1 span { color:#8fb8ea; font-weight:400; }
header.top p { margin:2px 0; color:#c8d1de; font-size:14px; }
.page { display:flex; align-items:flex-start; max-width:1500px; margin:0 auto; }
nav.toc { position:sticky; top:0; flex:0 0 230px; max-height:100vh; overflow:auto;
  padding:22px 10px 22px 24px; font-size:13.5px; }
nav.toc h2 { font-size:12px; text-transform:uppercase; letter-spacing:.08em; color:var(--muted);
  margin:0 0 8px; }
nav.toc ol { list-style:none; margin:0; padding:0; }
nav.toc ol ol { padding-left:14px; margin:2px 0 6px; }
nav.toc a { color:var(--ink); text-decoration:none; display:block; padding:2px 6px; border-radius:4px; }
nav.toc a:hover { background:#e3e8f0; }
main { flex:1 1 auto; min-width:0; padding:18px 32px 60px 14px; }
section.card { background:#fff; border:1px solid var(--line); border-radius:8px;
  padding:18px 24px 20px; margin:0 0 22px; }
h2 { font-size:21px; margin:0 0 10px; font-weight:640; }
h3 { font-size:17px; margin:22px 0 8px; font-weight:620; }
h4 { font-size:15px; margin:16px 0 6px; }
p { margin:6px 0 10px; }
.muted, caption { color:var(--muted); }
a { color:var(--accent); }
code, pre { font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace; font-size:13px; }
pre { background:#f6f7f9; border:1px solid var(--line); border-radius:6px; padding:10px 12px;
  overflow:auto; }
.scroll { overflow-x:auto; margin:8px 0 14px; }
table { border-collapse:collapse; font-variant-numeric:tabular-nums; font-size:13.5px; }
caption { caption-side:top; text-align:left; padding:0 0 6px; font-size:13px; }
th, td { padding:4px 9px; border-bottom:1px solid var(--line); vertical-align:top; }
thead th { background:var(--head); font-weight:600; text-align:center; white-space:nowrap;
  border-bottom:1px solid #c9d0db; }
th.row, td.row { text-align:left; white-space:nowrap; font-weight:550; }
td.num { text-align:right; white-space:nowrap; }
tbody tr:nth-child(even) td { background-color:#fafbfc; }
tbody tr:hover td { background-color:#f1f5fb; }
td.ratio { text-align:right; white-space:nowrap; }
td.ratio small { display:block; font-size:11px; opacity:.85; }
tbody tr td.faster { background:var(--fast-bg); color:var(--fast); }
tbody tr td.slower { background:var(--slow-bg); color:var(--slow); }
tbody tr td.same { background:var(--same-bg); color:#555; }
tbody tr td.base, tbody tr td.nointerval { color:var(--muted); font-style:italic; }
tbody tr td.na { color:#777; text-align:center; font-style:italic; }
tbody tr td.failed { background:repeating-linear-gradient(135deg,#fff 0 6px,#f7e4e2 6px 12px);
  color:var(--slow); text-align:center; font-size:12.5px; }
.legend { display:flex; flex-wrap:wrap; gap:8px 16px; font-size:12.5px; color:var(--muted);
  margin:4px 0 8px; }
.legend span.key { display:inline-block; padding:0 7px; border-radius:3px; margin-right:4px; }
.key.faster { background:var(--fast-bg); color:var(--fast); }
.key.slower { background:var(--slow-bg); color:var(--slow); }
.key.same { background:var(--same-bg); color:#555; }
.figs { display:grid; grid-template-columns:repeat(auto-fill,minmax(430px,1fr)); gap:14px; margin:10px 0; }
figure.wide { grid-column:1 / -1; }
figure.wide svg { max-width:760px; margin:0 auto; }
figure { margin:0; border:1px solid var(--line); border-radius:6px; padding:6px 6px 4px; background:#fff; }
figure svg { display:block; width:100%; height:auto; }
figcaption { font-size:12.5px; color:var(--muted); padding:4px 6px 2px; }
.notice { border-left:4px solid #c77d0a; background:#fff7e8; padding:10px 16px; border-radius:4px;
  margin:0 0 18px; }
.notice.bad { border-left-color:#b3261e; background:#fdeeee; }
.notice ul { margin:4px 0 0; padding-left:20px; }
dl.kv { display:grid; grid-template-columns:max-content 1fr; gap:3px 18px; margin:6px 0; font-size:14px; }
dl.kv dt { color:var(--muted); }
dl.kv dd { margin:0; word-break:break-word; }
.pill { display:inline-block; background:#e6edf7; color:#23426d; border-radius:10px; padding:0 8px;
  font-size:12px; margin-left:6px; vertical-align:2px; font-weight:500; }
details summary { cursor:pointer; color:var(--accent); margin:6px 0; }
table.stats thead th { white-space:normal; max-width:110px; }
td.cmd { white-space:normal; word-break:break-all; min-width:240px; }
@media (max-width:900px) { nav.toc { display:none; } main { padding:12px; } }
@media print { nav.toc { display:none; } html, body { background:#fff; }
  section.card { border:none; padding:0; } header.top { background:#fff; color:#000; } }
"""


class Page:
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
    def inline_svg(self, rel, title):
        """The SVG file's markup, ids prefixed so several plots can share the page."""
        try:
            with open(os.path.join(self.run.folder, rel), encoding="utf-8") as f:
                text = f.read()
        except OSError as e:
            return f'<p class="muted">plot {esc(rel)} unreadable: {esc(str(e))}</p>'
        self.svg_count += 1
        pre = f"p{self.svg_count}-"
        text = re.sub(r"<\?xml.*?\?>|<!DOCTYPE.*?>|<!--.*?-->", "", text, flags=re.S)
        text = re.sub(r"<script.*?</script>", "", text, flags=re.S | re.I)
        text = re.sub(r"""\bid=(['"])""", lambda m: f"id={m.group(1)}{pre}", text)
        text = re.sub(r"""(href=['"])#""", lambda m: f"{m.group(1)}#{pre}", text)
        text = text.replace("url(#", f"url(#{pre}")
        text = re.sub(r"<title>.*?</title>", f"<title>{esc(title)}</title>", text, count=1, flags=re.S)
        text = text.replace("<svg ", f'<svg role="img" aria-label="{esc(title, quote=True)}" ', 1)
        return text.strip()

    def figures(self, plots_list):
        order = {"time": 0, "ratio": 1, "bars": 2, "rss": 3, "overhead": 4, "compilers": 5}
        out = ['<div class="figs">']
        for p in sorted(plots_list, key=lambda p: order.get(p["kind"], 9)):
            svg = self.inline_svg(p["svg"], p.get("title") or p.get("caption", p["kind"]))
            wide = " wide" if p["kind"] == "bars" else ""
            out.append(f'<figure class="plot{wide}" data-kind="{esc(p["kind"])}">{svg}<figcaption>'
                       f'{esc(p.get("caption", ""))} · <a href="{esc(p["png"])}">PNG</a> · '
                       f'<a href="{esc(p["svg"])}">SVG</a> · <a href="{esc(p["data"])}">data</a>'
                       f'</figcaption></figure>')
        out.append("</div>")
        return "\n".join(out)

    def ratio_cell(self, row, against=None, attrs=""):
        """A coloured table cell: ratio, its interval, and a glyph that survives black and white."""
        run = self.run
        against = against or run.baseline
        if row is None:
            return f'<td class="ratio missing"{attrs}>—</td>'
        if not run.ok(row):
            return f'<td class="ratio failed"{attrs}>failed</td>'
        if row["strategy"] == against:
            return f'<td class="ratio base"{attrs}>baseline</td>'
        r = run.ratio(row, against)
        if r is None:
            return f'<td class="ratio missing"{attrs}>—</td>'
        ratio, lo, hi, sig = r
        if sig is None:
            cls, mark, note = "nointerval", "", "no interval"
        elif sig and ratio < 1:
            cls, mark, note = "faster", "▼ ", "faster"
        elif sig:
            cls, mark, note = "slower", "▲ ", "slower"
        else:
            cls, mark, note = "same", "≈ ", "not significant"
        interval = f"<small>{fmt_ratio(lo)}–{fmt_ratio(hi)}</small>" if lo is not None and hi is not None else ""
        tip = f"{row['strategy']} / {against}: {note}"
        return (f'<td class="ratio {cls}" title="{esc(tip, quote=True)}"{attrs}>{mark}'
                f'<span class="r">{fmt_ratio(ratio)}×</span>{interval}</td>')

    def time_cell(self, row, attrs=""):
        if row is None:
            return f'<td class="num missing"{attrs}>—</td>'
        if not self.run.ok(row):
            return ""
        lo, hi = self.run.ci_per_op(row)
        tip = f"95% interval {fmt(lo)}–{fmt(hi)} ns" if lo is not None else "no interval"
        if row.get("cv") is not None:
            tip += f"; cv {row['cv'] * 100:.1f}%"
        if row.get("samples") is not None:
            tip += f"; {fmt_int(row['samples'])} samples"
        return f'<td class="num t" title="{esc(tip, quote=True)}"{attrs}>{fmt(row["median_ns_per_op"])}</td>'

    def group_table(self, g):
        run = self.run
        xs = g.xs
        head1 = "".join(f'<th colspan="2">{esc(g.axis)} {esc(x)}</th>' for x in xs)
        head2 = "".join(f"<th>ns/op</th><th>× {esc(run.baseline)}</th>" for _ in xs)
        rows = []
        for s in g.strategies:
            cells = []
            for x in xs:
                row = g.cell.get((s, x))
                attrs = f' data-strategy="{esc(s)}" data-x="{esc(x)}"'
                if run.skipped(row):
                    reason = row.get("reason") or "does not apply"
                    cells.append(f'<td class="na" colspan="2" title="{esc(reason, quote=True)}"{attrs}>'
                                 f'n/a</td>')
                    continue
                if row is not None and not run.ok(row):
                    reason = row.get("reason") or "no reason given"
                    cells.append(f'<td class="failed" colspan="2" title="{esc(reason, quote=True)}"{attrs}>'
                                 f'failed: {esc(reason)}</td>')
                    continue
                cells.append(self.time_cell(row, attrs))
                cells.append(self.ratio_cell(row, attrs=attrs))
            tag = ' <span class="pill">lower bound</span>' if s in results.LOWER_BOUNDS else ""
            rows.append(f'<tr><th class="row" scope="row">{esc(s)}{tag}</th>{"".join(cells)}</tr>')
        return (f'<div class="scroll"><table class="results" id="t-{esc(g.slug())}">'
                f'<caption>Median time per operation (ns) and ratio to {esc(run.baseline)}, with the ratio\'s 95% '
                f'interval. Hover a time for its interval.</caption>'
                f'<thead><tr><th rowspan="2">strategy</th>{head1}</tr><tr>{head2}</tr></thead>'
                f'<tbody>{"".join(rows)}</tbody></table></div>')

    def legend(self):
        return ('<div class="legend"><span><span class="key faster">▼ 0.50×</span>faster than the baseline '
                '(interval below 1)</span><span><span class="key slower">▲ 2.00×</span>slower (interval above '
                '1)</span><span><span class="key same">≈ 1.01×</span>not significant (interval holds 1)</span>'
                '<span><i>italic</i>: baseline, or no interval available</span></div>')

    def section(self, sid, title, body, children=None):
        self.toc.append((sid, title, children or []))
        self.add(f'<section class="card" id="{esc(sid)}"><h2>{esc(title)}</h2>\n{body}\n</section>')

    # ---- sections ----
    def problems_box(self):
        run = self.run
        items = [f"<li><code>{esc(p.file)}</code>: {esc(p.message)}</li>" for p in run.problems]
        if self.manifest.get("status") != "ok":
            items.append(f"<li>plots: skipped — {esc(self.manifest.get('reason') or 'unknown reason')}</li>")
        for f in self.manifest.get("failed", []):
            items.append(f"<li>plot {esc(f)}</li>")
        if not items:
            return ""
        return (f'<div class="notice bad" id="problems"><strong>This results folder is incomplete or damaged;'
                f' the page shows what could be read.</strong><ul>{"".join(items)}</ul></div>')

    def summary_section(self, groups):
        run = self.run
        if not groups:
            self.section("summary", "Summary", '<p class="muted">No timing results to summarise '
                         '(summary.csv is missing or has no usable rows).</p>')
            return
        base = run.baseline
        has_system = any(r["strategy"] == "system" for r in run.summary)
        two = has_system and base != "system"
        bounds = [b for b in sorted(results.LOWER_BOUNDS) if b in run.strategies]
        head = ["workload", "compiler", "at", "fastest", "ns/op"]
        head.append(f"vs system" + ("" if two or not has_system else " (baseline)") if has_system else f"vs {base}")
        if two:
            head.append(f"vs {base} (baseline)")
        head += [f"{b} ns/op (lower bound)" for b in bounds]
        rows = []
        for g in groups:
            x = g.largest_x()
            cands = [g.cell[(s, x)] for s in g.strategies
                     if (s, x) in g.cell and run.ok(g.cell[(s, x)]) and s not in results.LOWER_BOUNDS]
            name = g.workload + (f" ({g.label})" if g.label else "")
            link = f'<a href="#w-{esc(slug(g.workload))}">{esc(name)}</a>'
            if not cands:
                rows.append(f'<tr><td class="row">{link}</td><td>{esc(g.compiler)}</td><td class="num">'
                            f'{esc(g.axis)} {esc(x)}</td><td class="failed" colspan="{len(head) - 3}">'
                            f'no strategy measured</td></tr>')
                continue
            best = min(cands, key=lambda r: r["median_ns_per_op"])
            attrs = f' data-workload="{esc(g.workload)}"'
            cells = [f'<td class="row">{link}</td>', f"<td>{esc(g.compiler)}</td>",
                     f'<td class="num">{esc(g.axis)} {esc(x)}</td>',
                     f'<td class="row best"{attrs}>{esc(best["strategy"])}</td>',
                     f'<td class="num">{fmt(best["median_ns_per_op"])}</td>']
            cells.append(self.ratio_cell(best, "system" if has_system else base))
            if two:
                cells.append(self.ratio_cell(best, base))
            for b in bounds:
                row = g.cell.get((b, x))
                cells.append(f'<td class="num">{fmt(row["median_ns_per_op"]) if run.ok(row) else "—"}</td>')
            rows.append("<tr>" + "".join(cells) + "</tr>")
        nfail = sum(1 for r in run.summary if not run.ok(r) and not run.skipped(r))
        nskip = sum(1 for r in run.summary if run.skipped(r))
        failed = (f'<p><strong>{nfail} cell{"s" if nfail != 1 else ""} failed</strong> — see '
                  f'<a href="#failed">failed cells</a>.</p>') if nfail else ""
        if nskip:
            failed += (f'<p>{nskip} cell{"s" if nskip != 1 else ""} skipped: the workload does not apply to '
                       f'that strategy (<a href="#failed">why</a>).</p>')
        body = (f'<p>For each workload, the fastest strategy at the largest size measured, and its median '
                f'time per operation relative to <code>system</code> and to the baseline '
                f'(<code>{esc(base)}</code>).' + (f' Lower bounds ({esc(", ".join(bounds))}) are left out of '
                f'"fastest" and shown apart.' if bounds else "") + f'</p>{self.legend()}<div class="scroll"><table id="summary-table">'
                f'<thead><tr>{"".join(f"<th>{esc(h)}</th>" for h in head)}</tr></thead>'
                f'<tbody>{"".join(rows)}</tbody></table></div>{failed}')
        self.section("summary", "Summary", body)

    def workload_sections(self, groups):
        run = self.run
        children = []
        body = []
        for w in run.workloads:
            wid = "w-" + slug(w)
            children.append((wid, w))
            body.append(f'<h3 id="{esc(wid)}">{esc(w)}</h3>')
            for g in [g for g in groups if g.workload == w]:
                sub = run.compiler_label(g.compiler) + (f" · {g.label}" if g.label else "")
                body.append(f'<h4>{esc(sub)}</h4>')
                pl = self.plots_by.get((g.workload, g.compiler, g.label), [])
                if pl:
                    body.append(self.figures(pl))
                elif self.manifest.get("status") == "ok":
                    body.append('<p class="muted">No plot: no cell of this group measured fine.</p>')
                else:
                    body.append(f'<p class="muted">Plots skipped: {esc(self.manifest.get("reason") or "")}</p>')
                body.append(self.group_table(g))
        if not body:
            body.append('<p class="muted">No workload results.</p>')
        self.section("workloads", "Workloads", self.legend() + "\n".join(body), children)

    def compilers_section(self, groups):
        run = self.run
        extra = []
        for name in ("compilers.md", "compilers.csv"):
            if name in run.files:
                extra.append(name)
        if len(run.compilers) < 2 and not extra:
            return
        body = []
        if len(run.compilers) >= 2:
            first = run.compilers[0]
            body.append(f'<p>The same strategies built by each compiler; the last columns divide by '
                        f'<code>{esc(first)}</code>\'s median (point estimate, no interval).</p>')
            for w, label, gs in results.compiler_sets(groups):
                x = gs[0].largest_x()
                title = f"{w}" + (f" · {label}" if label else "") + f" at {gs[0].axis} {x}"
                body.append(f"<h3>{esc(title)}</h3>")
                pl = [p for p in self.manifest.get("plots", []) if p["kind"] == "compilers"
                      and p["workload"] == w and p["variant"] == label]
                if pl:
                    body.append(self.figures(pl))
                head = "".join(f"<th>{esc(g.compiler)} ns/op</th>" for g in gs) + "".join(
                    f"<th>{esc(g.compiler)} / {esc(first)}</th>" for g in gs[1:])
                rows = []
                for s in run.strategies:
                    vals = [gs_row["median_ns_per_op"] if run.ok(gs_row) else None
                            for gs_row in (g.cell.get((s, x)) for g in gs)]
                    if all(v is None for v in vals):
                        continue
                    rel = [f'<td class="num">{fmt_ratio(v / vals[0]) + "×" if v and vals[0] else "—"}</td>'
                           for v in vals[1:]]
                    rows.append(f'<tr><th class="row">{esc(s)}</th>' + "".join(
                        f'<td class="num">{fmt(v)}</td>' for v in vals) + "".join(rel) + "</tr>")
                body.append(f'<div class="scroll"><table><thead><tr><th>strategy</th>{head}</tr></thead>'
                            f'<tbody>{"".join(rows)}</tbody></table></div>')
        for name in extra:
            body.append(f'<details><summary>The runner\'s {esc(name)}</summary>{self.file_block(name)}</details>')
        self.section("compilers", "Compiler comparison", "\n".join(body))

    def file_block(self, name):
        """A CSV file as a table, anything else as preformatted text."""
        try:
            with open(self.run.path(name), encoding="utf-8", errors="replace") as f:
                text = f.read()
        except OSError as e:
            self.run.problem(name, f"unreadable ({e})")
            return f'<p class="muted">{esc(name)} unreadable.</p>'
        if name.endswith(".csv"):
            rows = list(csv.reader(io.StringIO(text)))
            if rows:
                head = "".join(f"<th>{esc(h)}</th>" for h in rows[0])
                body = "".join("<tr>" + "".join(
                    f'<td class="{"num" if results.as_number(c) is not None else "row"}">'
                    f'{esc(fmt(results.as_number(c)) if results.as_number(c) is not None else c)}</td>'
                    for c in r) + "</tr>" for r in rows[1:] if r)
                return (f'<div class="scroll"><table><thead><tr>{head}</tr></thead>'
                        f'<tbody>{body}</tbody></table></div>')
        return f"<pre>{esc(text)}</pre>"

    def hyperfine_section(self):
        run = self.run
        names = sorted(f for f in run.files if f.startswith("hyperfine-") and f.endswith((".json", ".md")))
        if not names:
            return
        body = ['<p>Whole-process timings by <a href="https://github.com/sharkdp/hyperfine">hyperfine</a>: '
                'start-up, the workload and exit, as a user of the program would see them.</p>']
        for name in names:
            stem = name.rsplit(".", 1)[0]
            if name.endswith(".md") and stem + ".json" in names:
                continue
            body.append(f"<h3>{esc(stem[len('hyperfine-'):])}</h3>")
            if name.endswith(".md"):
                body.append(self.file_block(name))
                continue
            try:
                with open(run.path(name), encoding="utf-8") as f:
                    data = json.load(f)
                res = [r for r in data["results"] if isinstance(r, dict) and "mean" in r]
            except (OSError, ValueError, KeyError, TypeError) as e:
                run.problem(name, f"unreadable hyperfine JSON ({e})")
                body.append(f'<p class="muted">{esc(name)} could not be read.</p>')
                continue
            fastest = min((r["mean"] for r in res if r.get("mean")), default=None)
            rows = []
            for r in res:
                ms = lambda k: fmt(r[k] * 1000) if isinstance(r.get(k), (int, float)) else "—"  # noqa: E731
                rel = fmt_ratio(r["mean"] / fastest) if fastest and r.get("mean") else "—"
                rows.append(f'<tr><td class="cmd"><code>{esc(str(r.get("command", "")))}</code></td>'
                            f'<td class="num">{ms("mean")} ± {ms("stddev")}</td><td class="num">{ms("median")}</td>'
                            f'<td class="num">{ms("min")}</td><td class="num">{ms("max")}</td>'
                            f'<td class="num">{ms("user")}</td><td class="num">{ms("system")}</td>'
                            f'<td class="num">{rel}</td></tr>')
            body.append('<div class="scroll"><table><thead><tr><th>command</th><th>mean ± σ (ms)</th>'
                        '<th>median (ms)</th><th>min (ms)</th><th>max (ms)</th><th>user (ms)</th>'
                        f'<th>system (ms)</th><th>relative</th></tr></thead><tbody>{"".join(rows)}'
                        f'</tbody></table></div><p class="muted">From <a href="{esc(name)}">{esc(name)}</a>.</p>')
        self.section("hyperfine", "Whole-process timings (hyperfine)", "\n".join(body))

    def stats_section(self, groups):
        run = self.run
        cols = [("bytes_requested", "bytes requested"), ("bytes_peak", "peak bytes in use"),
                ("reserved_peak", "reserved at peak"), ("overhead_pct", "overhead"),
                ("allocs", "allocations"), ("frees", "frees"), ("peak_rss_bytes", "peak RSS")]
        body = ['<p>Counted by the <code>-stats</code> build of each strategy (one repetition, '
                '<code>AM_STATS=1</code>), in the manner of BDE\'s counting allocator: bytes requested in '
                'total, the peak of bytes in use, what the strategy had reserved from the system at its '
                'peak, the overhead that implies, and the number of allocations and frees. Peak RSS is the '
                'measuring process\'s. Largest size of each workload.</p>']
        any_rows = False
        shown = [g for g in groups if g.compiler == (run.compilers[0] if run.compilers else g.compiler)]
        if len(run.compilers) > 1:
            body.append(f'<p class="muted">Counts from the {esc(run.compilers[0])} build; the other '
                        f'compilers\' counts are in <a href="summary.csv">summary.csv</a>.</p>')
        for g in shown:
            x = g.largest_x()
            rows = []
            for s in g.strategies:
                row = g.cell.get((s, x))
                if row is None or all(row.get(c) is None for c, _ in cols):
                    continue
                cells = []
                for c, _ in cols:
                    v = row.get(c)
                    if v is None:
                        text = "—"
                    elif c == "overhead_pct":
                        text = fmt(v, " %")
                    elif c == "peak_rss_bytes":
                        text = fmt(v / 1048576.0, " MiB")
                    else:
                        text = fmt_int(v)
                    cells.append(f'<td class="num">{text}</td>')
                rows.append(f'<tr><th class="row">{esc(s)}</th>{"".join(cells)}</tr>')
            if rows:
                any_rows = True
                title = f"{g.workload} · {g.compiler}" + (f" · {g.label}" if g.label else "") + f" · {g.axis} {x}"
                body.append(f'<h3>{esc(title)}</h3><div class="scroll"><table class="stats" '
                            f'id="s-{esc(g.slug())}"><thead><tr><th>strategy</th>'
                            + "".join(f"<th>{esc(h)}</th>" for _, h in cols)
                            + f'</tr></thead><tbody>{"".join(rows)}</tbody></table></div>')
        if not any_rows:
            body.append('<p class="muted">summary.csv holds no allocator statistics.</p>')
        for name in sorted(f for f in run.files if f.startswith("stats-") and f.endswith(".txt")):
            body.append(f'<details><summary>{esc(name)}</summary>{self.file_block(name)}</details>')
        self.section("stats", "Allocator statistics", "\n".join(body))

    def metrics_section(self):
        run = self.run
        if not run.metrics:
            return
        body = ['<p>Extra figures some workloads report (latency percentiles and the like): each strategy at '
                'the largest size; every cell is in the folded table and in <a href="metrics.csv">metrics.csv</a>.</p>']
        order = {s: i for i, s in enumerate(run.strategies)}
        by = {}
        for r in run.metrics:
            by.setdefault((r["workload"], r["compiler"]), []).append(r)
        for (w, c), rows in sorted(by.items()):
            metrics = []
            for r in rows:
                if r["metric"] not in metrics:
                    metrics.append(r["metric"])
            cells = {}
            for r in rows:
                cells.setdefault((r["strategy"], r["size"], r["threads"], r["param"]), {})[r["metric"]] = r["value"]
            keys = sorted(cells, key=lambda k: (order.get(k[0], 999), k[0], results._numeric_key(k[1:])))
            largest = max((k[1:] for k in keys), key=results._numeric_key)
            top = [k for k in keys if k[1:] == largest]
            vals = "".join(f"<th>{esc(m)}</th>" for m in metrics)
            short = "".join(f'<tr><th class="row">{esc(k[0])}</th>'
                            + "".join(f'<td class="num">{fmt(cells[k].get(m))}</td>' for m in metrics)
                            + "</tr>" for k in top)
            full = "".join(f'<tr><th class="row">{esc(k[0])}</th><td class="num">{esc(k[1])}</td>'
                           f'<td class="num">{esc(k[2])}</td><td class="num">{esc(k[3])}</td>'
                           + "".join(f'<td class="num">{fmt(cells[k].get(m))}</td>' for m in metrics)
                           + "</tr>" for k in keys)
            where = ", ".join(f"{a} {v}" for a, v in zip(("size", "threads", "param"), largest) if v)
            body.append(f'<h3>{esc(w)} · {esc(c)} · {esc(where)}</h3><div class="scroll"><table class="metrics">'
                        f'<thead><tr><th>strategy</th>{vals}</tr></thead><tbody>{short}</tbody></table></div>'
                        f'<details><summary>every size</summary><div class="scroll"><table class="metrics">'
                        f'<thead><tr><th>strategy</th><th>size</th><th>threads</th><th>param</th>{vals}</tr>'
                        f'</thead><tbody>{full}</tbody></table></div></details>')
        self.section("metrics", "Scenario metrics", "\n".join(body))

    def failed_section(self):
        run = self.run
        bad = [r for r in run.summary if not run.ok(r)]
        if not bad:
            return
        bad.sort(key=run.skipped)  # failures first
        rows = "".join(f'<tr><td class="row">{esc(r["compiler"])}</td><td class="row">{esc(r["strategy"])}</td>'
                       f'<td class="row">{esc(r["workload"])}</td><td class="num">{esc(r["size"])}</td>'
                       f'<td class="num">{esc(r["threads"])}</td><td class="num">{esc(r["param"])}</td>'
                       f'<td>{"skipped" if run.skipped(r) else "failed"}</td>'
                       f'<td>{esc(r.get("reason") or "no reason given")}</td></tr>' for r in bad)
        title = "Failed and skipped cells" if any(run.skipped(r) for r in bad) else "Failed cells"
        self.section("failed", title, '<p>Failed: the process crashed, timed out or gave a wrong '
                     'checksum; their tables show "failed" and their plots leave the point out. Skipped: '
                     'the workload does not apply to the strategy (tables show "n/a").</p>'
                     '<div class="scroll"><table><thead><tr><th>compiler</th><th>strategy</th><th>workload</th>'
                     f'<th>size</th><th>threads</th><th>param</th><th>status</th><th>reason</th></tr></thead>'
                     f'<tbody>{rows}</tbody></table></div>')

    def method_section(self):
        m = self.run.meta

        def v(k, default="not recorded"):
            x = m.get(k)
            return esc(str(x)) if x not in (None, "") else f'<span class="muted">{default}</span>'
        timer = m.get("timer_resolution_ns", m.get("timer_resolution"))
        rounds = m.get("rounds") or 1
        spread = (f" The samples are split between {esc(str(rounds))} rounds: the runner passes over the whole "
                  "matrix that many times, each time in a new order, and each visit is a new process, so a "
                  "slow minute of a shared machine touches one round of a cell, not all of it."
                  if rounds > 1 else "")
        body = f"""
<ul>
<li><strong>Fresh processes.</strong> Every (strategy, workload, size) cell runs in a fresh process,
<code>am-cell-&lt;strategy&gt;</code>, so one strategy's heap state cannot leak into the next cell's timing.
Each strategy is its own executable; its allocation fast path is inlined into the containers.{spread}</li>
<li><strong>Calibration and warm-up.</strong> The cell repeats the workload until one sample lasts at least
{v("min_ms")} ms, runs a warm-up, then takes {v("samples")} samples in all; each sample's checksum is compared with
the workload's reference, so a strategy that corrupts data fails instead of looking fast.</li>
<li><strong>Median and interval.</strong> A cell's figure is the median time per operation over its samples;
its 95% confidence interval comes from bootstrap resampling of the samples. A ratio is the strategy's
median divided by the baseline's (<code>{esc(self.run.baseline)}</code>); it is called faster or slower only
when its 95% interval lies wholly below or above 1, and "not significant" otherwise.</li>
<li><strong>Order.</strong> Cells run in blocks, one block per table row (every strategy at one workload
and size), so that the strategies a ratio compares are measured within seconds of each other. Blocks,
and the cells inside each block, run in a shuffled order (seed {v("seed")}), new in every round, so drift
of a shared, noisy machine spreads over all strategies instead of favouring the first.</li>
<li><strong>Memory.</strong> Peak RSS is the measuring process's; allocator statistics come from a separate
counting build, so counting costs nothing in the timed build.</li>
<li>Quick run: {v("quick")} · timer resolution: {esc(str(timer)) + " ns" if timer is not None else '<span class="muted">not recorded</span>'}
· hardware counters: {v("hardware_counters", "no note")}</li>
</ul>"""
        self.section("method", "Methodology", body)

    def env_section(self):
        m = self.run.meta
        used = {"run_id", "date", "host", "cpu", "kernel", "compilers", "git", "git_revision", "seed",
                "command_line", "samples", "rounds", "min_ms", "baseline", "quick", "timer_resolution_ns",
                "timer_resolution", "hardware_counters", "malloc"}
        items = [("run", m.get("run_id") or self.run.run_id), ("date", m.get("date")), ("host", m.get("host")),
                 ("CPU", m.get("cpu")), ("kernel", m.get("kernel")),
                 ("git revision", m.get("git") or m.get("git_revision")), ("seed", m.get("seed")),
                 ("baseline", self.run.baseline), ("command line", m.get("command_line"))]
        malloc = m.get("malloc") or m.get("malloc_versions")
        used.add("malloc_versions")
        if isinstance(malloc, dict):
            items += [(f"{k} version", v) for k, v in malloc.items()]
        elif malloc:
            items.append(("malloc libraries", json.dumps(malloc)))
        for k in sorted(m):
            if k not in used:
                val = m[k]
                items.append((k, val if isinstance(val, (str, int, float)) else json.dumps(val)))
        dl = "".join(f"<dt>{esc(str(k))}</dt><dd>{esc(str(val)) if val not in (None, '') else '<span class=muted>not recorded</span>'}</dd>"
                     for k, val in items)
        body = [f'<dl class="kv">{dl}</dl>']
        comps = [c for c in (m.get("compilers") or []) if isinstance(c, dict)]
        if comps:
            rows = "".join(f'<tr><td class="row">{esc(str(c.get("name", "")))}</td><td><code>'
                           f'{esc(str(c.get("command", "")))}</code></td><td>{esc(str(c.get("version", "")))}</td>'
                           f'<td><code>{esc(str(c.get("flags", "")))}</code></td></tr>' for c in comps)
            body.append('<h3>Compilers</h3><div class="scroll"><table><thead><tr><th>name</th><th>command</th>'
                        f'<th>version</th><th>flags</th></tr></thead><tbody>{rows}</tbody></table></div>')
        if not m:
            body = ['<p class="muted">meta.json is missing or unreadable: the environment is unknown.</p>']
        self.section("env", "Environment", "\n".join(body))

    def files_section(self):
        run = self.run
        rows = []
        for name in run.files:
            p = run.path(name)
            if name.startswith(".") or name.endswith(".tmp") or name == "report.html":
                continue
            if os.path.isdir(p):
                n = sum(len(fs) for _, _, fs in os.walk(p))
                rows.append(f'<li><a href="{esc(name)}/">{esc(name)}/</a> <span class="muted">{n} files</span></li>')
            else:
                rows.append(f'<li><a href="{esc(name)}">{esc(name)}</a> <span class="muted">'
                            f'{fmt_int(os.path.getsize(p))} bytes</span></li>')
        body = ('<p>The files this page was made from, next to it in the results folder (links are '
                f'relative).</p><ul>{"".join(rows)}</ul>' if rows else '<p class="muted">The folder is empty.</p>')
        self.section("files", "Raw data", body)

    # ---- whole page ----
    def render(self):
        run = self.run
        groups = run.groups()
        self.summary_section(groups)
        self.workload_sections(groups)
        self.compilers_section(groups)
        self.hyperfine_section()
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
    tmp = out + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(page)
    os.replace(tmp, out)
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
