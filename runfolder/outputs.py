"""outputs.py: the files of a run folder. The measured data (samples.csv,
metrics.csv, meta.json) and what is derived from it (summary.csv, ratios.csv,
groups.csv, tables.txt, tables.md, matrix.csv); every file written to a
temporary name and renamed, so a reader or a full disk never sees half a file. It computes nothing: the
figures come from aggregate.py, the tables from tables.py."""
import json
import os
import shutil
import sys
import tempfile
import textwrap

from runfolder import aggregate, digest, schema, tables, workload_tables
from runfolder.schema import SAMPLE_COLS, SUMMARY_COLS, RATIO_COLS, METRIC_COLS

def write_atomic(path, text, staged=None):
    """A failed write (full disk, Ctrl-C) leaves the previous file whole and no
    .tmp. With staged (a list), the file is left under its temporary name and
    added to the list, for write_all to rename with the others."""
    tmp = path + ".tmp"
    try:
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(text)
        if staged is None:
            os.replace(tmp, path)
        else:
            staged.append((tmp, path))
    except BaseException:
        try:
            os.remove(tmp)
        except OSError:
            pass
        raise


def current_block(text, begin, end_line):
    """The block of a file's text (a table the README holds between two marker
    lines), from begin to the end of end_line's line, or None."""
    start, end = text.find(begin), text.find(end_line)
    if start < 0 or end < start:
        return None
    return text[start:text.index("\n", end) + 1 if "\n" in text[end:] else len(text)]


def replace_block(text, block, begin, end_line):
    """text with its block replaced by block; ValueError when it has none."""
    old = current_block(text, begin, end_line)
    if old is None:
        raise ValueError(f"no lines '{begin}' ... '{end_line}'")
    return text.replace(old, block, 1)


def table_order(measurements, order):
    """The cells done, in the files' order: compiler, workload, threads, param,
    size, then the strategies' order."""
    def place(m):
        c = m.cell
        return (c.compiler, c.workload, c.threads, c.param, c.size,
                order.index(c.strategy) if c.strategy in order else len(order))
    return sorted((m for m in measurements if m.status != "pending"), key=place)


def summary_entry(m):
    """A cell's summary.csv line as a dict of typed values."""
    entry = dict(zip(schema.KEY, m.cell.key()))
    entry.update(status=m.status, reason=m.reason)
    s = m.summary or {}
    entry.update({k: s.get(k) for k in SUMMARY_COLS[8:]})
    return entry


def ratio_entry(r):
    entry = dict(zip(schema.KEY, r.cell.key()))
    entry.update(baseline=r.baseline, ratio=r.ratio, ci_low=r.ci_low, ci_high=r.ci_high, pairs=r.pairs,
                 significant=r.significant, unstable=r.unstable, partner_shift=r.partner_shift,
                 through_partner=r.through_partner)
    return entry


def control_entries(done, ratio_list, ratios, control):
    """The A/A control's ratio entries to its twin: those of ratio_list when
    the twin is the baseline, else computed. control: (row, twin) or None."""
    if not control:
        return []
    row, twin = control
    if twin == ratios.baseline:
        return [r for r in ratio_list if r["strategy"] == row]
    return [ratio_entry(r) for r in aggregate.Ratios(twin, ratios.settings).of(done, only={row})]


def control_line(entries, control):
    """One sentence on the A/A control: how many of its ratios were marked."""
    if not control:
        return None
    row, twin = control
    marked, n = aggregate.control_count(entries, row)
    share = f" ({100.0 * marked / n:.1f}%)" if n else ""
    return (f"A/A control: {row}, a second build of {twin}, was marked as a difference from it in "
            f"{marked} of {n} cells{share}")


def marks_of(ratios, control_text):
    s = ratios.settings
    return tables.Marks(margin=s.margin, unstable_width=s.unstable_width, control=control_text)


def sample_lines(measurements):
    out = []
    for m in measurements:
        if m.status != "ok":
            continue
        r, ops = m.result, m.ops()
        paired = r.is_paired()
        for i, ns in enumerate(r.samples_ns):
            out.append(list(m.cell.key()) + [i, r.reps, ns, ns / ops, r.sample_rounds[i] + 1,
                                             r.minor_faults[i], r.major_faults[i],
                                             r.partner if paired else "", r.partner_reps if paired else None,
                                             r.partner_samples_ns[i] if paired else None])
    return out


def metric_lines(measurements):
    return [list(m.cell.key()) + [name, value] for m in measurements if m.status == "ok"
            for name, value in m.result.metrics.items()]


