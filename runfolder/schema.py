"""schema.py: the files of a run folder as data: the CSV columns, the key of a
cell, how a number is written into a CSV file and read back. The runner writes
with it and every reader (rundir.py, hence the report) reads with it. It holds
no data and does no I/O beyond turning lines into CSV text."""
import collections
import csv
import io
import math

# one cell of the matrix: a point (compiler, strategy, workload, size, threads,
# param); in memory size and threads are ints and param a float
KEY = ("compiler", "strategy", "workload", "size", "threads", "param")

# partner, partner_reps, partner_ns: the partner row's sample taken beside this
# one in the same process (cell/partner.h), empty for a cell timed alone
SAMPLE_COLS = list(KEY) + ["sample", "reps", "ns", "ns_per_op", "round", "minor_faults", "major_faults",
                           "partner", "partner_reps", "partner_ns"]
# a cell's time: the median over its visits of the time per operation (ns)
MEDIAN = "median_ns_per_op"
SUMMARY_COLS = list(KEY) + [
    "status", "reason", "samples", "visits", "reps", "ops_per_rep", MEDIAN, "min_ns_per_op",
    "ci_low_ns", "ci_high_ns", "cv", "unstable", "peak_rss_bytes", "bytes_requested", "bytes_peak", "reserved_peak",
    "overhead_pct", "allocs", "frees", "instructions_per_op", "cycles_per_op", "minor_faults_per_op",
    "major_faults_per_op", "inputs", "malloc", "process_spread"]
# summary.csv's figures computed from the samples; the rest the cell reported
FROM_SAMPLES = ("samples", "visits", MEDIAN, "min_ns_per_op", "ci_low_ns", "ci_high_ns", "cv",
                "unstable", "minor_faults_per_op", "major_faults_per_op", "process_spread")
# a ratio: the paired estimate over the rounds both cells visited (pairs), its
# interval, significant (marked as a difference: the interval excludes 1 and
# the ratio clears the run's margin) and unstable (either cell is);
# partner_shift: the partner's time beside the cell over beside the baseline's
# (empty: not timed beside one partner), through_partner: 1 when the ratio
# went through it, 0 when the partner moved and the ratio is from the times
RATIO_COLS = ["compiler", "workload", "size", "threads", "param", "strategy", "baseline", "ratio",
              "ci_low", "ci_high", "pairs", "significant", "unstable", "partner_shift", "through_partner"]
METRIC_COLS = list(KEY) + ["metric", "value"]
# each block's strategies ranked by median (rank 1: the fastest), whether in
# the fastest group, and the paired ratio to the fastest with its interval
GROUP_COLS = ["compiler", "workload", "size", "threads", "param", "strategy", "rank", "in_group",
              "to_fastest", "ci_low", "ci_high"]
# counts.csv: a cell run once under valgrind's cachegrind (runner/counts.py),
# each figure per operation of one measured sample; status "not counted" with
# the reason where a counter cannot run the cell or see its work
COUNT_COLS = list(KEY) + ["status", "reason", "reps", "ops_per_rep", "instructions_per_op", "i1_misses_per_op",
                          "lli_misses_per_op", "d1_misses_per_op", "lld_misses_per_op", "est_cycles_per_op"]

COLUMNS = {"samples.csv": SAMPLE_COLS, "summary.csv": SUMMARY_COLS, "ratios.csv": RATIO_COLS,
           "metrics.csv": METRIC_COLS, "groups.csv": GROUP_COLS, "counts.csv": COUNT_COLS}
# columns read as text; every other column is a number (empty: not available)
# (inputs: the cell's digest of the work it ran, 16 hex digits; malloc: the
# library that served malloc in the cell's process, with its version)
TEXT = {"compiler", "strategy", "workload", "status", "reason", "baseline", "metric", "inputs", "malloc", "partner"}
# times that are only ever above zero: a line with one that is not is bad (a
# ratio or a log of it means nothing)
POSITIVE = {"samples.csv": ("ns", "ns_per_op", "partner_ns")}
# columns a run folder written before they existed may lack, and their value then
DEFAULTS = {"threads": 1, "param": 0.0, "round": 1, "visits": None, "unstable": None, "pairs": None,
            "minor_faults": None, "major_faults": None, "minor_faults_per_op": None, "major_faults_per_op": None,
            "inputs": "", "malloc": "", "partner": "", "partner_reps": None, "partner_ns": None,
            "process_spread": None, "partner_shift": None, "through_partner": None}


def layout_mode(meta):
    """meta.json's "layout": "random" (each process where the system placed it),
    "fixed" (one layout an executable) or "shifted" (visit N at placement N of
    one sequence); random in folders written before it was recorded, as they
    all ran."""
    layout = meta.get("layout") if isinstance(meta, dict) else None
    return layout.get("mode", "random") if isinstance(layout, dict) else "random"


def fmt(v):
    """A value as a CSV field: whole numbers without a point, others to six
    significant digits, True/False as 1/0, None as empty."""
    if v is None:
        return ""
    if isinstance(v, bool):
        return "1" if v else "0"
    if isinstance(v, float):
        if v == int(v) and abs(v) < 1e15:
            return str(int(v))
        return f"{v:.6g}"
    return str(v)


def csv_text(header, rows):
    """CSV text with a header line; every value written with fmt."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(header)
    for r in rows:
        w.writerow([fmt(v) for v in r])
    return buf.getvalue()


def number(text):
    """A CSV field as a number (None when empty); ValueError when it is not one."""
    if text is None or text.strip() == "":
        return None
    v = float(text)
    if math.isnan(v):
        raise ValueError(f"not a number: '{text}'")
    return v


def key_value(column, text):
    """A key column's field in its type: size and threads whole, param a float."""
    if column not in ("size", "threads", "param"):
        return text
    v = number(text)
    if v is None:
        if column in DEFAULTS:
            return DEFAULTS[column]
        raise ValueError("empty")
    if column == "param":
        return v
    if v != int(v):
        raise ValueError(f"not a whole number: '{text}'")
    return int(v)


def key_of(row):
    """The key of a typed entry (a dict with the KEY columns)."""
    return tuple(row[k] for k in KEY)


def key_fields(key):
    """A key as the CSV writes it."""
    return [fmt(v) for v in key]


class Cell(collections.namedtuple("Cell", KEY + ("threaded",))):
    """A point of the matrix; threaded: the workload starts threads."""
    __slots__ = ()

    def key(self):
        return tuple(self[:len(KEY)])

    def fields(self):
        """The key as the CSV files write it."""
        return key_fields(self.key())


def block_of(cell):
    """The block of a cell: the cells one line of a table compares, every
    strategy and compiler at one workload, size, thread count and param."""
    return (cell.workload, cell.size, cell.threads, cell.param)
