#!/bin/sh
# The gateway's DNS side: dig over UDP and TCP (EDNS, truncation, every
# record type), getaddrinfo through a resolv.conf naming the gateway, and
# no exfiltration: a recording upstream never sees a denied name.
. "$top_srcdir/tests/integration/lib.sh"

need dig
"$PINHOLE" proxy --help 2>&1 | grep -q -- --dns-listen ||
    skip "pinhole proxy has no --dns-listen yet"

# The system python starts in a tenth of the time a version shim takes.
PY=python3
[ -x /usr/bin/python3 ] && PY=/usr/bin/python3
UPSTREAM="$top_srcdir/tests/integration/dns-upstream.py"
CLIENT="$top_srcdir/tests/integration/dns-client.py"
# lib.sh's free_port and wait_port, with the fast python.
port() {
	$PY "$top_srcdir/tests/free-port.py"
}
listening() {
	$PY -c "
import socket, time
for i in range(100):
    try:
        socket.create_connection(('127.0.0.1', $1), 0.2); break
    except OSError:
        time.sleep(0.1)
else:
    raise SystemExit(1)" || fail "nothing listens on port $1"
}
UP=$(port)
DNS=$(port)
HTTP=$(port)
ORIGIN=$(port)
bg $PY "$UPSTREAM" "$UP" "$T/upstream.log"
listening "$UP" || { finish; exit 1; }
bg $PY -m http.server "$ORIGIN" --bind 127.0.0.1 --directory "$T"
bg "$PINHOLE" proxy --listen "127.0.0.1:$HTTP" --dns-listen "127.0.0.1:$DNS" \
    --resolver "127.0.0.1:$UP" --allow allowed.test --allow '*.allowed.test' \
    --allow "origin.allowed.test:$ORIGIN" --allow 'allow-private 127.0.0.0/8' \
    --log "$T/audit.log"
listening "$DNS" || { finish; exit 1; }

D="dig -p $DNS @127.0.0.1 +tries=1 +time=3"

# Run dig; keep its output in $T/dig for the checks that follow.
q() {
	$D "$@" >"$T/dig" 2>&1
}
has() {
	grep -Eq -- "$1" "$T/dig"
}

# Allowed names: a fake address for A, stable, short TTL.
q allowed.test A
if has 'allowed\.test\.[[:space:]]+5[[:space:]]+IN[[:space:]]+A[[:space:]]+198\.1[89]\.'; then
	ok "A: a fake address with TTL 5"
else
	fail "A: $(cat "$T/dig")"
fi
a1=$($D +short allowed.test A)
a2=$($D +short +tcp allowed.test A)
[ -n "$a1" ] && [ "$a1" = "$a2" ] && ok "A: the same address over UDP and TCP" ||
    fail "A: $a1 then $a2"
b1=$($D +short www.allowed.test A)
[ -n "$b1" ] && [ "$b1" != "$a1" ] && ok "another name, another address" ||
    fail "www: $b1 (allowed.test: $a1)"
q WwW.AlLoWeD.TeSt A
has 'WwW\.AlLoWeD\.TeSt\.[[:space:]]+5[[:space:]]+IN[[:space:]]+A' && ! has 'mismatch' &&
    ok "0x20 case of the question kept" || fail "0x20: $(cat "$T/dig")"
for t in AAAA HTTPS SVCB; do
	q allowed.test $t
	has 'status: NOERROR' && has 'ANSWER: 0,' && ok "$t: NOERROR, no answer" ||
	    fail "$t: $(cat "$T/dig")"
done
q allowed.test MX
has 'MX[[:space:]]+10 mail\.allowed\.test\.' && ok "MX relayed from upstream" ||
    fail "MX: $(cat "$T/dig")"
q +tcp allowed.test TXT
has '"upstream says hi"' && ok "TXT relayed over TCP" || fail "TXT: $(cat "$T/dig")"
for t in SRV CAA; do
	q allowed.test $t
	has 'status: NOERROR' && ok "$t relayed" || fail "$t: $(cat "$T/dig")"
done
rev=$(echo "$a1" | awk -F. '{ print $4 "." $3 "." $2 "." $1 ".in-addr.arpa" }')
q "$rev" PTR
has 'PTR[[:space:]]+allowed\.test\.' && ok "PTR of a fake address: its name" ||
    fail "PTR $rev: $(cat "$T/dig")"
q 4.3.2.1.in-addr.arpa PTR
has 'status: NXDOMAIN' && ok "PTR of another address: denied" ||
    fail "PTR: $(cat "$T/dig")"
