# time.gp: median time per operation against size, one line per strategy, log-log,
# the 95% interval of the median as error bars. Data: one data set per strategy
# (x median ci_low ci_high), in the order of `names`; `styles` holds each one's line style.
load dir.'/style.gp'
set title title
set xlabel xlabel
set ylabel 'median time per operation (ns, log scale)'
set logscale xy
set autoscale xfix  # the axis ends at the sizes measured
set autoscale yfix
@logtics
set offsets graph 0.03, graph 0.03, graph 0.06, graph 0.06
@svg_term
set output svg
plot for [i=1:words(names)] data index (i-1) using 1:2:3:4 with yerrorlines \
     ls int(word(styles, i)) title word(names, i)
@png_term
set output png
replot
