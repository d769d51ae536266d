"""runner: the Python side of a benchmark run. It plans the matrix, starts one
am-cell process a visit (cell/cell_main.c is the measured program, in C) and
writes the run folder through runfolder/; it measures nothing itself. Also
the tools over finished folders (compare, crosscc, noise, regenerate,
accuracy). Each program is started from the top folder as a module: `python3 -m
runner.allocmark` (the runner; also `python3 -m runner`), `python3 -m runner.compare`, ..."""
