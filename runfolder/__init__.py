"""runfolder: a run folder as data. Its columns (schema.py), reading it
(rundir.py; its cells back into typed results: cells.py, answer.py) and
writing it (outputs.py), the statistics (stats.py), a cell's summary, the
ratios and the fastest groups (aggregate.py), the regression gate's
arithmetic (gate.py) and the tables (tables.py, yardstick.py,
count_tables.py, digest.py). The runner (runner/) writes a folder through it;
the tools over finished folders and the report (report/) read one through it.
It imports neither. Python 3 standard library only."""
