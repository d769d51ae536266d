"""meta.py: meta.json, what a run folder says about how it was made: the
machine, the compilers and malloc libraries, the configuration, the state of
the run and the counts of its cells. It asks the system (dpkg-query, git,
/proc/cpuinfo); it measures nothing."""
import datetime
import json
import os
import platform
import shlex
import shutil
import socket
import subprocess
import sys

from runner import cell_process, cell_protocol, config, environment, layout, trace_files
from runfolder import catalog, runlock

ROOT = catalog.ROOT


def command_output(cmd, cwd=ROOT):
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=20, cwd=cwd)
        return p.stdout.strip() if p.returncode == 0 else None
    except (OSError, subprocess.SubprocessError):
        return None


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _packages(paths):
    """{path: "package version"} of the Debian packages that own the paths
    (one dpkg-query for all: each call reads the whole database)."""
    package_of, version_of = {}, {}
    if not paths:
        return {}
    for line in (command_output(["dpkg-query", "-S"] + paths) or "").splitlines():
        pkg, _, path = line.partition(": ")
        package_of[path.strip()] = pkg.split(":")[0]
    pkgs = sorted(set(package_of.values()))
    if pkgs:
        for line in (command_output(["dpkg-query", "-W", "-f", "${Package} ${Version}\\n"] + pkgs)
                     or "").splitlines():
            name, _, ver = line.partition(" ")
            version_of[name] = ver
    return {p: f"{pkg} {version_of.get(pkg, '')}".strip() for p, pkg in package_of.items()}


def library_versions(bindir, built, rows):
    """Debian package and version of each -l library a built row links, found
    from the executable's ldd line."""
    libs_of = {r.name: r.libs for r in rows}
    wanted = {}
    for name in built:
        libs = [w[2:] for w in libs_of.get(name, "").split() if w.startswith("-l")]
        if not libs:
            continue
        ldd = command_output(["ldd", catalog.cell_exe(bindir, name)]) or ""
        for lib in libs:
            path = None
            for line in ldd.splitlines():
                parts = line.split()
                if parts and parts[0].startswith(f"lib{lib}.so") and "=>" in parts and len(parts) > 2:
                    path = os.path.realpath(parts[2])
            wanted.setdefault(name, []).append((lib, path))
    package = _packages(sorted({p for v in wanted.values() for _, p in v if p}))
    return {name: ", ".join(package.get(path) or f"lib{lib} (version unknown{': ' + path if path else ''})"
                            for lib, path in found)
            for name, found in wanted.items()}


def compiler_info(build_root, compiler, listing):
    """A compiler's entry: its name (the build folder), command, version and
    flags (build/<name>/compiler.json, written by make) and --version line."""
    info = {"name": compiler, "command": None, "version": listing.get("compiler"), "flags": None}
    path = os.path.join(build_root, compiler, "compiler.json")
    try:
        with open(path) as f:
            info.update({k: v for k, v in json.load(f).items() if v})
    except (OSError, ValueError):
        pass
    if not info["command"] and shutil.which(compiler):
        info["command"] = compiler  # a folder named after its compiler (make CC=clang)
    if info["command"] and not info.get("version_line"):
        # a path as CMake records it may hold spaces ("C:/Program Files/...")
        cmd = [info["command"]] if os.path.exists(info["command"]) else shlex.split(info["command"])
        line = command_output(cmd + ["--version"])
        if line:
            info["version_line"] = line.splitlines()[0]
    return info


def git_revision():
    rev = command_output(["git", "rev-parse", "HEAD"])
    if not rev:
        return None
    dirty = command_output(["git", "status", "--porcelain", "--untracked-files=no"])
    return rev + ("+dirty" if dirty else "")


