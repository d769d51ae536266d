# bars.gp: every strategy at one size as horizontal bars, fastest on top, with the
# median's interval. Data: name median ci_low ci_high colour(0xRRGGBB), sorted slowest first.
# logx=1 (the report sets it when the bars span more than 30x): log axis, bars
# from xlo, so one pathological strategy does not flatten the others to nothing.
load dir.'/style.gp'
if (!exists('logx')) logx = 0
if (!exists('xlo')) xlo = 0
set title title
set xlabel logx ? 'median time per operation (ns, log scale)' : 'median time per operation (ns)'
set ylabel ''
set key off
set grid noytics nomytics xtics
if (logx) { set logscale x; set xrange [xlo:*] } else { set xrange [0:*] }
set offsets 0, graph 0.12, 0.6, 0.6
set style fill solid 0.75 border rgb '#333333'
set ytics scale 0
@svg_term
set output svg
plot data using (xlo):0:(xlo):2:($0-0.36):($0+0.36):5:ytic(1) with boxxyerror lc rgb variable, \
     '' using 2:0:3:4 with xerrorbars lc rgb '#111111' pt 0 lw 1.2, \
     '' using 2:0:($2 >= 1000 ? sprintf(' %.0f', $2) : sprintf(' %.3g', $2)) with labels left offset 1.2,0
@png_term
set output png
replot
