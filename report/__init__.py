"""report: the HTML report (report.py) and the plots (plots.py) of one run
folder, read through runner/rundir.py. Python 3 standard library only."""
