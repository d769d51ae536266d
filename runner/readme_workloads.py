"""readme_workloads.py: the README's table of workloads, made from what a
cell says of its workloads (am-cell-<row> --list, the list `make list`
prints): every workload of workloads/workloads.def, in its order, with its
suite and the summary its definition states, so that the README cannot
name a workload that is gone, leave one out, or paraphrase one. It prints
the table, or with --write puts it into the README between its two marker
lines. Any row's cell will do: every cell holds every workload.

  python3 -m runner.readme_workloads [--cell build/<cc>/bin/am-cell-<row>] [--write README.md]"""
import os
import sys

from runner import cell_protocol, config
from runfolder import catalog
from runfolder.errors import UsageError
from runfolder.outputs import replace_block, write_atomic

BEGIN = "<!-- workloads table: made by runner/readme_workloads.py from am-cell-<row> --list; do not edit -->"
END = "<!-- end of the workloads table -->"


def default_cell():
    """The system row's cell in the build folder the Makefile uses."""
    return catalog.cell_exe(catalog.bin_dir(os.path.join(catalog.ROOT, "build"), config.default_compiler()),
                            "system")


def markdown_text(text):
    """text as a table cell shows it: `|` would end the cell, and `<int>`
    would be read as an HTML tag and vanish (inside `code` it is literal)."""
    parts = text.split("`")
    for i in range(0, len(parts), 2):
        parts[i] = parts[i].replace("\\", "\\\\").replace("<", "\\<")
    return "`".join(parts).replace("|", "\\|")


def table(listing):
    """The README's block for a cell's --list answer, marker lines included."""
    lines = [f"| `{w['name']}` | {w['suite']} | {markdown_text(w['summary'])} |" for w in listing["workloads"]]
    if not lines:
        raise UsageError("the cell lists no workload")
    header = ["| workload | suite | what one repetition does |", "| --- | --- | --- |"]
    return "\n".join([BEGIN] + header + lines + [END]) + "\n"


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    options = {"--cell": None, "--write": None}
    rest = list(argv)
    try:
        while rest:
            name = rest.pop(0)
            if name not in options or not rest:
                raise UsageError(__doc__.strip())
            options[name] = rest.pop(0)
        cell = options["--cell"] or default_cell()
        if not os.path.exists(cell):
            raise UsageError(f"no cell {cell}: build one first (make cells ALLOCATORS=system)")
        block = table(cell_protocol.list_workloads(cell))
    except UsageError as e:
        print(f"readme_workloads: {e}", file=sys.stderr)
        return 2
    write = options["--write"]
    if not write:
        print(block, end="")
        return 0
    with open(write, encoding="utf-8") as f:
        text = f.read()
    try:
        text = replace_block(text, block, BEGIN, END)
    except ValueError as e:
        print(f"readme_workloads: {write}: {e}", file=sys.stderr)
        return 2
    write_atomic(write, text)
    print(f"readme_workloads: wrote the table of workloads into {write}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
