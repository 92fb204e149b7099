#!/usr/bin/python3
# pinhole run --session by hand: start-up beside bwrap and a standalone
# pinhole run, the session gateway's memory per idle attached command, and
# CONNECT setups from attached commands beside one standalone gateway.
# As root, from a build without sanitizers (make bench-programs):
#
#	tests/bench/session.py BUILDDIR
#
# The start-up part runs under SCHED_FIFO priority BENCH_FIFO (10; 0: as
# started), like run-startup.sh under chrt -f 10; the rest does not: 64
# sandboxes set up at once under SCHED_FIFO spin in the kernel (writing
# disable_ipv6 retries while the rtnl lock is held) and starve the kernel
# worker that holds it, for minutes.
#
# Only 127.0.0.1 and the sandboxes' own namespaces are used; every load
# loop is bounded in count and in time.  See tests/bench/README.md.
import json
import os
import resource
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

N = int(os.environ.get("BENCH_N", "50"))
CMDS = int(os.environ.get("BENCH_CMDS", "64"))
SETUPS = int(os.environ.get("BENCH_SETUPS", "20000"))
SECS = int(os.environ.get("BENCH_SECS", "20"))
REPEAT = int(os.environ.get("BENCH_REPEAT", "3"))
FIFO = int(os.environ.get("BENCH_FIFO", "10"))
PARTS = os.environ.get("BENCH_PARTS", "startup memory connect").split()
PERF = os.environ.get("BENCH_PERF")	# a directory: profile each load case
HZ = os.sysconf("SC_CLK_TCK")
NOBODY = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"]
BWRAP = ["bwrap", "--dev-bind", "/", "/", "--unshare-net"]
GW = "198.51.100.253:3128"	# the gateway as a sandbox sees it
live = []			# (argv prefix, session) to stop at exit


def die(msg):
    """Say why and stop."""
    print("session.py: " + msg, file=sys.stderr)
    sys.exit(1)


