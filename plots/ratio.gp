# ratio.gp: each strategy's median divided by the baseline's, against size; below 1 is
# faster. Data sets as in time.gp but (x ratio ci_low ci_high); baseline names the row.
load dir.'/style.gp'
set title title
set xlabel xlabel
set ylabel sprintf('time relative to %s (ratio, log scale; < 1 is faster)', baseline)
set logscale xy
set autoscale xfix  # the axis ends at the sizes measured
set autoscale yfix
@logtics
set offsets graph 0.03, graph 0.03, graph 0.06, graph 0.06
set arrow 1 from graph 0, first 1 to graph 1, first 1 nohead lc rgb '#222222' lw 1.5 dt 2 front
@svg_term
set output svg
plot for [i=1:words(names)] data index (i-1) using 1:2:3:4 with yerrorlines \
     ls int(word(styles, i)) title word(names, i)
@png_term
set output png
replot
