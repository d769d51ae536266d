"""counts.py: the count run (--count, make count). Every one-thread cell of
the matrix runs under valgrind's callgrind with fixed simulated caches and
address-space randomization off, at a fixed repetition count: the same
figures on every run and every machine, where time moves with the machine.
Only the measured sample is counted: a cell runs twice, with one and with two
samples (--alone: without its partner), and the difference is one warmed-up
sample. counts.csv and counts.json go into the run folder (beside summary.csv
when it holds a timed run); a matrix cut into shards (--shard i/N) is merged
back with --merge into the folder the unsplit run writes."""
import concurrent.futures
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading

from runner import cell_protocol, plain_copies, regenerate, trace_files
from runfolder import count_tables, outputs, rundir, runlock, schema
from runfolder.errors import RunError, UsageError

# a counted sample runs each of the workload's own seeds once (--list:
# "seeds"), the inputs of its warm-up: a random length is counted at each of them
REPS_COUNTED = "each of the workload's seeds once"
DEFAULT_SEED = 1  # without --seed and without a timed run in the folder: counts are of fixed inputs
# fixed simulated caches (size, associativity, line), so that no figure depends on the host's
CACHES = (("I1", "32768,8,64"), ("D1", "32768,8,64"), ("LL", "8388608,16,64"))
FORMULA = ("estimated cycles = L1 hits + 5 x LL hits + 35 x RAM accesses (iai's model, src/lib.rs of "
           "bheisler/iai)")
EVENTS = ("Ir", "I1mr", "ILmr", "Dr", "D1mr", "DLmr", "Dw", "D1mw", "DLmw")
# cell/cell_main.c's function of one sample (warm-up or measured): counting
# only inside it leaves out the process's start and its clock probes, whose
# loops run as long as the clock takes to tick
SAMPLE_FUNCTION = "run_sample"
# callgrind writes a file after each call of it that it sees. It simulates
# from the cell's warm-up on (cell/count_start.h), so .1 is the warm-up and .2
# the measured sample; a cell built without that request is simulated from its
# start, and then the aging of a heap (--age) is a call of it too.
def measured_dump(simulates_from_warm_up, aged):
    return ".2" if simulates_from_warm_up or not aged else ".3"


THREADED = "threaded: valgrind runs one thread at a time"
# workloads whose work is system calls and page faults, which a counter of instructions cannot see
UNSEEN = {"mmap_pressure": "its work is page faults and system calls (madvise, mmap), which a counter cannot see",
          "utilization": "its work is page faults and resident memory, which a counter cannot see"}
# rows valgrind cannot run
UNRUNNABLE = {"system-scudo": "scudo cannot map its memory under valgrind (Scudo ERROR: internal map or unmap "
                              "failure)"}
NOT_COUNTED = "not counted"
# The cell's arguments and environment lie on its stack, so their length moves
# its addresses and with them which cache sets its data falls in: the cell is
# run by one short name (a link in its own folder) with a fixed environment,
# whatever the paths and variables of the machine and of make.
CELL_NAME = "cell"
# a trace's cell reads its file by this name, a link in the same folder, for
# the same reason: the path of the file given would lie on its stack
TRACE_NAME = "trace"
# jemalloc and mimalloc hand unused memory back to the OS after a delay read
# from the clock (jemalloc's decay, 10 s; mimalloc's decommit, 25 and 500 ms),
# so how much of that work a cell does depends on how fast it ran, and under
# valgrind a cell runs some fifty times slower than timed. A count turns those
# returns off: the work counted is the allocator's own, the same every run.
CLOCK_FREE = (("MALLOC_CONF", "dirty_decay_ms:-1,muzzy_decay_ms:-1"), ("MIMALLOC_ALLOW_DECOMMIT", "0"))
CELL_ENV = (("LC_ALL", "C"), ("LD_LIBRARY_PATH", plain_copies.LIBRARIES)) + CLOCK_FREE


