#!/bin/sh
# docs/deploy.md's files are the real thing: each block marked
# "file: PATH" is taken out of the page and checked by the tool that
# would read it: policies by pinhole, the unit drop-in by systemd-analyze,
# the Prometheus configuration by promtool, the rsyslog one by rsyslogd,
# the YAML parsed; and each pinhole command line on the page is started,
# in a network and mount namespace of this test's own, and must serve.
. "$top_srcdir/tests/integration/lib.sh"

need root promtool rsyslogd systemd-analyze unshare python3

doc=$top_srcdir/docs/deploy.md
export PINHOLE_PRESETDIR="$top_srcdir/contrib/presets"

# Each block as $T/files/PATH.
mkdir "$T/files"
awk -v out="$T/files" '
	/^file: / { name = $2; next }
	name != "" && /^```/ && !inblock { inblock = 1; f = out "/" name
		sub(/\/[^\/]*$/, "", f); system("mkdir -p \"" f "\"")
		f = out "/" name; printf "" > f; next }
	inblock && /^```/ { inblock = 0; close(f); name = ""; next }
	inblock { print > f }
' "$doc"
F=$T/files
n=$(find "$F" -type f | wc -l)
[ "$n" -ge 10 ] && ok "$n files taken from deploy.md" ||
	fail "only $n files found in deploy.md"

# Policies: loaded as a gateway loads them (exit 0 or 1: allowed or
# denied; 2 would be a policy that does not load).
for p in $(find "$F" -name '*.policy'); do
	"$PINHOLE" check --policy "$p" github.com >"$T/out" 2>&1
	[ $? -le 1 ] && ok "policy ${p#$F} loads" ||
	    fail "policy ${p#$F} loads: $(cat "$T/out")"
done
python3 - "$F/k8s/pinhole-policy.yaml" "$T/cm.policy" <<'EOF' &&
import sys, yaml
cm = yaml.safe_load(open(sys.argv[1]))
assert cm["kind"] == "ConfigMap"
open(sys.argv[2], "w").write(cm["data"]["00-fleet.policy"])
EOF
	expect "the ConfigMap's policy loads" "$PINHOLE" check --policy "$T/cm.policy" github.com ||
	fail "the ConfigMap does not parse"
expect "the fleet policy refuses ngrok" sh -c \
	"! '$PINHOLE' check --policy '$F/etc/pinhole/policy.d/00-fleet.policy' x.ngrok.io"

# YAML parses.
for y in $(find "$F" -name '*.yaml' -o -name '*.yml' | grep -v prometheus); do
	expect "${y#$F} parses" python3 -c \
	    'import sys, yaml; list(yaml.safe_load_all(open(sys.argv[1])))' "$y"
done

# Prometheus, both configurations.
expect "promtool checks the fleet's prometheus.yml" \
	promtool check config "$F/etc/prometheus/prometheus.yml"
expect "promtool checks the cluster's prometheus.yml" \
	promtool check config "$F/k8s/prometheus.yml"

# rsyslog: its certificates where the test has them.
mkdir "$T/rtls"
openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=logs.test \
	-keyout "$T/rtls/key.pem" -out "$T/rtls/cert.pem" 2>/dev/null
cp "$T/rtls/cert.pem" "$T/rtls/ca.pem"
sed "s|/etc/rsyslog-tls|$T/rtls|g; s|/var/log/pinhole|$T/rlog|g" \
	"$F/etc/rsyslog.d/pinhole-collector.conf" > "$T/rsyslog.conf"
expect "rsyslogd -N1 takes the collector's configuration" \
	rsyslogd -N1 -f "$T/rsyslog.conf"

# The units: the drop-in on the built unit, and the decider's.
unit=$top_builddir/contrib/systemd/pinhole-proxy.service
mkdir -p "$T/units/pinhole-proxy.service.d"
sed "s|^ExecStart=[^ ]*pinhole|ExecStart=$PINHOLE|" "$unit" \
	> "$T/units/pinhole-proxy.service"
sed "s|^ExecStart=/usr/bin/pinhole|ExecStart=$PINHOLE|" \
	"$F/etc/systemd/system/pinhole-proxy.service.d/fleet.conf" \
	> "$T/units/pinhole-proxy.service.d/fleet.conf"
cp "$F/etc/systemd/system/pinhole-decider.service" "$T/units/"
for u in pinhole-proxy.service pinhole-decider.service; do
	if SYSTEMD_UNIT_PATH="$T/units:" systemd-analyze verify --man=no \
	    "$T/units/$u" >"$T/out" 2>&1 && ! [ -s "$T/out" ]; then
		ok "systemd-analyze verify takes $u"
	else
		fail "systemd-analyze verify $u: $(cat "$T/out")"
	fi
done

# The command lines, started for real: the drop-in's ExecStart and the
# sidecar's args, each in namespaces of its own with the page's files in
# /etc/pinhole and empty state directories, serving and answering
# /metrics on loopback.
fleet_cmd=$(sed -n '/^ExecStart=\//,/[^\\]$/p' \
	"$F/etc/systemd/system/pinhole-proxy.service.d/fleet.conf" |
	sed 's/^ExecStart=//; s/\\$//; s|%d/|$CREDENTIALS_DIRECTORY/|g' |
	tr -d '\t\n')
side_cmd=$(python3 - "$F/k8s/pinhole-egress.yaml" <<'EOF'
import sys, yaml, shlex
for d in yaml.safe_load_all(open(sys.argv[1])):
    if d["kind"] != "Deployment":
        continue
    for c in d["spec"]["template"]["spec"]["containers"]:
        if c["name"] == "pinhole":
            print("/usr/bin/pinhole " + " ".join(shlex.quote(a) for a in c["args"]))
EOF
)
[ -n "$fleet_cmd" ] && [ -n "$side_cmd" ] || fail "no command lines found"

