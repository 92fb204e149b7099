set terminal svg size 760,460 dynamic font 'sans,11'
set output 'cpu-request.svg'
set title "CPU per forward request against clients\n{/*0.8 AMD EPYC, 2 cores, Linux 6.18.44-fc-v1272; pinhole 0.1.0, haproxy 2.6.12-1+deb12u4, squid 5.7, dnsmasq 2.90}"
set xlabel 'concurrent clients'
set ylabel 'server CPU µs per request'
set key outside bottom center horizontal
set grid
set datafile missing 'NaN'
set logscale y
set logscale x
set xtics ('1' 1, '10' 10, '100' 100, '1000' 1000)
plot 'cpu-request.tsv' using 1:2 with linespoints lw 2 pt 7 title 'pinhole', 'cpu-request.tsv' using 1:3 with linespoints lw 2 pt 7 title 'relay', 'cpu-request.tsv' using 1:4 with linespoints lw 2 pt 7 title 'squid', 'cpu-request.tsv' using 1:5 with linespoints lw 2 pt 7 title 'direct (loadgen+origin, no proxy)'
