set terminal svg size 760,460 dynamic font 'sans,11'
set output 'log-verify.svg'
set title "Log verification time against log size\n{/*0.8 AMD EPYC, 2 cores, Linux 6.18.44-fc-v1272; pinhole 0.1.0, haproxy 2.6.12-1+deb12u4, squid 5.7, dnsmasq 2.90}"
set xlabel 'lines in the log'
set ylabel 'verify time, ms'
set key outside bottom center horizontal
set grid
set datafile missing 'NaN'
set logscale y
set logscale x
set xtics ('1000' 1000, '10000' 10000, '100000' 100000, '1000000' 1000000)
plot 'log-verify.tsv' using 1:2 with linespoints lw 2 pt 7 title 'sha256 chain', 'log-verify.tsv' using 1:3 with linespoints lw 2 pt 7 title 'HMAC chain'
