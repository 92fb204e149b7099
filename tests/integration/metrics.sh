#!/bin/sh
# pinhole proxy --metrics: known traffic (a CONNECT allowed and one
# refused, one to a name the upstream refuses, a forwarded request, DNS
# allowed and refused, a policy reload that works and one that fails,
# the resolver cache's hits and its flush at a reload),
# then the exact counts on a scrape with curl, promtool's lint of it, bad
# requests to the listener, a tunnel counted while it is open, a session
# with an attached sandbox and held connections approved once and for the
# session, pinhole run --metrics, and a real Prometheus scraping it, asked
# over its HTTP API.  As root, and the scrape part as nobody too.  All on
# 127.0.0.1.
. "$top_srcdir/tests/integration/lib.sh"

need curl dig dnsmasq python3 jq promtool prometheus setpriv
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY no_proxy NO_PROXY ALL_PROXY

cp "$PINHOLE" "$T/pinhole" && chmod 755 "$T/pinhole"
start_origin --local-ttl=600

# One CONNECT through the proxy on port $1 to $2.  tunnel: sends a
# fixed request and prints "STATUS UP DOWN", the bytes sent and received
# through the tunnel (0 0 when refused).  hold: prints the status, then
# holds the tunnel open until file $3 exists (at most 20 s).
cat >"$T/connect.py" <<'EOF'
import os, socket, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), 5)
s.settimeout(5)
s.sendall(b"CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n" %
          ((sys.argv[2].encode(),) * 2))
head = b""
while b"\r\n\r\n" not in head:
    b = s.recv(1)
    if not b:
        break
    head += b
status = head.split(b" ")[1].decode() if head else "none"
if len(sys.argv) > 3:
    print(status, flush=True)
    end = time.time() + 20
    while not os.path.exists(sys.argv[3]) and time.time() < end:
        time.sleep(0.05)
    s.close()
    sys.exit(0)
up = down = 0
if status == "200":
    req = b"GET /hello.txt HTTP/1.0\r\nHost: origin.test\r\n\r\n"
    s.sendall(req)
    up = len(req)
    while True:
        b = s.recv(65536)
        if not b:
            break
        down += len(b)
s.close()
print(status, up, down)
EOF
tunnel() { python3 "$T/connect.py" "$1" "$2"; }
hold() { python3 "$T/connect.py" "$1" "$2" "$3"; }

# The value of one series ($2, exactly as written) in scrape file $1.
value() {
	awk -v s="$2" '$1 == s { print $2; n++ } END { if (!n) print "none" }' "$1"
}

# Check series $2 of scrape $1 is $3.
check() {
	v=$(value "$1" "$2")
	if [ "$v" = "$3" ]; then ok "$MODE: $2 = $3"
	else fail "$MODE: $2 is $v, not $3"; fi
}

# Scrape the metrics at port $1 into file $2.
scrape() {
	curl -sf --max-time 5 "http://127.0.0.1:$1/metrics" >"$2"
}

# Wait (at most 10 s) until series $3 at port $1 is $4 (scrape in $2).
wait_value() {
	i=0
	while [ $i -lt 100 ]; do
		scrape "$1" "$2" && [ "$(value "$2" "$3")" = "$4" ] && return 0
		sleep 0.1
		i=$((i + 1))
	done
	return 1
}

