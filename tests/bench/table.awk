# Print the benchmark table from the result files run.sh wrote:
# DIR/SERVER.METRIC holds one value ("!" after it marks a run with errors),
# DIR/SERVER.skip says why a server was not measured.
# Variables: dir, servers, env, builds, bytes, idle, clients, placement.

# Read one result; "-" when there is none.
function get(srv, m,    f, v) {
	f = dir "/" srv "." m
	v = "-"
	if ((getline v < f) <= 0)
		v = "-"
	close(f)
	return v
}

# The number in a result, or "" when there is none.
function num(v) {
	sub(/!.*/, "", v)
	return v ~ /^[0-9.]+$/ ? v + 0 : ""
}

# pinhole's result over another server's, or "-".
function ratio(m, other,    a, b) {
	if (!has["pinhole"] || !has[other])
		return "-"
	a = num(get("pinhole", m))
	b = num(get(other, m))
	if (a == "" || b == "" || b == 0)
		return "-"
	return sprintf("%.2f", a / b)
}

# Print label s padded to the metric column (mawk counts bytes, so a "µ"
# is as wide as length("µ") says).
function pad(s,    t, k) {
	t = s
	k = gsub(/µ/, "", t)
	printf "%-" (30 + k * (length("µ") - 1)) "s", s
}

# Print one target line: PASS, MISS or n/a.
function target(text, m, other, op, limit,    r, v, verdict) {
	r = ratio(m, other)
	v = get("pinhole", m)
	if (r == "-")
		verdict = "n/a"
	else if (v ~ /!/)
		verdict = "MISS (errors in the run)"
	else if ((op == ">=" && r + 0 >= limit) || (op == "<=" && r + 0 <= limit))
		verdict = "PASS"
	else
		verdict = "MISS"
	printf "%-44s %8s  %s\n", text, r, verdict
}

BEGIN {
	n = split(servers, srv, " ")
	for (i = 1; i <= n; i++)
		has[srv[i]] = 1
	nm = split("bulk1 bulk1cpu bulk1eo bulk16 bulk16cpu bulk16eo " \
	    "one oneus onecpu oneeo " \
	    "rate rate50 rate99 ratecpu rateeo rps rps50 rps99 rpscpu rpseo " \
	    "rss0 rss tunnelb hwm cache", metric, " ")
	label["bulk1"] = "tunnel MiB/s, 1 tunnel"
	label["bulk1cpu"] = "  CPU µs per MiB"
	label["bulk1eo"] = "  loadgen+origin µs per MiB"
	label["bulk16"] = "tunnel MiB/s, 16 tunnels"
	label["bulk16cpu"] = "  CPU µs per MiB"
	label["bulk16eo"] = "  loadgen+origin µs per MiB"
	label["one"] = "CONNECT setups/s, 1 client"
	label["oneus"] = "  setup p50 µs"
	label["onecpu"] = "  CPU µs per CONNECT setup"
	label["oneeo"] = "  loadgen+origin µs per setup"
	label["rate"] = sprintf("CONNECT setups/s, %d clients", clients)
	label["rate50"] = "  setup p50 ms"
	label["rate99"] = "  setup p99 ms"
	label["ratecpu"] = "  CPU µs per CONNECT setup"
	label["rateeo"] = "  loadgen+origin µs per setup"
	label["rps"] = sprintf("forward req/s, %d keep-alive", clients)
	label["rps50"] = "  request p50 ms"
	label["rps99"] = "  request p99 ms"
	label["rpscpu"] = "  CPU µs per forward request"
	label["rpseo"] = "  loadgen+origin µs per req"
	label["rss0"] = "RSS at start, MiB"
	label["rss"] = sprintf("RSS, %d idle tunnels, MiB", idle)
	label["tunnelb"] = "RSS per idle tunnel, bytes"
	label["hwm"] = "peak RSS (VmHWM), MiB"
	label["cache"] = "resolver cache hit ratio"
	ratios = has["pinhole"]
	ratios2 = ratios && has["pinhole2"]

	printf "pinhole proxy benchmark on loopback (%s)\n", env
	printf "%s\n", placement
	if (builds != "")
		printf "%s\n", builds
	printf "throughput: %.0f MiB per case; RSS and CPU summed over each server's processes\n\n",
	    bytes / 1048576
	printf "%-30s", "metric"
	for (i = 1; i <= n; i++)
		printf " %11s", srv[i]
	if (ratios)
		printf " | %9s %9s %9s %9s", "ph/direct", "ph/relay", "ph/squid",
		    "ph/tiny"
	if (ratios2)
		printf " %9s", "ph/ph2"
	printf "\n"
	for (j = 1; j <= nm; j++) {
		m = metric[j]
		pad(label[m])
		for (i = 1; i <= n; i++)
			printf " %11s", get(srv[i], m)
		if (ratios)
			printf " | %9s %9s %9s %9s", ratio(m, "direct"),
			    ratio(m, "relay"), ratio(m, "squid"),
			    ratio(m, "tinyproxy")
		if (ratios2)
			printf " %9s", ratio(m, "pinhole2")
		printf "\n"
	}
	printf "\n"
	for (i = 1; i <= n; i++) {
		why = get(srv[i], "skip")
		if (why != "-")
			printf "%s not measured: %s\n", srv[i], why
	}
	printf "(\"!\" marks a run with errors; \"-\" a figure not measured)\n"
	printf "(CPU µs per ...: the server's own CPU time, all its processes and threads, over\n"
	printf " the units loadgen completed; direct has no server.  loadgen+origin µs per ...:\n"
	printf " the two ends' CPU in the same run; with the server's it is the whole cost)\n"
	printf "(relay: haproxy in TCP mode, which loadgen reaches without CONNECT and with\n"
	printf " origin-form requests: the floor of one more hop)\n"
	printf "(resolver cache hit ratio: pinhole's hits/(hits+misses) from its metrics\n"
	printf " after the CONNECT cases; \"-\" when it exposes no such counters)\n\n"
	printf "%-44s %8s  %s\n", "target (pinhole)", "ratio", "result"
	target("tunnel MiB/s, 1 tunnel >= 0.90 x direct", "bulk1", "direct", ">=", 0.9)
	target("tunnel MiB/s, 16 tunnels >= 0.90 x direct", "bulk16", "direct", ">=", 0.9)
	target("CONNECT p50, 1 client <= 1.3 x relay", "oneus", "relay", "<=", 1.3)
	target("CONNECT setups/s >= 2 x squid", "rate", "squid", ">=", 2)
	target("CONNECT setups/s >= 1 x tinyproxy", "rate", "tinyproxy", ">=", 1)
	target("RSS with idle tunnels <= 1/3 x squid", "rss", "squid", "<=", 1 / 3)
}
