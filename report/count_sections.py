"""count_sections.py: the report's Counts section, from counts.csv (make
count into the run's folder): each cell's instructions, simulated cache
misses and estimated cycles per operation with their ratio to the baseline,
the cells whose time ratio and count ratio point in opposite directions, and
each C model beside the library it imitates."""
from report.pieces import esc
from runfolder import count_tables, rundir
from runfolder.errors import UsageError


class CountSections:
    def counts_section(self):
        run = self.run
        if "counts.csv" not in run.files:
            return
        try:
            meta, entries = rundir.read_counts(run.folder)
        except UsageError as e:
            self.section("counts", "Counts", f"<p>{esc(str(e))}</p>")
            return
        head = ["block", "strategy"] + [h for _, h in count_tables.FIGURES] + ["× base (est cycles)"]
        rows = count_tables.rows(sorted(entries, key=lambda e: (e["compiler"], e["workload"], e["size"],
                                                                e["param"], e["strategy"])), meta.get("baseline"))
        table = _table(head, rows)
        margin = (run.meta.get("statistics") or {}).get("margin") or 0.02
        found = count_tables.disagreements(entries, run.ratios, margin)
        if found:
            items = "".join(f"<li>{esc(c)}: time × {t:.3f}, counts × {k:.3f}</li>" for c, t, k in found)
            split = (f"<p>Where the time ratio (marked as a difference) and the count ratio (beyond "
                     f"{100 * count_tables.COUNT_MARGIN:g}%) point in opposite directions: the machine differs "
                     f"from the model there (TLB, prefetchers, page faults, branch predictors), and the verdict "
                     f"rests on the time alone.</p><ul>{items}</ul>")
        else:
            split = "<p>No cell's time ratio and count ratio point in opposite directions beyond their margins.</p>"
        pairs = count_tables.fidelity_rows(entries)
        if pairs:
            split += ("<h3>Model against library</h3><p>Each C model's figures per operation beside the library it "
                      f"imitates, in the same block; \u201coff\u201d where the model's instructions are more than "
                      f"{100 * count_tables.FIDELITY_MARGIN:g}% from the library's.</p>" + _table(
                          count_tables.fidelity_head(), pairs))
        self.section("counts", "Counts", f"<p>{esc(count_tables.legend(meta))}</p>\n{table}\n{split}")


def _table(head, rows):
    return ("<table><thead><tr>" + "".join(f"<th>{esc(h)}</th>" for h in head) + "</tr></thead><tbody>" +
            "".join("<tr>" + "".join(f"<td>{esc(str(v))}</td>" for v in r) + "</tr>" for r in rows) +
            "</tbody></table>")