# Run the proxy as $MODE, send the traffic, check the scrape.
# Sets M (metrics port) for the caller.
run_mode() {
	W="$T/w-$MODE"
	mkdir -p "$W/xdg" && chmod 700 "$W/xdg"
	[ "$MODE" = root ] || chown -R nobody "$W"
	P=$(free_port); DP=$(free_port); M=$(free_port)
	printf 'allow-private 127.0.0.1\nallow origin.test:%s\nallow fail.example:%s\n' \
	    "$HP" "$HP" >"$W/policy"
	chmod 644 "$W/policy"
	bg_mode "$T/pinhole" proxy --listen "127.0.0.1:$P" \
	    --dns-listen "127.0.0.1:$DP" --metrics "127.0.0.1:$M" \
	    --policy "$W/policy" --resolver "127.0.0.1:$DNSP" \
	    --log "$W/audit.log"
	wait_port "$P" && wait_port "$M" || return

	scrape "$M" "$W/s0" || fail "$MODE: first scrape"
	check "$W/s0" 'pinhole_connections_total{verdict="allow",reason="none"}' 0
	check "$W/s0" 'pinhole_tunnels' 0

	set -- $(tunnel "$P" "origin.test:$HP")
	[ "$1" = 200 ] && [ "$3" -gt 0 ] && ok "$MODE: allowed CONNECT" ||
	    fail "$MODE: allowed CONNECT: $*"
	UP=$2 DOWN=$3
	set -- $(tunnel "$P" "denied.test:$HP")
	[ "$1" = 403 ] && ok "$MODE: refused CONNECT" ||
	    fail "$MODE: refused CONNECT: $*"
	# Allowed, but the upstream DNS server refuses the name.
	set -- $(tunnel "$P" "fail.example:$HP")
	[ "$1" = 502 ] && ok "$MODE: CONNECT to a name that does not resolve" ||
	    fail "$MODE: CONNECT to fail.example: $*"
	body=$(curl -s --max-time 5 -x "http://127.0.0.1:$P" \
	    "http://origin.test:$HP/hello.txt")
	[ "$body" = "hello from origin" ] && ok "$MODE: forwarded request" ||
	    fail "$MODE: forwarded request: $body"
	dig +short +time=2 +tries=1 -p "$DP" @127.0.0.1 origin.test A \
	    >"$W/dig1" || fail "$MODE: dig origin.test"
	dig +time=2 +tries=1 -p "$DP" @127.0.0.1 denied.test A >"$W/dig2" ||
	    fail "$MODE: dig denied.test"
	grep -q NXDOMAIN "$W/dig2" && ok "$MODE: denied name" ||
	    fail "$MODE: denied name: $(cat "$W/dig2")"

	# A reload that works, then one that fails (the old policy stays).
	printf 'allow-private 127.0.0.1\nallow origin.test:%s\nallow other.test\n' "$HP" >"$W/p.new"
	chmod 644 "$W/p.new" && mv "$W/p.new" "$W/policy"
	wait_value "$M" "$W/s1" 'pinhole_policy_reloads_total{result="ok"}' 1 ||
	    fail "$MODE: no reload counted"
	printf 'allow origin.test:%s\nthis is not a rule\n' "$HP" >"$W/p.new"
	chmod 644 "$W/p.new" && mv "$W/p.new" "$W/policy"
	wait_value "$M" "$W/s1" \
	    'pinhole_policy_reloads_total{result="failed"}' 1 ||
	    fail "$MODE: no failed reload counted"

	# The forwarded exchange's line is written when the client has gone.
	wait_value "$M" "$W/s1" \
	    'pinhole_http_requests_total{verdict="allow",reason="none"}' 1 ||
	    fail "$MODE: the forwarded request was not counted"
	S="$W/s1"
	check "$S" 'pinhole_connections_total{verdict="allow",reason="none"}' 1
	check "$S" \
	    'pinhole_connections_total{verdict="deny",reason="denied-by-policy"}' 1
	check "$S" 'pinhole_http_requests_total{verdict="allow",reason="none"}' 1
	check "$S" 'pinhole_dns_queries_total{verdict="allow"}' 1
	check "$S" 'pinhole_dns_queries_total{verdict="deny"}' 1
	check "$S" 'pinhole_policy_reloads_total{result="ok"}' 1
	check "$S" 'pinhole_policy_reloads_total{result="failed"}' 1
	check "$S" 'pinhole_tunnels' 0
	check "$S" 'pinhole_held_connections' 0
	check "$S" 'pinhole_audit_lost_lines_total' 0
	check "$S" \
	    'pinhole_connections_total{verdict="allow",reason="resolve-failed"}' 1
	check "$S" 'pinhole_resolver_errors_total' 1
	check "$S" 'pinhole_grants_total{scope="once"}' 0
	check "$S" "pinhole_build_info{version=\"$("$T/pinhole" version |
	    awk '{print $2}')\"}" 1
	# Bytes: the tunnel's exactly, plus the forwarded exchange's.
	fw() {
		jq -s "[.[] | select(.event == \"request\" and
		    .verdict == \"allow\") | .$1] | add // 0" "$W/audit.log"
	}
	fw_up=$(fw bytes_up) fw_down=$(fw bytes_down)
	check "$S" 'pinhole_relayed_bytes_total{direction="up"}' \
	    $((UP + ${fw_up:-0}))
	check "$S" 'pinhole_relayed_bytes_total{direction="down"}' \
	    $((DOWN + ${fw_down:-0}))
	n=$(value "$S" 'pinhole_resolver_duration_seconds_count')
	inf=$(value "$S" 'pinhole_resolver_duration_seconds_bucket{le="+Inf"}')
	[ "$n" != none ] && [ "$n" -ge 1 ] && [ "$n" = "$inf" ] &&
	    ok "$MODE: resolver histogram ($n)" ||
	    fail "$MODE: resolver histogram: count $n, +Inf $inf"
	start=$(value "$S" process_start_time_seconds)
	now=$(date +%s)
	[ "$start" -le "$now" ] && [ "$start" -gt $((now - 600)) ] &&
	    ok "$MODE: start time" || fail "$MODE: start time $start"

	# The resolver's cache (dnsmasq gives its answers a TTL of 600 s):
	# a name asked again is a hit; after a policy reload it is asked
	# anew, once.
	cache() {
		scrape "$M" "$W/c" &&
		    echo "$(value "$W/c" 'pinhole_resolver_cache_lookups_total{result="hit"}') $(value "$W/c" 'pinhole_resolver_cache_lookups_total{result="miss"}')"
	}
	fwd() {
		curl -s -o /dev/null --max-time 5 -x "http://127.0.0.1:$P" \
		    "http://origin.test:$HP/hello.txt"
	}
	fwd
	set -- $(cache)
	h0=$1 m0=$2
	fwd
	set -- $(cache)
	[ "$1" = $((h0 + 1)) ] && [ "$2" = "$m0" ] &&
	    ok "$MODE: a name asked again is answered from the cache" ||
	    fail "$MODE: cache hit/miss $h0/$m0 then $1/$2"
	printf 'allow-private 127.0.0.1\nallow origin.test:%s\n' "$HP" >"$W/p.new"
	chmod 644 "$W/p.new" && mv "$W/p.new" "$W/policy"
	wait_value "$M" "$W/c" 'pinhole_policy_reloads_total{result="ok"}' 2 ||
	    fail "$MODE: the second reload was not counted"
	fwd
	fwd
	set -- $(cache)
	[ "$1" = $((h0 + 2)) ] && [ "$2" = $((m0 + 1)) ] &&
	    ok "$MODE: a reload forgets the cache: asked anew once" ||
	    fail "$MODE: after the reload, cache hit/miss $1/$2 (before $((h0 + 1))/$m0)"

	# Every family has HELP and TYPE, and promtool finds nothing amiss.
	if promtool check metrics <"$S" >"$W/lint" 2>&1 && [ ! -s "$W/lint" ]
	then ok "$MODE: promtool check metrics"
	else fail "$MODE: promtool: $(cat "$W/lint")"; fi
	fams=$(grep -c '^# TYPE ' "$S"); helps=$(grep -c '^# HELP ' "$S")
	[ "$fams" -ge 16 ] && [ "$fams" = "$helps" ] &&
	    ok "$MODE: $fams families with HELP and TYPE" ||
	    fail "$MODE: $fams TYPE lines, $helps HELP lines"
	! grep -q 'origin.test\|denied.test' "$S" &&
	    ok "$MODE: no host name in a label" || fail "$MODE: a host name"

	# The listener: only GET /metrics; bad requests are refused.
	U="http://127.0.0.1:$M"
	st() { curl -s -o /dev/null -w '%{http_code}' --max-time 5 "$@"; }
	[ "$(st "$U/")" = 404 ] && ok "$MODE: / is 404" || fail "$MODE: /"
	[ "$(st "$U/metricsx")" = 404 ] && ok "$MODE: /metricsx is 404" ||
	    fail "$MODE: /metricsx"
	[ "$(st -X POST "$U/metrics")" = 405 ] && ok "$MODE: POST is 405" ||
	    fail "$MODE: POST"
	ct=$(curl -s -o /dev/null -w '%{content_type}' "$U/metrics")
	[ "$ct" = "text/plain; version=0.0.4; charset=utf-8" ] &&
	    ok "$MODE: content type" || fail "$MODE: content type $ct"
	python3 - "$M" >"$W/raw" <<'EOF'