cp "$F/etc/pinhole/policy.d/00-fleet.policy" "$T/fleet.policy"
: > "$T/proxy.policy"
openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=ca.test \
	-keyout /dev/null -out "$T/logs-ca.pem" 2>/dev/null
# The fleet's CA and a host's certificate, its key a systemd credential
# (%d in the drop-in); the upstream proxy's credentials.
openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=fleet-ca \
	-keyout "$T/fleet-ca.key" -out "$T/fleet-ca.pem" 2>/dev/null &&
	openssl req -newkey rsa:2048 -nodes -subj /CN=host.test \
	-keyout "$T/host.key" -out "$T/host.csr" 2>/dev/null &&
	openssl x509 -req -in "$T/host.csr" -CA "$T/fleet-ca.pem" \
	-CAkey "$T/fleet-ca.key" -CAcreateserial -out "$T/host.pem" -days 1 \
	2>/dev/null || fail "cannot make the fleet's certificates"
mkdir "$T/creds" && cp "$T/host.key" "$T/creds/host.key"
export CREDENTIALS_DIRECTORY=$T/creds
printf 'fleet-proxy:not-a-real-password\n' >"$T/proxy.auth"
chmod 640 "$T/proxy.auth"

# The build's configuration directory, as check --help names it.
sysconf=$("$PINHOLE" check --help | tr '\n' ' ' |
	sed -n 's/.*The system policy, *\([^ ]*\)\/pinhole\/policy and.*/\1/p')
[ -d "$sysconf" ] || fail "no configuration directory in check --help: $sysconf"

# Start "$@" (a command line's words after /usr/bin/pinhole) in a new
# network and mount namespace with /etc/pinhole and the state
# directories of its own; it must answer /metrics on 127.0.0.1:9464
# within 10 s and log its start.
serve_in_ns() {
	desc=$1 policydir=$2; shift 2
	cat > "$T/ns.sh" <<'EOF'
set -e
ip link set lo up
# /etc, /var and the build's own configuration directory writable here
# only: what the page puts there is gone with the namespace.
# A new overlay each time: the namespace, and its mounts, are new.
ov=$(mktemp -d "$T/ov.XXXXXX")
for d in /etc /var "$SYSCONF"; do
	mkdir -p "$ov$d/up" "$ov$d/work"
	mount -t overlay overlay \
	    -o "lowerdir=$d,upperdir=$ov$d/up,workdir=$ov$d/work" "$d"
	[ "$(findmnt -n -o FSTYPE "$d")" = overlay ] || exit 1
done
for d in /etc/pinhole "$SYSCONF/pinhole"; do
	mkdir -p "$d/policy.d"
	cp "$POLICYDIR"/* "$d/policy.d/"
	cp "$T/proxy.policy" "$d/proxy.policy"
	cp "$T/proxy.policy" "$d/empty.policy"
	cp "$T/logs-ca.pem" "$d/logs-ca.pem"
	cp "$T/fleet-ca.pem" "$T/host.pem" "$T/proxy.auth" "$d/"
done
mkdir -p /var/log/pinhole /var/lib/pinhole
# The collectors the page names, here where nothing listens for them.
printf '127.0.0.1 logs.example.net otel-collector.observability\n' >>/etc/hosts
printf '127.0.0.1 decide.example.net proxy.corp.example\n' >>/etc/hosts
"$PINHOLE" "$@" >"$T/ns.out" 2>&1 &
pid=$!
i=0
while [ $i -lt 100 ]; do
	if curl -s -m 2 -o "$T/metrics" http://127.0.0.1:9464/metrics; then
		curl -s -m 5 -o /dev/null -w '%{http_code}' \
		    -x http://127.0.0.1:3128 http://x.ngrok.io/ > "$T/code" || true
		# Allowed by the system layer: not refused, it just cannot
		# be reached from here.
		curl -s -m 5 -o /dev/null -w '%{http_code}' \
		    -x http://127.0.0.1:3128 http://github.com/ > "$T/code2" || true
		kill $pid; wait $pid || true
		exit 0
	fi
	kill -0 $pid 2>/dev/null || break
	sleep 0.1; i=$((i + 1))
done
kill $pid 2>/dev/null || true
exit 1
EOF
	rm -f "$T/metrics" "$T/code" "$T/code2"
	if POLICYDIR=$policydir T=$T PINHOLE=$PINHOLE SYSCONF=$sysconf \
	    unshare -m -n --propagation private sh "$T/ns.sh" "$@" &&
	    grep -q '^pinhole_build_info' "$T/metrics" &&
	    [ "$(cat "$T/code")" = 403 ] &&
	    [ "$(cat "$T/code2")" != 403 ] && [ -s "$T/code2" ]; then
		ok "$desc serves, with metrics; the system layer refuses x.ngrok.io ($(cat "$T/code")) and lets github.com through ($(cat "$T/code2"))"
	else
		fail "$desc: $(tail -5 "$T/ns.out" 2>/dev/null)"
	fi
}

eval "set -- $(echo "$fleet_cmd" | sed 's|^/usr/bin/pinhole||')"
serve_in_ns "the fleet's proxy" "$F/etc/pinhole/policy.d" "$@"
mkdir "$T/cm" && cp "$T/cm.policy" "$T/cm/00-fleet.policy"
eval "set -- $(echo "$side_cmd" | sed 's|^/usr/bin/pinhole||')"
serve_in_ns "the cluster's egress proxy" "$T/cm" "$@"

finish
