# style.gp: what every allocmark plot shares: terminals, fonts, and one line style per
# strategy (colour + point type + dash type, 32 of them), so a plot still reads in black and white.
# Loaded by the other scripts; report/plots.py passes the strategy's style number.
set encoding utf8
# enhanced text would read the '_' in strategy names as subscripts
if (!exists("svg_w")) svg_w = 640
if (!exists("svg_h")) svg_h = 440
svg_term = "set terminal svg size svg_w,svg_h dynamic noenhanced font 'Helvetica,12' background rgb 'white'; set title font ',13.5'; set key font ',10.5'"
# PNG: twice the SVG's size, fonts to match
png_term = "set terminal pngcairo size 2*svg_w,2*svg_h noenhanced font 'Helvetica,22' background rgb 'white' linewidth 2; set title font ',25'; set key font ',19'"

# Okabe-Ito colours first (colour-blind safe), then darker extras
colours = "#0072B2 #D55E00 #009E73 #CC79A7 #E69F00 #56B4E9 #000000 #882255 #44AA99 #999933 #332288 #AA4499 #666666 #117733 #DDAA33 #6699CC"
points  = "7 5 9 13 6 4 8 12 11 15 10 14 1 2 3 7"
dashes  = "1 2 3 4 5 6 7 8 1 2 3 4 5 6 7 8"
set dashtype 6 (12,6,2,6,2,6)
set dashtype 7 (3,3)
set dashtype 8 (18,4)
do for [i=1:16] {
    set style line i lc rgb word(colours, i) pt int(word(points, i)) dt int(word(dashes, i)) lw 1.6 ps 0.9
}
# styles 17-32: the same colours with other dashes and points, so no two of 32 strategies look alike
points2 = "1 2 3 10 14 15 4 6 5 9 13 7 8 12 11 6"
dashes2 = "5 6 7 8 2 3 4 1 6 7 8 5 3 4 1 2"
do for [i=1:16] {
    set style line 16+i lc rgb word(colours, i) pt int(word(points2, i)) dt int(word(dashes2, i)) lw 1.6 ps 0.9
}

set border 3 lw 1 lc rgb '#444444'
set tics nomirror out scale 0.6 textcolor rgb '#333333'
set grid xtics ytics mxtics mytics lc rgb '#e4e4e4' lw 1 dt 1, lc rgb '#f2f2f2' lw 1 dt 1
set key outside right top vertical Left reverse noautotitle samplen 2.5 spacing 1.05 width 1 maxrows 20
set format y '%g'
set format x '%g'
# a log axis spanning less than a decade shows one label at most: add 1-2-5 labels
logtics = "do for [e=-4:9] { set ytics add (1*10.0**e, 2*10.0**e, 5*10.0**e) }"
