set terminal pngcairo size 1200,500 noenhanced
set output "bench/results/summary-unallocated.png"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8
set ylabel "GPUs unallocated at 100% arrival (%)"
set xtics rotate by -30
set key top left
set grid ytics
plot "bench/results/summary-unallocated.dat" using 2:xtic(1) title columnhead, "" using 3 title columnhead, "" using 4 title columnhead, "" using 5 title columnhead
