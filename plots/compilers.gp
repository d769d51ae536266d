# compilers.gp: the same strategies built by each compiler, at one size: clustered bars,
# one bar a compiler (fill pattern + colour). Data: strategy, then median low high per compiler.
load dir.'/style.gp'
set title title
set ylabel 'median time per operation (ns)'
set style data histogram
set style histogram errorbars gap 1.5 lw 1
set style fill pattern border rgb '#333333'
set boxwidth 0.9
set yrange [0:*]
set xtics rotate by -35 scale 0
set grid noxtics nomxtics ytics
set key inside left top vertical Left reverse
pattern(i) = int(word("3 1 2 4 5 6 7", i))
@svg_term
set output svg
plot for [i=1:words(compilers)] data using (column(3*i-1)):(column(3*i)):(column(3*i+1)):xtic(1) \
     title word(compilers, i) lc rgb word(colours, i) fs pattern pattern(i)
@png_term
set output png
replot
