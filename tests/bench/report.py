#!/usr/bin/env python3
# The scaling report: measure how pinhole's costs grow with load, policy
# size, attached sandboxes and log size, beside a bare TCP relay (haproxy),
# squid and dnsmasq where they apply, with one table of pinhole, the relay
# and squid side by side, and write OUTDIR/performance.md with its plots
# (SVG, by gnuplot) and data under OUTDIR/performance/.
#
#	tests/bench/report.py [--short] BUILDDIR OUTDIR
#	tests/bench/report.py --render OUTDIR   (again, from its run.json)
#
# `make bench` writes docs/; `make bench-short` (--short: small counts, a
# couple of minutes) writes a temporary directory and only checks that
# every figure is there and sane.  It never fails on a time threshold.
# Root runs every series; as another user squid is left out, and the
# session series too where sandboxes cannot be made (the report says so).  Everything talks to 127.0.0.1 only, and
# every run has a time limit.
import json
import math
import os
import platform
import re
import resource
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
FULL = {
    "clients": [1, 10, 100, 1000],
    "tunnels": [10, 100, 1000, 10000],	# one per clients run; 0 is rss0
    "rules": [10, 100, 1000, 10000, 100000],
    "dns_rules": [10, 1000, 100000],
    "sandboxes": [0, 1, 10, 50],
    "lines": [1000, 10000, 100000, 1000000],
    "secs": 3, "setups": 20000, "requests": 50000, "dns_secs": 3,
    "attach_runs": 11, "best_of": 3,
}
SHORT = {
    "clients": [1, 10],
    "tunnels": [10, 100],
    "rules": [10, 100, 1000],
    "dns_rules": [10, 1000],
    "sandboxes": [0, 1, 3],
    "lines": [1000, 10000],
    "secs": 1, "setups": 2000, "requests": 5000, "dns_secs": 1,
    "attach_runs": 3, "best_of": 2,
}
live = []		# processes to stop at exit


def die(msg):
    """Stop what we started and exit with msg."""
    print("report: " + msg, file=sys.stderr)
    stop_all()
    sys.exit(1)


def say(msg):
    print("report: " + msg, file=sys.stderr, flush=True)


def stop(p):
    """Stop one process we started: TERM, then KILL after 5 s."""
    if p.poll() is None:
        p.terminate()
        try:
            p.wait(5)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
    if p in live:
        live.remove(p)


def stop_all():
    for p in list(live):
        stop(p)


def free_port():
    """Return a port on 127.0.0.1 free for TCP and UDP now."""
    for _ in range(100):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        try:
            with socket.socket(type=socket.SOCK_DGRAM) as u:
                u.bind(("127.0.0.1", port))
            return port
        except OSError:
            continue
    die("no free port")


def wait_until(cond, secs, what):
    """Poll cond every 50 ms for secs seconds at most."""
    end = time.monotonic() + secs
    while time.monotonic() < end:
        if cond():
            return
        time.sleep(0.05)
    die("timed out waiting for " + what)


def listening(port, udp=False):
    out = subprocess.run(["ss", "-Hnl" + ("u" if udp else "t"),
        "sport = :%d" % port], capture_output=True, text=True).stdout
    return out.strip() != ""


