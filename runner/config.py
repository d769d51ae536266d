"""config.py: a run's configuration, and `plan`, which checks the command
line's values against what is built and returns a frozen RunConfig. plan
only reads (strategies.txt, build/, the cells' workload lists): it creates
no folder and starts no measurement, so bad input leaves nothing behind."""
import dataclasses
import datetime
import os
import re
import shutil
import random
import subprocess
import tempfile
import types

from runner import cell_protocol, layout, matrix, memlimit, pinning
from runfolder import aggregate, catalog, runlock
from runfolder.errors import UsageError

# The ratios divide by the default partner's own row (make PARTNER=,
# cell/partner.h): every one-thread cell is timed beside that code, and the
# partner's row spreads from it from process to process no more than any
# other row, so it adds the least spread to a ratio that goes through the
# partner (docs/bench.md, "The baseline"; docs/measurements.md).
DEFAULT_BASELINE = "minimal"
FALLBACK_BASELINE = "system"
# A cell's samples are taken in ROUNDS processes (visits), each round visiting
# every block in a new order; the distribution-free intervals need at least 6
# visits to reach 95% (stats.MIN_VISITS), and more narrow them. Round 1
# calibrates the repetitions; later rounds reuse its counts. A one-thread
# cell's visit takes its samples beside its partner's (cell/partner.h): a
# single sample's ratio to the partner spreads 4-5% inside a process, so a
# visit takes several short ones and its median; what differs from process to
# process is left to the rounds. The trade, from runner/noise.py on runs of
# several samples a visit, and the time budget: docs/bench.md (visits and
# samples), docs/measurements.md.
DEFAULT_ROUNDS = 8
# The baseline's visits take this many times a row's samples: every ratio of
# a block goes through the baseline's visits, and those visits (the baseline
# beside a copy of itself) spread from process to process by what their
# samples leave and no more, so samples narrow it where, for other rows, only
# visits would (docs/bench.md, visits and samples; docs/measurements.md).
BASELINE_SAMPLES = 3
DEFAULT_SAMPLES = 64
DEFAULT_MIN_MS = 0.5
# QUICK=1 is the first look, meant to take a minute: six visits, the fewest
# with a 95% interval, of four samples, and revisits within QUICK_BUDGET_S.
# Against eight visits it saved a quarter of the run, and its one-thread
# ratios agreed between two runs as often (docs/measurements.md, "QUICK
# within a minute"); its threaded ones, a little less often.
QUICK_ROUNDS = 6
QUICK_SAMPLES = 24
QUICK_MIN_MS = 0.5
# Cells timed alone (threaded workloads: their time is their threads' own)
# gain nothing from more samples in a process: one a visit, at least this long
THREADED_MIN_MS = 3.0
QUICK_THREADED_MIN_MS = 2.0
# A trace's one-thread cells take samples at least this long: a repetition of
# the shipped python-csv trace lasts about 0.5 ms, so at 0.5 ms a sample was
# one repetition after one untimed one, and two QUICK runs' ratios of its
# lines agreed within 5% in a median 13 of 26; at 2 ms in 19 of 26, at 5 ms
# in 19.5 (docs/measurements.md, "A trace's samples")
TRACE_MIN_MS = 2.0
# blocks whose visits disagree (an unstable cell) or during which a CPU
# changed state are visited again, at most this many times each
DEFAULT_REVISITS = 3
# QUICK=1's time budget a compiler, in seconds: its revisits stop where the
# run would pass it (the planned rounds always run), so that `make bench
# QUICK=1`, its build check and report included, takes a minute
QUICK_BUDGET_S = 55.0
# the cell's own cap (cell/cell_main.c): a size is a count of elements, bytes
# or MiB, and past 2^40 the workloads' arithmetic would overflow
MAX_SIZE = 1 << 40


