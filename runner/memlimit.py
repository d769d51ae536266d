"""memlimit.py: the address-space limit (RLIMIT_AS) put on each measured cell
(the runner passes it as the cell's --mem-limit, and the cell sets it on itself),
so that a size that does not fit makes the strategy return NULL, which the
cell reports as "out of memory", instead of pushing a shared machine into
swap or the OOM killer. Not applied to sanitizer builds (ASan and TSan reserve
terabytes of address space up front) nor where the OS has no setrlimit
(Windows); meta.json says which.
"""
import os
import re

try:
    import resource
except ImportError:  # Windows
    resource = None

# a cell process needs a few MiB of address space just to start (libc, stack,
# its own tables): below this every cell would fail, which is no measurement
MIN_BYTES = 16 << 20
# the cell reads its limit as a 64-bit number
MAX_BYTES = 2 ** 64 - 1
SUFFIX = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


def parse(s):
    """'auto', 'none' or bytes with an optional K/M/G/T suffix (binary: 4G =
    4 GiB); ValueError with the reason otherwise."""
    t = s.strip()
    if t.lower() in ("auto", "none"):
        return t.lower()
    m = re.fullmatch(r"(\d+)\s*([KMGT]?)(?:I?B)?", t.upper())
    if not m:
        raise ValueError(f"not a memory size: '{s}' (give bytes, or a number with K, M, G or T: "
                         f"512M, 4G; 'auto' or 'none')")
    v = int(m.group(1)) * SUFFIX[m.group(2)]
    if v > MAX_BYTES:
        raise ValueError(f"memory limit '{s}' is past 2^64 - 1 bytes, which a cell cannot read "
                         f"('none' sets no limit)")
    if v < MIN_BYTES:
        raise ValueError(f"memory limit '{s}' is too small: a cell needs at least {human(MIN_BYTES)} "
                         f"to start ('none' sets no limit)")
    return v


def human(n):
    for unit, size in (("TiB", 1 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size:
            return f"{n / size:.1f}".rstrip("0").rstrip(".") + " " + unit
    return f"{n} bytes"


def physical_memory():
    """Bytes of RAM (MemTotal), or None where unknown."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):
        return None


def sanitized(build_dir):
    """True if the cells in build_dir (build/<compiler>) were built with
    -fsanitize: its flags.txt or compiler.json (written by make) says so."""
    for name in ("flags.txt", "compiler.json"):
        try:
            with open(os.path.join(build_dir, name)) as f:
                if "-fsanitize" in f.read():
                    return True
        except OSError:
            pass
    return False


def choose(request):
    """(bytes or None, why) for --mem-limit's value (parsed)."""
    if resource is None or not hasattr(resource, "RLIMIT_AS"):
        return None, "not applied: this OS has no setrlimit(RLIMIT_AS)"
    if request == "none":
        return None, "--mem-limit none"
    if request == "auto":
        ram = physical_memory()
        if not ram:
            return None, "not applied: physical memory unknown (give --mem-limit)"
        return ram // 2, f"half of physical memory ({human(ram)})"
    return request, "--mem-limit"
