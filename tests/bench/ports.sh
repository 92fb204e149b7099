# Ports on 127.0.0.1 for the benchmark scripts that source this file.

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
