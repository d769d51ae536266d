"""cell_process.py: the environment of a run's cells and the Launcher, which
starts each (cell_protocol.run) where and how the run says: the scratch
folder, the CPU the pinner chose, the allocator variables cleared. It knows
nothing of rounds or of the matrix."""
import os
import time

from runner import cell_protocol, pinning


# Variables that change which malloc serves a process or how it behaves
# (a preload, glibc's tunables and MALLOC_* settings, jemalloc's MALLOC_CONF,
# mimalloc's, tcmalloc's and scudo's options). Left in, a row would measure
# whatever the user's shell had set, unrecorded.
ALLOCATOR_VARIABLES = ("LD_PRELOAD", "GLIBC_TUNABLES", "SCUDO_OPTIONS")
ALLOCATOR_PREFIXES = ("MALLOC_", "JE_MALLOC_", "MIMALLOC_", "TCMALLOC_")


def allocator_variables(environ):
    """{name: value} of the environment's allocator variables."""
    return {k: v for k, v in sorted(environ.items())
            if k in ALLOCATOR_VARIABLES or k.startswith(ALLOCATOR_PREFIXES)}


def allocator_note(environ, keep):
    """What meta.json says of them: those the cells did not see (cleared) and
    those they did (kept, with --keep-allocator-env)."""
    found = allocator_variables(environ)
    return {"cleared": {} if keep else found, "kept": found if keep else {}}


def cell_env(tmpdir, keep_allocator_env=False):
    """The environment of a cell: the allocator variables removed (unless
    kept), and AM_TMPDIR naming the run's temporary folder, where file-backed
    strategies (mmap_file) put their files. The cell runs in another working
    directory, so the folder is made absolute here."""
    env = dict(os.environ)
    if not keep_allocator_env:
        for k in allocator_variables(env):
            del env[k]
    if tmpdir:
        env["AM_TMPDIR"] = os.path.abspath(tmpdir)
    return env


class Launcher:
    """Starts the cells of a run: each in the scratch folder, with the run's
    environment and timeout, on the CPU the pinner chose (a cell with several
    threads on every CPU). It keeps the count and the wall time of the
    processes of each kind (first visits, later ones, -stats runs): where a
    run's time goes (meta.json, "time")."""

    def __init__(self, timeout, scratch, tmpdir=None, pinner=None, keep_allocator_env=False):
        self.timeout, self.scratch, self.pinner = timeout, scratch, pinner
        self.env = cell_env(tmpdir, keep_allocator_env)
        self.spent = {}  # kind -> [processes, seconds]

    def run(self, cmd, many_threads=False, kind="visit"):
        pinning.place(self.pinner and self.pinner.cpu, many_threads)
        t0 = time.monotonic()
        try:
            return cell_protocol.run(cmd, self.timeout, self.scratch, self.env)
        finally:
            seen = self.spent.setdefault(kind, [0, 0.0])
            seen[0] += 1
            seen[1] += time.monotonic() - t0
