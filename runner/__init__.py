"""runner: the Python side of a benchmark run. It plans the matrix, starts one
am-cell process a visit (cell/cell_main.c is the measured program, in C) and
writes the run folder through runfolder/; it measures nothing itself. Also
the tools over finished folders (compare, crosscc, noise, regenerate,
accuracy). Entry: runner/allocmark.py."""
