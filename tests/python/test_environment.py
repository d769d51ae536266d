"""runner/environment.py with made-up system files: what it records of the
machine, which facts make it unfriendly for timing, and the one warning line."""
import os
import sys
import unittest
from unittest import mock

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from runner import environment  # noqa: E402

QUIET = {
    "/proc/sys/kernel/randomize_va_space": "2",
    "/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor": "performance",
    "/sys/devices/system/cpu/cpu1/cpufreq/scaling_governor": "performance",
    "/sys/devices/system/cpu/cpufreq/boost": "0",
    "/sys/kernel/mm/transparent_hugepage/enabled": "always [madvise] never",
    "/sys/devices/system/cpu/smt/active": "0",
    "/proc/cpuinfo": "processor\t: 0\nflags\t\t: fpu vme hypervisor sse2\n",
    "/sys/class/dmi/id/sys_vendor": "QEMU",
    "/proc/stat": "cpu  100 0 50 1000 5 0 0 20 0 0\n",
}
GCC = [{"name": "gcc", "flags": "-std=c11 -O2 -g -Wall"}]


def facts(files, load, compilers=GCC, cpus=2):
    def read(path):
        return files.get(path)

    def globbed(pattern):
        return sorted(p for p in files if p.startswith("/sys/devices/system/cpu/cpu") and
                      p.endswith("scaling_governor"))
    with mock.patch.object(environment, "_read", read), mock.patch.object(environment.glob, "glob", globbed), \
            mock.patch.object(environment.os, "getloadavg", return_value=(load, load, load)):
        return environment.check(compilers, cpus)


class Environment(unittest.TestCase):
    def test_a_quiet_machine_is_recorded_and_not_unfriendly(self):
        found, bad = facts(QUIET, 0.2)
        self.assertEqual(bad, [])
        self.assertEqual(found["aslr"], "on (full)")
        self.assertEqual((found["cpu_governor"], found["cpu_boost"], found["smt"]), ("performance", "off", "off"))
        self.assertEqual(found["transparent_hugepages"], "madvise")
        self.assertEqual(found["virtualization"], "virtual machine (QEMU)")
        self.assertEqual(found["builds"], {"gcc": "optimized"})
        self.assertIsNone(environment.warning(bad))

    def test_load_governor_boost_smt_and_builds_make_it_unfriendly(self):
        busy = dict(QUIET, **{"/sys/devices/system/cpu/cpu1/cpufreq/scaling_governor": "powersave",
                              "/sys/devices/system/cpu/cpufreq/boost": "1",
                              "/sys/devices/system/cpu/smt/active": "1"})
        builds = GCC + [{"name": "gcc-asan", "flags": "-O1 -fsanitize=address"},
                        {"name": "cc-debug", "flags": "-O0 -g"}]
        _, bad = facts(busy, 3.5, builds)
        self.assertEqual(bad, ["load average 3.5 on 2 CPUs", "CPU governor performance, powersave", "CPU boost on",
                               "SMT on (a sibling thread shares the core)", "a sanitizer build (gcc-asan)",
                               "a debug build (cc-debug)"])
        line = environment.warning(bad)
        self.assertEqual(len(line.splitlines()), 1)
        self.assertTrue(line.startswith("allocmark: warning: unfriendly for timing: load average 3.5"))

    def test_what_a_system_does_not_show_is_left_out(self):
        found, bad = facts({}, 0.1)
        self.assertEqual(bad, [])
        for name in ("aslr", "cpu_governor", "cpu_boost", "transparent_hugepages", "smt", "virtualization"):
            self.assertNotIn(name, found)

    def test_intel_no_turbo_and_steal(self):
        found, _ = facts(dict(QUIET, **{"/sys/devices/system/cpu/cpufreq/boost": None,
                                        "/sys/devices/system/cpu/intel_pstate/no_turbo": "1"}), 0.1)
        self.assertEqual(found["cpu_boost"], "off")
        self.assertAlmostEqual(environment.steal_share((20, 1175), (30, 1275)), 0.1)
        self.assertIsNone(environment.steal_share(None, (30, 1275)))

    def test_the_build_kind_comes_from_the_flags(self):
        self.assertEqual(environment.build_kind("-O2 -g"), "optimized")
        self.assertEqual(environment.build_kind("-O2 -O0"), "debug")
        self.assertEqual(environment.build_kind("-g"), "debug")
        self.assertEqual(environment.build_kind(None), "unknown")
        self.assertEqual(environment.build_kind("/O2"), "optimized")


if __name__ == "__main__":
    unittest.main()
