# bars.gp: every strategy at one size as horizontal bars, fastest on top, with the
# median's interval. Data: name median ci_low ci_high colour(0xRRGGBB), sorted slowest first.
load dir.'/style.gp'
set title title
set xlabel 'median time per operation (ns)'
set ylabel ''
set key off
set grid noytics nomytics xtics
set xrange [0:*]
set offsets 0, graph 0.12, 0.6, 0.6
set style fill solid 0.75 border rgb '#333333'
set ytics scale 0
@svg_term
set output svg
plot data using (0):0:(0):2:($0-0.36):($0+0.36):5:ytic(1) with boxxyerror lc rgb variable, \
     '' using 2:0:3:4 with xerrorbars lc rgb '#111111' pt 0 lw 1.2, \
     '' using 2:0:(sprintf(' %.3g', $2)) with labels left offset 1.2,0
@png_term
set output png
replot