def free_port():
    """Return a free TCP port on 127.0.0.1."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def median(v):
    """Return the median of v (the upper one of an even count)."""
    v = sorted(v)
    return v[len(v) // 2]


def p90(v):
    """Return the 90th percentile of v."""
    v = sorted(v)
    return v[len(v) * 9 // 10]


def wait_until(cond, secs, what):
    """Poll cond every 10 ms for at most secs seconds; die if still false."""
    end = time.monotonic() + secs
    while not cond():
        if time.monotonic() > end:
            die("timed out waiting for " + what)
        time.sleep(0.01)


def tree(pid):
    """Return pid and its descendants."""
    out = [pid]
    for p in out:
        try:
            with open("/proc/%d/task/%d/children" % (p, p)) as f:
                out += [int(c) for c in f.read().split()]
        except OSError:
            pass
    return out


def cpu_s(pid, comm=None):
    """Return utime+stime of pid's tree (its processes named comm, if
    given), in seconds (from /proc/PID/stat)."""
    t = 0
    for p in tree(pid):
        try:
            with open("/proc/%d/stat" % p) as f:
                name, st = f.read().split(" (", 1)[1].rsplit(")", 1)
            if comm is None or name == comm:
                st = st.split()
                t += int(st[11]) + int(st[12])
        except OSError:
            pass
    return t / HZ


def status_kib(pid, key):
    """Return field key (VmRSS, ...) of /proc/PID/status, in KiB."""
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    return 0


def rollup_kib(pid, key):
    """Return field key (Private_Dirty, ...) of smaps_rollup, in KiB."""
    with open("/proc/%d/smaps_rollup" % pid) as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    return 0


def fds(pid):
    """Return how many descriptors pid holds."""
    return len(os.listdir("/proc/%d/fd" % pid))


class User:
    """Who runs the commands: root, or nobody with a home of its own."""

    def __init__(self, name, top):
        self.name = name
        self.pre = NOBODY if name == "nobody" else []
        self.xdg = os.path.join(top, "xdg-" + name)
        home = os.path.join(top, "home-" + name)
        os.mkdir(self.xdg, 0o700)
        os.mkdir(home, 0o755)
        if name == "nobody":
            for d in (self.xdg, home):
                shutil.chown(d, "nobody")
        self.env = dict(os.environ, XDG_RUNTIME_DIR=self.xdg, HOME=home)
        for k in ("HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy",
                "ALL_PROXY", "all_proxy", "PINHOLE_SESSION"):
            self.env.pop(k, None)

    def argv(self, *a):
        """Return argv a as this user."""
        return self.pre + list(a)

    def run(self, *a, **kw):
        """Run argv a as this user and check it succeeds."""
        return subprocess.run(self.argv(*a), env=self.env, check=True,
            stdin=subprocess.DEVNULL, timeout=60, **kw)

    def timed(self, *a):
        """Run argv a as this user; return its wall time in ms.  A wait
        with a timeout would poll (at 0.5, 1, 2, 4 ms ...) and round the
        time up to that: an alarm bounds it instead."""
        signal.alarm(60)
        t = time.perf_counter()
        p = subprocess.Popen(self.argv(*a), env=self.env,
            stdin=subprocess.DEVNULL)
        rc = p.wait()
        t = (time.perf_counter() - t) * 1000
        signal.alarm(0)
        if rc != 0:
            die("%s: exit %d" % (" ".join(a), rc))
        return t

    def popen(self, *a, **kw):
        """Start argv a as this user."""
        return subprocess.Popen(self.argv(*a), env=self.env,
            stdin=subprocess.DEVNULL, **kw)


class Session:
    """A session gateway started with pinhole session start."""

    def __init__(self, user, name, oport, logdir):
        self.user, self.name = user, name
        user.run(PINHOLE, "session", "start", name,
            "--listen", "127.0.0.1:%d" % free_port(),
            "--resolver", "127.0.0.1:9", "--max-sandboxes", str(CMDS + 16),
            "--allow", "allow-private 127.0.0.0/8",
            "--allow", "127.0.0.1:%d" % oport,
            "--log", os.path.join(logdir, "%s-%s.log" % (user.name, name)),
            stdout=subprocess.DEVNULL)
        live.append(self)
        self.pid = self.record()["pid"]

    def record(self):
        """Return the session's record."""
        with open(os.path.join(self.user.xdg, "pinhole",
                "session-%s.json" % self.name)) as f:
            return json.load(f)

    def attached(self):
        """Return how many commands are attached now."""
        return self.record()["attached"]

    def run_argv(self, *a):
        """Return argv for a command attached to this session."""
        return [PINHOLE, "run", "--session", self.name, "--"] + list(a)

    def stop(self):
        """Stop the session."""
        subprocess.run(self.user.argv(PINHOLE, "session", "stop", self.name),
            env=self.user.env, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL, timeout=30)
        if self in live:
            live.remove(self)


def startup(user, s):
    """Time true, bwrap, pinhole run and pinhole run --session, in turn."""
    cases = [("true", ["true"]),
        ("bwrap --unshare-net true", BWRAP + ["true"]),
        ("pinhole run -- true", [PINHOLE, "run", "--", "true"]),
        ("pinhole run --session S -- true", s.run_argv("true"))]
    wall = {d: [] for d, _ in cases}
    cpu = {d: 0.0 for d, _ in cases}
    for _, c in cases:
        user.run(*c)		# warm the caches
    gw = 0.0
    for _ in range(N):
        for d, c in cases:
            r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
            g0 = cpu_s(s.pid)
            wall[d].append(user.timed(*c))
            r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu[d] += (r1.ru_utime + r1.ru_stime - r0.ru_utime - r0.ru_stime)
            if c is cases[3][1]:
                gw += cpu_s(s.pid) - g0
    w = user.name.ljust(6)
    print("%s: %-32s %8s %8s %12s" % (w, "", "median", "p90", "CPU/run"))
    for d, _ in cases:
        print("%s: %-32s %5.1f ms %5.1f ms %7.2f ms" % (w, d,
            median(wall[d]), p90(wall[d]), cpu[d] / N * 1000))
    print("%s: %-32s %19s %7.2f ms" % (w, "  + the session gateway's", "",
        gw / N * 1000))
    ses, bw, alone = (wall[cases[i][0]] for i in (3, 1, 2))
    pair = [a - b for a, b in zip(ses, bw)]
    add = median(ses) - median(bw)
    print("%s: session adds %.1f ms over bwrap (paired median %.1f ms; "
        "target <= 10: %s), %.2fx bwrap; standalone run adds %.1f ms, "
        "%.2fx bwrap" % (w, add, median(pair),
        "PASS" if add <= 10 else "MISS", median(ses) / median(bw),
        median(alone) - median(bw), median(alone) / median(bw)))


