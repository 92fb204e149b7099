# The gateway.
