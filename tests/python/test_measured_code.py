"""What the measured cells execute, read from the executables of both gcc and
clang (each one that is installed):

- the harness of the alloc_* patterns costs a few instructions an operation:
  callgrind counts inside alloc_pair_run, as the difference between two --reps
  values, at most 20 instructions per alloc+free pair of 8 bytes for minimal and
  30 for the free-list pools (it was 77-104 while the stamps were
  variable-length copies: clang called memcpy four times a pair);
- no compiler deleted a container's teardown walk for a row: the loop nests
  of each one-thread workload's run function are at least those of the system
  row, whose free is a library call no compiler can remove (when minimal's free
  did nothing, clang kept one loop nest of list_create's three).

Builds the rows it reads (make cells) in build/<compiler>; skipped where the
build is not a measured one, or without binutils or valgrind."""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_runner import BUILD, ROOT  # noqa: E402

COMPILERS = ("gcc", "clang")


def family(command):
    """'gcc' or 'clang' for a compiler command, None when unknown"""
    try:
        text = subprocess.run([command, "--version"], capture_output=True, text=True).stdout
    except OSError:
        return None
    return "clang" if "clang" in text else "gcc" if "Free Software Foundation" in text else None


def own_family():
    try:
        with open(os.path.join(BUILD, "flags.txt")) as f:
            return family(f.read().split()[0])
    except (OSError, IndexError):
        return family(os.path.basename(BUILD))