def memory(user, work, oport, logdir, r):
    """The session gateway's memory with 0 and CMDS idle commands."""
    s = Session(user, "mem%d" % r, oport, logdir)
    user.run(*s.run_argv("true"))		# the first attach's one-off cost
    time.sleep(0.2)
    before = (status_kib(s.pid, "VmRSS"), rollup_kib(s.pid, "Private_Dirty"),
        fds(s.pid))
    procs = [user.popen(*s.run_argv("sleep", "60")) for _ in range(CMDS)]
    try:
        wait_until(lambda: s.attached() == CMDS, 60, "%d attached" % CMDS)
        time.sleep(0.5)
        held = (status_kib(s.pid, "VmRSS"),
            rollup_kib(s.pid, "Private_Dirty"), fds(s.pid))
        run = [rollup_kib(p.pid, "Pss") for p in procs]
    finally:
        for p in procs:
            p.send_signal(signal.SIGTERM)
        for p in procs:
            p.wait(timeout=30)
    wait_until(lambda: s.attached() == 0, 30, "0 attached")
    time.sleep(0.2)
    after = (status_kib(s.pid, "VmRSS"), rollup_kib(s.pid, "Private_Dirty"),
        fds(s.pid))
    s.stop()
    return before, held, after, median(run)


def report_memory(rounds):
    """Print the memory figures, medians over rounds."""
    print("   (median of %d fresh sessions, each after one attach)" %
        len(rounds))
    for i, what in ((0, "VmRSS"), (1, "Private_Dirty")):
        b = median([x[0][i] for x in rounds])
        h = median([x[1][i] for x in rounds])
        a = median([x[2][i] for x in rounds])
        per = median([(x[1][i] - x[0][i]) / CMDS for x in rounds])
        print("gateway %-13s 0 attached %6d KiB, %d attached %6d KiB, "
            "after %6d KiB: %5.1f KiB per command (target <= 64: %s)" % (
            what, b, CMDS, h, a, per, "PASS" if per <= 64 else "MISS"))
    print("gateway descriptors: 0 attached %d, %d attached %d, after %d" %
        tuple([median([x[0][2] for x in rounds]), CMDS,
        median([x[1][2] for x in rounds]), median([x[2][2] for x in rounds])]))
    print("each idle pinhole run --session (its own process): Pss %d KiB" %
        median([x[3] for x in rounds]))


def gated(work, tag, i):
    """Return a shell line that waits for go, runs loadgen, then waits."""
    return ('{ touch %(w)s/ready.%(t)s%(i)d; cat >/dev/null; } <%(w)s/go; '
        '%(lg)s >%(w)s/out.%(t)s%(i)d 2>&1; '
        '{ touch %(w)s/done.%(t)s%(i)d; cat >/dev/null; } <%(w)s/hold' %
        {"w": work, "t": tag, "i": i, "lg": "%s"})


def fifo_held(path):
    """Make FIFO path and hold it open, so readers wait until we close it."""
    if os.path.exists(path):
        os.unlink(path)
    os.mkfifo(path, 0o666)
    return os.open(path, os.O_RDWR)