@dataclasses.dataclass(frozen=True)
class RunConfig:
    build_root: str
    rows: tuple             # catalog.Row of every line of strategies.txt
    compilers: tuple        # build folder names, build/<name>/bin
    rows_of: types.MappingProxyType   # compiler -> rows built for it, strategies.txt order
    order: tuple            # the strategies of this run, in table order
    baseline: str
    notes: tuple            # printed before the run and kept in meta.json
    listing: types.MappingProxyType   # compiler -> its cells' --list (workloads, compiler version)
    workloads: tuple
    sizes: object           # the --sizes value: a list, 'linear', 'log' or 'default'
    param: object           # --param or None
    samples: int
    rounds: int
    revisits: int           # extra rounds over the blocks that need them, at most
    budget_s: object        # seconds the run may take before its revisits stop, or None
    min_ms: float
    threaded_min_ms: float  # a threaded cell's one sample a visit
    trace_min_ms: float     # a one-thread trace cell's samples
    seed: int
    threads: int            # threads of a threaded workload without a sweep
    quick: bool
    cpu: object             # --cpu: a CPU, 'auto' or 'none' (checked against the CPUs allowed)
    layout: str             # --layout: random or fixed (layout.py)
    timeout: float
    mem_limits: types.MappingProxyType  # compiler -> RLIMIT_AS bytes, or None
    mem_limit_note: types.MappingProxyType
    stats_tables: bool
    keep_allocator_env: bool  # the cells see the allocator variables (cell_process.py)
    settings: aggregate.Settings   # the margin of a marked difference, the width of an unstable cell
    control: object         # the A/A control row in this run, or None
    control_twin: object    # the row it is a second build of
    cells: tuple            # matrix.Cell in the order of round 1
    run_id: str
    out_dir: str            # absolute: the cells run in another working directory
    # the workload trace:NAME of each --trace -> its file, absolute (a
    # mappingproxy as the default itself is refused by dataclasses: not hashable)
    traces: types.MappingProxyType = dataclasses.field(default_factory=lambda: types.MappingProxyType({}))

    def bin_dir(self, compiler):
        return catalog.bin_dir(self.build_root, compiler)

    def cell_exe(self, compiler, row, stats_build=False):
        return catalog.cell_exe(self.bin_dir(compiler), row, stats_build)

    def row(self, name):
        """The catalog.Row of a strategy (None for one strategies.txt lacks)."""
        return next((r for r in self.rows if r.name == name), None)

    def probe_exe(self):
        """The executable the CPU probe runs: the baseline's, of the first compiler."""
        first = self.compilers[0]
        row = self.baseline if self.baseline in self.rows_of[first] else self.rows_of[first][0]
        return self.cell_exe(first, row)


# the default home of run folders, and the only folder given a "latest" link
RESULTS = os.path.join(catalog.ROOT, "results")


def default_compiler():
    """The build folder the Makefile uses: $CC's name, else gcc where it is
    on PATH (the Makefile's default), else cc."""
    cc = os.environ.get("CC", "").split()
    if cc:
        return os.path.basename(cc[0])
    return "gcc" if shutil.which("gcc") else "cc"


def _built(args, compilers, listed):
    rows_of = {}
    for c in compilers:
        rows = catalog.built_rows(catalog.bin_dir(args.build_root, c), listed)
        if not rows:
            root = args.build_root
            have = sorted(d for d in os.listdir(root)
                          if catalog.built_rows(catalog.bin_dir(root, d), listed)) if os.path.isdir(root) else []
            raise UsageError(f"no cells built for compiler '{c}' (nothing in {catalog.bin_dir(root, c)}); "
                             f"built: {', '.join(have) or 'none'} (run make, or make CC={c})")
        rows_of[c] = rows
    return rows_of


def _not_built_note(rows, compilers, rows_of):
    """One line naming the listed rows some compiler lacks, or None (rows is
    what the run asked for: the @virtual twins only with --virtual)."""
    missing = []
    for r in rows:
        lacking = [c for c in compilers if r.name not in rows_of[c]]
        if not lacking:
            continue
        why = ([f"for {', '.join(lacking)}"] if len(lacking) < len(compilers) else []) + \
            ([f"needs {r.libs}"] if r.libs else [])
        missing.append(r.name + (f" ({'; '.join(why)})" if why else ""))
    return f"not built, so not measured: {', '.join(missing)}" if missing else None


def _unlisted_note(args, compilers, listed):
    stale = sorted({f"{c}: {name}" for c in compilers
                    for name in catalog.unlisted_binaries(catalog.bin_dir(args.build_root, c), listed)})
    if not stale:
        return None
    return (f"not measured: executables of rows allocators/strategies.txt does not list ({', '.join(stale)})")


def _check_writable(path, counting=False):
    """Raises UsageError when the folder could not be created or written; creates nothing.
    counting: a count run, which may write beside a finished timed run (counts.py checks its own files)."""
    probe = path
    while not os.path.exists(probe):
        parent = os.path.dirname(probe)
        if parent == probe:
            break
        probe = parent
    why = None
    if not os.path.isdir(probe):
        why = f"{probe} is not a folder"
    elif not os.access(probe, os.W_OK | os.X_OK):
        why = f"{probe}: permission denied"
    if why:
        raise UsageError(f"cannot write the run folder '{path}': {why}")
    if not counting:
        check_not_a_run(path)