import socket, sys
def ask(data):
    s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), 5)
    s.settimeout(5)
    try:
        s.sendall(data)
        r = s.recv(200).split(b"\r\n")[0].decode()
    except OSError as e:
        r = "error %s" % e
    s.close()
    return r
print(ask(b"GARBAGE\r\n\r\n"))
print(ask(b"GET /metrics HTTP/1.1\r\n" + b"X: " + b"a" * 5000 + b"\r\n\r\n"))
print(ask(b"GET /metrics HTTP/9.9\r\n\r\n"))
EOF
	[ "$(sed -n 1p "$W/raw")" = "HTTP/1.1 400 Bad Request" ] &&
	    ok "$MODE: malformed request is 400" ||
	    fail "$MODE: malformed: $(sed -n 1p "$W/raw")"
	sed -n 2p "$W/raw" | grep -q '^HTTP/1.1 431 ' &&
	    ok "$MODE: head too large is 431" ||
	    fail "$MODE: too large: $(sed -n 2p "$W/raw")"
	sed -n 3p "$W/raw" | grep -q '^HTTP/1.1 505 ' &&
	    ok "$MODE: bad version is 505" ||
	    fail "$MODE: version: $(sed -n 3p "$W/raw")"
	scrape "$M" "$W/s2" && ok "$MODE: still serving" ||
	    fail "$MODE: no scrape after bad requests"

	# A tunnel is counted while it is open, and no longer once closed.
	hold "$P" "origin.test:$HP" "$W/go" >"$W/hold" &
	h=$!
	wait_value "$M" "$W/s3" pinhole_tunnels 1 &&
	    ok "$MODE: an open tunnel is counted" ||
	    fail "$MODE: tunnels $(value "$W/s3" pinhole_tunnels): $(cat "$W/hold")"
	: >"$W/go"
	wait "$h"
	wait_value "$M" "$W/s3" pinhole_tunnels 0 &&
	    ok "$MODE: and not once it is closed" ||
	    fail "$MODE: tunnels $(value "$W/s3" pinhole_tunnels) after close"
	check "$W/s3" 'pinhole_connections_total{verdict="allow",reason="none"}' 2
}