class CountError(Exception):
    """A count output that cannot be read: the cell fails and the run ends with exit 2."""


def not_counted_reason(cell):
    if cell.threaded:
        return THREADED
    return UNRUNNABLE.get(cell.strategy) or UNSEEN.get(cell.workload)


def valgrind_version():
    """valgrind's version line; UsageError when it is not installed."""
    exe = shutil.which("valgrind")
    if not exe:
        raise UsageError("valgrind is not installed: a count run needs it (tools/need.sh valgrind valgrind, "
                         "or sudo apt-get install valgrind)")
    p = subprocess.run([exe, "--version"], capture_output=True, text=True)
    return p.stdout.strip()


def prefix(out_file, from_warm_up):
    """valgrind's command line before the cell's; setarch -R turns address-space randomization off.
    from_warm_up: the cell turns callgrind's simulation on at its warm-up (cell/count_start.h)."""
    cmd = [shutil.which("valgrind") or "valgrind", "-q", "--tool=callgrind", "--cache-sim=yes",
           "--toggle-collect=" + SAMPLE_FUNCTION, "--dump-after=" + SAMPLE_FUNCTION, "--callgrind-out-file=" + out_file]
    cmd += ["--instr-atstart=no"] if from_warm_up else []
    cmd += [f"--{name}={spec}" for name, spec in CACHES]
    setarch = shutil.which("setarch")
    return ([setarch, os.uname().machine, "-R"] if setarch and hasattr(os, "uname") else []) + cmd


def read_events(path):
    """{event: total} from a callgrind output file; CountError when unreadable."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
    except OSError as e:
        raise CountError(f"count output unreadable: {e.strerror or e}")
    names = re.search(r"^events:\s*(.+)$", text, re.M)
    totals = re.search(r"^(?:summary|totals):\s*(.+)$", text, re.M)
    if not names or not totals:
        raise CountError("count output unreadable: no events or summary line in callgrind's file")
    names, totals = names.group(1).split(), totals.group(1).split()
    if len(totals) > len(names):
        raise CountError(f"count output unreadable: {len(totals)} totals for {len(names)} events")
    try:  # callgrind leaves out the zeros at the end of a line
        out = dict(zip(names, [int(v) for v in totals] + [0] * (len(names) - len(totals))))
    except ValueError:
        raise CountError(f"count output unreadable: summary '{' '.join(totals)[:80]}' is not whole numbers")
    if not any(out.values()):  # callgrind writes a lone 0 when nothing was collected
        raise CountError(f"count output unreadable: no instruction counted inside {SAMPLE_FUNCTION} "
                         f"(is it inlined in this build?)")
    missing = [e for e in EVENTS if e not in out]
    if missing:
        raise CountError(f"count output unreadable: no {', '.join(missing)} among its events")
    return out


def per_op(events, ops):
    """The figures of counts.csv from the events of ops operations."""
    ir, reads, writes = events["Ir"], events["Dr"], events["Dw"]
    l1_misses = events["I1mr"] + events["D1mr"] + events["D1mw"]
    ram = events["ILmr"] + events["DLmr"] + events["DLmw"]
    l1_hits = ir + reads + writes - l1_misses
    cycles = l1_hits + 5 * (l1_misses - ram) + 35 * ram
    return {"instructions_per_op": ir / ops, "i1_misses_per_op": events["I1mr"] / ops,
            "lli_misses_per_op": events["ILmr"] / ops,
            "d1_misses_per_op": (events["D1mr"] + events["D1mw"]) / ops,
            "lld_misses_per_op": (events["DLmr"] + events["DLmw"]) / ops, "est_cycles_per_op": cycles / ops}


def cell_folder(folder, exe, libraries, trace=None):
    """The folder a counted cell runs in: the cell by its short name, its
    libraries' copies, and the trace it replays (trace:NAME) by its short name."""
    os.symlink(exe, os.path.join(folder, CELL_NAME))
    os.symlink(libraries, os.path.join(folder, plain_copies.LIBRARIES))
    if trace:
        os.symlink(trace, os.path.join(folder, TRACE_NAME))