def rss_kib(pid):
    """VmRSS of one process, in KiB."""
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def median(v):
    v = sorted(v)
    return v[len(v) // 2] if v else float("nan")


def fields(line):
    """key=value pairs of a loadgen line."""
    return dict(w.split("=", 1) for w in line.split() if "=" in w)


def machine():
    """CPU model, cores, kernel."""
    model = "unknown CPU"
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    return "%s, %d cores, Linux %s" % (model, os.cpu_count(),
        platform.release())


def version(argv, pat):
    """The first match of pat in argv's output, or '?'."""
    try:
        out = subprocess.run(argv, capture_output=True, text=True,
            timeout=10)
        m = re.search(pat, out.stdout + out.stderr)
        return m.group(1) if m else "?"
    except (OSError, subprocess.TimeoutExpired):
        return "?"


# --- the series ------------------------------------------------------
#
# Each series is a dict (saved in run.json): name (its entry in WHY),
# title, x and y labels, x values "xs", lines {label: [y or None]}, "log"
# (the plot's log axes), "positive" (every figure must be above zero),
# "marginal" and "unit" (memory: the shape of the growth above the first
# point, and what one unit of x is).

def proxy_series(cfg, build, work, peers, side):
    """CPU per request and per CONNECT against clients; RSS against
    tunnels: run.sh once per step, with direct, pinhole, the relay and
    squid.  The side-by-side figures go into side."""
    servers = ["direct", "pinhole"] + [p for p in ("relay", "squid")
        if p in peers]
    runs = []
    for c, t in zip(cfg["clients"], cfg["tunnels"]):
        d = os.path.join(work, "run-%d" % c)
        os.mkdir(d)
        env = dict(os.environ, BENCH_SERVERS=" ".join(servers),
            BENCH_CLIENTS=str(c), BENCH_IDLE=str(t),
            BENCH_BYTES=str(1 << 20), BENCH_SECS=str(cfg["secs"]),
            BENCH_SETUPS=str(cfg["setups"]),
            BENCH_REQUESTS=str(cfg["requests"]), BENCH_RESULTS=d,
            TMPDIR=work)
        say("run.sh: %d clients, %d idle tunnels" % (c, t))
        with open(os.path.join(d, "table.txt"), "w") as f:
            p = subprocess.Popen([os.path.join(HERE, "run.sh"), build],
                env=env, stdout=f, stderr=subprocess.STDOUT)
            live.append(p)
            try:
                p.wait(900)
            except subprocess.TimeoutExpired:
                die("run.sh took over 900 s")
            live.remove(p)
        runs.append(d)
    cpu_conn = {s: [] for s in servers}
    cpu_req = {s: [] for s in servers}
    lines = []
    for c, d in zip(cfg["clients"], runs):
        got = run_lines(d)
        lines.append(got)
        for s in servers:
            for mode, out in (("connect-rate", cpu_conn),
                    ("forward-rps", cpu_req)):
                f = got.get((s, mode, c))
                out[s].append(per_unit(f, s))
    rss = {s: [] for s in servers if s != "direct"}
    for s in rss:
        base = [res_int(d, s, "rss0kib") for d in runs]
        rss[s].append(median([b for b in base if b is not None]) / 1024)
        for d in runs:
            v = res_int(d, s, "rsskib")
            rss[s].append(None if v is None else v / 1024)
    side.update(side_by_side(servers, runs, lines, cfg))
    direct = "loadgen+origin, no proxy"
    out = []
    for key, title, data, unit in (
            ("cpu-connect", "CPU per CONNECT setup", cpu_conn, "setup"),
            ("cpu-request", "CPU per forward request", cpu_req, "request")):
        lines = {s: data[s] for s in servers if s != "direct"}
        lines["direct (%s)" % direct] = data["direct"]
        out.append({"name": key, "title": title + " against clients",
            "x": "concurrent clients", "y": "server CPU µs per " + unit,
            "xs": cfg["clients"], "lines": lines, "log": "xy",
            "positive": True})
    out.append({"name": "rss-tunnels",
        "title": "RSS against open tunnels",
        "x": "open idle tunnels", "y": "RSS, MiB (process tree)",
        "xs": [0] + cfg["tunnels"], "lines": rss, "log": "x",
        "positive": True, "marginal": True, "unit": "tunnel"})
    return out


def run_lines(d):
    """The loadgen lines one run.sh left, by (server, mode, clients)."""
    got = {}
    if not os.path.exists(os.path.join(d, "lines")):
        with open(os.path.join(d, "table.txt")) as f:
            sys.stderr.write(f.read()[-2000:])
        die("run.sh left no results in " + d)
    with open(os.path.join(d, "lines")) as f:
        for line in f:
            srv, rest = line.split(":", 1)
            f = fields(rest)
            got[(srv, rest.split()[0], int(f.get("conns", "0")))] = f
    return got


def side_by_side(servers, runs, lines, cfg):
    """pinhole, the relay, squid (and direct) side by side: one client's
    CONNECT + 64-byte echo + close (p50 and rate, the median over the
    runs, each of which has that case), the server's CPU per CONNECT
    and per keep-alive forward request with one client, RSS per idle
    tunnel with the most tunnels, and pinhole's resolver cache hits."""
    proxies = [s for s in servers if s != "direct"]
    one = {s: [g.get((s, "connect-rate", 1)) for g in lines]
        for s in servers}
    ok = {s: [f for f in one[s] if f is not None and f.get("errors") == "0"
        and int(f.get("done", "0")) > 0] for s in servers}
    req = {s: lines[cfg["clients"].index(1)].get((s, "forward-rps", 1))
        if 1 in cfg["clients"] else None for s in servers}

    def med(v):
        v = [x for x in v if x is not None]
        return median(v) if v else None
    rows = [
        ("CONNECT + 64 B echo + close, 1 client, p50 µs",
         {s: med([float(f["p50_ms"]) * 1e3 for f in ok[s]])
          for s in servers}),
        ("same, 1 client, connections/s",
         {s: med([float(f["rate"]) for f in ok[s]]) for s in servers}),
        ("server CPU µs per CONNECT, 1 client",
         {s: med([per_unit(f, s) for f in ok[s]]) for s in proxies}),
        ("server CPU µs per forward keep-alive request, 1 client",
         {s: per_unit(req[s], s) for s in proxies}),
        ("RSS per idle tunnel, bytes (%d tunnels)" % cfg["tunnels"][-1],
         {s: res_int(runs[-1], s, "tunnelb") for s in proxies})]
    hits = [res_int(d, "pinhole", "cachehit") for d in runs]
    miss = [res_int(d, "pinhole", "cachemiss") for d in runs]
    cache = None
    if None not in hits + miss and sum(hits + miss) > 0:
        cache = {"hits": sum(hits), "misses": sum(miss)}
    try:
        with open(os.path.join(runs[0], "res", "placement")) as f:
            placement = f.read().strip()
    except OSError:
        placement = "not known"
    return {"servers": servers, "placement": placement, "cache": cache,
        "runs": len(runs), "rows": [{"what": w, "values": v}
        for w, v in rows]}


def per_unit(f, srv):
    """CPU µs per unit done in one loadgen line: the server's, or for
    direct loadgen's and the origin's together."""
    if f is None or int(f.get("done", "0")) <= 0 or f.get("errors") != "0":
        return None
    if srv == "direct":
        cpu = int(f["cpu_us"]) + int(f["origin_cpu_us"])
    else:
        if not f.get("server_cpu_us", "-").isdigit():
            return None
        cpu = int(f["server_cpu_us"])
    return cpu / int(f["done"])


def res_int(d, srv, key):
    """An integer result run.sh left, or None (missing, or flagged)."""
    try:
        with open(os.path.join(d, "res", "%s.%s" % (srv, key))) as f:
            v = f.read().strip()
    except OSError:
        return None
    return int(v) if v.isdigit() else None


def rules_series(cfg, build):
    """Policy load time and lookup time against rules: bench_rules, the
    best of a few runs per size (the machine is shared)."""
    load, look = [], []
    for n in cfg["rules"]:
        best_load = best_look = None
        for _ in range(cfg["best_of"]):
            out = subprocess.run([os.path.join(build,
                "tests/bench/bench_rules"), str(n)], capture_output=True,
                text=True, timeout=300).stdout
            m = re.search(r"load: ([0-9.]+) s", out)
            k = re.search(r"median (\d+) ns", out)
            if m and k:
                best_load = least(best_load, float(m.group(1)) * 1e3)
                best_look = least(best_look, int(k.group(1)))
        load.append(best_load)
        look.append(best_look)
    return [
        {"name": "rules-load", "title": "Policy load time against rules",
         "x": "rules", "y": "load time, ms", "xs": cfg["rules"],
         "lines": {"pinhole": load}, "log": "xy", "positive": True},
        {"name": "rules-lookup", "title": "Policy lookup time against rules",
         "x": "rules", "y": "median lookup, ns", "xs": cfg["rules"],
         "lines": {"pinhole": look}, "log": "xy", "positive": True}]


def least(a, b):
    """The smaller of a and b, either of which may be None."""
    return b if a is None else a if b is None else min(a, b)


def policy_text(n):
    """n rules shaped like bench_rules' (names, wildcards, prefixes), none
    of which matches the queried names, and the rule that does."""
    out = []
    for i in range(n):
        if i % 10 < 6:
            out.append("allow host%d.site%d.example:443" % (i, i % 997))
        elif i % 10 < 9:
            out.append("allow *.svc%d.example.net" % i)
        else:
            out.append("deny %d.%d.%d.0/24" % (20 + i % 200,
                (i // 200) % 256, i % 256))
    out.append("allow *.bench.test")
    return "\n".join(out) + "\n"


def dnsperf(port, names, secs):
    """Queries per second dnsperf got from 127.0.0.1:port, or None."""
    r = subprocess.run(["dnsperf", "-s", "127.0.0.1", "-p", str(port),
        "-d", names, "-l", str(secs), "-c", "4", "-q", "100"],
        capture_output=True, text=True, timeout=secs + 30)
    m = re.search(r"Queries per second:\s*([0-9.]+)", r.stdout)
    codes = re.search(r"Response codes:\s*NOERROR \d+ \(100\.00%\)",
        r.stdout)
    return float(m.group(1)) if m and codes else None


def dns_series(cfg, build, work):
    """DNS qps against policy size: pinhole --dns-listen with N rules,
    dnsmasq (pinhole's resolver here) measured beside it each time."""
    names = os.path.join(work, "names.txt")
    with open(names, "w") as f:
        for i in range(1, 1001):
            f.write("n%d.bench.test A\n" % i)
    dport = free_port()
    dm = subprocess.Popen(["dnsmasq", "-k", "-C", "/dev/null", "-p",
        str(dport), "--listen-address=127.0.0.1", "--bind-interfaces",
        "--no-resolv", "--no-hosts", "--pid-file=", "--cache-size=10000",
        "--address=/bench.test/127.0.0.1"], stderr=subprocess.DEVNULL)
    live.append(dm)
    wait_until(lambda: listening(dport, True), 10, "dnsmasq")
    xdg = os.path.join(work, "xdg-dns")
    os.mkdir(xdg, 0o700)
    ph, ref = [], []
    for n in cfg["dns_rules"]:
        pol = os.path.join(work, "policy-%d" % n)
        with open(pol, "w") as f:
            f.write(policy_text(n))
        port, hport = free_port(), free_port()
        p = subprocess.Popen([os.path.join(build, "pinhole"), "proxy",
            "--listen", "127.0.0.1:%d" % hport, "--dns-listen",
            "127.0.0.1:%d" % port, "--policy", pol, "--resolver",
            "127.0.0.1:%d" % dport, "--log", os.path.join(work,
            "dns-%d.log" % n)], stderr=subprocess.DEVNULL,
            env=dict(os.environ, XDG_RUNTIME_DIR=xdg))
        live.append(p)
        wait_until(lambda: listening(port, True), 30, "pinhole dns")
        ph.append(dnsperf(port, names, cfg["dns_secs"]))
        stop(p)
        ref.append(dnsperf(dport, names, cfg["dns_secs"]))
    stop(dm)
    return [{"name": "dns-qps", "title": "DNS queries per second against "
        "policy size", "x": "rules in the policy", "y": "queries per second",
        "xs": cfg["dns_rules"], "lines": {"pinhole": ph,
        "dnsmasq (reference, no policy)": ref}, "log": "x",
        "positive": True}]


def session_series(cfg, build, work):
    """Attach time and gateway RSS against attached sandboxes."""
    pin = os.path.join(build, "pinhole")
    xdg = os.path.join(work, "xdg-session")
    home = os.path.join(work, "home")
    logs = os.path.join(work, "session-logs")
    os.mkdir(xdg, 0o700)
    os.mkdir(home, 0o755)
    os.mkdir(logs, 0o755)
    # The sandbox keeps the log's directory read-only: it must be neither
    # the home nor the working directory.
    env = dict(os.environ, XDG_RUNTIME_DIR=xdg, HOME=home)
    for k in ("HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy",
            "ALL_PROXY", "all_proxy", "PINHOLE_SESSION"):
        env.pop(k, None)
    most = max(cfg["sandboxes"])
    subprocess.run([pin, "session", "start", "bench", "--listen",
        "127.0.0.1:%d" % free_port(), "--resolver", "127.0.0.1:9",
        "--max-sandboxes", str(most + 8), "--log",
        os.path.join(logs, "session.log")], env=env, check=True, cwd=home,
        stdout=subprocess.DEVNULL, stdin=subprocess.DEVNULL, timeout=60)
    rec = os.path.join(xdg, "pinhole", "session-bench.json")

    def record():
        with open(rec) as f:
            return json.load(f)
    gw = record()["pid"]
    held = []
    attach, rss = [], []
    try:
        for k in cfg["sandboxes"]:
            while len(held) < k:
                p = subprocess.Popen([pin, "run", "--session", "bench", "--",
                    "sleep", "600"], env=env, cwd=home, stdin=subprocess.DEVNULL,
                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                live.append(p)
                held.append(p)
            wait_until(lambda: record()["attached"] >= k, 120,
                "%d attached sandboxes" % k)
            t = []
            for _ in range(cfg["attach_runs"]):
                t0 = time.perf_counter()
                subprocess.run([pin, "run", "--session", "bench", "--",
                    "true"], env=env, cwd=home, check=True,
                    stdin=subprocess.DEVNULL,
                    timeout=60)
                t.append((time.perf_counter() - t0) * 1e3)
            attach.append(median(t))
            rss.append(rss_kib(gw) / 1024)
    finally:
        for p in held:
            stop(p)
        subprocess.run([pin, "session", "stop", "bench"], env=env,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            timeout=30)
    return [
        {"name": "session-attach", "title": "Session attach time against "
         "attached sandboxes", "x": "sandboxes already attached",
         "y": "pinhole run --session -- true, median ms",
         "xs": cfg["sandboxes"], "lines": {"pinhole": attach}, "log": "x",
         "positive": True},
        {"name": "session-rss", "title": "Session gateway RSS against "
         "attached sandboxes", "x": "attached sandboxes",
         "y": "gateway RSS, MiB", "xs": cfg["sandboxes"],
         "lines": {"pinhole": rss}, "log": "x", "positive": True,
         "marginal": True, "unit": "sandbox"}]


def verify_series(cfg, build):
    """pinhole log --verify time against log size: bench_auditverify, the
    best of a few runs per size."""
    plain, hmac = [], []
    for n in cfg["lines"]:
        best = {"sha256": None, "hmac": None}
        for _ in range(cfg["best_of"]):
            out = subprocess.run([os.path.join(build,
                "tests/bench/bench_auditverify"), str(n)],
                capture_output=True, text=True, timeout=600).stdout
            for what in best:
                m = re.search(r"verify %s\s+(\d+) lines.*: ([0-9.]+) "
                    r"lines/s" % what, out)
                if m and int(m.group(1)) == n and float(m.group(2)) > 0:
                    best[what] = least(best[what],
                        n / float(m.group(2)) * 1e3)
        plain.append(best["sha256"])
        hmac.append(best["hmac"])
    return [{"name": "log-verify", "title": "Log verification time against "
        "log size", "x": "lines in the log", "y": "verify time, ms",
        "xs": cfg["lines"], "lines": {"sha256 chain": plain,
        "HMAC chain": hmac}, "log": "xy", "positive": True}]


# --- what the code does, per series: the "why" next to each shape ---

WHY = {
    "cpu-connect": {
        "flat": "each setup is the same fixed work (accept, parse the "
            "request head, one policy lookup, one cached name, connect, "
            "one log line) on one event loop; more clients only queue "
            "more of it",
        "sublinear": "the fixed work per setup is shared better as clients "
            "rise: each event-loop wake-up handles several ready sockets",
        "linear": "the cost per setup rises with the number of clients: "
            "something scans per connection",
        "worse": "the cost per setup rises faster than the client count: "
            "look for a scan over all connections per event",
        "falling": "the fixed cost of each event-loop wake-up is spread "
            "over more ready sockets as clients are added"},
    "cpu-request": {
        "flat": "a keep-alive request is parsed, matched and relayed with "
            "work that does not depend on how many other clients are "
            "connected",
        "sublinear": "more clients mean more ready sockets per event-loop "
            "wake-up, so the loop's own cost is spread",
        "linear": "the cost per request rises with the clients: something "
            "per request walks the connections",
        "worse": "the cost per request grows faster than the clients",
        "falling": "the fixed cost of each event-loop wake-up is spread "
            "over more ready sockets as clients are added"},
    "rss-tunnels": {
        "flat": "idle tunnels cost little next to the process's fixed "
            "memory",
        "sublinear": "per-tunnel memory is small and partly absorbed by "
            "the allocator's free lists and the initial heap",
        "linear": "each tunnel holds its own state (two sockets, two "
            "bufferevents with empty buffers, the session record), so "
            "memory grows by a fixed amount per tunnel",
        "worse": "memory per tunnel grows with the number of tunnels"},
    "rules-load": {
        "flat": "fixed start-up work dominates at these sizes",
        "sublinear": "fixed start-up work dominates the small policies",
        "linear": "each rule is parsed once and put into an open-addressing "
            "hash map (grown by doubling, so constant time per rule on "
            "average) or the tree of wildcard labels",
        "worse": "loading costs more per rule as the policy grows: a "
            "rehash or a sorted insert per rule"},
    "rules-lookup": {
        "flat": "an exact name is one hash probe, a wildcard a walk down "
            "a tree of labels read from the right, an address one probe per "
            "prefix length: bounded by the name's labels and the address's "
            "length, never by the number of rules",
        "sublinear": "the work of a lookup is bounded by the name's labels "
            "and the address's prefix lengths, not by the rules; the rise "
            "is cache misses as the hash maps outgrow the CPU caches",
        "linear": "a lookup scans the rules",
        "worse": "a lookup scans the rules more than once"},
    "dns-qps": {
        "flat": "a query is one policy lookup (bounded, see above) and a "
            "fake address from the map, so the policy's size does not "
            "change the rate",
        "sublinear": "the rate falls slowly as the policy outgrows the "
            "CPU caches",
        "linear": "the rate changes in proportion to the policy",
        "worse": "the rate changes faster than the policy grows",
        "falling": "the rate drops as the policy grows: each lookup "
            "misses the CPU caches more often as the hash maps grow"},
    "session-attach": {
        "flat": "attaching builds one sandbox (namespaces, a veth pair, "
            "the capture rules for its address) and registers it with the "
            "gateway; none of it depends on the sandboxes already there",
        "sublinear": "attaching is mostly fixed namespace set-up; the "
            "small rise is the kernel's per-link work as links accumulate",
        "linear": "each attach does work per attached sandbox",
        "worse": "each attach does more than linear work in the attached "
            "sandboxes",
        "falling": "attaching is fixed namespace set-up, none of it "
            "per attached sandbox; the first attaches also warm the "
            "kernel's and the gateway's caches"},
    "session-rss": {
        "flat": "an idle attached sandbox costs the gateway a record and a "
            "listener, small next to its fixed memory",
        "sublinear": "an idle attached sandbox costs the gateway a record "
            "and a listener, partly absorbed by its initial heap",
        "linear": "each attached sandbox holds a fixed amount of gateway "
            "memory",
        "worse": "memory per sandbox grows with the sandboxes"},
    "log-verify": {
        "flat": "fixed start-up cost dominates these sizes",
        "sublinear": "fixed start-up cost dominates the small logs",
        "linear": "the check reads each line once and hashes it with its "
            "predecessor's digest: constant work per line",
        "worse": "the check costs more per line as the log grows"},
}


# --- shape ----------------------------------------------------------

def slope(xs, ys):
    """Least-squares slope of log y against log x over the points where
    both are positive, leaving out the smallest third of them (where fixed
    costs hide the growth), or None with fewer than two."""
    pts = [(math.log(x), math.log(y)) for x, y in zip(xs, ys)
        if x and y is not None and x > 0 and y > 0]
    pts = pts[len(pts) // 3:]
    if len(pts) < 2:
        return None
    mx = sum(p[0] for p in pts) / len(pts)
    my = sum(p[1] for p in pts) / len(pts)
    sxx = sum((p[0] - mx) ** 2 for p in pts)
    return sum((p[0] - mx) * (p[1] - my) for p in pts) / sxx


def marginal(xs, ys):
    """For memory: the growth above the value at the smallest x, so the
    fixed size does not hide the per-unit cost."""
    base = ys[0]
    if base is None:
        return xs, [None] * len(ys)
    return xs[1:], [None if y is None else y - base for y in ys[1:]]


def classify(s, rise):
    """A shape from a log-log slope s; rise is the last point over the
    first.  A total change under 10% over the whole range is flat
    whatever the slope of the noise."""
    if s is None:
        return "flat" if rise is not None and abs(rise - 1) < 0.1 else None
    if abs(rise - 1) < 0.1 or abs(s) < 0.15:
        return "flat"
    if s < 0:
        return "falling"
    if s < 0.8:
        return "sublinear"
    if s <= 1.2:
        return "linear"
    return "worse"


SHAPE_WORDS = {"flat": "flat", "sublinear": "less than linear",
    "linear": "linear", "worse": "worse than linear",
    "falling": "falling"}


def shape(series, label):
    """(shape, slope, last over first) of one line of a series."""
    xs, ys = series["xs"], series["lines"][label]
    if series.get("marginal"):
        mx, my = marginal(xs, ys)
        s = slope(mx, my)
        pts = [(x, y) for x, y in zip(mx, my) if y is not None]
        base = ys[0]
        top = ys[-1]
        rise = top / base if base and top is not None else None
    else:
        s = slope(xs, ys)
        pts = [(x, y) for x, y in zip(xs, ys) if y is not None and y > 0]
        rise = pts[-1][1] / pts[0][1] if len(pts) >= 2 else None
    c = classify(s, rise)
    return c, s, rise


# --- output ---------------------------------------------------------

def fmt(v):
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "–"
    if v >= 100:
        return "%.0f" % v
    if v >= 10:
        return "%.1f" % v
    return "%.3g" % v


def plot(series, outdir, stamp):
    """Write the series' data and its SVG; return the SVG's name."""
    name = series["name"]
    dat = name + ".tsv"
    labels = list(series["lines"])
    with open(os.path.join(outdir, dat), "w") as f:
        f.write("# x\t" + "\t".join(labels) + "\n")
        for i, x in enumerate(series["xs"]):
            row = [series["lines"][k][i] for k in labels]
            f.write("%s\t%s\n" % (x, "\t".join("NaN" if v is None else
                repr(float(v)) for v in row)))
    svg = name + ".svg"
    xs = series["xs"]
    logx = "x" in series["log"]
    # A log x axis cannot hold 0: plot 0 at a third of the next value.
    zero = min(x for x in xs if x > 0) / 3 if logx and 0 in xs else None
    gp = ["set terminal svg size 760,460 dynamic font 'sans,11'",
        "set output '%s'" % svg,
        "set title \"%s\\n{/*0.8 %s}\"" % (series["title"], stamp),
        "set xlabel '%s'" % series["x"],
        "set ylabel '%s'" % series["y"],
        "set key outside bottom center horizontal",
        "set grid", "set datafile missing 'NaN'",
        "set yrange [0:*]" if "y" not in series["log"] else "set logscale y"]
    if logx:
        gp.append("set logscale x")
        tics = ", ".join("'%s' %s" % (x, zero if x == 0 else x) for x in xs)
        gp.append("set xtics (%s)" % tics)
    cols = []
    for i, lab in enumerate(labels):
        xcol = "($1 == 0 ? %s : $1)" % zero if zero else "1"
        cols.append("'%s' using %s:%d with linespoints lw 2 pt 7 title '%s'"
            % (dat, xcol, i + 2, lab.replace("'", "")))
    gp.append("plot " + ", ".join(cols))
    script = name + ".gp"
    with open(os.path.join(outdir, script), "w") as f:
        f.write("\n".join(gp) + "\n")
    subprocess.run(["gnuplot", script], cwd=outdir, check=True, timeout=60)
    return svg


def section(series, reldir, svg):
    """The markdown for one series: plot, table, shape per line."""
    out = ["## " + series["title"], "",
        "![%s](%s/%s)" % (series["title"], reldir, svg), ""]
    labels = list(series["lines"])
    out.append("| %s | %s |" % (series["x"], " | ".join(labels)))
    out.append("|" + "---|" * (len(labels) + 1))
    for i, x in enumerate(series["xs"]):
        out.append("| %s | %s |" % (x, " | ".join(fmt(series["lines"][k][i])
            for k in labels)))
    out.append("")
    out.append("*%s*" % series["y"])
    out.append("")
    for lab in labels:
        c, s, rise = shape(series, lab)
        what = ("growth above the first point" if series.get("marginal")
            else "the figure")
        if c is None:
            out.append("- **%s**: too few points to tell a shape." % lab)
            continue
        fit = ("log-log slope %.2f" % s) if s is not None else "no slope"
        line = "- **%s**: %s (%s of %s against %s; last over first %s)" % (
            lab, SHAPE_WORDS[c], fit, what, series["x"],
            "%.2fx" % rise if rise is not None else "–")
        ys = series["lines"][lab]
        if series.get("marginal") and ys[0] is not None and \
                ys[-1] is not None:
            line += ", %+.1f KiB per %s" % ((ys[-1] - ys[0]) * 1024 /
                (series["xs"][-1] - series["xs"][0]), series["unit"])
        line += "."
        why = WHY[series["name"]].get(c)
        if lab.startswith("pinhole") or lab.startswith("sha256") or \
                lab.startswith("HMAC") or len(labels) == 1:
            if why:
                line += " In pinhole " + why + "."
        out.append(line)
    out.append("")
    return out


SIDE_NAMES = {"pinhole": "pinhole", "relay": "relay (haproxy, TCP)",
    "squid": "squid", "direct": "direct (no proxy)"}


def side_section(side):
    """The markdown for the side-by-side table, or nothing without one."""
    if not side:
        return []
    cols = [s for s in ("pinhole", "relay", "squid", "direct")
        if s in side["servers"]]
    peers = [s for s in ("relay", "squid") if s in cols]
    out = ["## Side by side: pinhole, a bare relay, squid", "",
        "CPU placement: %s.  One client at a time, unloaded: each "
        "connection is a CONNECT (none through the relay), a 64-byte echo "
        "through the tunnel and a close; p50, rate and CPU per CONNECT "
        "are the median over the %d proxy runs below, each of which has "
        "that case.  The relay is haproxy in TCP mode, one thread, no "
        "log: it parses and decides nothing, so it is the floor of what "
        "one more hop costs; direct is loadgen and the origin alone.  "
        "Server CPU is the server's own (every process and thread), "
        "over the units completed." % (side["placement"], side["runs"]),
        ""]
    out.append("| measurement | %s | %s |" % (" | ".join(SIDE_NAMES[c]
        for c in cols), " | ".join("pinhole/" + p for p in peers)))
    out.append("|---|" + "---:|" * (len(cols) + len(peers)))
    for row in side["rows"]:
        v = row["values"]
        ratios = []
        for p in peers:
            a, b = v.get("pinhole"), v.get(p)
            ratios.append("%.2f" % (a / b) if a and b else "–")
        out.append("| %s | %s | %s |" % (row["what"], " | ".join(
            fmt(v.get(c)) for c in cols), " | ".join(ratios)))
    out.append("")
    c = side["cache"]
    if c:
        out.append("pinhole's resolver cache, over the same runs: %d hits, "
            "%d misses, hit ratio %.4f "
            "(`pinhole_resolver_cache_lookups_total`, scraped after each "
            "run's CONNECT cases)." % (c["hits"], c["misses"],
            c["hits"] / (c["hits"] + c["misses"])))
    else:
        out.append("pinhole's resolver cache hit ratio: – (this build's "
            "metrics have no `pinhole_resolver_cache_lookups_total`).")
    out.append("")
    return out


def check_side(side):
    """Every side-by-side figure present, a number, positive."""
    bad = []
    for row in side.get("rows", []):
        for srv, y in row["values"].items():
            if y is None or not math.isfinite(y) or y <= 0:
                bad.append("side by side: %s at %s = %s" % (srv,
                    row["what"], y))
    return bad


def check(all_series, outdir):
    """Every figure present, a number, positive; every plot written."""
    bad = []
    for s in all_series:
        for lab, ys in s["lines"].items():
            for x, y in zip(s["xs"], ys):
                if y is None or not math.isfinite(y) or (s.get("positive")
                        and y <= 0):
                    bad.append("%s: %s at %s = %s" % (s["name"], lab, x, y))
        svg = os.path.join(outdir, s["name"] + ".svg")
        if not os.path.exists(svg) or os.path.getsize(svg) < 500:
            bad.append("%s: no plot" % s["name"])
    return bad


def measure(build, short):
    """Run every series; return the run: series, notes, and what the
    header says about the machine and the peers."""
    cfg = SHORT if short else FULL
    for p in ("pinhole", "tests/bench/loadgen", "tests/bench/origin",
            "tests/bench/bench_rules", "tests/bench/bench_auditverify"):
        if not os.access(os.path.join(build, p), os.X_OK):
            die("%s/%s missing: make bench-programs" % (build, p))
    for p in ("dnsperf", "dnsmasq"):
        if shutil.which(p, path=os.environ["PATH"] + ":/usr/sbin") is None:
            die("%s missing (Debian: dnsperf, dnsmasq-base)" % p)
    os.environ["PATH"] += ":/usr/sbin:/sbin"
    root = os.geteuid() == 0
    series, notes, side = [], [], {}
    peers = []
    if shutil.which("haproxy"):
        peers.append("relay")
    if root and shutil.which("squid"):
        peers.append("squid")
    # 10,000 tunnels take 20,000 descriptors in the relay: raise the
    # limit where allowed, else hold as many tunnels as it leaves room for.
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (65536, 65536))
    except (ValueError, OSError):
        hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
        room = (hard - 400) // 2 // 100 * 100
        if max(cfg["tunnels"]) > room:
            notes.append("The descriptor limit (%d) leaves room for %d "
                "tunnels, not %d." % (hard, room, max(cfg["tunnels"])))
            cfg = dict(cfg, tunnels=[min(t, room) for t in cfg["tunnels"]])
    signal.signal(signal.SIGTERM, lambda *a: die("terminated"))
    work = tempfile.mkdtemp(prefix="pinhole-report.")
    os.chmod(work, 0o755)
    t0 = time.monotonic()
    load0 = loadavg()
    try:
        for what, f in (("rules", lambda: rules_series(cfg, build)),
                ("log verify", lambda: verify_series(cfg, build)),
                ("dns", lambda: dns_series(cfg, build, work)),
                ("proxy", lambda: proxy_series(cfg, build, work, peers,
                    side)),
                ("sessions", lambda: session_series(cfg, build, work))):
            t1 = time.monotonic()
            try:
                series += f()
            except subprocess.CalledProcessError as e:
                # Without root, sandboxes need user namespaces.
                if root or what != "sessions":
                    raise
                notes.append("The session series could not run as this "
                    "user (%s)." % " ".join(e.cmd[1:3]))
            say("%s: %.0f s" % (what, time.monotonic() - t1))
        if "relay" not in peers:
            notes.append("The bare TCP relay was not measured (haproxy "
                "not installed).")
        if "squid" not in peers:
            notes.append("squid was not measured (not root, or not "
                "installed).")
    finally:
        stop_all()
        if os.environ.get("BENCH_KEEP"):
            say("kept " + work)
        else:
            shutil.rmtree(work, ignore_errors=True)
    with open(os.path.join(build, "pinhole"), "rb") as f:
        asan = b"__asan_init" in f.read()
    peerv = ["pinhole %s" % version([os.path.join(build, "pinhole"),
        "--version"], r"(\S+)\s*$")]
    if "relay" in peers:
        peerv.append("haproxy " + version(["haproxy", "-v"],
            r"version (\S+)"))
    if "squid" in peers:
        peerv.append("squid " + version(["squid", "-v"], r"Version (\S+)"))
    peerv.append("dnsmasq " + version(["dnsmasq", "-v"], r"version (\S+)"))
    return {"series": series, "side": side, "notes": notes,
        "machine": machine(),
        "peers": peerv, "asan": asan, "short": short,
        "secs": time.monotonic() - t0, "best_of": cfg["best_of"],
        "load": [load0, loadavg()],
        "date": time.strftime("%Y-%m-%d", time.gmtime())}


def loadavg():
    """The one-minute load average."""
    with open("/proc/loadavg") as f:
        return float(f.read().split()[0])


def render(run, outdir):
    """Write performance.md and the plots from a run; return what is
    malformed in it."""
    plots = os.path.join(outdir, "performance")
    os.makedirs(plots, exist_ok=True)
    stamp = "%s; %s" % (run["machine"], ", ".join(run["peers"]))
    md = ["# Performance: how pinhole scales", "",
        "<!-- Generated by tests/bench/report.py (make bench); do not edit. "
        "-->", "",
        "Measured on %s, %s build%s, in one run of %.0f s on %s (load "
        "average %.1f at the start, %.1f at the end)." % (run["machine"],
            "a sanitizer" if run["asan"] else "an optimized",
            " (short counts)" if run["short"] else "", run["secs"],
            run["date"], run["load"][0], run["load"][1]),
        "Peers in the same run: %s." % ", ".join(run["peers"]), "",
        "Every server, client and origin shares the same cores on "
        "loopback, so the absolute figures are this machine's; the shapes "
        "are what this report is about.  Each shape is computed from the "
        "data: the least-squares slope of log(figure) against log(count) "
        "over the larger two thirds of the counts (at the smallest, fixed "
        "costs hide the growth): within ±0.15 flat, up to 0.8 less than "
        "linear, up to 1.2 linear, above 1.2 worse than linear, below "
        "-0.15 falling; a change under 10% over the whole range counts as "
        "flat.  Timings of the pure code (rules, log verification) are "
        "the best of " + str(run["best_of"]) + " runs.  "
        "For memory the slope is of the growth above the first point, so "
        "the fixed size does not hide the cost per unit.  See "
        "tests/bench/README.md for how each figure is taken; "
        "performance/run.json holds the figures.", ""]
    md += ["- " + n for n in run["notes"]] + ([""] if run["notes"] else [])
    md += side_section(run.get("side"))
    for s in run["series"]:
        svg = plot(s, plots, stamp)
        md += section(s, "performance", svg)
    with open(os.path.join(outdir, "performance.md"), "w") as f:
        f.write("\n".join(md))
    return check(run["series"], plots) + check_side(run.get("side", {}))


def main():
    args = sys.argv[1:]
    short = "--short" in args
    again = "--render" in args
    args = [a for a in args if a not in ("--short", "--render")]
    if len(args) != (1 if again else 2):
        print("usage: report.py [--short] BUILDDIR OUTDIR\n"
            "       report.py --render OUTDIR", file=sys.stderr)
        sys.exit(2)
    if shutil.which("gnuplot") is None:
        die("gnuplot missing (Debian: gnuplot-nox)")
    outdir = os.path.abspath(args[-1])
    saved = os.path.join(outdir, "performance", "run.json")
    if again:
        with open(saved) as f:
            run = json.load(f)
    else:
        run = measure(os.path.abspath(args[0]), short)
        os.makedirs(os.path.dirname(saved), exist_ok=True)
        with open(saved, "w") as f:
            json.dump(run, f, indent=1)
            f.write("\n")
    bad = render(run, outdir)
    for b in bad:
        print("report: malformed: " + b, file=sys.stderr)
    print("report: %s, %d series, %d malformed" % (os.path.join(outdir,
        "performance.md"), len(run["series"]), len(bad)))
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