def check_not_a_run(path, locked=False):
    """Raises UsageError when the folder holds a run or is being written by one
    (locked: but by this process): a new run there would mix its files with
    the old ones or take them away."""
    found = runlock.run_file_in(path, (runlock.LOCK,) if locked else ()) if os.path.isdir(path) else None
    if found == runlock.LOCK:
        raise UsageError(f"the run folder '{path}' is being written by another run "
                         f"({runlock.describe(runlock.holder(path) or {})}), or one that died there; "
                         f"give another folder")
    if found:
        raise UsageError(f"the run folder '{path}' holds a run already ({found}); give a new folder, "
                         f"or remove that one")


def _baseline(args, compilers, rows_of, check_row, notes):
    if args.baseline:
        check_row(args.baseline, "baseline")
        return args.baseline
    if all(DEFAULT_BASELINE in rows_of[c] for c in compilers):
        return DEFAULT_BASELINE
    notes.append(f"baseline {DEFAULT_BASELINE} is not built; ratios are to {FALLBACK_BASELINE}")
    check_row(FALLBACK_BASELINE, "baseline")
    return FALLBACK_BASELINE


def _control(args, rows, compilers, rows_of, allocators, notes):
    """(the A/A control row, its twin): the control joins every run that
    measures its twin; (None, None) with --no-control, without the twin, or
    where the control is not built."""
    name, twin = catalog.CONTROL, catalog.twin_of(rows, catalog.CONTROL)
    if args.no_control or twin is None:
        return None, None
    if twin not in allocators:
        notes.append(f"no A/A control: {name} is a second build of {twin}, which this run does not measure")
        return None, None
    lacking = [c for c in compilers if name not in rows_of[c] or twin not in rows_of[c]]
    if lacking:
        notes.append(f"no A/A control: {name} or {twin} is not built for {', '.join(lacking)}")
        return None, None
    return name, twin


def _mem_limits(args, compilers):
    limit, why = memlimit.choose(args.mem_limit)
    limits, sanitized = {}, []
    for c in compilers:
        applies = not (limit and memlimit.sanitized(os.path.join(args.build_root, c)))
        limits[c] = limit if applies else None
        if not applies:
            sanitized.append(c)
    note = {"bytes": limit, "human": memlimit.human(limit) if limit else None, "why": why}
    if sanitized:
        note["not_applied_to"] = sanitized
        note["not_applied_why"] = "sanitizer builds (-fsanitize) reserve terabytes of address space"
    return limits, note


def _check_cpu(cpu):
    allowed = pinning.allowed_cpus()
    if isinstance(cpu, int) and allowed is not None and cpu not in allowed:
        raise UsageError(f"--cpu {cpu}: this process may use CPUs {', '.join(map(str, allowed))}")


# A trace's workload is trace:NAME, NAME its file's name without the
# extension: a name in the tables, the CSV files and file names of plots
TRACE_PREFIX = "trace:"
TRACE_NAME = re.compile(r"[A-Za-z0-9_.+-]+")


# the traces of real programs the default run measures beside its suite
# (traces/README.md); QUICK's time budget has room for the smallest alone
SHIPPED_TRACES = os.path.join(catalog.ROOT, "traces")
QUICK_TRACE = "python-csv.trace"


def _shipped_traces(quick):
    """the paths of traces/*.trace, or QUICK's one; [] where there are none"""
    if not os.path.isdir(SHIPPED_TRACES):
        return []
    names = sorted(f for f in os.listdir(SHIPPED_TRACES) if f.endswith(".trace"))
    if quick:
        names = [n for n in names if n == QUICK_TRACE]
    return [os.path.join(SHIPPED_TRACES, n) for n in names]


