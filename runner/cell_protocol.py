"""cell_protocol.py: the one Python module that speaks the protocol of the
measured process (cell/cell_main.c, am-cell-<row>): the command line of a
cell (command), starting it and reading the one JSON line it answers (run),
and checking that answer before anything keeps it (check_answer); the
answer kept, typed, is runfolder/answer.py's Answer."""
import json
import math
import os
import signal
import subprocess

from runfolder.errors import UsageError

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




def list_workloads(exe):
    """The cell's own description of its workloads (am-cell --list): a dict
    with "compiler" and "workloads" (name, summary, threaded, sizes, ...)."""
    try:
        p = subprocess.run([exe, "--list"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError) as e:
        raise UsageError(f"{exe} --list could not run: {e}")
    if p.returncode != 0:
        raise UsageError(f"{exe} --list failed: {p.stderr.strip()}")
    try:
        return json.loads(p.stdout)
    except ValueError:
        raise UsageError(f"{exe} --list printed no workload list")


# what a run folder keeps of each workload's --list entry (meta.json
# "workload_facts"), for the tables made again from it and for the report
FACTS = ("versus", "bench_lines", "slowdown", "dimension")


def workload_facts(listing, names):
    """{workload: {fact: value}} of the named workloads of a --list answer, in its order:
    the row it is also set against (versus), the row of its benchmark lines
    (bench_lines), its slowdown table (slowdown), its dimension (dimension)."""
    return {w["name"]: {k: w.get(k) for k in FACTS} for w in listing["workloads"] if w["name"] in names}


def command(exe, workload, size, *, seed=None, threads=1, param=0.0, mem_limit=None, work_loops=None,
            samples=None, min_ms=None, reps=None, partner_reps=None, expect=None, alone=False, mode=None,
            trace=None, place=None):
    """The argv of a cell. mode: None (measure), "stats-only" (one repetition's
    allocator statistics) or "stats" (the counting build's tables); trace: the
    file the workload trace:NAME replays; place: the placement its memory moves
    by (--layout shifted, layout.py)."""
    cmd = [exe, "--workload", workload, "--size", str(size)]
    if trace:
        cmd += ["--trace", trace]
    if seed is not None:
        cmd += ["--seed", str(seed)]
    if threads and threads > 1:
        cmd += ["--threads", str(threads)]
    if param:
        cmd += ["--param", repr(float(param))]
    if mem_limit:  # the cell caps itself: a preexec_fn here would cost a fork of this process
        cmd += ["--mem-limit", str(mem_limit)]
    if work_loops is not None:
        cmd += ["--work-loops", str(work_loops)]
    if mode:
        return cmd + ["--" + mode]
    if place is not None:
        cmd += ["--place", str(place)]
    if samples is not None:
        cmd += ["--samples", str(samples)]
    if min_ms is not None:
        cmd += ["--min-ms", repr(float(min_ms))]
    if reps is not None:
        cmd += ["--reps", str(reps)]
        if partner_reps:
            cmd += ["--partner-reps", str(partner_reps)]
        if isinstance(expect, int):
            cmd += ["--expect", str(expect)]
    if alone:
        cmd.append("--alone")
    return cmd


def run(cmd, timeout, cwd=None, env=None, running=None):
    """Runs one cell process: (its JSON line parsed, or None; why it failed, or None).
    running: a set the process is in while it runs, so that another thread can
    end it (a count run stopped by Ctrl-C); it also answers stopped(), and no
    process starts once it is true."""
    try:
        p = (subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=cwd, env=env)
             if running is None else _run_stoppable(cmd, timeout, cwd, env, running))
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


def _run_stoppable(cmd, timeout, cwd, env, running):
    """subprocess.run's result for a process that is in `running` while it runs;
    KeyboardInterrupt when running.stopped() is true before it starts or once it ran."""
    if running.stopped():
        raise KeyboardInterrupt
    with subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=cwd,
                          env=env) as proc:
        running.add(proc)
        try:
            if running.stopped():  # stopped while it started: the stopper may not have seen it
                proc.kill()
            out, err = proc.communicate(timeout=timeout)
        except BaseException:
            proc.kill()
            proc.communicate()
            raise
        finally:
            running.discard(proc)
    if running.stopped():
        raise KeyboardInterrupt
    return subprocess.CompletedProcess(cmd, proc.returncode, out, err)
