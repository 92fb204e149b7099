set terminal svg size 760,460 dynamic font 'sans,11'
set output 'session-attach.svg'
set title "Session attach time against attached sandboxes\n{/*0.8 AMD EPYC, 2 cores, Linux 6.18.44-fc-v1272; pinhole 0.1.0, haproxy 2.6.12-1+deb12u4, squid 5.7, dnsmasq 2.90}"
set xlabel 'sandboxes already attached'
set ylabel 'pinhole run --session -- true, median ms'
set key outside bottom center horizontal
set grid
set datafile missing 'NaN'
set yrange [0:*]
set logscale x
set xtics ('0' 0.3333333333333333, '1' 1, '10' 10, '50' 50)
plot 'session-attach.tsv' using ($1 == 0 ? 0.3333333333333333 : $1):2 with linespoints lw 2 pt 7 title 'pinhole'