def build_rows(compiler, rows):
    """The bin folder holding the rows' measured cells for one compiler, built
    as needed (only those executables: no -stats twin); None where that build
    is not a measured one."""
    if compiler == own_family():
        build, extra = BUILD, []
    else:
        build, extra = os.path.join(ROOT, "build", compiler), ["CC=" + compiler]
    targets = [os.path.relpath(os.path.join(build, "bin", "am-cell-" + r), ROOT) for r in rows]
    subprocess.run(["make", "--no-print-directory", "-j2", "ALLOCATORS=" + ",".join(rows)] + extra + targets,
                   cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
    saved = os.path.join(build, "flags.txt")
    with open(saved) as f:
        flags = f.read().split()
    if "-fsanitize" in " ".join(flags) or "-DAM_DEBUG=1" in flags or not any(f in ("-O2", "-O3") for f in flags):
        return None
    return os.path.join(build, "bin")


def linked_rows():
    """The rows of strategies.txt that link in BUILD (the library probe's list):
    only executables this test has just brought up to date are read, never a
    stale one left by an older tree."""
    subprocess.run(["make", "--no-print-directory", os.path.relpath(os.path.join(BUILD, "rows.txt"), ROOT)],
                   cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
    with open(os.path.join(BUILD, "rows.txt")) as f:
        return [line.strip() for line in f if line.strip()]


def installed():
    return [c for c in COMPILERS if shutil.which(c)]


# ---------------------------------------------------------------- machine code

def functions(path):
    """{function: [(address, mnemonic, operands)]} from objdump -d. A cell
    also holds its partner's unit (cell/partner.h), whose static functions
    have the row's names: the first of a name is the row's, as its unit comes
    first in the link."""
    out = subprocess.run(["objdump", "-d", "--no-show-raw-insn", path], capture_output=True, text=True,
                         check=True).stdout
    funcs, cur = {}, None
    for line in out.splitlines():
        m = re.match(r"^([0-9a-f]+) <([^>]+)>:$", line)
        if m:
            cur = None if m.group(2) in funcs else funcs.setdefault(m.group(2), [])
            continue
        m = re.match(r"^\s+([0-9a-f]+):\s+(\S+)\s*(.*)$", line)
        if cur is not None and m:
            cur.append((int(m.group(1), 16), m.group(2), m.group(3)))
    return funcs


def successors(code):
    """{address: [addresses control can go to next]} within one function"""
    addrs = [a for a, _, _ in code]
    inside = set(addrs)
    succ = {}
    for i, (a, op, args) in enumerate(code):
        s = []
        m = re.match(r"^([0-9a-f]+)\b", args)
        if op.startswith("j") and m and int(m.group(1), 16) in inside:
            s.append(int(m.group(1), 16))
        if not op.startswith(("jmp", "ret", "ud2")) and i + 1 < len(code):
            s.append(addrs[i + 1])
        succ[a] = s
    return succ


def loop_nests(code):
    """Cycles in the control flow of one function: the strongly connected
    components that contain a jump back (nested loops count once)."""
    addrs = [a for a, _, _ in code]
    succ = successors(code)
    # Tarjan's algorithm, iterative
    index, low, on, stack, count, n = {}, {}, set(), [], 0, 0
    for root in addrs:
        if root in index:
            continue
        work = [(root, 0)]
        while work:
            v, i = work.pop()
            if i == 0:
                index[v] = low[v] = n
                n += 1
                stack.append(v)
                on.add(v)
            if i < len(succ[v]):
                work.append((v, i + 1))
                w = succ[v][i]
                if w not in index:
                    work.append((w, 0))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1 or v in succ[v]:
                    count += 1
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[v])
    return count


def one_thread_workloads(bindir):
    listing = subprocess.run([os.path.join(bindir, "am-cell-system"), "--list"], capture_output=True, text=True,
                             check=True).stdout
    return [w["name"] for w in json.loads(listing)["workloads"] if not w["threaded"]]


def work_code(code, w):
    """The instructions of the function that holds workload w's work: w_run,
    or where the workload keeps its loop out of line (trace: one copy of the
    strategy's inlined calls for every caller), w_calls_run"""
    for name in code:
        if name == w + "_calls_run" or name.startswith(w + "_calls_run.") and not name.endswith(".cold"):
            return code[name]
    return code[w + "_run"]


@unittest.skipUnless(shutil.which("objdump"), "needs objdump (binutils)")
class TeardownKept(unittest.TestCase):
    """A free that does nothing lets a compiler delete the walk that calls it,
    and the row then skips part of the container's work."""

    def test_no_row_loses_a_loop(self):
        compilers = installed()
        if not compilers:
            self.skipTest("neither gcc nor clang is installed")
        for cc in compilers:
            rows = ["system"] + list(HarnessCost.BOUNDS)
            if cc == own_family():  # every row that links here, minimal among them
                rows = linked_rows()
            bindir = build_rows(cc, rows)
            if bindir is None:
                continue
            base = functions(os.path.join(bindir, "am-cell-system"))
            for row in rows:
                code = functions(os.path.join(bindir, "am-cell-" + row))
                for w in one_thread_workloads(bindir):
                    want = loop_nests(work_code(base, w))
                    with self.subTest(compiler=cc, row=row, workload=w):
                        self.assertGreaterEqual(loop_nests(work_code(code, w)), want,
                                                f"{cc} {row}: {w}'s work lost a loop (a walk deleted?)")


@unittest.skipUnless(shutil.which("valgrind") and shutil.which("objcopy"), "needs valgrind and objcopy")
class HarnessCost(unittest.TestCase):
    """Instructions per alloc+free pair inside alloc_pair_run, 8-byte blocks."""
    BOUNDS = {"minimal": 20, "fast_pool": 30, "tls_size_class": 30}
    REPS = (8, 24)
    OPS = 10000  # blocks per repetition

    def per_op(self, exe, row):
        with tempfile.TemporaryDirectory() as tmp:
            # valgrind 3.19 cannot read clang 14's debug information
            plain = os.path.join(tmp, "cell")
            subprocess.run(["objcopy", "--strip-debug", exe, plain], check=True)
            counts = []
            for reps in self.REPS:
                out = os.path.join(tmp, f"callgrind.{reps}")
                subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=" + out,
                                "--toggle-collect=*alloc_pair_run*", plain, "--workload", "alloc_pair", "--size", "8",
                                "--samples", "1", "--reps", str(reps), "--alone"],
                               check=True, capture_output=True)
                with open(out) as f:
                    totals = [line for line in f if line.startswith(("summary:", "totals:"))]
                counts.append(int(totals[0].split()[1]))
            # the warm-up runs each seed once whatever the count: the
            # difference is that of the one sample
            return (counts[1] - counts[0]) / ((self.REPS[1] - self.REPS[0]) * self.OPS)

    def test_alloc_pair_8(self):
        compilers = installed()
        if not compilers:
            self.skipTest("neither gcc nor clang is installed")
        for cc in compilers:
            bindir = build_rows(cc, ["system"] + list(self.BOUNDS))
            if bindir is None:
                continue
            for row, bound in self.BOUNDS.items():
                with self.subTest(compiler=cc, row=row):
                    got = self.per_op(os.path.join(bindir, "am-cell-" + row), row)
                    self.assertLessEqual(got, bound, f"{cc} {row}: {got:.1f} instructions per pair")


if __name__ == "__main__":
    unittest.main()
