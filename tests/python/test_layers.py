"""The Python side in layers whose imports run one way (docs/bench.md,
"Outputs"): runfolder/, the run folder as data, imports neither runner/
nor report/; runner/ and report/ each import runfolder/, and report/ imports
no module of runner/. No module imports another inside a function, and no
import circle runs among them. Read from each file's import statements. A
cell's time column is named in runfolder/schema.py alone (schema.MEDIAN)."""
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


def imports(path):
    """(line, module, inside a function) of each import of a module of PACKAGES."""
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read(), path)
    inside = {id(n) for f in ast.walk(tree) if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
              for n in ast.walk(f)}
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module] if "." in node.module else [f"{node.module}.{a.name}" for a in node.names]
        else:
            continue
        out += [(node.lineno, n, id(node) in inside) for n in names if n.split(".")[0] in PACKAGES]
    return out


def module_name(path):
    return os.path.relpath(path, ROOT)[:-len(".py")].replace(os.sep, ".")


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

    def test_no_import_inside_a_function(self):
        for package in PACKAGES:
            for path in modules(package):
                for line, name, inside in imports(path):
                    with self.subTest(file=os.path.relpath(path, ROOT), line=line):
                        self.assertFalse(inside, f"{os.path.relpath(path, ROOT)}:{line} imports {name} inside "
                                                 f"a function")

    def test_no_import_circle(self):
        known = {module_name(p): p for package in PACKAGES for p in modules(package)}
        edges = {m: sorted({n for _, n, _ in imports(p) if n in known and n != m}) for m, p in known.items()}
        state = {}

        def visit(m, trail):
            state[m] = "open"
            for n in edges[m]:
                if state.get(n) == "open":
                    self.fail("an import circle: " + " -> ".join(trail[trail.index(n):] + [n]))
                if n not in state:
                    visit(n, trail + [n])
            state[m] = "done"

        for m in sorted(known):
            if m not in state:
                visit(m, [m])

    def test_the_time_column_is_named_in_the_schema_alone(self):
        named = [os.path.relpath(p, ROOT) for package in PACKAGES for p in modules(package)
                 if "median_ns_per_op" in open(p, encoding="utf-8").read()]
        self.assertEqual(named, [os.path.join("runfolder", "schema.py")])


if __name__ == "__main__":
    unittest.main()
