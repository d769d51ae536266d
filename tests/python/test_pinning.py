"""The choice of CPU for single-threaded cells (runner/pinning.py), with the
probe replaced by made-up timings: the fastest CPU wins, near ties keep the
current one, a later probe moves the cells when the CPUs swap speeds, and a
CPU whose probe time changed around a block moved."""
import os
import subprocess
import sys
import unittest
from unittest import mock

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from runner import pinning  # noqa: E402


class FakeProbe:
    def __init__(self, speeds):
        self.speeds = speeds  # {cpu: ns}, changed by the test between probes
        self.calls = 0

    def __call__(self, cmd, cpu):
        self.calls += 1
        return self.speeds.get(cpu)


def pinner(speeds, request="auto"):
    probe = FakeProbe(speeds)
    with mock.patch.object(pinning, "allowed_cpus", return_value=[0, 1]), \
            mock.patch.object(pinning, "probe_once", probe):
        p = pinning.Pinner("am-cell-x", request, every=0.0)
    return p, probe


class Choice(unittest.TestCase):
    def test_fastest_cpu_wins(self):
        p, probe = pinner({0: 80.0, 1: 108.0})
        self.assertEqual(p.cpu, 0)
        self.assertEqual(probe.calls, 4)  # two rounds over two CPUs
        self.assertEqual(p.note["probe_ns"], {"0": 80, "1": 108})

    def test_near_tie_keeps_the_last_cpu(self):
        p, _ = pinner({0: 98.0, 1: 100.0})
        self.assertEqual(p.cpu, 1)

    def test_reprobe_follows_a_swap(self):
        p, probe = pinner({0: 108.0, 1: 80.0})
        self.assertEqual(p.cpu, 1)
        probe.speeds.update({0: 80.0, 1: 108.0})
        with mock.patch.object(pinning, "probe_once", probe):
            self.assertEqual(p.refresh(), 0)
        self.assertEqual((p.note["pinned"], p.note["switches"], p.note["probes"]), (0, 1, 2))

    def test_a_cpu_that_changed_state_during_a_block_moved(self):
        p, probe = pinner({0: 100.0, 1: 60.0})
        self.assertEqual(p.cpu, 1)
        with mock.patch.object(pinning, "probe_once", probe):
            before = p.before_block()
            self.assertEqual(before, {0: 100.0, 1: 60.0})
            probe.speeds.update({0: 200.0})  # the CPU the block did not run on
            self.assertFalse(p.after_block(before, many_threads=False))
            self.assertTrue(p.after_block(before, many_threads=True))  # a block of cells on every CPU
            before = p.before_block()
            probe.speeds.update({1: 65.0})  # 8%: the probe's own noise
            self.assertFalse(p.after_block(before, many_threads=False))
            before = p.before_block()
            probe.speeds.update({1: 130.0})  # the slow state
            self.assertTrue(p.after_block(before, many_threads=False))

    def test_no_probe_no_move(self):
        p, _ = pinner({0: 1.0, 1: 2.0}, request=1)
        self.assertEqual(p.before_block(), {})
        self.assertFalse(p.after_block({}, many_threads=False))
        self.assertFalse(pinning.moved({0: 100.0}, {1: 300.0}, [0, 1]))

    def test_failed_probe_keeps_a_cpu(self):
        p, _ = pinner({})
        self.assertEqual(p.cpu, 1)

    def test_fixed_and_none(self):
        p, probe = pinner({0: 1.0, 1: 2.0}, request=1)
        self.assertEqual((p.cpu, probe.calls), (1, 0))
        p, _ = pinner({0: 1.0}, request="none")
        self.assertIsNone(p.cpu)
        with self.assertRaises(ValueError):
            pinner({}, request=7)

    def test_place_sets_one_cpu_or_all(self):
        if not hasattr(os, "sched_setaffinity"):
            self.skipTest("no CPU affinity on this OS")
        with mock.patch.object(os, "sched_setaffinity") as setaff, \
                mock.patch.object(os, "sched_getaffinity", return_value={0, 1}), \
                mock.patch.object(pinning, "allowed_cpus", return_value=[0, 1]):
            pinning.place(1, False)
            pinning.place(1, True)   # already {0, 1}: nothing to change
            pinning.place(None, False)
        self.assertEqual([c.args[1] for c in setaff.call_args_list], [{1}])

    def test_a_child_inherits_the_placement_and_all_cpus_stay_known(self):
        if not hasattr(os, "sched_setaffinity"):
            self.skipTest("no CPU affinity on this OS")
        every = pinning.allowed_cpus()
        try:
            pinning.place(every[-1])
            child = subprocess.run([sys.executable, "-c", "import os; print(sorted(os.sched_getaffinity(0)))"],
                                   capture_output=True, text=True, check=True)
            self.assertEqual(child.stdout.strip(), str([every[-1]]))
            self.assertEqual(pinning.allowed_cpus(), every)  # not narrowed by place
        finally:
            pinning.place(None)
        self.assertEqual(sorted(os.sched_getaffinity(0)), every)


if __name__ == "__main__":
    unittest.main()
