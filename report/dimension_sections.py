"""dimension_sections.py: the report's section on the dimensions of
allocation (report/dimensions.py says which workloads measure which): one
part per dimension with its plot, its findings, and the study's figure to set
them against; then the run-time binding (@virtual rows against their own
inlined rows). Shown when the run measured any of those workloads."""
from report import dimensions
from report.pieces import esc, fmt, slug
from runfolder.schema import fmt as fmt_key


def _times(v):
    return f"{v:.2f}×" if v is not None else "—"


def _members(groups, point):
    group = groups.get(point)
    return group.members if group else []


def _tied(f, group):
    return esc(", ".join(dimensions.tied(f["winner"], group))) or "—"


def dimension_picture(plots):
    """The plot a dimension opens with, of its first workload: the forest at
    its largest size or param (ranked, the fastest group in green), else its
    plot over sizes. A plot over sizes draws every row of the run as a line (41
    in a dimensions run with the @virtual twins) and reads poorly."""
    def at(p):
        try:
            return float(p.get("x"))
        except (TypeError, ValueError):
            return float("-inf")
    forests = sorted((p for p in plots if p["kind"] == "forest"), key=at)
    return forests[-1:] or [p for p in plots if p["kind"] in ("ratio", "time")][:1]


class DimensionSections:
    def dimension_section(self):
        run = self.run
        facts = run.meta.get("workload_facts")
        lines = dimensions.findings(run.summary, facts)
        groups = run.fastest_groups()
        drops = dimensions.drop_against_destroy(run.summary)
        virtual = dimensions.virtual_against_inline(run.summary)
        if not lines and not virtual:
            return
        body = ['<p>Each dimension of allocation the run measured: for each point, the fastest strategy a '
                'program could use (not <code>minimal</code>, the A/A control or a <code>@virtual</code> row), its '
                'time per operation, and how it and <code>monotonic</code> compare with <code>system</code> '
                '(the malloc under global new/delete; below 1: faster). The study\'s figure is relative to '
                'global new/delete at 100. Medians of <a href="summary.csv">summary.csv</a>; the intervals are in '
                'each workload\'s section. <em>tied</em>: the strategies the run cannot tell apart from the '
                'fastest (the point\'s fastest group, green in its forest plot), fastest first: where there are '
                'any, the fastest is no winner.</p>']
        children = []
        for dim, workloads, study in dimensions.dimensions(facts):
            mine = [f for f in lines if f["dimension"] == dim]
            if not mine:
                continue
            did = "d-" + slug(dim)
            children.append((did, dim))
            body.append(f'<h3 id="{esc(did)}">{esc(dim)}</h3><p class="muted">The study: {esc(study)}.</p>')
            compiler = mine[0]["point"][0]
            pl = self.plots_by.get((workloads[0], compiler, ""), [])
            if pl:
                body.append(self.figures(dimension_picture(pl), inline=("ratio", "time", "forest")))
            rows = "".join(
                f'<tr><td class="row"><a href="#w-{esc(slug(f["point"][1]))}">'
                f'{esc(dimensions.point_text(f["point"], fmt_key))}</a></td><td>{esc(f["point"][0])}</td>'
                f'<td class="row best">{esc(f["winner"])}</td><td class="num">{fmt(f["median"])}</td>'
                f'<td class="num">{_times(f["winner_vs_system"])}</td>'
                f'<td class="num">{_times(f["monotonic_vs_system"])}</td>'
                f'<td class="row group">{_tied(f, _members(groups, f["point"]))}</td></tr>' for f in mine)
            body.append('<div class="scroll"><table><thead><tr><th>point</th><th>compiler</th><th>fastest</th>'
                        '<th>ns/op</th><th>fastest / system</th><th>monotonic / system</th><th>tied</th></tr></thead>'
                        f'<tbody>{rows}</tbody></table></div>')
            if dim == "wink-out":
                body.append(self._drop_table(drops))
        if virtual:
            children.append(("d-binding", "run-time binding"))
            body.append('<h3 id="d-binding">run-time binding</h3><p class="muted">The study: a virtual '
                        'allocator interface cost up to 2-4.8x the compile-time-bound allocator on nested '
                        'containers with one compiler, under 1.9x with another. Here: each '
                        '<code>&lt;row&gt;@virtual</code> over its own row, the same strategy reached through a '
                        'table of function pointers.</p>')
            body.append(self._virtual_table(virtual))
        self.section("dimensions", "Dimensions of allocation", "\n".join(body), children)

    def _drop_table(self, drops):
        if not drops:
            return ""
        strategies = sorted({s for v in drops.values() for s in v})
        head = "".join(f"<th>{esc(s)}</th>" for s in strategies)
        rows = "".join(
            f'<tr><td class="row">{esc(w)} {esc(fmt_key(size))}</td><td>{esc(cc)}</td>'
            + "".join(f'<td class="num">{_times(v.get(s))}</td>' for s in strategies) + "</tr>"
            for (cc, w, size), v in sorted(drops.items()))
        return ('<p>Drop over destroy, per strategy (the same containers; below 1: dropping the heap is '
                f'cheaper):</p><div class="scroll"><table><thead><tr><th>point</th><th>compiler</th>{head}'
                f'</tr></thead><tbody>{rows}</tbody></table></div>')

    def _virtual_table(self, virtual):
        strategies = sorted({s for v in virtual.values() for s in v})
        head = "".join(f"<th>{esc(s)}</th>" for s in strategies)
        rows = "".join(
            f'<tr><td class="row">{esc(dimensions.point_text(p, fmt_key))}</td><td>{esc(p[0])}</td>'
            + "".join(f'<td class="num">{_times(v.get(s))}</td>' for s in strategies) + "</tr>"
            for p, v in sorted(virtual.items()))
        return (f'<div class="scroll"><table><thead><tr><th>point</th><th>compiler</th>{head}</tr></thead>'
                f'<tbody>{rows}</tbody></table></div>')
