"""report: the HTML report (report.py) and the plots (plots.py) of one run
folder, and the README's results tables (readme_table.py), read through
runfolder/. Python 3 standard library only."""
