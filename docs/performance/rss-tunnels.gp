set terminal svg size 760,460 dynamic font 'sans,11'
set output 'rss-tunnels.svg'
set title "RSS against open tunnels\n{/*0.8 AMD EPYC, 2 cores, Linux 6.18.44-fc-v1272; pinhole 0.1.0, haproxy 2.6.12-1+deb12u4, squid 5.7, dnsmasq 2.90}"
set xlabel 'open idle tunnels'
set ylabel 'RSS, MiB (process tree)'
set key outside bottom center horizontal
set grid
set datafile missing 'NaN'
set yrange [0:*]
set logscale x
set xtics ('0' 3.3333333333333335, '10' 10, '100' 100, '1000' 1000, '9800' 9800)
plot 'rss-tunnels.tsv' using ($1 == 0 ? 3.3333333333333335 : $1):2 with linespoints lw 2 pt 7 title 'pinhole', 'rss-tunnels.tsv' using ($1 == 0 ? 3.3333333333333335 : $1):3 with linespoints lw 2 pt 7 title 'relay', 'rss-tunnels.tsv' using ($1 == 0 ? 3.3333333333333335 : $1):4 with linespoints lw 2 pt 7 title 'squid'