# A session counts its attached sandboxes, and what they send.
session_mode() {
	W="$T/s-$MODE"
	mkdir -p "$W/log" && mkdir -m 700 "$W/xdg"
	[ "$MODE" = root ] || chown -R nobody "$W"
	SM=$(free_port) SP=$(free_port)
	as_mode "$T/pinhole" session start mx --resolver "127.0.0.1:$DNSP" \
	    --allow 'allow-private 127.0.0.0/8' --allow "origin.test:$HP" \
	    --metrics "127.0.0.1:$SM" --log "$W/log/audit.log" --ask=30 \
	    --listen "127.0.0.1:$SP" \
	    >/dev/null 2>"$W/err" ||
	    { fail "$MODE: session start: $(cat "$W/err")"; return; }
	scrape "$SM" "$W/s0" || fail "$MODE: session scrape"
	check "$W/s0" pinhole_sandboxes 0
	bg_mode "$T/pinhole" run --session mx -- sh -c \
	    "curl -s -m 5 http://origin.test:$HP/hello.txt; sleep 2" \
	    >"$W/run.out" 2>&1
	runpid=$!
	wait_value "$SM" "$W/s1" pinhole_sandboxes 1 &&
	    ok "$MODE: one sandbox attached" ||
	    fail "$MODE: sandboxes $(value "$W/s1" pinhole_sandboxes)"
	wait "$runpid"
	grep -q 'hello from origin' "$W/run.out" ||
	    fail "$MODE: the attached command: $(cat "$W/run.out")"
	wait_value "$SM" "$W/s2" pinhole_sandboxes 0 &&
	    ok "$MODE: the sandbox is gone" ||
	    fail "$MODE: sandboxes $(value "$W/s2" pinhole_sandboxes)"
	check "$W/s2" \
	    'pinhole_http_requests_total{verdict="allow",reason="none"}' 1

	# A connection held for a person, who approves it once.
	tunnel "$SP" "ask.test:$HP" >"$W/held" &
	held=$!
	wait_value "$SM" "$W/s3" pinhole_held_connections 1 &&
	    ok "$MODE: one connection held" || fail "$MODE: none held"
	check "$W/s3" pinhole_escalation_pending 1
	id=$(wait_pending ask.test as_mode "$T/pinhole") &&
	    as_mode "$T/pinhole" approve --once "$id" >/dev/null ||
	    fail "$MODE: approve"
	wait "$held"
	grep -q '^200 ' "$W/held" && ok "$MODE: approved, through" ||
	    fail "$MODE: approved: $(cat "$W/held")"
	scrape "$SM" "$W/s4"
	check "$W/s4" 'pinhole_grants_total{scope="once"}' 1
	check "$W/s4" 'pinhole_grants_total{scope="session"}' 0
	check "$W/s4" pinhole_held_connections 0
	check "$W/s4" pinhole_escalation_pending 0

	# Another, approved for the session.
	tunnel "$SP" "ask2.test:$HP" >"$W/held2" &
	held=$!
	id=$(wait_pending ask2.test as_mode "$T/pinhole") &&
	    as_mode "$T/pinhole" approve --session "$id" >/dev/null ||
	    fail "$MODE: approve --session"
	wait "$held"
	grep -q '^200 ' "$W/held2" || fail "$MODE: approved: $(cat "$W/held2")"
	scrape "$SM" "$W/s5"
	check "$W/s5" 'pinhole_grants_total{scope="once"}' 1
	check "$W/s5" 'pinhole_grants_total{scope="session"}' 1
	as_mode "$T/pinhole" session stop mx >/dev/null 2>&1 ||
	    fail "$MODE: session stop"
}

