"""counting_tables.py: after the matrix, the counting wrapper's tables (the
cell's --stats on the -stats build) of the baseline, each workload at its
largest size in the run: stats-<strategy>-<workload>-<size>.txt in the run
folder. Nothing in them is timed."""
import os
import subprocess
import tempfile

from runner import cell_protocol
from runfolder import outputs
from runner.cell_process import cell_env
from runner.cell_protocol import parse_json_line


def write(cfg):
    compiler, strategy = cfg.compilers[0], cfg.baseline
    exe = cfg.cell_exe(compiler, strategy, stats_build=True)
    if not os.path.exists(exe):
        print(f"note: no counting tables ({exe} is not built)")
        return
    cpus = os.cpu_count() or 1
    for name in cfg.workloads:
        mine = [c for c in cfg.cells if c.workload == name and c.compiler == compiler]
        if not mine:
            continue
        size = max(c.size for c in mine)
        threads = max([c.threads for c in mine if c.threads <= cpus] or [1])
        param = min(c.param for c in mine)
        cmd = cell_protocol.command(exe, name, size, seed=cfg.seed, threads=threads, param=param,
                                    mem_limit=cfg.mem_limits.get(compiler), mode="stats",
                                    trace=cfg.traces.get(name))
        what = f"counting table of {strategy} {name} {size}"
        with tempfile.TemporaryDirectory(prefix="allocmark-") as scratch:
            try:
                p = subprocess.run(cmd, capture_output=True, text=True, timeout=cfg.timeout, cwd=scratch,
                                   env=cell_env(None, cfg.keep_allocator_env))
            except subprocess.TimeoutExpired:
                print(f"note: {what}: timed out")
                continue
        out = parse_json_line(p.stdout)
        if p.returncode != 0 or not out or out.get("status") != "ok":
            why = (out or {}).get("reason") or (p.stderr.strip().splitlines() or ["no output"])[-1]
            print(f"note: {what}: {why}")
            continue
        body = "\n".join(line for line in p.stdout.splitlines() if not line.startswith("{"))
        try:
            # a trace's workload, trace:NAME, without the colon no Windows file name may hold
            outputs.write_atomic(os.path.join(cfg.out_dir, f"stats-{strategy}-{name.replace(':', '_')}-{size}.txt"),
                                 body.rstrip() + "\n")
        except OSError as e:  # full disk: the results proper are written (or rescued) next
            print(f"note: {what} not written: {e.strerror or e}")