class Running(set):
    """The valgrind processes of a count run that are running: on Ctrl-C, stop()
    ends them and no other starts (cell_protocol.run)."""

    def __init__(self):
        super().__init__()
        self._stop = threading.Event()

    def stopped(self):
        return self._stop.is_set()

    def stop(self):
        self._stop.set()
        for proc in list(self):
            try:
                proc.kill()
            except OSError:
                pass


def count_cell(cell, exe, libraries, listing, seed, timeout, running=None, trace=None):
    """The counts.csv entry of one cell (status ok or failed); CountError for an unreadable output.
    libraries: the folder of the copies of the libraries it loads (runner/plain_copies.py);
    listing: its compiler's cells' --list, with the workloads trace:NAME of the run;
    trace: the file a cell of trace:NAME replays."""
    entry = dict(zip(schema.KEY, cell.key()))
    entry.update(status="ok", reason="")
    with tempfile.TemporaryDirectory(prefix="allocmark-count-") as scratch:
        out_file = os.path.join(scratch, "callgrind.out")
        cell_folder(scratch, exe, libraries, trace)
        from_warm_up = bool(listing.get("count_start"))
        facts = next(w for w in listing["workloads"] if w["name"] == cell.workload)
        aged, reps = bool(facts.get("age")), facts.get("seeds") or 1
        cmd = prefix(out_file, from_warm_up) + cell_protocol.command(
            "./" + CELL_NAME, cell.workload, cell.size, seed=seed, param=cell.param, reps=reps, samples=1, alone=True,
            trace=TRACE_NAME if trace else None)
        out, why = cell_protocol.run(cmd, timeout, cwd=scratch, env=dict(CELL_ENV), running=running)
        why = why or cell_protocol.check_answer(out)
        if why or out.get("status") != "ok":
            entry.update(status="failed" if why or out.get("status") == "failed" else out["status"],
                         reason=why or out.get("reason", ""))
            return entry
        events = read_events(out_file + measured_dump(from_warm_up, aged))
    reps, ops_per_rep = out["reps"], out.get("ops_per_rep") or 1
    entry.update(reps=reps, ops_per_rep=ops_per_rep, **per_op(events, reps * ops_per_rep))
    return entry


def shard_cells(cells, shard):
    """The cells of shard (i, N): every N-th cell of the matrix in key order."""
    ordered = sorted(cells, key=lambda c: c.fields())
    if not shard:
        return ordered
    i, n = shard
    return ordered[i - 1::n]


def run_seed(cfg, seed_given):
    """The seed of the counted inputs: --seed, else the timed run's in the folder, else DEFAULT_SEED."""
    if seed_given is not None:
        return seed_given
    try:
        with open(os.path.join(cfg.out_dir, "meta.json")) as f:
            return int(json.load(f)["seed"])
    except (OSError, ValueError, KeyError, TypeError):
        return DEFAULT_SEED


def settings(cfg, seed, version):
    """counts.json without the shard: what two count runs must share to be compared or merged."""
    return {"tool": version, "caches": dict(CACHES), "aslr": "off", "environment": dict(CLOCK_FREE),
            "formula": FORMULA, "reps": REPS_COUNTED,
            "seed": seed, "baseline": cfg.baseline, "strategies": list(cfg.order),
            "workloads": list(cfg.workloads), "quick": cfg.quick,
            "sizes": cfg.sizes if isinstance(cfg.sizes, str) else list(cfg.sizes),
            "compilers": {c: cfg.listing[c].get("compiler", "") for c in cfg.compilers},
            "traces": trace_files.described(cfg.traces)}


def check_folder(out_dir):
    if os.path.exists(os.path.join(out_dir, "counts.csv")):
        raise UsageError(f"the run folder '{out_dir}' holds counts already (counts.csv); give another folder")
    if runlock.holder(out_dir) is not None:
        raise being_written(out_dir)


