"""The shipped traces (traces/): each recorded again with its command in
traces/traces.txt gives a trace of the same program, threads and about as many
calls (other versions of the program make other calls: a factor of 2 either way
is allowed); each shipped trace reads whole and agrees with its closing record;
traces/README.md gives each one's command and figures as the files have them;
together they stay within 10 MB."""
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
BUILD = os.environ.get("AM_BUILD", "build/gcc")
LIB = os.path.join(BUILD, "recorder", "libamrecord.so")
INFO = os.path.join(BUILD, "recorder", "am-trace-info")
TRACES = os.path.join(ROOT, "traces")
LINUX = sys.platform.startswith("linux")
sys.path.insert(0, HERE)
from test_runner import BUILD as CELLS, COMPILER, ensure_cells  # noqa: E402
from runner import cli, config  # noqa: E402


def shipped():
    """[(file, program, command)] of traces/traces.txt"""
    out = []
    with open(os.path.join(TRACES, "traces.txt"), encoding="utf-8") as f:
        for line in f:
            if line.strip() and not line.startswith("#"):
                name, program, command = line.split(None, 2)
                out.append((name, program, command.strip()))
    return out


def make(*args):
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS")}
    return subprocess.run(["make", "--no-print-directory", "-s", *args], cwd=ROOT, capture_output=True,
                          text=True, env=env, timeout=600)


def values(path):
    p = subprocess.run([os.path.join(ROOT, INFO), "--values", path], capture_output=True, text=True)
    if p.returncode != 0:
        raise AssertionError(f"trace-info {path}: {p.stderr}")
    return dict(line.split("=", 1) for line in p.stdout.splitlines() if "=" in line)


class Shipped(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        p = make(INFO)
        if p.returncode != 0:
            raise AssertionError(f"building trace-info failed:\n{p.stdout}{p.stderr}")

    def test_listed_and_present_alike(self):
        listed = {name for name, _, _ in shipped()}
        present = {f for f in os.listdir(TRACES) if f.endswith(".trace")}
        self.assertEqual(listed, present)
        self.assertGreaterEqual(len(listed), 3)
        self.assertLessEqual(sum(os.path.getsize(os.path.join(TRACES, f)) for f in present), 10 * 2 ** 20)

    def test_each_reads_whole_and_agrees(self):
        threads = []
        for name, program, _ in shipped():
            v = values(os.path.join(TRACES, name))
            self.assertEqual(v["program"], program, name)
            self.assertEqual((v["closed"], v["cut"], v["agrees"]), ("1", "0", "1"), name)
            threads.append(int(v["threads"]))
        self.assertTrue(any(t > 1 for t in threads), "no shipped trace of several threads")

    def test_the_readme_gives_each_command_and_its_figures(self):
        with open(os.path.join(TRACES, "README.md"), encoding="utf-8") as f:
            readme = f.read()
        for name, _, command in shipped():
            row = [line for line in readme.splitlines() if line.startswith(f"| `{name}` |")]
            self.assertEqual(len(row), 1, f"{name}: no line of its own in traces/README.md")
            v = values(os.path.join(TRACES, name))
            cells = [c.strip() for c in row[0].strip("|").split("|")]
            self.assertEqual(cells[2:6], [v["threads"], f"{int(v['calls']):,}", f"{int(v['blocks']):,}",
                                          f"{int(v['peak_live']):,}"], name)
            # a long command is shown up to "...", the rest in traces.txt
            shown = cells[6].strip("`")
            head, cut, _ = shown.partition("...")
            self.assertTrue(command.startswith(head) if cut else shown == command,
                            f"{name}: README shows {shown}, traces.txt has {command}")


class InTheDefaultRun(unittest.TestCase):
    """make bench with none of TRACE, WORKLOADS and SUITE measures the shipped
    traces beside the default suite; QUICK=1 the smallest"""

    @classmethod
    def setUpClass(cls):
        ensure_cells()
        cls.tmp = tempfile.mkdtemp(prefix="am-shipped-")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def workloads(self, *args):
        argv = ["--compilers", COMPILER, "--build-root", os.path.dirname(CELLS), "--allocators", "system,minimal",
                "--out", os.path.join(self.tmp, "never")] + list(args)
        return config.plan(cli.parse(argv)).workloads

    def test_the_default_run_has_every_shipped_trace(self):
        names = self.workloads("--shipped-traces")
        traces = sorted(n for n in names if n.startswith("trace:"))
        self.assertEqual(traces, sorted("trace:" + n[:-len(".trace")] for n, _, _ in shipped()))
        self.assertIn("thrash_pool", names)

    def test_quick_has_one(self):
        names = self.workloads("--shipped-traces", "--quick")
        self.assertEqual([n for n in names if n.startswith("trace:")], ["trace:python-csv"])

    def test_chosen_workloads_or_suite_have_none(self):
        for args in (["--workloads", "thrash_pool"], ["--suite", "dimensions"], []):
            names = self.workloads("--shipped-traces", *args) if args else self.workloads()
            self.assertEqual([n for n in names if n.startswith("trace:")], [], args)

    def test_make_bench_asks_for_them_only_when_nothing_is_chosen(self):
        def dry(*args):
            env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS")}
            return subprocess.run(["make", "-n", "bench", *args], cwd=ROOT, capture_output=True, text=True,
                                  env=env, timeout=120).stdout
        self.assertIn("--shipped-traces", dry())
        self.assertIn("--shipped-traces", dry("QUICK=1"))
        for args in (["WORKLOADS=thrash_pool"], ["SUITE=dimensions"], ["TRACE=traces/cc1.trace"]):
            self.assertNotIn("--shipped-traces", dry(*args), args)


@unittest.skipUnless(LINUX, "the recorder is an LD_PRELOAD library for Linux with glibc")
class RecordedAgain(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        p = make(LIB, INFO)
        if p.returncode != 0:
            raise AssertionError(f"building the recorder failed:\n{p.stdout}{p.stderr}")
        cls.tmp = tempfile.mkdtemp(prefix="am-traces-")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def recorded(self, name, program, command):
        """the values of the program's trace in a recording of the command"""
        out = os.path.join(self.tmp, name)
        p = make("record", "TRACE=" + out, "CMD=" + command)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        stem, ext = os.path.splitext(name)
        found = [values(os.path.join(self.tmp, f)) for f in sorted(os.listdir(self.tmp))
                 if f == name or (f.startswith(stem + ".") and f.endswith(ext))]
        mine = [v for v in found if v["program"] == program]
        self.assertEqual(len(mine), 1, f"{command}: traces of {[v['program'] for v in found]}")
        return mine[0]

    def test_each_records_again(self):
        for name, program, command in shipped():
            need = shlex.split(command)[0]
            with self.subTest(trace=name):
                if not shutil.which(need):
                    self.skipTest(f"{need} is missing")
                if "-fuse-ld=gold" in command and not shutil.which("ld.gold"):
                    self.skipTest("ld.gold is missing (binutils)")
                again = self.recorded(name, program, command)
                ship = values(os.path.join(TRACES, name))
                self.assertEqual(again["threads"], ship["threads"])
                self.assertEqual(again["agrees"], "1")
                ratio = int(again["calls"]) / int(ship["calls"])
                self.assertTrue(0.5 <= ratio <= 2.0, f"{name}: {again['calls']} calls against {ship['calls']}")


if __name__ == "__main__":
    unittest.main()