# pinhole run --metrics: the sandboxed command's request is counted
# while it runs.
run_metrics() {
	W="$T/r-$MODE"
	mkdir -p "$W/log" && mkdir -m 700 "$W/xdg"
	[ "$MODE" = root ] || chown -R nobody "$W"
	RM=$(free_port)
	bg_mode "$T/pinhole" run --resolver "127.0.0.1:$DNSP" \
	    --allow 'allow-private 127.0.0.0/8' --allow "origin.test:$HP" \
	    --metrics "127.0.0.1:$RM" --log "$W/log/audit.log" -- sh -c \
	    "curl -s -m 5 http://origin.test:$HP/hello.txt; i=0
	    while [ ! -e '$W/go' ] && [ \$i -lt 200 ]; do
		sleep 0.1; i=\$((i + 1)); done" >"$W/run.out" 2>&1
	runpid=$!
	wait_value "$RM" "$W/s1" \
	    'pinhole_http_requests_total{verdict="allow",reason="none"}' 1 &&
	    ok "$MODE: run --metrics counts the sandbox's request" ||
	    fail "$MODE: run --metrics: $(grep requests_total "$W/s1")"
	check "$W/s1" pinhole_sandboxes 0
	: >"$W/go"
	wait "$runpid"
	grep -q 'hello from origin' "$W/run.out" ||
	    fail "$MODE: run --metrics: $(cat "$W/run.out")"
}

MODE=nobody run_metrics
MODE=root run_metrics
MODE=nobody run_mode
MODE=nobody session_mode
MODE=root session_mode
MODE=root run_mode

# A real Prometheus scrapes the root proxy every second.
PP=$(free_port)
cat >"$T/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: pinhole
    static_configs:
      - targets: ['127.0.0.1:$M']
EOF
mkdir "$T/tsdb"
bg prometheus --config.file="$T/prometheus.yml" \
    --storage.tsdb.path="$T/tsdb" --web.listen-address="127.0.0.1:$PP" \
    --log.level=warn 2>"$T/prometheus.err"
wait_port "$PP"

# Ask Prometheus for one value; prints it, or nothing.
query() {
	curl -s --max-time 5 -G "http://127.0.0.1:$PP/api/v1/query" \
	    --data-urlencode "query=$1" | jq -r '.data.result[0].value[1] // empty'
}
i=0
while [ "$(query 'up{job="pinhole"}')" != 1 ] && [ $i -lt 300 ]; do
	sleep 0.1
	i=$((i + 1))
done
pq() {
	v=$(query "$1")
	[ "$v" = "$2" ] && ok "prometheus: $1 = $2" ||
	    fail "prometheus: $1 is '$v', not $2"
}
pq 'up{job="pinhole"}' 1
pq 'pinhole_connections_total{verdict="allow",reason="none"}' 2
pq 'pinhole_connections_total{verdict="deny",reason="denied-by-policy"}' 1
pq 'pinhole_http_requests_total{verdict="allow",reason="none"}' \
    "$(value "$T/w-root/s3" 'pinhole_http_requests_total{verdict="allow",reason="none"}')"
pq 'pinhole_dns_queries_total{verdict="deny"}' 1
pq 'pinhole_policy_reloads_total{result="failed"}' 1
pq "pinhole_relayed_bytes_total{direction=\"up\"}" \
    "$(value "$T/w-root/s3" 'pinhole_relayed_bytes_total{direction="up"}')"
pq 'pinhole_tunnels' 0
pq 'count(pinhole_resolver_duration_seconds_bucket)' 13
[ -s "$T/prometheus.err" ] && echo "prometheus said: $(tail -3 "$T/prometheus.err")"
finish
