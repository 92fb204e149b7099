"""Drive a program in a pseudo-terminal for the tests: start it, read
what it shows, type keys, and make it quit (bounded in time throughout).

    from ptydrive import Pty
    p = Pty(["/path/to/pinhole", "watch"])
    p.pump(5, b"watching session")
    p.key(b"q")
    ok = p.quit()
"""
import os
import pty
import select
import time


class Pty:
    def __init__(self, argv):
        self.pid, self.fd = pty.fork()
        if self.pid == 0:
            os.execv(argv[0], argv)
        self.out = b""

    def pump(self, secs, until=None):
        """Read for at most secs, or until `until` (bytes seen, or a
        function of the output) holds."""
        end = time.time() + secs
        while time.time() < end:
            if until is not None and (until(self.out) if callable(until)
                                      else until in self.out):
                return
            r, _, _ = select.select([self.fd], [], [], 0.1)
            if r:
                try:
                    self.out += os.read(self.fd, 65536)
                except OSError:
                    return

    def prompt(self):
        """The last line drawn (after the last carriage return)."""
        return self.out.rsplit(b"\r", 1)[-1]

    def key(self, k):
        os.write(self.fd, k)

    def quit(self, k=b"q"):
        """Type k and wait (5 s at most, then kill); True on exit 0."""
        self.key(k)
        for _ in range(50):
            done, st = os.waitpid(self.pid, os.WNOHANG)
            if done:
                break
            self.pump(0.1)
        else:
            os.kill(self.pid, 9)
            _, st = os.waitpid(self.pid, 0)
        return os.WIFEXITED(st) and os.WEXITSTATUS(st) == 0
