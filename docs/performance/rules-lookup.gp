set terminal svg size 760,460 dynamic font 'sans,11'
set output 'rules-lookup.svg'
set title "Policy lookup time against rules\n{/*0.8 AMD EPYC, 2 cores, Linux 6.18.44-fc-v1272; pinhole 0.1.0, haproxy 2.6.12-1+deb12u4, squid 5.7, dnsmasq 2.90}"
set xlabel 'rules'
set ylabel 'median lookup, ns'
set key outside bottom center horizontal
set grid
set datafile missing 'NaN'
set logscale y
set logscale x
set xtics ('10' 10, '100' 100, '1000' 1000, '10000' 10000, '100000' 100000)
plot 'rules-lookup.tsv' using 1:2 with linespoints lw 2 pt 7 title 'pinhole'
