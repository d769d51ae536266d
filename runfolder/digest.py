"""digest.py: what a run says at its end on the terminal, in a few lines: the
fastest group of each workload (at one block of it), what to distrust (the
A/A control, the undecided ratios) and where the full tables are. The tables
themselves go to the run folder (tables.txt, tables.md)."""
import textwrap

from runfolder import tables

MAX_WIDTH = tables.WIDTH


def _shown_block(blocks):
    """The block a workload is summed up by: its largest size, then the fewest
    threads, then the lowest param."""
    return max(blocks, key=lambda b: (b[2], -b[3], -b[4]))


def _fit(text, names):
    """text followed by the names, as many as fit in MAX_WIDTH, then "+N"."""
    out = text
    for i, name in enumerate(names):
        rest = len(names) - i - 1
        piece = (", " if i else "") + name
        tail = f" +{rest}" if rest else ""
        if len(out) + len(piece) + len(tail) > MAX_WIDTH:
            return out + f" +{len(names) - i}"
        out += piece
    return out


def group_lines(done, groups):
    """A line per (compiler, workload): its shown block and that block's fastest group."""
    blocks, counts = {}, {}
    for m in done:
        c = m.cell
        blocks.setdefault((c.compiler, c.workload), set())
        point = (c.compiler, c.workload, c.size, c.threads, c.param)
        counts[point] = counts.get(point, 0) + (m.status == "ok")
        if point in groups:
            blocks[(c.compiler, c.workload)].add(point)
    multi = len({k[0] for k in blocks}) > 1
    out = []
    for (compiler, workload), points in blocks.items():
        if not points:
            out.append(f"  {compiler + ' ' if multi else ''}{workload}: no cell finished")
            continue
        b = _shown_block(points)
        g = groups[b]
        head = (f"  {compiler + ' ' if multi else ''}{workload} {b[2]}{tables.variant_suffix(b[3], b[4])}: "
                f"{len(g.members)} of {counts[b]}: ")
        out.append(_fit(head, g.members))
    return out


def digest(done, groups, head, out_dir):
    """The closing lines of a run. done: Measurements in table order; groups:
    aggregate.fastest_groups; head: the tables' head lines (the A/A control,
    the undecided ratios)."""
    lines = ["Fastest group per workload (the fastest, and those not marked as different from it):"]
    lines += group_lines(done, groups)
    lines.append("To distrust:")
    lines += [textwrap.fill(line, MAX_WIDTH, initial_indent="  ", subsequent_indent="    ") for line in head]
    lines.append(f"Every block's table: {out_dir}/tables.txt (tables.md; matrix.csv for spreadsheets)")
    return "\n".join(lines)
