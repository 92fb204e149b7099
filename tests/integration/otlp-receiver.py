#!/usr/bin/env python3
# An OTLP/HTTP logs receiver for the tests, on loopback: takes POST
# /v1/logs with Content-Type application/json, checks every request
# against otlp-logs.schema.json (python3-jsonschema), appends each record
# it accepts to OUT as one JSON line (with its resource and scope), and
# one line per request to LOG.  It can fail on purpose, in this order:
# the first --close requests get the connection closed unanswered, the
# next --fail get --fail-status (with --retry-after), the next --refuse
# get 400.  A request that is not valid gets 400 and an INVALID line.
# With --tls CERT KEY it speaks HTTPS.
import argparse
import json
import os
import sys
from http.server import BaseHTTPRequestHandler, HTTPServer

import jsonschema

ap = argparse.ArgumentParser()
ap.add_argument("port", type=int)
ap.add_argument("out")
ap.add_argument("log")
ap.add_argument("--close", type=int, default=0)
ap.add_argument("--fail", type=int, default=0)
ap.add_argument("--fail-status", type=int, default=503)
ap.add_argument("--retry-after")
ap.add_argument("--refuse", type=int, default=0)
ap.add_argument("--max-requests", type=int, default=100000)
ap.add_argument("--tls", nargs=2, metavar=("CERT", "KEY"))
args = ap.parse_args()

here = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(here, "otlp-logs.schema.json")) as f:
    schema = json.load(f)
validator = jsonschema.Draft202012Validator(schema)
state = {"n": 0}
out = open(args.out, "a")
log = open(args.log, "a")


def note(text):
    log.write(text + "\n")
    log.flush()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def answer(self, status, body=b"{}", extra=()):
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        for k, v in extra:
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self):
        state["n"] += 1
        n = state["n"]
        if n > args.max_requests:
            self.close_connection = True
            return
        length = int(self.headers.get("Content-Length", "-1"))
        if length < 0 or length > 64 * 1024 * 1024:
            note("INVALID %d no or bad Content-Length" % n)
            self.answer(411)
            return
        body = self.rfile.read(length)
        if n <= args.close:
            note("CLOSE %d" % n)
            self.close_connection = True
            return
        if n <= args.close + args.fail:
            note("FAIL %d %d" % (n, args.fail_status))
            extra = []
            if args.retry_after is not None:
                extra.append(("Retry-After", args.retry_after))
            self.answer(args.fail_status, b'{"message":"not now"}', extra)
            return
        why = None
        if self.path != "/v1/logs":
            why = "path " + self.path
        elif self.headers.get("Content-Type") != "application/json":
            why = "content type %s" % self.headers.get("Content-Type")
        else:
            try:
                req = json.loads(body)
                validator.validate(req)
            except (ValueError, jsonschema.ValidationError) as e:
                why = str(e).splitlines()[0]
        if why is not None:
            note("INVALID %d %s" % (n, why))
            self.answer(400, json.dumps({"message": why}).encode())
            return
        if n <= args.close + args.fail + args.refuse:
            note("REFUSE %d" % n)
            self.answer(400, b'{"message":"refused on purpose"}')
            return
        count = 0
        for rl in req.get("resourceLogs", []):
            for sl in rl.get("scopeLogs", []):
                for rec in sl.get("logRecords", []):
                    out.write(json.dumps({"resource": rl.get("resource"),
                                          "scope": sl.get("scope"),
                                          "record": rec}) + "\n")
                    count += 1
        out.flush()
        note("OK %d %d" % (n, count))
        self.answer(200)

    def log_message(self, fmt, *a):
        pass


HTTPServer.allow_reuse_address = True
srv = HTTPServer(("127.0.0.1", args.port), Handler)
srv.timeout = 1
if args.tls:
    import ssl
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(*args.tls)
    srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
srv.serve_forever()
