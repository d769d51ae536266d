# memory.gp: one memory quantity (peak RSS, or reserved/requested) against size per
# strategy. Data sets as in time.gp: (x value); ylabel names the quantity and its unit.
load dir.'/style.gp'
set title title
set xlabel xlabel
set ylabel ylabel
set logscale x
set autoscale xfix  # the axis ends at the sizes measured
if (logy) { set logscale y; set autoscale yfix; @logtics }
set offsets graph 0.03, graph 0.03, graph 0.05, graph 0.05
@svg_term
set output svg
plot for [i=1:words(names)] data index (i-1) using 1:2 with linespoints \
     ls int(word(styles, i)) title word(names, i)
@png_term
set output png
replot
