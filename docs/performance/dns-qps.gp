set terminal svg size 760,460 dynamic font 'sans,11'
set output 'dns-qps.svg'
set title "DNS queries per second against policy size\n{/*0.8 AMD EPYC, 2 cores, Linux 6.18.44-fc-v1272; pinhole 0.1.0, haproxy 2.6.12-1+deb12u4, squid 5.7, dnsmasq 2.90}"
set xlabel 'rules in the policy'
set ylabel 'queries per second'
set key outside bottom center horizontal
set grid
set datafile missing 'NaN'
set yrange [0:*]
set logscale x
set xtics ('10' 10, '1000' 1000, '100000' 100000)
plot 'dns-qps.tsv' using 1:2 with linespoints lw 2 pt 7 title 'pinhole', 'dns-qps.tsv' using 1:3 with linespoints lw 2 pt 7 title 'dnsmasq (reference, no policy)'
