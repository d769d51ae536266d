"""environment.py: what of the machine can blur or bias a timing, read where
the system shows it (Linux /proc and /sys): address-space randomization, the
CPU frequency governor and boost, transparent huge pages, the load average,
SMT, virtualization and the time the host stole, and builds with a
sanitizer or without optimization. The runner records it in meta.json
("environment") and prints one warning line when something is unfriendly.
It changes nothing on the machine."""
import glob
import os

# a load average above this share of the CPUs before the run: other jobs
# will share the CPUs with the cells
BUSY_LOAD_PER_CPU = 0.5


def _read(path):
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read().strip()
    except OSError:
        return None


def _aslr():
    v = _read("/proc/sys/kernel/randomize_va_space")
    return {"0": "off", "1": "on (stack, libraries)", "2": "on (full)"}.get(v, v)


def _governors():
    found = sorted({_read(p) for p in glob.glob("/sys/devices/system/cpu/cpu[0-9]*/cpufreq/scaling_governor")}
                   - {None})
    return ", ".join(found) if found else None


def _boost():
    v = _read("/sys/devices/system/cpu/cpufreq/boost")
    if v is not None:
        return "on" if v == "1" else "off"
    v = _read("/sys/devices/system/cpu/intel_pstate/no_turbo")
    if v is not None:
        return "off" if v == "1" else "on"
    return None


def _selected(text):
    """'always [madvise] never' -> 'madvise'."""
    if not text:
        return None
    for word in text.split():
        if word.startswith("[") and word.endswith("]"):
            return word[1:-1]
    return text


def _virtualization():
    flags = ""
    for line in (_read("/proc/cpuinfo") or "").splitlines():
        if line.startswith("flags"):
            flags = line
            break
    vendor = _read("/sys/class/dmi/id/sys_vendor") or _read("/sys/hypervisor/type")
    if " hypervisor" in flags or vendor and any(v in vendor for v in ("QEMU", "KVM", "VMware", "Xen", "Microsoft",
                                                                      "Amazon", "Google", "xen")):
        return "virtual machine" + (f" ({vendor})" if vendor else "")
    return "none seen" if flags else None


def cpu_times():
    """(steal, total) jiffies of every CPU so far (/proc/stat), or None."""
    line = (_read("/proc/stat") or "").splitlines()[:1]
    parts = line[0].split() if line else []
    if len(parts) < 9 or parts[0] != "cpu":
        return None
    values = [int(x) for x in parts[1:]]
    return values[7], sum(values[:8])


def steal_share(start, end):
    """The share of CPU time the host took from this VM between two cpu_times()."""
    if not start or not end or end[1] <= start[1]:
        return None
    return (end[0] - start[0]) / (end[1] - start[1])


def build_kind(flags):
    """'sanitizer', 'debug' (no optimization) or 'optimized', from a compiler's flags."""
    words = (flags or "").split()
    if any(w.startswith("-fsanitize") for w in words):
        return "sanitizer"
    opts = [w for w in words if w.startswith("-O") or w.startswith("/O")]
    if not opts or opts[-1] in ("-O0", "/Od"):
        return "debug" if flags else "unknown"
    return "optimized"


def check(compilers, cpu_count):
    """The facts ({name: text or number}) and the unfriendly ones (short
    phrases) for the compilers' entries of meta.json (name, flags)."""
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    facts = {"aslr": _aslr(), "cpu_governor": _governors(), "cpu_boost": _boost(),
             "transparent_hugepages": _selected(_read("/sys/kernel/mm/transparent_hugepage/enabled")),
             "load_average": round(load, 2) if load is not None else None,
             "smt": _read("/sys/devices/system/cpu/smt/active") and
             ("on" if _read("/sys/devices/system/cpu/smt/active") == "1" else "off"),
             "virtualization": _virtualization(),
             "builds": {c.get("name"): build_kind(c.get("flags")) for c in compilers}}
    bad = []
    if load is not None and cpu_count and load > BUSY_LOAD_PER_CPU * cpu_count:
        bad.append(f"load average {load:.1f} on {cpu_count} CPUs")
    gov = facts["cpu_governor"]
    if gov and gov != "performance":
        bad.append(f"CPU governor {gov}")
    if facts["cpu_boost"] == "on":
        bad.append("CPU boost on")
    if facts["smt"] == "on":
        bad.append("SMT on (a sibling thread shares the core)")
    for name, kind in facts["builds"].items():
        if kind in ("sanitizer", "debug"):
            bad.append(f"a {kind} build ({name})")
    return {k: v for k, v in facts.items() if v is not None}, bad


def warning(bad):
    """The one line printed when the machine is unfriendly, or None."""
    if not bad:
        return None
    return ("allocmark: warning: unfriendly for timing: " + "; ".join(bad) +
            " (meta.json: environment); expect wider intervals and more unstable cells")
