# Ports on 127.0.0.1, and test keys, for the benchmark scripts that
# source this file.

# A free TCP port on 127.0.0.1.
free_port() {
	python3 "$(dirname "$0")/../free-port.py"
}

# Wait until something listens on 127.0.0.1:$1 (30 s at most).
wait_port() {
	i=0
	until python3 -c "import socket; socket.create_connection(('127.0.0.1', $1), 1)" 2>/dev/null; do
		i=$((i + 1))
		[ $i -lt 60 ] || return 1
		sleep 0.5
	done
}

# A test CA ($1/ca.pem, .key) and a leaf for bench.test it signed
# ($1/leaf.pem, .key), P-256, a day long; 1 when openssl fails.
bench_certs() {
	ec="-newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes"
	# shellcheck disable=SC2086
	openssl req -x509 $ec -keyout "$1/ca.key" -out "$1/ca.pem" -days 1 \
	    -subj /CN=bench-ca 2>/dev/null &&
	    openssl req $ec -keyout "$1/leaf.key" -out "$1/leaf.csr" \
	    -subj /CN=bench.test 2>/dev/null &&
	    printf 'subjectAltName=DNS:bench.test\n' >"$1/san" &&
	    openssl x509 -req -in "$1/leaf.csr" -CA "$1/ca.pem" \
	    -CAkey "$1/ca.key" -CAcreateserial -out "$1/leaf.pem" -days 1 \
	    -extfile "$1/san" 2>/dev/null
}