q nx.allowed.test MX
has 'status: NXDOMAIN' && ok "upstream NXDOMAIN relayed" || fail "nx: $(cat "$T/dig")"
q +norec allowed.test A
has 'ANSWER: 1,' && ok "+norec answered" || fail "norec: $(cat "$T/dig")"

# Denied names: NXDOMAIN with EDE 15 and the hint; no OPT without EDNS.
q evil.attacker.test A
has 'status: NXDOMAIN' && has 'EDE: 15 \(Blocked\)' &&
    has 'pinhole request evil\.attacker\.test --any-port' &&
    ok "denied: NXDOMAIN, EDE 15 with a hint" || fail "denied: $(cat "$T/dig")"
q +tcp evil.attacker.test MX
has 'status: NXDOMAIN' && has 'EDE: 15' && ok "denied over TCP" ||
    fail "denied TCP: $(cat "$T/dig")"
q +noedns evil.attacker.test A
has 'status: NXDOMAIN' && ! has 'OPT PSEUDOSECTION' &&
    ok "denied without EDNS: no OPT" || fail "noedns: $(cat "$T/dig")"
q allowed.test.attacker.test A
has 'status: NXDOMAIN' && ok "an allowed name as a prefix is still denied" ||
    fail "prefix: $(cat "$T/dig")"

# Truncation: 2 KB of TXT does not fit 1232 bytes; dig retries over TCP.
q +ignore big.allowed.test TXT
has 'flags: qr tc' && has 'ANSWER: 0,' && ok "UDP: TC set when it does not fit" ||
    fail "TC: $(cat "$T/dig")"
q +ignore +noedns big.allowed.test TXT
has 'flags: qr tc' && has 'MSG SIZE  rcvd: [0-9]{2,3}$' &&
    ok "no EDNS: TC within 512 bytes" || fail "TC 512: $(cat "$T/dig")"
q big.allowed.test TXT
has 'Truncated, retrying in TCP mode' && has 'ANSWER: 10,' &&
    ok "TC, then the whole answer over TCP" || fail "TCP retry: $(cat "$T/dig")"
q +bufsize=4096 big.allowed.test TXT
! has 'Truncated' && has 'ANSWER: 10,' && ok "+bufsize=4096: fits over UDP" ||
    fail "bufsize: $(cat "$T/dig")"

# Malformed input, and several queries on one TCP connection.
expect "malformed queries: FORMERR, NOTIMP, silence" $PY "$CLIENT" "$DNS" malformed
expect "10 queries on one TCP connection" $PY "$CLIENT" "$DNS" pipeline allowed.test

# No exfiltration: 1,000 random denied names, UDP and TCP, none upstream.
expect "1000 denied names answered NXDOMAIN" \
    $PY "$CLIENT" "$DNS" flood 1000 attacker.test "$T/names"
n=$(grep -c 'attacker\.test' "$T/upstream.log")
[ "$n" -eq 0 ] && ok "upstream saw none of the denied names" ||
    fail "upstream saw $n denied names"
grep -qx 'allowed.test' "$T/upstream.log" && ok "allowed names reach upstream (MX/TXT)" ||
    fail "upstream log: $(head -5 "$T/upstream.log")"

# The audit log.
loggrep "$T/audit.log" '"event":"dns".*"verdict":"deny".*"qname":"evil\.attacker\.test","qtype":"A","answer":"NXDOMAIN".*"ask":"pinhole request evil\.attacker\.test --any-port"' &&
    ok "audit: denied query" || fail "audit: no deny line"
loggrep "$T/audit.log" '"event":"dns".*"verdict":"allow".*"qname":"allowed\.test","qtype":"A","answer":"198\.1[89]\.' &&
    ok "audit: allowed query with its answer" || fail "audit: no allow line"
# The flood above spent this second's first lines (200 a second): wait
# for the limiter's next second, or the first query here is not written.
sleep 1.5
for i in 1 2 3 4 5; do $D +short once.attacker.test A >/dev/null; done
# An answer goes out before its line is written, at the end of the pass.
wait_line "$T/audit.log" '"qname":"once\.attacker\.test"'
n=$(grep -c '"qname":"once\.attacker\.test"' "$T/audit.log")
[ "$n" -eq 1 ] && ok "audit: repeats of a query are not each logged" ||
    fail "audit: $n lines for 5 repeats"

# The proxy decides a fake address as the name behind it.
listening "$ORIGIN"
fa=$($D +short origin.allowed.test A)
code=$(curl -s -o /dev/null -w '%{http_code}' -x "http://127.0.0.1:$HTTP" "http://$fa:$ORIGIN/")
[ "$code" = 200 ] && ok "forward request to a fake address reaches its name" ||
    fail "forward to $fa: $code"
