#!/usr/bin/python3
# Try to reach unix sockets: each argument is NAME=PATH (a path, or
# @NAME for an abstract socket); prints "NAME reached" or "NAME closed
# (why)" a line each.  Datagram sockets are sent one empty datagram.
import socket
import sys

for arg in sys.argv[1:]:
    name, path = arg.split("=", 1)
    addr = "\0" + path[1:] if path.startswith("@") else path
    for kind in (socket.SOCK_STREAM, socket.SOCK_DGRAM):
        s = socket.socket(socket.AF_UNIX, kind)
        try:
            s.connect(addr)
            print(name, "reached")
            break
        except OSError as e:
            err = e
        finally:
            s.close()
        if err.errno != 91:	# EPROTOTYPE: try the other kind
            print(name, "closed", "(%s)" % err.strerror)
            break
    else:
        print(name, "closed", "(%s)" % err.strerror)
    sys.stdout.flush()