def load(work, tag, gwcpu, argvs, perfpid=None):
    """Start argvs (gated), release them at once; the rate, and the
    gateway CPU seconds gwcpu(the processes started) tells."""
    for f in os.listdir(work):
        if f.startswith(("ready.", "done.", "out.")):
            os.unlink(os.path.join(work, f))
    go, hold = fifo_held(work + "/go"), fifo_held(work + "/hold")
    procs = [subprocess.Popen(a, stdin=subprocess.DEVNULL,
        env=ENV, start_new_session=True) for a in argvs]
    n = len(argvs)
    try:
        wait_until(lambda: len([f for f in os.listdir(work)
            if f.startswith("ready.")]) == n, 60, "%d ready" % n)
        perf = None
        if PERF and perfpid:
            perf = subprocess.Popen(["perf", "record", "-q", "-g",
                "-o", "%s/%s.data" % (PERF, tag), "-p", str(perfpid)],
                stdin=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(0.3)
        c0 = gwcpu(procs)
        t0 = time.perf_counter()
        os.close(go)
        go = None
        wait_until(lambda: len([f for f in os.listdir(work)
            if f.startswith("done.")]) == n, SECS + 30, "%d done" % n)
        t1 = time.perf_counter()
        c1 = gwcpu(procs)
        if perf:
            perf.send_signal(signal.SIGINT)
            perf.wait(timeout=60)
    finally:
        for fd in (go, hold):
            if fd is not None:
                os.close(fd)
        for p in procs:
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()
    done = errors = lcpu = 0
    for i in range(n):
        with open("%s/out.%s%d" % (work, tag, i)) as f:
            kv = dict(w.split("=", 1) for w in f.read().split() if "=" in w)
        done += int(kv.get("done", 0))
        errors += int(kv.get("errors", 1))
        lcpu += int(kv.get("cpu_us", 0))
    return {"rate": done / (t1 - t0), "done": done, "errors": errors,
        "secs": t1 - t0, "gwcpu": c1 - c0, "lgcpu": lcpu / 1e6}


def throughput(root, work, oport, logdir):
    """CMDS attached commands' CONNECT setups beside one standalone gateway."""
    per = SETUPS // CMDS
    lg = [LOADGEN, "connect-rate", "-o", str(oport), "-H", "127.0.0.1",
        "-c", "1", "-n", str(per), "-t", str(SECS)]
    s = Session(root, "load", oport, logdir)
    pport = free_port()
    proxy = subprocess.Popen([PINHOLE, "proxy", "--listen",
        "127.0.0.1:%d" % pport, "--resolver", "127.0.0.1:9",
        "--allow", "allow-private 127.0.0.0/8",
        "--allow", "127.0.0.1:%d" % oport,
        "--log", os.path.join(logdir, "proxy.log")], env=root.env,
        stdin=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    live.append(proxy)
    wait_until(lambda: socket.socket().connect_ex(("127.0.0.1", pport)) == 0,
        10, "pinhole proxy")
    sh = " ".join(lg)
    session_cpu = lambda _: cpu_s(s.pid)
    proxy_cpu = lambda _: cpu_s(proxy.pid)
    # Each pinhole run's own gateway: the processes named pinhole in its
    # tree (the sandbox child waits; the load is its children's).
    runs_cpu = lambda procs: sum(cpu_s(p.pid, "pinhole") for p in procs)
    own = ["--resolver", "127.0.0.1:9", "--allow", "allow-private 127.0.0.0/8",
        "--allow", "127.0.0.1:%d" % oport,
        "--log", os.path.join(logdir, "runs.log")]
    cases = {
        "session": lambda: load(work, "s", session_cpu, [root.argv(
            *s.run_argv("sh", "-c", gated(work, "s", i) % (sh + " -x " +
            GW))) for i in range(CMDS)], s.pid),
        "proxy": lambda: load(work, "p", proxy_cpu, [["sh", "-c",
            gated(work, "p", i) % (sh + " -x 127.0.0.1:%d" % pport)]
            for i in range(CMDS)], proxy.pid),
        "proxy1": lambda: load(work, "q", proxy_cpu, [["sh", "-c",
            gated(work, "q", 0) % " ".join(lg[:6] + ["-c", str(CMDS),
            "-n", str(per * CMDS), "-t", str(SECS),
            "-x", "127.0.0.1:%d" % pport])]], proxy.pid),
        "runs": lambda: load(work, "r", runs_cpu, [root.argv(PINHOLE, "run",
            *own, "--", "sh", "-c", gated(work, "r", i) % (sh + " -x " + GW))
            for i in range(CMDS)])}
    res = {k: [] for k in cases}
    for r in range(REPEAT):
        order = list(cases) if r % 2 == 0 else list(reversed(list(cases)))
        for k in order:
            x = cases[k]()
            res[k].append(x)
            print("  round %d %-7s done=%d errors=%d secs=%.3f rate=%.0f "
                "gateway_cpu_s=%.2f loadgen_cpu_s=%.2f" % (r + 1, k,
                x["done"], x["errors"], x["secs"], x["rate"], x["gwcpu"],
                x["lgcpu"]), flush=True)
    proxy.terminate()
    proxy.wait(timeout=30)
    live.remove(proxy)
    s.stop()
    names = {"session": "%d commands attached to one session" % CMDS,
        "proxy": "pinhole proxy, %d loadgens on the host" % CMDS,
        "proxy1": "pinhole proxy, 1 loadgen -c %d on the host" % CMDS,
        "runs": "%d standalone pinhole runs (%d gateways)" % (CMDS, CMDS)}
    rate = {k: median([x["rate"] for x in res[k]]) for k in res}
    print("%-46s %10s %22s" % ("(medians of %d rounds)" % REPEAT,
        "setups/s", "gateway CPU s / 1000"))
    for k in cases:
        cpk = median([x["gwcpu"] / x["done"] * 1000 for x in res[k]])
        print("%-46s %10.0f %22.3f" % (names[k], rate[k], cpk))
    ratio = rate["session"] / rate["proxy"]
    print("session / standalone: %.0f%% of %d loadgens' rate (target >= 90%%:"
        " %s), %.0f%% of 1 loadgen's" % (ratio * 100, CMDS,
        "PASS" if ratio >= 0.9 else "MISS",
        rate["session"] / rate["proxy1"] * 100))
    print("session / %d standalone pinhole runs: %.0f%%" % (CMDS,
        rate["session"] / rate["runs"] * 100))


def start_origin(work):
    """Start the benchmark origin on 127.0.0.1; return it and its port."""
    out = os.path.join(work, "origin.out")
    o = subprocess.Popen([ORIGIN, "-t", "3600"], stdout=open(out, "w"),
        stdin=subprocess.DEVNULL)
    live.append(o)
    wait_until(lambda: "port" in open(out).read(), 10, "the origin")
    return o, int(open(out).read().split()[1])


def startups(users, oport, logdir):
    """Time the start-up cases for each user, under SCHED_FIFO if asked."""
    print("== start-up (%d runs of each, in turn%s)" % (N,
        ", SCHED_FIFO %d" % FIFO if FIFO else ""))
    if FIFO:
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(FIFO))
    try:
        for u in users.values():
            s = Session(u, "up", oport, logdir)
            startup(u, s)
            s.stop()
            sys.stdout.flush()
    finally:
        os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))


