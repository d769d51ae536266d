"""The Python side in layers whose imports run one way (docs/bench.md,
"Outputs"): runfolder/, the run folder as data, imports neither runner/
nor report/; runner/ and report/ each import runfolder/, and report/ imports
no module of runner/. Read from each file's import statements."""
import ast
import os
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PACKAGES = ("runfolder", "runner", "report")
# what each package may import of the others
MAY_IMPORT = {"runfolder": set(), "runner": {"runfolder"}, "report": {"runfolder"}}


def modules(package):
    folder = os.path.join(ROOT, package)
    if not os.path.isdir(folder):
        return []
    return sorted(os.path.join(folder, f) for f in os.listdir(folder) if f.endswith(".py"))


def imported_packages(path):
    """(line, package) of each import in the file of one of PACKAGES."""
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read(), path)
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        else:
            continue
        out += [(node.lineno, n.split(".")[0]) for n in names if n.split(".")[0] in PACKAGES]
    return out


class Layers(unittest.TestCase):
    def test_the_packages_exist(self):
        for package in PACKAGES:
            self.assertTrue(os.path.isfile(os.path.join(ROOT, package, "__init__.py")), package)

    def test_imports_run_one_way(self):
        for package in PACKAGES:
            for path in modules(package):
                for line, other in imported_packages(path):
                    if other == package:
                        continue
                    with self.subTest(file=os.path.relpath(path, ROOT), line=line):
                        self.assertIn(other, MAY_IMPORT[package],
                                      f"{os.path.relpath(path, ROOT)}:{line} imports {other}/, which "
                                      f"{package}/ may not import")


if __name__ == "__main__":
    unittest.main()
