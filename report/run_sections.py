"""run_sections.py: the sections of the report about the run rather than its
results: problems with the folder, hyperfine's whole-process timings, the
method, the environment (meta.json) and the raw files."""
import json
import os

from report.pieces import esc, fmt, fmt_int, fmt_ratio
from runfolder import preload
from runfolder.errors import RunError


class RunSections:
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


    def preload_section(self):
        """make preload: the program itself under each malloc library, beside
        the replay of its trace among the same libraries"""
        run = self.run
        try:
            found = preload.read_all(run.folder)
        except (OSError, RunError) as e:
            run.problem("preload", str(e))
            return
        if not found:
            return
        compiler = preload.first_compiler(run.meta, run.compilers[0] if run.compilers else "")
        body = ['<p>The program itself, run under each malloc library (<code>LD_PRELOAD</code>) by '
                '<code>make preload</code>, in rounds that run it once under every library in a shuffled '
                'order: its own times beside its replay\'s ratios among the same libraries, the check of '
                'the replay where one can be made.</p>']
        for p in found:
            replay = preload.replay_ratios(run.ratios, p.trace, compiler, run.summary) if p.trace else {}
            lines, verdict = preload.compare(p, replay)
            rows = [f'<tr><td><code>{esc(x.row)}</code></td><td class="num">{fmt(x.seconds * 1000)}</td>'
                    f'<td class="num">{preload.ratio_text(x.ratio)}</td><td>{"yes" if x.in_group else ""}</td>'
                    f'<td class="num">{fmt_ratio(x.replay) if x.replay is not None else "—"}</td></tr>'
                    for x in lines]
            body.append(f'<h3>{esc(p.name)}</h3><p><code>{esc(preload.command_text(p))}</code>, {p.rounds} '
                        f'rounds{", against " + esc(p.trace) + " (" + esc(compiler) + ")" if p.trace else ""}.</p>'
                        '<div class="scroll"><table><thead><tr><th>library</th><th>median (ms)</th>'
                        '<th>ratio to system [95%]</th><th>fastest group</th><th>replay ratio</th></tr></thead>'
                        f'<tbody>{"".join(rows)}</tbody></table></div>'
                        f'<p>{esc(preload.verdict_text(p, verdict))}</p>')
        self.section("preload", "The program itself under each malloc library", "\n".join(body))

    def method_section(self):
        m = self.run.meta

        def v(k, default="not recorded"):
            x = m.get(k)
            return esc(str(x)) if x not in (None, "") else f'<span class="muted">{default}</span>'
        timer = m.get("timer_resolution_ns", m.get("timer_resolution"))
        rounds = m.get("rounds") or 1
        statistics = m.get("statistics") or {}
        margin = f"{100 * statistics.get('margin', 0.02):g}%"
        width = f"{100 * statistics.get('unstable_width', 0.10):g}%"
        revisits = m.get("revisits") or {}
        v_revisits = esc(str(revisits.get("limit", "no")))
        late = revisits.get("blocks_left_for_time")
        v_budget = ""
        budget = revisits.get("budget_s")
        if isinstance(budget, (int, float)) and budget > 0:
            v_budget = f" and the run's time budget of {budget:g} s"
            if isinstance(late, int) and late > 0:
                v_budget += f", which left {fmt_int(late)} blocks without one"
        cells = m.get("cells") or {}
        unstable = (f"This run: {fmt_int(cells['unstable'])} of {fmt_int(cells.get('ok', 0))} cells unstable."
                    if cells.get("unstable") is not None else "")
        control = self.control_text()
        more = m.get("baseline_samples")
        baseline_more = (f" (the baseline {esc(str(more))}: every ratio of a block goes through its visits)"
                         if more and more != m.get("samples") else "")
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
{v("min_ms")} ms, runs a warm-up, then takes {v("samples")} samples in all{baseline_more}; each sample's checksum is compared with
the workload's oracle (the same computation without the allocator), so a strategy that corrupts data fails instead of looking fast.</li>
<li><strong>Median and interval.</strong> A process is one observation of a cell, however many samples it
takes: a cell's figure is the median over its visits of each visit's median time per operation, and its 95%
interval comes from the order statistics of those visit medians (the sign test's, interpolated), so it holds
the spread between processes, not only the spread inside one. A ratio to the baseline
(<code>{esc(self.run.baseline)}</code>) pairs the two cells' visits made in the same round, a few seconds
apart in one block, each visit read against the partner row timed beside it in its process, sample by
sample: its estimate is the median of the paired log ratios and its 95% interval their sign test's,
as for a cell. It is marked faster or slower only when that interval lies wholly below or above 1
<em>and</em> the ratio is at least {esc(margin)} away from 1; fewer than 6 paired visits mark nothing.</li>
<li><strong>Undecided ratios.</strong> A ratio whose 95% interval is too wide to say whether it is at least
{esc(margin)} from 1 or within it is undecided (<code>?</code>): its block was visited again (up to
{v_revisits} more times, within a quarter of the run's visits{v_budget}) and it stayed so. A cell's own spread from
process to process is shown, not marked: a finding about its row on this machine (a cell interval wider
than {esc(width)}: <code>unstable</code> in <code>summary.csv</code>).
{unstable}</li>
<li><strong>A/A control.</strong> {control}</li>
<li><strong>Order.</strong> Cells run in blocks, one block per line of a table (every strategy at one workload
and size), so that the strategies a ratio compares are measured within seconds of each other. Blocks,
and the cells inside each block, run in a shuffled order (seed {v("seed")}), new in every round, so drift
of a shared, noisy machine spreads over all strategies instead of favouring the first.</li>
<li><strong>Memory.</strong> Peak RSS is the measuring process's; allocator statistics come from a separate
counting build, so counting costs nothing in the timed build.</li>
<li>Quick run: {v("quick")} · timer resolution: {esc(str(timer)) + " ns" if timer is not None else '<span class="muted">not recorded</span>'}
· hardware counters: {v("hardware_counters", "no note")}</li>
</ul>"""
        self.section("method", "Methodology", body)

    def control_text(self):
        """How often the A/A control row was marked against the row it is a second build of."""
        c = self.run.meta.get("control") or {}
        if not c.get("row"):
            return ("This run had no A/A control row (a second, separately linked build of the baseline run in "
                    "every block): its false-alarm rate is not known.")
        mine = [r for r in self.run.data.ratios if r.get("strategy") == c["row"] and r.get("baseline") == c["twin"]]
        marked = sum(bool(r.get("significant")) for r in mine)
        return (f"<code>{esc(c['row'])}</code> is <code>{esc(c['twin'])}</code> compiled and linked again as its "
                f"own executable, run in every block: any ratio of it to <code>{esc(c['twin'])}</code> marked as a "
                f"difference is a false alarm of the suite. This run: {fmt_int(marked)} of {fmt_int(len(mine))} "
                f"marked" + (f" ({100.0 * marked / len(mine):.1f}%; the goal is at most 5%)." if mine else "."))

    def env_section(self):
        m = self.run.meta
        # the runner's keys (cpu_model, git_revision, libraries), and the
        # shorter ones of folders written before them
        used = {"run_id", "date", "host", "cpu", "cpu_model", "kernel", "compilers", "git", "git_revision", "seed",
                "command_line", "baseline", "malloc", "malloc_versions", "libraries"}
        items = [("run", m.get("run_id") or self.run.run_id), ("date", m.get("date")), ("host", m.get("host")),
                 ("CPU", m.get("cpu_model") or m.get("cpu")), ("kernel", m.get("kernel")),
                 ("git revision", m.get("git_revision") or m.get("git")), ("seed", m.get("seed")),
                 ("baseline", self.run.baseline), ("command line", m.get("command_line"))]
        malloc = m.get("libraries") or m.get("malloc") or m.get("malloc_versions")
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
