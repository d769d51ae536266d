"""pieces.py: the report's small parts: number formats for the page, a
strategy's time and ratio cells, a group's table, inlined plots, a file shown
as a table. Used by the sections (result_sections.py, run_sections.py)."""
import csv
import html
import io
import os
import re

from report import results
from runfolder import schema, yardstick

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



class Pieces:
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
        # gnuplot leaves empty groups and indentation: dropped, the page is smaller
        while True:
            lean = re.sub(r"<g\b[^>]*>\s*</g>", "", text)
            if lean == text:
                break
            text = lean
        text = re.sub(r"\n\s+", "\n", text)
        return text.strip()

    # plots drawn inside the page: the forest at the size a group is summed up
    # by; the others (the forest at other sizes, lines over sizes, bars, memory,
    # compilers) are links to their files, so a default run's page stays under 3 MB
    INLINE = ("forest",)

    def figures(self, plots_list, at=None, inline=None):
        """The plots of a group: inline those of `inline` (default INLINE; a
        forest only at `at`, the size the group is summed up by), the rest as
        links to their files."""
        inline_kinds = inline or self.INLINE
        order = {"forest": -1, "time": 0, "ratio": 1, "bars": 2, "rss": 3, "overhead": 4, "compilers": 5}
        out = ['<div class="figs">']
        links = []
        for p in sorted(plots_list, key=lambda p: order.get(p["kind"], 9)):
            inline = p["kind"] in inline_kinds and (p["kind"] != "forest" or at is None or p.get("x") == at)
            if not inline:
                name = p["kind"] + (f' at {p["x"]}' if p.get("x") else "")
                links.append(f'{esc(name)} (<a href="{esc(p["png"])}">PNG</a>, <a href="{esc(p["svg"])}">SVG</a>)')
                continue
            svg = self.inline_svg(p["svg"], p.get("title") or p.get("caption", p["kind"]))
            wide = " wide" if p["kind"] in ("bars", "forest") else ""
            out.append(f'<figure class="plot{wide}" data-kind="{esc(p["kind"])}">{svg}<figcaption>'
                       f'{esc(p.get("caption", ""))} · <a href="{esc(p["png"])}">PNG</a> · '
                       f'<a href="{esc(p["svg"])}">SVG</a> · <a href="{esc(p["data"])}">data</a>'
                       f'</figcaption></figure>')
        out.append("</div>")
        if links:
            out.append('<p class="muted plots">More plots, as files: ' + " · ".join(links) + "</p>")
        return "\n".join(out)

    def ratio_cell(self, row, against=None, attrs="", tip=True):
        """A coloured table cell: ratio, its interval, and a glyph that survives black and white;
        tip: a title that names the two rows (a block's table, whose rows and baseline
        its header names, leaves it out: a default run's report is megabytes of them)."""
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
            cls, mark, note = "same", "≈ ", "no difference shown"
        interval = f"<small>{fmt_ratio(lo)}–{fmt_ratio(hi)}</small>" if lo is not None and hi is not None else ""
        entry = (run.ratio_of.get(schema.key_of(row)) or {}) if against == run.baseline else {}
        unstable, moved = entry.get("unstable"), yardstick.partner_moved(entry)
        text = f"{row['strategy']} / {against}: {note}" + ("; unstable: its interval is too wide" if unstable else "")
        title = f' title="{esc(text, quote=True)}"' if tip else ""
        flag = ("?" if unstable else "") + (yardstick.FROM_TIMES if moved else "")
        return (f'<td class="ratio {cls}"{title}{attrs}>{mark}'
                f'<span class="r">{fmt_ratio(ratio)}×{flag}</span>{interval}</td>')

    def time_cell(self, row, attrs="", base=None):
        """base: the baseline's row of the same block, whose time a time far from
        its ratio (yardstick.time_apart) is marked against"""
        if row is None:
            return f'<td class="num missing"{attrs}>—</td>'
        if not self.run.ok(row):
            return ""
        entry = (self.run.ratio_of.get(schema.key_of(row)) or {}) if base is not None and base is not row else {}
        off = yardstick.time_apart(entry, row[schema.MEDIAN], base[schema.MEDIAN]) if entry else None
        lo, hi = self.run.ci_per_op(row)
        tip = f"95% interval {fmt(lo)}–{fmt(hi)} ns" if lo is not None else "no interval"
        if row.get("cv") is not None:
            tip += f"; cv {row['cv'] * 100:.1f}%"
        if row.get("samples") is not None:
            tip += f"; {fmt_int(row['samples'])} samples"
        if row.get("visits") is not None:
            tip += f" in {fmt_int(row['visits'])} visits"
        if off:
            shift = entry.get("partner_shift")
            tip += (f"; {yardstick.APART} this time over {self.run.baseline}'s is {off:.2f}x the ratio"
                    + (f", and the partner beside it ran {shift:.2f}x its time beside {self.run.baseline}'s" if shift
                       else "") + ": " + yardstick.apart_reason(off, shift, self.run.baseline))
        # a cell's own spread from process to process is shown (the interval), not marked
        return (f'<td class="num t" title="{esc(tip, quote=True)}"{attrs}>{fmt(row[schema.MEDIAN])}'
                f'{yardstick.APART if off else ""}</td>')

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
                base = g.cell.get((run.baseline, x))
                cells.append(self.time_cell(row, attrs, base if run.ok(base) else None))
                cells.append(self.ratio_cell(row, attrs=attrs, tip=False))
            tag = ' <span class="pill">floor</span>' if s in results.FLOOR_ROWS else ""
            rows.append(f'<tr><th class="row" scope="row">{esc(s)}{tag}</th>{"".join(cells)}</tr>')
        notes = []
        for x in xs:
            entries = [run.ratio_of.get(schema.key_of(g.cell[(s, x)])) for s in g.strategies if g.cell.get((s, x))]
            note = yardstick.partner_note([e for e in entries if e])
            if note:
                notes.append(f'<p class="note">{esc(g.axis)} {esc(x)}: {esc(note)}.</p>')
        return (f'<div class="scroll"><table class="results" id="t-{esc(g.slug())}">'
                f'<caption>Median time per operation (ns) and ratio to {esc(run.baseline)}, with the ratio\'s 95% '
                f'interval. Hover a time for its interval.</caption>'
                f'<thead><tr><th rowspan="2">strategy</th>{head1}</tr><tr>{head2}</tr></thead>'
                f'<tbody>{"".join(rows)}</tbody></table></div>' + "".join(notes))

    def legend(self):
        margin = f"{100 * (self.run.meta.get('statistics') or {}).get('margin', 0.02):g}%"
        return ('<div class="legend"><span><span class="key faster">▼ 0.50×</span>faster than the baseline '
                f'(interval below 1, and more than {margin} off)</span><span><span class="key slower">▲ 2.00×'
                f'</span>slower (interval above 1, and more than {margin} off)</span><span><span class="key same">'
                f'≈ 1.01×</span>no difference shown (interval holds 1, or within {margin} of 1)</span>'
                '<span>? undecided: the interval is too wide to say whether the ratio is more than '
                f'{margin} off or within it</span>'
                f'<span>{yardstick.FROM_TIMES} {yardstick.MOVED}: the partner\'s own time beside this row differed '
                'from beside the baseline, so the ratio is from the two rows\' times, not through the partner</span>'
                f'<span>{yardstick.APART} after a time: over the baseline\'s time it reads more than '
                f'{100 * yardstick.TIME_APART:g}% from the ratio (hover it for the partner\'s own and which to '
                'read): where the partner beside the row ran as much off, the host ran those processes so and the '
                'ratio, paired, leaves it out</span>'
                '<span><i>italic</i>: baseline, or no interval available</span></div>')


    # a file of the run larger than this is a link, not a table: the
    # cross-compiler CSV of a default run alone would add 0.9 MB to the page
    INLINE_FILE_BYTES = 100_000

    def file_block(self, name):
        """A CSV file as a table, anything else as preformatted text; a large
        one as a link to the file beside the page."""
        try:
            size = os.path.getsize(self.run.path(name))
        except OSError:
            size = 0
        if size > self.INLINE_FILE_BYTES:
            return (f'<p><a href="{esc(name)}">{esc(name)}</a> ({size / 1e6:.1f} MB, too large to show '
                    f'here: open it beside this page)</p>')
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
