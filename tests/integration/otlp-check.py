#!/usr/bin/env python3
# Check what the OTLP receiver got against the local audit log, by a
# mapping written here independently of pinhole's (docs/audit-log.md,
# "OpenTelemetry"): otlp-check.py LOG RECORDS VERSION [--skip N]
# Every line of LOG after the first N must have arrived exactly once, in
# order, as the body of one record, with the right time, severity,
# attributes, resource and scope; and nothing else may have arrived.
import datetime
import json
import socket
import sys

SEMCONV = {
    "host": "server.address", "port": "server.port",
    "addr": "network.peer.address", "method": "http.request.method",
    "path": "url.path", "status": "http.response.status_code",
    "qname": "dns.question.name", "pid": "process.pid",
    "cmd": "process.command_line",
}


def value(v):
    if isinstance(v, bool):
        return {"boolValue": v}
    if isinstance(v, int):
        return {"intValue": str(v)}
    return {"stringValue": v}


def expected_attrs(rec):
    out = {}
    for k, v in rec.items():
        if k == "ts" or v is None:
            continue
        if k == "client":
            host, _, port = v.rpartition(":")
            if host.startswith("[") and host.endswith("]"):
                host = host[1:-1]
            if port.isdigit() and host and (":" not in host or
                                            v.startswith("[")):
                out["client.address"] = value(host)
                out["client.port"] = value(int(port))
                continue
        out[SEMCONV.get(k, "pinhole." + k)] = value(v)
    return out


def nanos(ts):
    t = datetime.datetime.strptime(ts, "%Y-%m-%dT%H:%M:%S.%fZ")
    t = t.replace(tzinfo=datetime.timezone.utc)
    return str(int(t.timestamp()) * 10**9 + t.microsecond * 1000)


def main():
    log, records, version = sys.argv[1:4]
    skip = int(sys.argv[5]) if len(sys.argv) > 5 else 0
    lines = [l.rstrip("\n") for l in open(log) if l.strip()][skip:]
    got = [json.loads(l) for l in open(records)]
    bodies = [g["record"]["body"]["stringValue"] for g in got]
    if bodies != lines:
        for i, (a, b) in enumerate(zip(lines, bodies)):
            if a != b:
                sys.exit("record %d: want %s\n got %s" % (i, a, b))
        sys.exit("%d lines in the log, %d records" % (len(lines),
                                                      len(bodies)))
    host = socket.gethostname()
    want_res = {"service.name": value("pinhole"),
                "service.version": value(version),
                "host.name": value(host)}
    for line, g in zip(lines, got):
        rec = json.loads(line)
        r = g["record"]
        res = {a["key"]: a["value"] for a in g["resource"]["attributes"]}
        if res != want_res:
            sys.exit("resource %s, want %s" % (res, want_res))
        if g["scope"].get("name") != "pinhole":
            sys.exit("scope %s" % g["scope"])
        attrs = {a["key"]: a["value"] for a in r.get("attributes", [])}
        if len(attrs) != len(r.get("attributes", [])):
            sys.exit("an attribute twice: %s" % line)
        if attrs != expected_attrs(rec):
            sys.exit("attributes of %s:\n got %s\nwant %s" %
                     (line, attrs, expected_attrs(rec)))
        if r.get("timeUnixNano") != nanos(rec["ts"]):
            sys.exit("time of %s: %s" % (line, r.get("timeUnixNano")))
        warn = rec.get("verdict") == "deny" or rec.get("event") == "loss"
        if (r.get("severityNumber"), r.get("severityText")) != \
                ((13, "WARN") if warn else (9, "INFO")):
            sys.exit("severity of %s: %s" % (line, r.get("severityText")))
        if "traceId" in r or "spanId" in r:
            sys.exit("trace ids in %s" % line)
    seqs = [json.loads(l)["seq"] for l in lines]
    print("%d records, seq %d..%d" % (len(lines), seqs[0], seqs[-1]))


main()
