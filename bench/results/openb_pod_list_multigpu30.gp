set terminal pngcairo size 1300,600 font 'DejaVu Sans,10' noenhanced
set output 'bench/results/openb_pod_list_multigpu30-allocation.png'
set grid
set key left top box opaque
set multiplot layout 1,2
set title 'openb_pod_list_multigpu30: GPUs allocated as pods arrive (mean of 10 seeds)'
set xlabel 'arrived GPU request (% of cluster GPUs)'
set ylabel 'GPUs allocated (% of cluster GPUs)'
set xrange [0:130]
set yrange [0:105]
set arrow from 100, graph 0 to 100, graph 1 nohead dt 3 lc rgb 'gray40'
plot x title 'ideal: every GPU requested is allocated' dt 2 lc rgb 'gray50' lw 1, 'bench/results/openb_pod_list_multigpu30-allocation.dat' index 0 using 1:2 with lines lw 3 title 'topofit', 'bench/results/openb_pod_list_multigpu30-allocation.dat' index 1 using 1:2 with lines lw 3 title 'topofit-mostallocated', 'bench/results/openb_pod_list_multigpu30-allocation.dat' index 2 using 1:2 with lines lw 1.5 title 'kube-default', 'bench/results/openb_pod_list_multigpu30-allocation.dat' index 3 using 1:2 with lines lw 1.5 title 'kube-mostallocated', 'bench/results/openb_pod_list_multigpu30-allocation.dat' index 4 using 1:2 with lines lw 1.5 title 'random', 'bench/results/openb_pod_list_multigpu30-allocation.dat' index 5 using 1:2 with lines lw 1.5 title 'bestfit', 'bench/results/openb_pod_list_multigpu30-allocation.dat' index 6 using 1:2 with lines lw 1.5 title 'dotprod', 'bench/results/openb_pod_list_multigpu30-allocation.dat' index 7 using 1:2 with lines lw 1.5 title 'gpu-packing', 'bench/results/openb_pod_list_multigpu30-allocation.dat' index 8 using 1:2 with lines lw 1.5 title 'fgd', 'bench/results/openb_pod_list_multigpu30-allocation.dat' index 9 using 1:2 with lines lw 1.5 title 'fgd-gpu-pods', 'bench/results/openb_pod_list_multigpu30-allocation.dat' index 10 using 1:2 with lines lw 1.5 title 'fgd-gpu-pods-mostallocated'
set title 'zoom on 80-130% arrived'
set xrange [80:130]
set yrange [90:100]
set key right bottom box opaque
plot x title 'ideal: every GPU requested is allocated' dt 2 lc rgb 'gray50' lw 1, 'bench/results/openb_pod_list_multigpu30-allocation.dat' index 0 using 1:2 with lines lw 3 title 'topofit', 'bench/results/openb_pod_list_multigpu30-allocation.dat' index 1 using 1:2 with lines lw 3 title 'topofit-mostallocated', 'bench/results/openb_pod_list_multigpu30-allocation.dat' index 2 using 1:2 with lines lw 1.5 title 'kube-default', 'bench/results/openb_pod_list_multigpu30-allocation.dat' index 3 using 1:2 with lines lw 1.5 title 'kube-mostallocated', 'bench/results/openb_pod_list_multigpu30-allocation.dat' index 4 using 1:2 with lines lw 1.5 title 'random', 'bench/results/openb_pod_list_multigpu30-allocation.dat' index 5 using 1:2 with lines lw 1.5 title 'bestfit', 'bench/results/openb_pod_list_multigpu30-allocation.dat' index 6 using 1:2 with lines lw 1.5 title 'dotprod', 'bench/results/openb_pod_list_multigpu30-allocation.dat' index 7 using 1:2 with lines lw 1.5 title 'gpu-packing', 'bench/results/openb_pod_list_multigpu30-allocation.dat' index 8 using 1:2 with lines lw 1.5 title 'fgd', 'bench/results/openb_pod_list_multigpu30-allocation.dat' index 9 using 1:2 with lines lw 1.5 title 'fgd-gpu-pods', 'bench/results/openb_pod_list_multigpu30-allocation.dat' index 10 using 1:2 with lines lw 1.5 title 'fgd-gpu-pods-mostallocated'
unset multiplot
set output 'bench/results/openb_pod_list_multigpu30-bandwidth.png'
set title 'openb_pod_list_multigpu30: predicted ring all-reduce bandwidth of the GPU sets given to multi-GPU pods'
unset arrow
set key outside top center horizontal
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set xtics rotate by -25
set xlabel ''
set ylabel 'mean bandwidth (GB/s per direction)'
set autoscale x
set yrange [0:*]
plot 'bench/results/openb_pod_list_multigpu30-bandwidth.dat' using 2:xtic(1) title '2-GPU pods', 'bench/results/openb_pod_list_multigpu30-bandwidth.dat' using 3:xtic(1) title '4-GPU pods', 'bench/results/openb_pod_list_multigpu30-bandwidth.dat' using 4:xtic(1) title '8-GPU pods', 'bench/results/openb_pod_list_multigpu30-bandwidth.dat' using 5 title 'all multi-GPU pods (mean)' lc rgb 'gray40'
