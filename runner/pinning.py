"""pinning.py: which CPU the single-threaded cells run on.

On shared 2-vCPU virtual machines one vCPU can run the same cell much slower
than the other for tens of seconds (docs/measurements.md, CPU states), and an
unpinned cell lands on either at random: medians of one cell jump between two
levels from process to process, which no number of samples inside a process
can fix. So the runner probes each CPU it may use, runs every single-threaded
cell on the fastest, and probes again every few seconds, as the slow and the
fast vCPU swap; cells with several threads get every CPU. Where the OS has no
affinity call (Windows, macOS) nothing is pinned and meta.json says so.

The same probe, taken before and after each block, tells whether a CPU the
block ran on changed state during it (moved): the runner then visits the
block again (run.py).
"""
import os
import subprocess
import time

from runner import cell_protocol

# a CPU must be this much faster than the last one to be chosen instead: near
# ties would otherwise flip between runs for nothing
CLEARLY_FASTER = 0.95
REPROBE_S = 2.0
# a CPU whose probe time changed by more than this between the probes around a
# block was in another state at its end than at its start (the two states of
# a vCPU differ by about 2x; the probe itself repeats within some 10% on a quiet VM)
MOVED = 0.30


_START_CPUS = []


def allowed_cpus():
    """The CPUs this process was allowed when it first asked (it narrows its
    own set later, see place), or None where affinity is unknown."""
    if not hasattr(os, "sched_getaffinity"):
        return None
    if not _START_CPUS:
        _START_CPUS.extend(sorted(os.sched_getaffinity(0)))
    return list(_START_CPUS)


def place(cpu, threaded_with_many=False):
    """Narrows this process to a cell's CPU set just before starting it: the
    cell inherits the set. (Setting it in the child with a preexec_fn makes
    Python fork instead of vfork, much slower: docs/measurements.md.) cpu None, or a
    cell with several threads: every allowed CPU."""
    cpus = allowed_cpus()
    if cpus is None:
        return
    target = set(cpus) if (cpu is None or threaded_with_many) else {cpu}
    if target != os.sched_getaffinity(0):
        os.sched_setaffinity(0, target)


def probe_command(exe, reps):
    """A short, fixed cell run. Of the workloads, the allocation loop tells a
    vCPU's slow and fast states apart best (docs/measurements.md)."""
    return cell_protocol.command(exe, "alloc_pair", 256, seed=1, samples=3, reps=reps, alone=True)


def probe_once(cmd, cpu):
    """The fastest sample's ns per repetition of cmd run on cpu alone, or None:
    the fastest, because a moment of another job on the CPU only slows a sample."""
    try:
        place(cpu)
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=20)
        d = cell_protocol.parse_json_line(p.stdout)
        return min(d["samples_ns"]) / d["reps"]
    except (OSError, subprocess.SubprocessError, ValueError, KeyError, IndexError, TypeError):
        return None


class Pinner:
    """The CPU of the single-threaded cells, probed again (refresh) when `every` seconds old:
    the slow vCPU and the fast one were seen to swap within a minute."""

    def __init__(self, exe, request="auto", every=REPROBE_S):
        self.exe, self.every = exe, every
        self.cpus = allowed_cpus()
        self.cpu, self.auto, self.last = None, False, 0.0
        self.note = {"pinned": None}
        self.probes, self.switches = 0, 0
        self.timings = {}  # {cpu: ns} of the last probe
        self.seconds = 0.0  # spent probing
        if self.cpus is None:
            self.note["why"] = "this OS has no CPU affinity call"
        elif request == "none":
            self.note["why"] = "--cpu none"
        elif request != "auto":
            if int(request) not in self.cpus:
                raise ValueError(f"--cpu {request}: this process may use CPUs "
                                 f"{', '.join(map(str, self.cpus))}")
            self.cpu = int(request)
            self.note = {"pinned": self.cpu, "why": "--cpu"}
        elif len(self.cpus) == 1:
            self.cpu = self.cpus[0]
            self.note = {"pinned": self.cpu, "why": "the only CPU allowed"}
        else:
            self.auto = True
            self.cpu = self.cpus[-1]
            self.note = {"why": "the fastest CPU in a short probe (alloc_pair 256), "
                                f"probed again before a block of cells when {every:g} s old"}
            self.probe(rounds=2, reps=20)

    def probe(self, rounds=1, reps=8):
        t0 = time.monotonic()
        timings = {}
        for _ in range(rounds):  # alternating rounds, best of each: one slow moment decides nothing
            for cpu in self.cpus:
                ns = probe_once(probe_command(self.exe, reps), cpu)
                if ns is not None:
                    timings[cpu] = min(ns, timings.get(cpu, ns))
        self.probes += 1
        self.last = time.monotonic()
        self.seconds += self.last - t0
        self.timings = timings
        if timings:
            best = min(timings, key=timings.get)
            if self.cpu not in timings or timings[best] < CLEARLY_FASTER * timings[self.cpu]:
                self.switches += best != self.cpu and self.probes > 1
                self.cpu = best
            self.note["probe_ns"] = {str(c): round(v) for c, v in sorted(timings.items())}
        self.note.update({"pinned": self.cpu, "probes": self.probes, "switches": self.switches})

    def refresh(self):
        """Before a cell: probe again when the last probe is old."""
        if self.auto and time.monotonic() - self.last >= self.every:
            self.probe()
        return self.cpu

    def before_block(self):
        """The probe's timings as a block starts (the last probe when it was just
        taken, after the block before); {} when the CPUs are not probed."""
        if self.auto and time.monotonic() - self.last >= self.every:
            self.probe()
        return dict(self.timings) if self.auto else {}

    def after_block(self, before, many_threads):
        """Probes again after a block; True when a CPU it ran on (the pinned one,
        or every CPU for a block of cells with several threads) moved."""
        if not self.auto or not before:
            return False
        cpu = self.cpu
        self.probe()
        watched = list(before) if many_threads else [cpu]
        return moved(before, self.timings, watched)


def moved(before, after, cpus):
    """True when one of cpus has a time in both probes and it changed by more than MOVED."""
    for c in cpus:
        a, b = before.get(c), after.get(c)
        if a and b and abs(b / a - 1) > MOVED:
            return True
    return False