def static_meta(cfg):
    """The parts of meta.json that do not change during a run (some take a
    second to find out: dpkg-query), gathered once before the first cell."""
    first = cfg.compilers[0]
    compilers = [compiler_info(cfg.build_root, c, cfg.listing[c]) for c in cfg.compilers]
    facts, unfriendly = environment.check(compilers, os.cpu_count())
    return {
        "host": socket.gethostname(),
        "cpu_model": cpu_model(),
        "cpu_count": os.cpu_count(),
        "kernel": f"{platform.system()} {platform.release()}",
        "python": platform.python_version(),
        "compilers": compilers,
        "libraries": library_versions(cfg.bin_dir(first), cfg.rows_of[first], cfg.rows),
        "c_library": " ".join(platform.libc_ver()).strip() or None,
        "git_revision": git_revision(),
        "environment": dict(facts, unfriendly=unfriendly),
        "allocator_environment": cell_process.allocator_note(os.environ, cfg.keep_allocator_env),
        # the files the workloads trace:NAME replay, so that a later command on
        # the folder replays these very bytes (runner/trace_files.py)
        "traces": trace_files.described(cfg.traces, with_path=True),
    }


def _hardware_counters(ok):
    hw = None
    for m in ok:
        v = m.result.hw_counters
        if v and v != "ok":
            return v
        if v == "ok":
            hw = "available"
    return hw or "unknown: no cell finished"


def command_line():
    """The command that started the run, as typed in the top folder: a program
    started as a module (python3 -m runner.allocmark) is named by its module, not
    by the path of its file on this machine."""
    spec = getattr(sys.modules.get("__main__"), "__spec__", None)
    if spec is None:
        words = sys.argv
    else:
        module = spec.name[:-len(".__main__")] if spec.name.endswith(".__main__") else spec.name
        words = ["python3", "-m", module] + sys.argv[1:]
    return " ".join(shlex.quote(a) for a in words)


def make_meta(cfg, static, measurements, started, state, pinning_note, revisits=None, cpu_times=None):
    """meta.json as a dict. revisits: what the run's revisits did (run.Visits.note);
    cpu_times: environment.cpu_times() as the run began, for the host's steal."""
    ok = [m for m in measurements if m.status == "ok"]
    res = [m.result.timer_resolution_ns for m in ok if m.result.timer_resolution_ns]
    meta = {"run_id": cfg.run_id, "date": started.isoformat(timespec="seconds"), "state": state,
            "runner": runlock.this_runner()}  # so that a reader can tell a run that died (rundir.py)
    meta.update(static)
    meta.update({
        "seed": cfg.seed,
        "command_line": command_line(),
        "strategies": list(cfg.order),
        "workloads": list(cfg.workloads),
        "workload_facts": cell_protocol.workload_facts(cfg.listing[cfg.compilers[0]], cfg.workloads),
        "samples": cfg.samples,
        "baseline_samples": cfg.samples * config.BASELINE_SAMPLES,
        "rounds": cfg.rounds,
        "revisits": dict(revisits or {"limit": cfg.revisits}),
        "min_ms": cfg.min_ms,
        "threaded_min_ms": cfg.threaded_min_ms,
        "trace_min_ms": cfg.trace_min_ms,
        "threads_for_threaded_workloads": cfg.threads,
        "param": cfg.param,
        "baseline": cfg.baseline,
        "statistics": cfg.settings.as_meta(),
        "control": {"row": cfg.control, "twin": cfg.control_twin} if cfg.control else None,
        "notes": list(cfg.notes),
        "quick": cfg.quick,
        "sizes": cfg.sizes,
        "timeout_s": cfg.timeout,
        "mem_limit": dict(cfg.mem_limit_note),
        "cpu_pinning": pinning_note,
        "layout": layout.note(cfg.layout),
        "timer_resolution_ns": min(res) if res else None,
        "hardware_counters": _hardware_counters(ok),
        "cells": {"planned": len(measurements), "ok": len(ok),
                  "failed": sum(m.status == "failed" for m in measurements),
                  "not_run": sum(m.status == "pending" for m in measurements)},
        "elapsed_s": round((datetime.datetime.now() - started).total_seconds(), 1),
    })
    skipped = sum(m.status == "skipped" for m in measurements)
    if skipped:  # workloads that do not apply to a strategy (cell status "skipped")
        meta["cells"]["skipped"] = skipped
    meta["cells"]["unstable"] = sum(bool(m.summary and m.summary.get("unstable")) for m in ok)
    steal = environment.steal_share(cpu_times, environment.cpu_times())
    if steal is not None:
        meta["environment"] = dict(meta.get("environment") or {}, steal_pct=round(100 * steal, 2))
    return meta
