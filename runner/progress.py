"""progress.py: what the runner says while it measures: on a terminal one
progress line (visit j/N, round, elapsed, ETA) that rewrites itself,
otherwise (piped to a file) a plain line at every tenth of the visits, and
a line for each failed cell either way. It only prints."""
import sys
import time

from runfolder import tables
from runfolder.schema import MEDIAN, fmt


def clock(s):
    s = int(s)
    return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}" if s >= 3600 else f"{s // 60}:{s % 60:02d}"


class Progress:
    """cell j/N of the matrix (and round r/R, or revisit r), elapsed time and
    an ETA from the visits made so far (the planned rounds; a revisit adds
    its visits when it starts)."""

    def __init__(self, cells, rounds, multi_compiler):
        self.cells, self.rounds, self.multi = cells, rounds, multi_compiler
        self.total = cells * rounds  # visits still planned, made or not
        self.tty = sys.stdout.isatty()
        self.start = time.monotonic()
        self.width = 0
        self.skipped = 0
        self.i = 0          # visits so far, skipped ones too
        self.in_round = 0   # visits of the current round so far, skipped ones too
        self.round_size = cells
        self.rnd = 0
        self.tenths = 0     # tenths of the visits said so far, when not a terminal

    def _where(self, rnd):
        where = f"cell {self.in_round + 1}/{self.round_size}"
        if rnd >= self.rounds:
            return where + f" revisit {rnd - self.rounds + 1}"
        return where + (f" round {rnd + 1}/{self.rounds}" if self.rounds > 1 else "")

    def _name(self, c):
        extra = (f" T={c.threads}" if c.threaded else "") + (f" param={fmt(c.param)}" if c.param else "")
        return (f"{c.compiler} " if self.multi else "") + f"{c.strategy} {c.workload} {c.size}{extra}"

    def _next(self, rnd):
        if rnd != self.rnd:
            self.rnd, self.in_round = rnd, 0
        self.i += 1
        self.in_round += 1

    def skip(self, rnd=0):
        """A visit not made (a later round of a failed or skipped cell): the ETA
        counts only the visits left to make."""
        self.total -= 1
        self.skipped += 1
        self._next(rnd)

    def revisit(self, extra, cells):
        """A revisit of `cells` cells begins (those that need it)."""
        self.total += cells
        self.round_size = cells
        if not self.tty:
            print(f"revisit {extra + 1}: {cells} cells, of the undecided ratios and their baseline, "
                  f"and of the blocks whose CPU changed state", flush=True)

    def out_of_time(self, blocks, budget_s):
        """The revisits stopped at the run's time budget with `blocks` blocks
        still wanting one."""
        self.finish()
        self.width = 0
        print(f"{blocks} block{'s' if blocks > 1 else ''} wanted a revisit the time budget of "
              f"{budget_s:g} s had no room for (--budget)", flush=True)

    def rounds_cut(self, taken, planned, budget_s):
        """The planned rounds stopped at the run's time budget after `taken`."""
        self.finish()
        self.width = 0
        print(f"the time budget of {budget_s:g} s had room for {taken} of the {planned} planned rounds "
              f"(--budget): every cell has {taken} visits", flush=True)

    def before(self, m, rnd=0):
        if rnd != self.rnd:
            self.rnd, self.in_round = rnd, 0
        if not self.tty:
            return
        made = self.i - self.skipped
        elapsed = time.monotonic() - self.start
        eta = "?" if made == 0 else clock(elapsed / made * (self.total - made))
        line = f"{self._where(rnd)}  {self._name(m.cell)}  {clock(elapsed)} elapsed  ETA {eta}"
        sys.stdout.write("\r" + line.ljust(self.width))
        sys.stdout.flush()
        self.width = len(line)

    def after(self, m, seconds, rnd=0):
        if m.status == "ok":
            what = f"{tables.format_time(m.summary[MEDIAN])}/op"
        elif m.status == "skipped":
            what = f"skipped: {m.reason}"
        else:
            what = f"FAILED: {m.reason}"
        if self.tty:
            if m.status == "failed":
                sys.stdout.write("\r" + " " * self.width + "\r")
                print(f"{self._where(rnd)}  {self._name(m.cell)}  {what}")
                self.width = 0
        else:
            self._next(rnd)
            made = self.i - self.skipped
            tenths = 10 * made // max(self.total, 1)
            if m.status == "failed" or tenths > self.tenths:
                self.tenths = max(self.tenths, tenths)
                elapsed = time.monotonic() - self.start
                eta = clock(elapsed / made * (self.total - made)) if made else "?"
                print(f"{made}/{self.total} visits  {clock(elapsed)} elapsed  ETA {eta}  "
                      f"{self._name(m.cell)}  {what}", flush=True)
            return
        self._next(rnd)

    def finish(self):
        if self.tty and self.width:
            sys.stdout.write("\r" + " " * self.width + "\r")
            sys.stdout.flush()