def _traces(paths):
    """{trace:NAME: absolute path} of the --trace files, in the order given;
    UsageError for a file that cannot be read, is empty or a folder, a name
    of other characters, or two files of one name."""
    traces = {}
    for given in paths or []:
        path = os.path.abspath(given)
        if os.path.isdir(path):
            raise UsageError(f"--trace {given}: a folder, not a trace (make record TRACE=FILE writes one)")
        try:
            with open(path, "rb") as f:
                empty = not f.read(1)
        except OSError as e:
            raise UsageError(f"--trace {given}: cannot read it: {e.strerror or e}")
        if empty:
            raise UsageError(f"--trace {given}: the file is empty, not a trace")
        name = os.path.splitext(os.path.basename(path))[0]
        if not TRACE_NAME.fullmatch(name):
            raise UsageError(f"--trace {given}: its name '{name}' (the file's name without its extension) "
                             f"has characters other than letters, digits and _.+-: rename the file")
        workload = TRACE_PREFIX + name
        if workload in traces:
            raise UsageError(f"--trace {given}: {traces[workload]} has the name '{name}' too: the workload "
                             f"{workload} would be both; rename one of them")
        traces[workload] = path
    return traces


def _check_trace(exe, workload, path, timeout):
    """The trace decoded by a cell as a run's cells will decode it (--stats-only:
    one repetition, nothing timed). A trace the cell refuses (not a trace, a
    damaged header, records that do not decode, beyond the replay's limits) is
    bad input, with the cell's message; a cut trace replays its complete
    records: the note the run prints, or None."""
    cmd = cell_protocol.command(exe, workload, 1, trace=path, mode="stats-only")
    with tempfile.TemporaryDirectory(prefix="allocmark-") as scratch:
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, cwd=scratch, timeout=timeout)
        except (OSError, subprocess.SubprocessError) as e:
            raise UsageError(f"--trace {path}: {exe} could not decode it: {e}")
    said = [line.split("am-cell: ", 1)[-1] for line in p.stderr.splitlines() if line.strip()]
    if p.returncode == 2:
        raise UsageError(f"--trace {path}: {said[-1] if said else 'refused by the cell (exit status 2)'}")
    cut = [line for line in said if " is cut " in line]
    return f"{workload}: {cut[0]}" if cut else None


def _with_traces(listing, traces):
    """Each compiler's --list answer with a workload trace:NAME a trace, as
    the cells list the workload trace."""
    out = {}
    for c, answer in listing.items():
        base = next((w for w in answer["workloads"] if w["name"] == "trace"), None)
        if base is None:
            raise UsageError(f"the cells of {c} do not know the workload trace: build them again (make)")
        out[c] = dict(answer, workloads=list(answer["workloads"]) + [dict(base, name=n) for n in traces])
    return out


