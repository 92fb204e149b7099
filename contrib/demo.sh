#!/bin/sh
# The quick-start demo: curl in pinhole's sandbox, against a web server
# the demo starts on this machine's loopback, with names from a tiny DNS
# server (dnsmasq) the demo starts too.  One name is allowed, one is not,
# and going around the gateway fails.  $1 is the pinhole program to run.
# Needs root or unprivileged user namespaces, curl, python3, dnsmasq.
set -eu
pinhole=${1:-pinhole}
PATH=$PATH:/usr/sbin:/sbin

for t in curl python3 dnsmasq; do
	command -v $t >/dev/null || { echo "demo: needs $t" >&2; exit 1; }
done
T=$(mktemp -d /tmp/pinhole-demo.XXXXXX)
chmod 755 "$T"
pids=
trap 'for p in $pids; do kill $p 2>/dev/null; done; rm -rf "$T"' EXIT
trap 'exit 1' INT TERM

port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}
wait_port() {
	i=0
	until python3 -c "import socket; socket.create_connection(('127.0.0.1',$1),0.2)" 2>/dev/null; do
		i=$((i + 1))
		[ $i -lt 50 ] || { echo "demo: nothing listens on $1" >&2; exit 1; }
		sleep 0.1
	done
}

# A web server and a DNS server on loopback: both names are 127.0.0.1.
WEB=$(port)
DNS=$(port)
echo "hello from the allowed origin" >"$T/index.html"
(cd "$T" && exec python3 -m http.server "$WEB" --bind 127.0.0.1) \
    >/dev/null 2>&1 &
pids="$pids $!"
dnsmasq -k -u root -p "$DNS" --listen-address=127.0.0.1 --bind-interfaces \
    --no-resolv --no-hosts --pid-file= --address=/allowed.test/127.0.0.1 \
    --address=/blocked.test/127.0.0.1 2>/dev/null &
pids="$pids $!"
wait_port "$WEB"
wait_port "$DNS"

# What runs in the sandbox: each command shown, then its output.
cat >"$T/inside.sh" <<EOF
show() {
	echo "  \\\$ \$*"
	o=\$("\$@" 2>&1); rc=\$?
	[ -z "\$o" ] || printf '%s\\n' "\$o" | sed 's/^/    /'
	[ \$rc = 0 ] || echo "    (exit status \$rc)"
}
show curl -sS http://allowed.test:$WEB/
show curl -sS http://blocked.test:$WEB/
show getent hosts allowed.test
show getent hosts blocked.test
show curl -sS -m 5 --noproxy '*' http://127.0.0.1:$WEB/
exit 0
EOF

cat <<EOF
A web server listens on 127.0.0.1:$WEB; allowed.test and blocked.test
both resolve to 127.0.0.1.  The sandbox may reach allowed.test:$WEB only:

\$ pinhole run --resolver 127.0.0.1:$DNS --allow 'allow-private 127.0.0.0/8' \\
      --allow allowed.test:$WEB --log $T/audit.log -- sh inside.sh
EOF
"$pinhole" run --resolver "127.0.0.1:$DNS" \
    --allow 'allow-private 127.0.0.0/8' --allow "allowed.test:$WEB" \
    --log "$T/audit.log" -- sh "$T/inside.sh"
echo
echo "The audit log (audit.log):"
sed 's/^/  /' "$T/audit.log"
