"""cell_process.py: starts one am-cell process and reads its answer, the last
JSON line it prints, or says why there is none (crash, timeout, exit status).
It knows nothing of rounds or of the matrix."""
import json
import math
import os
import signal
import subprocess
import time

from runner import pinning

# Windows has no signals: a crashed process exits with its exception's NTSTATUS
WINDOWS_CRASHES = {0xC0000005: "access violation", 0xC00000FD: "stack overflow",
                   0xC0000409: "fail-fast or stack buffer overrun", 0xC0000374: "heap corruption",
                   0xC000001D: "illegal instruction", 0xC0000094: "integer division by zero",
                   0x80000003: "breakpoint"}
WINDOWS_CTRL_C = 0xC000013A


def read_json_line(text):
    """(the last line of text that starts as a JSON object, parsed, or None;
    why that line is not JSON, or None)."""
    for line in reversed(text.strip().splitlines()):
        line = line.strip()
        if line.startswith("{"):
            try:
                out = json.loads(line)
            except ValueError as e:
                return None, f"answer is not valid JSON ({e}): '{line[:80]}'"
            return (out, None) if isinstance(out, dict) else (None, "answer is not a JSON object")
    return None, None


def parse_json_line(text):
    """The last line of text that is a JSON object, or None."""
    return read_json_line(text)[0]


def _positive_number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) and v > 0


def check_answer(out):
    """Why a cell's answer to a measurement (its JSON line, parsed) cannot be
    kept, or None. The cell is another program: a NaN, null or negative time
    kept would end the run in the statistics, and with it every cell done."""
    status = out.get("status")
    if status not in ("ok", "failed", "skipped"):
        return f"unexpected answer: status {json.dumps(status)[:40]}"
    if status != "ok":
        return None
    samples = out.get("samples_ns")
    if not isinstance(samples, list) or not samples:
        return f"unexpected answer: samples_ns is {json.dumps(samples)[:40]}, not a list of sample times"
    for i, ns in enumerate(samples):
        if not _positive_number(ns):
            return f"unexpected answer: samples_ns[{i}] is {json.dumps(ns)[:40]}, not a positive time"
    reps = out.get("reps")
    if not isinstance(reps, int) or isinstance(reps, bool) or reps < 1:
        return f"unexpected answer: reps is {json.dumps(reps)[:40]}, not a positive whole number"
    if "partner_samples_ns" in out:
        partner = out["partner_samples_ns"]
        if not isinstance(partner, list) or len(partner) != len(samples):
            return "unexpected answer: partner_samples_ns is not one time per sample"
        for i, ns in enumerate(partner):
            if not _positive_number(ns):
                return f"unexpected answer: partner_samples_ns[{i}] is {json.dumps(ns)[:40]}, not a positive time"
        preps = out.get("partner_reps")
        if not isinstance(preps, int) or isinstance(preps, bool) or preps < 1:
            return f"unexpected answer: partner_reps is {json.dumps(preps)[:40]}, not a positive whole number"
    return None


def signal_name(num):
    try:
        return signal.Signals(num).name
    except ValueError:
        return f"signal {num}"


def crash_reason(returncode, windows=(os.name == "nt")):
    """'crashed (...)' for a process that died of a signal or a Windows exception, else None."""
    if windows:
        code = returncode & 0xFFFFFFFF
        if code >= 0x80000000:
            return f"crashed ({WINDOWS_CRASHES.get(code, 'exception')} 0x{code:08X})"
        return None
    return f"crashed ({signal_name(-returncode)})" if returncode < 0 else None


def interrupted(returncode, windows=(os.name == "nt")):
    """The child died of Ctrl-C (SIGINT, or Windows' STATUS_CONTROL_C_EXIT)."""
    return returncode == -signal.SIGINT or (windows and returncode & 0xFFFFFFFF == WINDOWS_CTRL_C)


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


def run_process(cmd, timeout, cwd, env=None):
    """Runs one cell process: (json or None, failure reason or None)."""
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=cwd, env=env)
    except subprocess.TimeoutExpired:
        return None, f"timed out after {timeout:g} s"
    except OSError as e:  # could not start, e.g. the executable was removed during the run
        return None, f"could not start: {e.strerror or e}"
    if interrupted(p.returncode):
        raise KeyboardInterrupt
    crash = crash_reason(p.returncode)
    if crash:
        return None, crash
    out, malformed = read_json_line(p.stdout)
    err = p.stderr.strip().splitlines()
    sanitizer = [line for line in err if line.startswith("SUMMARY: ")]
    if out is not None and out.get("status") == "failed":
        return out, out.get("reason", "failed") + (f" (exit status {p.returncode})" if p.returncode else "")
    if p.returncode != 0 or out is None:
        if sanitizer:
            return None, f"crashed ({sanitizer[-1][len('SUMMARY: '):][:200]})"
        last = err[-1][:200] if err else malformed or "no output"
        return None, f"exit status {p.returncode}: {last}"
    return out, None


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
            return run_process(cmd, self.timeout, self.scratch, self.env)
        finally:
            seen = self.spent.setdefault(kind, [0, 0.0])
            seen[0] += 1
            seen[1] += time.monotonic() - t0