def cleanup():
    """Stop whatever is still running."""
    for x in reversed(live[:]):
        if isinstance(x, Session):
            x.stop()
        else:
            x.terminate()
            x.wait(timeout=30)


def main():
    """Run the three parts."""
    global PINHOLE, LOADGEN, ORIGIN, ENV
    if len(sys.argv) != 2:
        die("usage: session.py BUILDDIR")
    if os.geteuid() != 0:
        die("run as root")
    top = tempfile.mkdtemp(prefix="pinhole-bench.")
    os.chmod(top, 0o755)
    try:
        for p in ("pinhole", "tests/bench/loadgen", "tests/bench/origin"):
            src = os.path.join(sys.argv[1], p)
            if not os.access(src, os.X_OK):
                die("no %s (make bench-programs)" % src)
            shutil.copy(src, top)
        PINHOLE, LOADGEN, ORIGIN = (os.path.join(top, p)
            for p in ("pinhole", "loadgen", "origin"))
        work, logdir = os.path.join(top, "w"), os.path.join(top, "log")
        os.mkdir(work, 0o777)
        os.chmod(work, 0o777)
        os.mkdir(logdir, 0o777)
        os.chmod(logdir, 0o777)
        users = {u: User(u, top) for u in ("root", "nobody")}
        ENV = users["root"].env
        _, oport = start_origin(work)
        with open("/proc/loadavg") as f:
            load_avg = " ".join(f.read().split()[:3])
        print("pinhole run --session benchmark (%d CPUs, Linux %s, load %s)"
            % (os.cpu_count(), os.uname().release, load_avg), flush=True)
        if "startup" in PARTS:
            startups(users, oport, logdir)
        if "memory" in PARTS:
            print("== memory: the session gateway, 0 and %d idle commands "
                "(run --session S -- sleep 60)" % CMDS)
            report_memory([memory(users["root"], work, oport, logdir, r)
                for r in range(REPEAT)])
            sys.stdout.flush()
        if "connect" not in PARTS:
            return
        print("== CONNECT setups: %d commands, each loadgen connect-rate -c 1 "
            "-n %d through its sandbox's %s,\n   beside pinhole proxy on "
            "127.0.0.1 with the same loadgens from the host" % (
            CMDS, SETUPS // CMDS, GW), flush=True)
        throughput(users["root"], work, oport, logdir)
    finally:
        cleanup()
        if os.environ.get("BENCH_KEEP"):
            print("kept " + top)
        else:
            shutil.rmtree(top, ignore_errors=True)


if __name__ == "__main__":
    main()