code=$(curl -s -o /dev/null -w '%{http_code}' -p -x "http://127.0.0.1:$HTTP" "http://$fa:$ORIGIN/")
[ "$code" = 200 ] && ok "CONNECT to a fake address reaches its name" ||
    fail "CONNECT to $fa: $code"
loggrep "$T/audit.log" '"event":"connect","verdict":"allow".*"host":"origin\.allowed\.test"' &&
    ok "audit: the connection is logged under the name" ||
    fail "audit: no connect line for origin.allowed.test"
code=$(curl -s -o /dev/null -w '%{http_code}' -x "http://127.0.0.1:$HTTP" "http://198.19.255.254:$ORIGIN/")
[ "$code" = 502 ] && ok "a fake address nobody was given: 502" ||
    fail "unused fake address: $code"

# --dns-real: the resolver's addresses, special-purpose ones withheld
# unless allow-private covers them.
REAL=$(port)
bg "$PINHOLE" proxy --listen "127.0.0.1:$(port)" --dns-listen "127.0.0.1:$REAL" \
    --resolver "127.0.0.1:$UP" --allow '*.allowed.test' --dns-real \
    --allow 'allow-private 127.0.0.0/8'
listening "$REAL"
R="dig -p $REAL @127.0.0.1 +tries=1 +time=3 +short"
[ "$($R origin.allowed.test A)" = 127.0.0.1 ] &&
    ok "--dns-real: an allow-private address is answered" ||
    fail "--dns-real origin: $($R origin.allowed.test A)"
[ -z "$($R www.allowed.test A)" ] &&
    ok "--dns-real: a documentation address is withheld" ||
    fail "--dns-real www: $($R www.allowed.test A)"
[ -z "$($R www.allowed.test AAAA)" ] &&
    ok "--dns-real: 2001:db8:: withheld too" ||
    fail "--dns-real AAAA: $($R www.allowed.test AAAA)"
dig -p "$REAL" @127.0.0.1 +tries=1 +time=3 evil.attacker.test A >"$T/dig" 2>&1
has 'status: NXDOMAIN' && ok "--dns-real: denied names still NXDOMAIN" ||
    fail "--dns-real denied: $(cat "$T/dig")"

# getaddrinfo through /etc/resolv.conf, in namespaces of our own: port 53
# on the new netns' loopback, resolv.conf bind-mounted over the real one.
if [ "$(id -u)" -eq 0 ]; then NS="unshare -nm"; else NS="unshare -rnm"; fi
cat >"$T/gai.sh" <<EOS
set -u
ip link set lo up || exit 3
echo "nameserver 127.0.0.1" >"$T/resolv.conf"
mount --bind "$T/resolv.conf" /etc/resolv.conf || exit 3
$PY "$UPSTREAM" 5353 "$T/upstream2.log" & up=\$!
"$PINHOLE" proxy --listen 127.0.0.1:8080 --dns-listen 127.0.0.1:53 \
    --resolver 127.0.0.1:5353 --allow '*.allowed.test' --log "$T/audit2.log" & gw=\$!
trap 'kill \$up \$gw 2>/dev/null' EXIT
i=0
while [ \$i -lt 100 ] && ! $PY -c "import socket; socket.create_connection(('127.0.0.1', 53), 0.2)" 2>/dev/null; do
	sleep 0.1; i=\$((i + 1))
done
$PY - <<'EOP'
import socket, sys
addrs = {a[4][0] for a in socket.getaddrinfo("www.allowed.test", 443, type=socket.SOCK_STREAM)}
if not addrs or not all(a.startswith("198.18.") or a.startswith("198.19.") for a in addrs):
    sys.exit("allowed: %r" % addrs)
try:
    socket.getaddrinfo("exfil.attacker.test", 443)
    sys.exit("denied name resolved")
except socket.gaierror as e:
    if e.errno != socket.EAI_NONAME:
        sys.exit("denied: %r" % e)
print("ok", addrs)
EOP
EOS
$NS sh "$T/gai.sh" >"$T/gai.out" 2>&1
case $? in
0)	ok "getaddrinfo through resolv.conf: $(tail -1 "$T/gai.out")" ;;
3)	fail "cannot set up the namespace: $(cat "$T/gai.out")" ;;
*)	fail "getaddrinfo: $(cat "$T/gai.out")" ;;
esac
[ -f "$T/upstream2.log" ] && grep -q attacker "$T/upstream2.log" &&
    fail "getaddrinfo: a denied name went upstream"

finish
