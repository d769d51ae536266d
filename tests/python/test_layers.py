"""The Python side in layers whose imports run one way (docs/bench.md,
"Outputs"): runfolder/, the run folder as data, imports neither runner/
nor report/; runner/ and report/ each import runfolder/, and report/ imports
no module of runner/. No module imports another inside a function, and no
import circle runs among them. Read from each file's import statements. A
cell's time column is named in runfolder/schema.py alone (schema.MEDIAN). No
module changes sys.path: each program is started as a module from the top
folder (python3 -m runner.allocmark), as the Makefile, the workflows and the
documents start them, never by a file of runner/ or report/."""
import ast
import os
import re
import tempfile
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


def is_sys_path(node):
    return (isinstance(node, ast.Attribute) and node.attr == "path" and isinstance(node.value, ast.Name)
            and node.value.id == "sys")


def path_changes(path):
    """Lines of the file that change sys.path: an assignment to it or to an item
    of it, or a call of one of the list's methods that change it."""
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read(), path)
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            targets = [node.target]
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in (
                "insert", "append", "extend", "remove", "pop", "clear", "__setitem__"):
            targets = [node.func.value]
        else:
            continue
        if any(is_sys_path(t.value if isinstance(t, ast.Subscript) else t) for t in targets):
            out.append(node.lineno)
    return out


# a program of runner/ or report/ started by its file: python3 runner/x.py, $(PYTHON) report/x.py
STARTED_BY_FILE = re.compile(r"(?:\bpython3?|\$\(PYTHON\))\s+(?:runner|report)/\w+\.py")
MEASUREMENTS = os.path.join("docs", "measurements.md")


def texts_that_start_programs():
    """(path from ROOT, text) of each file that tells how to start a program:
    the Makefile, CMakeLists.txt, the workflows, README.md, the documents and
    the modules' own usage lines. Of docs/measurements.md only its opening: its
    dated sections give each command as it was run."""
    names = ["Makefile", "CMakeLists.txt", "README.md"]
    for folder, ext in ((os.path.join(".github", "workflows"), ".yml"), ("docs", ".md")):
        for top, _, files in os.walk(os.path.join(ROOT, folder)):
            names += [os.path.relpath(os.path.join(top, f), ROOT) for f in sorted(files) if f.endswith(ext)]
    names += [os.path.relpath(p, ROOT) for package in PACKAGES for p in modules(package)]
    for name in names:
        with open(os.path.join(ROOT, name), encoding="utf-8") as f:
            text = f.read()
        if name == MEASUREMENTS:
            text = text[:text.index("\n## ")]
        yield name, text


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

    def test_the_report_imports_no_runner_module(self):
        for path in modules("report"):
            for line, other in imported_packages(path):
                with self.subTest(file=os.path.relpath(path, ROOT), line=line):
                    self.assertNotEqual(other, "runner", f"{os.path.relpath(path, ROOT)}:{line} imports runner/")

    def test_no_module_changes_the_import_path(self):
        for package in PACKAGES:
            for path in modules(package):
                for line in path_changes(path):
                    with self.subTest(file=os.path.relpath(path, ROOT), line=line):
                        self.fail(f"{os.path.relpath(path, ROOT)}:{line} changes sys.path: a program is started "
                                  f"as a module from the top folder (python3 -m runner.allocmark)")

    def test_the_rule_finds_each_way_of_changing_the_path(self):
        cases = {"sys.path[0] = '.'": 1, "sys.path.insert(0, '.')": 1, "sys.path = ['.']": 1,
                 "sys.path += ['.']": 1, "sys.path.append('.')": 1, "print(sys.path[0])": 0,
                 "parser.path.insert(0, 1)": 0}
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "m.py")
            for code, found in cases.items():
                with self.subTest(code=code):
                    with open(path, "w") as f:
                        f.write("import sys\n" + code + "\n")
                    self.assertEqual(len(path_changes(path)), found)

    def test_every_program_is_started_as_a_module(self):
        for name, text in texts_that_start_programs():
            for m in STARTED_BY_FILE.finditer(text):
                line = text.count("\n", 0, m.start()) + 1
                with self.subTest(file=name, line=line):
                    self.fail(f"{name}:{line}: `{m.group(0)}`: start it as python3 -m <package>.<module> from "
                              f"the top folder")

    def test_the_time_column_is_named_in_the_schema_alone(self):
        named = [os.path.relpath(p, ROOT) for package in PACKAGES for p in modules(package)
                 if "median_ns_per_op" in open(p, encoding="utf-8").read()]
        self.assertEqual(named, [os.path.join("runfolder", "schema.py")])


if __name__ == "__main__":
    unittest.main()
