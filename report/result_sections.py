"""result_sections.py: the sections of the report that show results: the
summary, each workload's plots and table, the compiler comparison, the
allocator statistics, the scenario metrics and the failed cells."""
from report import results
from report.pieces import esc, fmt, fmt_int, fmt_ratio, slug
from runfolder.aggregate import GROUP_RULE
from runfolder.schema import MEDIAN, fmt as fmt_key


class ResultSections:
    def summary_section(self, groups):
        run = self.run
        if not groups:
            self.section("summary", "Summary", '<p class="muted">No timing results to summarise '
                         '(summary.csv is missing or has no usable lines).</p>')
            return
        base = run.baseline
        has_system = any(r["strategy"] == "system" for r in run.summary)
        two = has_system and base != "system"
        bounds = [b for b in sorted(results.FLOOR_ROWS) if b in run.strategies]
        control = (run.meta.get("control") or {}).get("row")  # the A/A control is no one's choice
        head = ["workload", "compiler", "at", "fastest group", "ns/op (fastest)"]
        head.append("vs system" + ("" if two or not has_system else " (baseline)") if has_system else f"vs {base}")
        if two:
            head.append(f"vs {base} (baseline)")
        head += [f"{b} ns/op (floor)" for b in bounds]
        rows = []
        for g in groups:
            x = g.largest_x()
            cands = [g.cell[(s, x)] for s in g.strategies
                     if (s, x) in g.cell and run.ok(g.cell[(s, x)]) and s not in results.FLOOR_ROWS
                     and s != control]
            name = g.workload + (f" ({g.label})" if g.label else "")
            link = f'<a href="#w-{esc(slug(g.workload))}">{esc(name)}</a>'
            if not cands:
                rows.append(f'<tr><td class="row">{link}</td><td>{esc(g.compiler)}</td><td class="num">'
                            f'{esc(g.axis)} {esc(x)}</td><td class="failed" colspan="{len(head) - 3}">'
                            f'no strategy measured</td></tr>')
                continue
            members = run.fastest_group(g, x)
            measured = sum(run.ok(g.cell.get((s, x))) for s in g.strategies)
            best = g.cell[(members[0], x)] if members else min(cands, key=lambda r: r[MEDIAN])
            attrs = f' data-workload="{esc(g.workload)}"'
            named = (f'{esc(", ".join(members))} <span class="muted">({len(members)} of {measured})</span>'
                     if members else esc(best["strategy"]))
            cells = [f'<td class="row">{link}</td>', f"<td>{esc(g.compiler)}</td>",
                     f'<td class="num">{esc(g.axis)} {esc(x)}</td>',
                     f'<td class="row best group"{attrs}>{named}</td>',
                     f'<td class="num">{fmt(best[MEDIAN])}</td>']
            cells.append(self.ratio_cell(best, "system" if has_system else base))
            if two:
                cells.append(self.ratio_cell(best, base))
            for b in bounds:
                row = g.cell.get((b, x))
                cells.append(f'<td class="num">{fmt(row[MEDIAN]) if run.ok(row) else "—"}</td>')
            rows.append("<tr>" + "".join(cells) + "</tr>")
        nfail = sum(1 for r in run.summary if not run.ok(r) and not run.skipped(r))
        nskip = sum(1 for r in run.summary if run.skipped(r))
        failed = (f'<p><strong>{nfail} cell{"s" if nfail != 1 else ""} failed</strong> — see '
                  f'<a href="#failed">failed cells</a>.</p>') if nfail else ""
        if nskip:
            failed += (f'<p>{nskip} cell{"s" if nskip != 1 else ""} skipped: the workload does not apply to '
                       f'that strategy (<a href="#failed">why</a>).</p>')
        body = (f'<p>For each workload, at the largest size measured, {esc(GROUP_RULE)} (as each block\'s forest '
                f'plot and tables.txt mark it), and the fastest one\'s median time per operation relative to '
                f'<code>system</code> and to the baseline (<code>{esc(base)}</code>). The medians alone would '
                f'name one winner where the run cannot tell several apart.' +
                (f' Floor rows ({esc(", ".join(bounds))}: the least allocator work, not a bound of time) '
                 f'are also shown apart.' if bounds else "") +
                f'</p>{self.legend()}<div class="scroll"><table id="summary-table">'
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
                    body.append(self.figures(pl, g.largest_x()))
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
                    vals = [gs_row[MEDIAN] if run.ok(gs_row) else None
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


    def stats_section(self, groups):
        run = self.run
        cols = [("bytes_requested", "bytes requested"), ("bytes_peak", "peak bytes in use"),
                ("reserved_peak", "reserved at peak"), ("overhead_pct", "overhead"),
                ("allocs", "allocations"), ("frees", "frees"), ("peak_rss_bytes", "peak RSS"),
                ("minor_faults_per_op", "minor faults / op"), ("major_faults_per_op", "major faults / op")]
        body = ['<p>Counted by the <code>-stats</code> build of each strategy (one repetition, '
                '<code>AM_STATS=1</code>), in the manner of BDE\'s counting allocator: bytes requested in '
                'total, the peak of bytes in use, what the strategy had reserved from the system at its '
                'peak, the overhead that implies, and the number of allocations and frees. Peak RSS is the '
                'measuring process\'s; the page faults per operation are the measured samples\' (a '
                '<code>getrusage</code> delta around each): a strategy that gives memory back and takes it '
                'again (glibc\'s trimming, a chunk freed and mapped anew) pays faults the others do not. '
                'Largest size of each workload.</p>']
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
                    elif c.endswith("_faults_per_op"):
                        text = f"{v:.3g}"
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
            keys = sorted(cells, key=lambda k: (order.get(k[0], 999), k[0], k[1:]))
            largest = max(k[1:] for k in keys)
            top = [k for k in keys if k[1:] == largest]
            vals = "".join(f"<th>{esc(m)}</th>" for m in metrics)
            short = "".join(f'<tr><th class="row">{esc(k[0])}</th>'
                            + "".join(f'<td class="num">{fmt(cells[k].get(m))}</td>' for m in metrics)
                            + "</tr>" for k in top)
            full = "".join(f'<tr><th class="row">{esc(k[0])}</th><td class="num">{fmt_key(k[1])}</td>'
                           f'<td class="num">{fmt_key(k[2])}</td><td class="num">{fmt_key(k[3])}</td>'
                           + "".join(f'<td class="num">{fmt(cells[k].get(m))}</td>' for m in metrics)
                           + "</tr>" for k in keys)
            where = ", ".join(f"{a} {fmt_key(v)}" for a, v in zip(results.AXES, largest))
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
                       f'<td class="row">{esc(r["workload"])}</td><td class="num">{fmt_key(r["size"])}</td>'
                       f'<td class="num">{fmt_key(r["threads"])}</td><td class="num">{fmt_key(r["param"])}</td>'
                       f'<td>{"skipped" if run.skipped(r) else "failed"}</td>'
                       f'<td>{esc(r.get("reason") or "no reason given")}</td></tr>' for r in bad)
        title = "Failed and skipped cells" if any(run.skipped(r) for r in bad) else "Failed cells"
        self.section("failed", title, '<p>Failed: the process crashed, timed out or gave a wrong '
                     'checksum; their tables show "failed" and their plots leave the point out. Skipped: '
                     'the workload does not apply to the strategy (tables show "n/a").</p>'
                     '<div class="scroll"><table><thead><tr><th>compiler</th><th>strategy</th><th>workload</th>'
                     f'<th>size</th><th>threads</th><th>param</th><th>status</th><th>reason</th></tr></thead>'
                     f'<tbody>{rows}</tbody></table></div>')

