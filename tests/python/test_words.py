"""One word, one thing (docs/bench.md, "Words"): a word the words table gives
one meaning keeps it in the code. "reference" is the committed reference run
and the reference counts (docs/reference-run/, docs/reference-counts/); a
workload's second computation of its checksum is its oracle. So the sources
of the measured process, the workloads, the strategies, the runner and the
report never say "reference" but of those folders."""
import os
import re
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SOURCES = ("allocators", "cell", "containers", "platform", "workloads", "runner", "runfolder", "report", "tests/strategy",
           "tests/unit")
# the committed runs' folders, and the words that name them, are what "reference" means
ALLOWED = re.compile(r"reference[-_](?:run|dimensions|counts)|REFERENCE_RUN|reference (?:run|counts)|"
                     r"back-reference", re.I)
WORD = re.compile(r"reference", re.I)


def stray_references():
    """(path, line number, line) of each "reference" in the sources that is
    not one of the committed runs or counts."""
    out = []
    for folder in SOURCES:
        for top, _, files in os.walk(os.path.join(ROOT, folder)):
            for name in sorted(files):
                if not name.endswith((".c", ".h", ".py", ".txt", ".def")):
                    continue
                path = os.path.join(top, name)
                with open(path, encoding="utf-8") as f:
                    for n, line in enumerate(f, 1):
                        if WORD.search(ALLOWED.sub("", line)):
                            out.append((os.path.relpath(path, ROOT), n, line.strip()))
    return out


class OneWordOneThing(unittest.TestCase):
    def test_reference_names_only_the_committed_runs(self):
        self.assertEqual(stray_references(), [], "a workload's own checksum computation is its oracle; "
                                                 "\"reference\" is the committed runs and counts")


if __name__ == "__main__":
    unittest.main()