def being_written(out_dir):
    return UsageError(f"the run folder '{out_dir}' is being written by another run "
                      f"({runlock.describe(runlock.holder(out_dir) or {})}; its {runlock.LOCK}), or one that "
                      f"died there: count into it once that run has finished, or give another folder")


def lock_folder(out_dir):
    """Creates the folder when new and takes its lock for the count, so that a
    timed run cannot start into it and no count starts into a folder a run
    is writing (its valgrind would run beside the timed cells, and that run's
    last write would drop the counts from its tables)."""
    try:
        runlock.take_folder(out_dir)
    except OSError as e:
        if isinstance(e, FileExistsError):
            raise being_written(out_dir)
        raise UsageError(f"cannot write the run folder '{out_dir}': {e.strerror or e}")


def run(cfg, seed_given=None, shard=None, jobs=None, named=()):
    """Counts every cell of cfg (of one shard), writes counts.csv, counts.json
    and the counts tables; returns the exit status. named: the workloads
    asked for by name, of which none may be threaded."""
    threaded = sorted({c.workload for c in cfg.cells if c.threaded and c.workload in (named or ())})
    if threaded:
        raise UsageError(f"a count run cannot count threaded workloads ({THREADED}): {', '.join(threaded)}")
    version = valgrind_version()
    check_folder(cfg.out_dir)
    seed = run_seed(cfg, seed_given)
    cells = shard_cells(cfg.cells, shard)
    meta = dict(settings(cfg, seed, version), shard=f"{shard[0]}/{shard[1]}" if shard else None,
                status="running")
    entries, todo = {}, []
    for c in cells:
        why = not_counted_reason(c)
        if why:
            entries[c.key()] = dict(zip(schema.KEY, c.key()), status=NOT_COUNTED, reason=why)
        else:
            todo.append(c)
    lock_folder(cfg.out_dir)
    try:
        return count_and_write(cfg, todo, len(cells), entries, meta, seed, jobs)
    finally:
        runlock.release(cfg.out_dir)


def count_and_write(cfg, todo, n_cells, entries, meta, seed, jobs):
    """Counts the cells todo into entries, then writes them; returns the exit
    status. Ctrl-C stops every valgrind process, starts none, and writes
    the cells counted (exit 130)."""
    unreadable = []
    print(f"count: {len(todo)} cells under callgrind ({n_cells - len(todo)} not counted), "
          f"{jobs or os.cpu_count() or 1} at a time")
    running = Running()
    try:
        with tempfile.TemporaryDirectory(prefix="allocmark-plain-") as scratch:
            plain = {}
            for c in todo:
                if (c.compiler, c.strategy) not in plain:
                    exe = cfg.cell_exe(c.compiler, c.strategy)
                    plain[c.compiler, c.strategy] = plain_copies.cell(exe, scratch)
            libraries = os.path.join(scratch, plain_copies.LIBRARIES)
            plain_copies.libraries(sorted(set(plain.values())), libraries)
            pool = concurrent.futures.ThreadPoolExecutor(max_workers=jobs or os.cpu_count() or 1)
            try:
                futures = {pool.submit(count_cell, c, plain[c.compiler, c.strategy], libraries,
                                       cfg.listing[c.compiler], seed, cfg.timeout, running,
                                       cfg.traces.get(c.workload)): c
                           for c in todo}
                for f in concurrent.futures.as_completed(futures):
                    c = futures[f]
                    try:
                        entries[c.key()] = f.result()
                    except CountError as e:
                        unreadable.append(f"{' '.join(c.fields())}: {e}")
                        entries[c.key()] = dict(zip(schema.KEY, c.key()), status="failed", reason=str(e))
            except BaseException:
                running.stop()
                pool.shutdown(wait=False, cancel_futures=True)
                raise
            finally:
                pool.shutdown(wait=True)  # the cells still running were ended by stop(): at once
        meta["status"] = "done"
    except KeyboardInterrupt:
        meta["status"] = "interrupted"
    write(cfg.out_dir, entries.values(), meta)
    print(f"wrote {os.path.join(cfg.out_dir, 'counts.csv')}, counts.json and counts.txt")
    if os.path.exists(os.path.join(cfg.out_dir, "summary.csv")):
        beside_times(cfg.out_dir)
    if meta["status"] == "interrupted":
        print(f"allocmark: interrupted: the {sum(e['status'] != NOT_COUNTED for e in entries.values())} cells "
              f"counted before are in {os.path.join(cfg.out_dir, 'counts.csv')}", file=sys.stderr)
        return 130
    if unreadable:
        print("allocmark: count output unreadable (the other cells are kept in counts.csv):\n  " +
              "\n  ".join(unreadable), file=sys.stderr)
        return 2
    return 0