def _lines(entries, cols):
    return [[e[c] for c in cols] for e in entries]


def table_text(done, ratio_list, versus, baseline, order, cpus, markdown, marks=tables.Marks(), groups=None,
               facts=None, counts=None):
    """The tables of a run. done: Measurements in table_order; ratio_list and
    versus: ratio entries to the baseline and to the versus rows; groups:
    aggregate.fastest_groups; facts: the workloads' (cell_protocol.workload_facts),
    which name their extra tables: benchmark lines against a row, the slowdown
    against param 0; counts: {cell key: counts.csv entry} when the folder has them."""
    summary = [summary_entry(m) for m in done]
    members = {p: g.members for p, g in (groups or {}).items()}
    t = tables.build(summary, ratio_list, baseline, order, cpus=cpus, marks=marks, groups=members, counts=counts)
    shared = {}
    for m in done:
        v = m.result.metrics.get("shared_heap") if m.result else None
        if v is not None:
            shared[m.cell.strategy] = bool(v)
    t += tables.build_versus(summary, versus, order, cpus=cpus, shared=shared, marks=marks)
    metrics = {m.cell.key(): m.result.metrics if m.result else {} for m in done}
    for workload, fact in (facts or {}).items():
        if fact.get("bench_lines"):
            t += workload_tables.build_bench_lines(summary, metrics, workload, fact["bench_lines"], order)
    for workload, fact in (facts or {}).items():
        if fact.get("slowdown"):
            t += workload_tables.build_slowdown(summary, metrics, workload, order)
    if markdown:
        return tables.render_markdown(t, legend_once=True)
    return tables.render_text(t, width=tables.WIDTH, legend_once=True)


def write_data(out_dir, done, meta, staged=None):
    """The measured data: samples.csv, metrics.csv, meta.json."""
    write_atomic(os.path.join(out_dir, "samples.csv"), schema.csv_text(SAMPLE_COLS, sample_lines(done)), staged)
    write_atomic(os.path.join(out_dir, "metrics.csv"), schema.csv_text(METRIC_COLS, metric_lines(done)), staged)
    write_atomic(os.path.join(out_dir, "meta.json"), json.dumps(meta, indent=2) + "\n", staged)


def group_lines(groups):
    """groups.csv's lines: each block's ok strategies ranked, in the group or not."""
    out = []
    for point, g in groups.items():
        for rank, s in enumerate(g.ranked, 1):
            iv = g.to_fastest.get(s)
            figures = [1.0, 1.0, 1.0] if s == g.fastest else [iv.estimate, iv.low, iv.high] if iv else [None] * 3
            out.append(list(point) + [s, rank, s in g.members] + figures)
    return out


def head_lines(done, control_text, ratio_list=(), layout="random"):
    """What the top of the tables says: a fixed or shifted layout, the A/A control's line
    and the ratios the run could not decide at its margin. A cell's own spread
    from process to process is a finding about its row on this machine, in its
    table's spread column, not a mark against the run."""
    out = []
    if layout == "shifted":
        out.append("Layout shifted (LAYOUT=shifted): randomization off, and visit N of every cell moved its heap "
                   "and mappings as placement N of one fixed sequence, so every run takes a cell through the same "
                   "placements and its interval carries their spread")
    if layout == "fixed":
        out.append("Layout fixed (LAYOUT=fixed): every process of one executable ran at the same addresses, so "
                   "what that layout costs or gains is in every visit of a cell alike and no interval shows it; "
                   "the A/A control, the same code in another executable, tells how far it can move a row")
    out += [control_text] if control_text else []
    undecided = sum(bool(r["unstable"]) for r in ratio_list)
    out.append(f"Undecided ratios ({tables.UNSTABLE}: the interval too wide to say whether the ratio is at least "
               f"the margin from 1 or within it): {undecided} of {len(ratio_list)}")
    return out


