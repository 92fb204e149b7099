# Sourced by the tests that install a pinned npm package.

# npm ci into $1 (its package.json and lock file there), trusting the
# system's certificate authorities: npm keeps a list of its own, which
# lacks those a network that inspects TLS has its machines trust.
npm_ci() {
	set -- "$1" /etc/ssl/certs/ca-certificates.crt
	if [ -f "$2" ]; then
		npm ci --prefix "$1" --cafile "$2" --no-audit --no-fund
	else
		npm ci --prefix "$1" --no-audit --no-fund
	fi
}
