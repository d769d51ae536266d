# forest.gp: every strategy's ratio to the baseline at one point, ranked, with its
# 95% interval, on a log axis; a line at 1. Data: name ratio ci_low ci_high colour
# (0xRRGGBB), sorted slowest first; the fastest group's names end in " =".
load dir.'/style.gp'
set title title
set xlabel sprintf('time relative to %s (ratio, log scale; < 1 is faster)', baseline)
set ylabel ''
set key off
set logscale x
set grid noytics nomytics xtics nomxtics
set mxtics 1
set offsets graph 0.05, graph 0.05, 0.6, 0.6
set ytics scale 0
set arrow 1 from first 1, graph 0 to first 1, graph 1 nohead lc rgb '#222222' lw 1.2 dt 2 back
@svg_term
set output svg
plot data using 2:0:3:4:ytic(1) with xerrorbars lc rgb '#333333' pt 0 lw 1.2, \
     '' using 2:0:5 with points pt 7 ps 1.1 lc rgb variable
@png_term
set output png
replot