def plan(args):
    """Checks every input and returns the run's RunConfig; raises UsageError."""
    rows = catalog.rows_or_usage_error()
    listed = [r.name for r in rows]
    libs_of = {r.name: r.libs for r in rows}
    # a C++ row: its source has a .cc (allocators/pmr.cc ...), built where it compiles
    cxx_rows = {r.name for r in rows if os.path.exists(os.path.join(catalog.ROOT, "allocators", r.source + ".cc"))}
    compilers = args.compilers or [default_compiler()]
    rows_of = _built(args, compilers, listed)
    every_built = [r for r in listed if any(r in rows_of[c] for c in compilers)]
    # the @virtual twins double the matrix: measured when asked for (--virtual or by name)
    asked = [r for r in rows if args.virtual or not r.virtual]
    default_rows = [r for r in every_built if r in {a.name for a in asked}]

    def check_row(name, what):
        if name not in listed:
            raise UsageError(f"unknown {what} '{name}'; valid: {', '.join(listed)}")
        for c in compilers:
            if name not in rows_of[c]:
                need = f" (it links {libs_of[name]}: is the library installed?)" if libs_of.get(name) else ""
                if name.split(catalog.VIRTUAL_SUFFIX)[0] in cxx_rows:
                    need = (" (a C++ row: it needs a C++17 compiler, g++ or clang++, and for the boost-* rows "
                            "Boost's headers: sudo apt-get install g++ libboost-dev)")
                raise UsageError(f"{what} '{name}' is not built in {catalog.bin_dir(args.build_root, c)}{need}; "
                                 f"built: {', '.join(rows_of[c])}")

    notes = [n for n in (_unlisted_note(args, compilers, listed),) if n]
    allocators = args.allocators or default_rows
    if args.virtual and args.allocators:
        twins = [a + catalog.VIRTUAL_SUFFIX for a in allocators
                 if not a.endswith(catalog.VIRTUAL_SUFFIX) and a != catalog.CONTROL]
        allocators = allocators + [t for t in twins if t not in allocators]
    for a in allocators:
        check_row(a, "strategy")
    if not args.allocators:
        note = _not_built_note(asked, compilers, rows_of)
        if note:
            notes.append(note)
    baseline = _baseline(args, compilers, rows_of, check_row, notes)
    if baseline not in allocators:
        notes.append(f"added the baseline {baseline} to the strategies")
        allocators = allocators + [baseline]
    control, twin = _control(args, rows, compilers, rows_of, allocators, notes)
    if control and control not in allocators:
        allocators = allocators + [control]
    order = [r for r in every_built if r in allocators]

    given = getattr(args, "trace", None)
    traces = _traces(given)
    shipped = {}
    if getattr(args, "shipped_traces", False) and not given and not args.workloads and args.suite == "default":
        shipped = _traces(_shipped_traces(args.quick))
    listing = {c: cell_protocol.list_workloads(catalog.cell_exe(catalog.bin_dir(args.build_root, c), rows_of[c][0]))
               for c in compilers}
    if traces or shipped:
        listing = _with_traces(listing, {**traces, **shipped})
    wl = {w["name"]: w for w in listing[compilers[0]]["workloads"]}
    # traces alone: a run of the traces alone; --workloads adds others
    names = list(args.workloads or ([] if traces else catalog.suite_workloads(wl.values(), args.suite)))
    traces = {**traces, **shipped}
    names += [n for n in traces if n not in names]
    for n in names:
        if n.startswith(TRACE_PREFIX) and n not in wl:
            raise UsageError(f"workload '{n}': no trace of that name was given (give its file with --trace)")
        if n not in wl:
            raise UsageError(f"unknown workload '{n}'; valid: {', '.join(wl)}")
    first = compilers[0]
    checker = catalog.cell_exe(catalog.bin_dir(args.build_root, first),
                               "system" if "system" in rows_of[first] else rows_of[first][0])
    for n, path in traces.items():
        note = _check_trace(checker, n, path, args.timeout)
        if note:
            notes.append(note)

    quick = args.quick
    samples = args.samples or (QUICK_SAMPLES if quick else DEFAULT_SAMPLES)
    rounds = args.rounds or min(QUICK_ROUNDS if quick else DEFAULT_ROUNDS, samples)
    if rounds > samples:
        raise UsageError(f"--rounds {rounds} is more than --samples {samples}: each round takes "
                         f"at least one sample")
    _check_cpu(args.cpu)
    layout.check(args.layout)
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(1, 2 ** 31)
    threads = args.threads or max(2, os.cpu_count() or 1)
    sizes = args.sizes or "default"
    cells = matrix.cells(compilers, order, rows_of, names, wl, sizes, args.threads, threads, args.param, quick)
    cells = matrix.blocked_shuffle(cells, random.Random(seed))

    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    out_dir = os.path.abspath(args.out or os.path.join(RESULTS, stamp))
    _check_writable(out_dir, counting=getattr(args, "count", False))
    limits, limit_note = _mem_limits(args, compilers)
    frozen = types.MappingProxyType
    return RunConfig(
        build_root=args.build_root, rows=tuple(rows), compilers=tuple(compilers),
        rows_of=frozen({c: tuple(r) for c, r in rows_of.items()}), order=tuple(order), baseline=baseline,
        notes=tuple(notes), listing=frozen(listing), workloads=tuple(names), sizes=sizes, param=args.param,
        samples=samples, rounds=rounds, revisits=DEFAULT_REVISITS if args.revisits is None else args.revisits,
        budget_s=args.budget or (QUICK_BUDGET_S * len(compilers) if quick else None),
        min_ms=args.min_ms or (QUICK_MIN_MS if quick else DEFAULT_MIN_MS),
        threaded_min_ms=max(args.min_ms or 0, QUICK_THREADED_MIN_MS if quick else THREADED_MIN_MS),
        trace_min_ms=max(args.min_ms or 0, TRACE_MIN_MS),
        seed=seed, threads=threads, quick=quick, cpu=args.cpu, layout=args.layout, timeout=args.timeout,
        mem_limits=frozen(limits), mem_limit_note=frozen(limit_note), stats_tables=not args.no_stats_tables,
        keep_allocator_env=args.keep_allocator_env,
        settings=aggregate.Settings(margin=aggregate.Settings.margin if args.margin is None else args.margin),
        control=control, control_twin=twin,
        cells=tuple(cells), run_id=os.path.basename(out_dir) if args.out else stamp, out_dir=out_dir,
        traces=frozen(traces))