def beside_times(folder):
    """The tables of the timed run in folder, rewritten with the counts beside the times."""
    try:
        regenerate.regenerate(folder)
    except RunError as e:
        print(f"allocmark: the counts are in counts.csv, but the tables of the timed run in '{folder}' were not "
              f"rewritten with them: {e}", file=sys.stderr)
        return
    print(f"rewrote {os.path.join(folder, 'tables.txt')} and tables.md with the counts beside the times")


def write(out_dir, entries, meta):
    # the figures as counts.csv holds them (schema.fmt): counts.txt is made of
    # them, so that a run's table and its shards' merged table, which is read
    # from their CSV files, say the same
    rows = [{k: schema.number(schema.fmt(v)) if isinstance(v, float) else v for k, v in e.items()}
            for e in sorted(entries, key=lambda e: schema.key_fields(schema.key_of(e)))]
    outputs.write_atomic(os.path.join(out_dir, "counts.json"), json.dumps(meta, indent=1, sort_keys=True) + "\n")
    outputs.write_atomic(os.path.join(out_dir, "counts.csv"),
                         schema.csv_text(schema.COUNT_COLS, ([e.get(k) for k in schema.COUNT_COLS] for e in rows)))
    outputs.write_atomic(os.path.join(out_dir, "counts.txt"), count_tables.text(rows, meta["baseline"], meta))


def merge(out_dir, parts):
    """Writes into out_dir the counts of the shards' folders, as the unsplit run writes them."""
    if not parts:
        raise UsageError("--merge: give the shards' folders")
    check_folder(out_dir)
    read_parts = [(p,) + rundir.read_counts(p) for p in parts]
    first = {k: v for k, v in read_parts[0][1].items() if k not in ("shard", "status")}
    shards = [meta.get("shard") for _, meta, _ in read_parts]
    for path, meta, _ in read_parts:
        same = {k: v for k, v in meta.items() if k not in ("shard", "status")}
        if same != first:
            diff = sorted(k for k in set(same) | set(first) if same.get(k) != first.get(k))
            raise UsageError(f"--merge: '{path}' was counted with other settings than '{parts[0]}' "
                             f"({', '.join(diff)})")
        if meta.get("status") != "done":
            raise UsageError(f"--merge: '{path}' is not a finished count run (status {meta.get('status')})")
    total = {str(s).split("/")[-1] for s in shards}
    if None in shards or len(total) != 1 or sorted(shards) != sorted(f"{i}/{n}" for n in total
                                                                      for i in range(1, int(n) + 1)):
        raise UsageError(f"--merge: the parts are shards {', '.join(map(str, shards))}, not every shard "
                         f"of one split once")
    entries = {schema.key_of(e): e for _, _, rows in read_parts for e in rows}
    os.makedirs(out_dir, exist_ok=True)
    write(out_dir, entries.values(), dict(first, shard=None, status="done"))
    print(f"merged {len(parts)} shards into {os.path.join(out_dir, 'counts.csv')}")
    return 0