def write_derived(out_dir, done, ratios, order, run_id, cpus, control=None, staged=None, facts=None, counts=None,
                  layout="random"):
    """What the data gives: summary.csv, ratios.csv, groups.csv, tables.txt,
    tables.md and matrix.csv; returns the run's closing lines (digest.py). control: the A/A
    control (row, twin) or None; facts: the workloads' (meta.json "workload_facts");
    counts: the folder's counts ({cell key: counts.csv entry}) for the tables; layout:
    meta.json's (schema.layout_mode), named atop the tables when not random."""
    facts = facts or {}
    summary = [summary_entry(m) for m in done]
    ratio_list = [ratio_entry(r) for r in ratios.of(done)]
    write_atomic(os.path.join(out_dir, "summary.csv"), schema.csv_text(SUMMARY_COLS, _lines(summary, SUMMARY_COLS)),
                 staged)
    write_atomic(os.path.join(out_dir, "ratios.csv"), schema.csv_text(RATIO_COLS, _lines(ratio_list, RATIO_COLS)),
                 staged)
    versus = [ratio_entry(r) for r in ratios.versus_rows(done, facts)]
    control_text = control_line(control_entries(done, ratio_list, ratios, control), control)
    marks = marks_of(ratios, control_text)
    head = head_lines(done, control_text, ratio_list, layout)
    groups = aggregate.fastest_groups(done, ratios.settings)
    head_text = "\n".join(textwrap.fill(line, tables.WIDTH) for line in head)
    text = head_text + "\n\n" + table_text(done, ratio_list, versus, ratios.baseline, order, cpus, markdown=False,
                                           marks=marks, groups=groups, facts=facts, counts=counts)
    write_atomic(os.path.join(out_dir, "tables.txt"), text, staged)
    write_atomic(os.path.join(out_dir, "tables.md"), f"# allocmark run {run_id}\n\n" +
                 "".join(textwrap.fill(line, tables.WIDTH, initial_indent="- ", subsequent_indent="  ") + "\n"
                         for line in head) + "\n" +
                 table_text(done, ratio_list, versus, ratios.baseline, order, cpus, markdown=True, marks=marks,
                            groups=groups, facts=facts, counts=counts),
                 staged)
    write_atomic(os.path.join(out_dir, "groups.csv"), schema.csv_text(schema.GROUP_COLS, group_lines(groups)), staged)
    header, lines = tables.matrix_csv(summary, ratio_list, ratios.baseline, order)
    write_atomic(os.path.join(out_dir, "matrix.csv"), schema.csv_text(header, lines), staged)
    return digest.digest(done, groups, head, out_dir)


def control_of(meta):
    c = meta.get("control") or {}
    return (c["row"], c["twin"]) if c.get("row") and c.get("twin") else None


def write_all(out_dir, measurements, ratios, meta, order):
    """Every file of the run folder, as one: each is renamed into place only
    once all are written, so that a full disk or Ctrl-C part way leaves the
    previous files, which agree with each other, and no temporary file."""
    done = table_order(measurements, order)
    staged = []
    try:
        write_data(out_dir, done, meta, staged)
        text = write_derived(out_dir, done, ratios, order, meta["run_id"], meta.get("cpu_count"), control_of(meta),
                             staged, meta.get("workload_facts"), layout=schema.layout_mode(meta))
    except BaseException:
        for tmp, _ in staged:
            try:
                os.remove(tmp)
            except OSError:
                pass
        raise
    for tmp, path in staged:
        os.replace(tmp, path)
    return text


def rescue(out_dir, error, measurements, ratios, meta, order):
    """The run folder could not be written (full disk, quota): the results go to
    a new folder in the temporary directory, or, failing that, to stdout as CSV.
    Returns the tables' text."""
    print(f"allocmark: cannot write the results into {out_dir}: {error.strerror or error}", file=sys.stderr)
    try:
        where = tempfile.mkdtemp(prefix=f"allocmark-{meta['run_id']}-")
        try:
            text = write_all(where, measurements, ratios, meta, order)
            print(f"allocmark: results saved in {where} instead", file=sys.stderr)
            return text
        except OSError:
            shutil.rmtree(where, ignore_errors=True)
            raise
    except OSError as e:
        print(f"allocmark: nor in the temporary directory ({e.strerror or e}); summary.csv and "
              f"samples.csv follow on stdout", file=sys.stderr)
    done = table_order(measurements, order)
    print("== summary.csv\n" + schema.csv_text(SUMMARY_COLS, _lines(map(summary_entry, done), SUMMARY_COLS)) +
          "== samples.csv\n" + schema.csv_text(SAMPLE_COLS, sample_lines(done)), end="")
    return ""


def point_latest(out_dir):
    """results/latest -> the newest run (a symlink where the system has them)."""
    parent, name = os.path.split(os.path.abspath(out_dir))
    link = os.path.join(parent, "latest")
    if os.path.exists(link) and not os.path.islink(link):
        return  # someone's real folder: leave it
    tmp = link + ".tmp"
    try:
        if os.path.lexists(tmp):
            os.remove(tmp)
        os.symlink(name, tmp)
        os.replace(tmp, link)
    except OSError:
        pass  # no symlinks here (some Windows setups): the run folder is still complete
