"""What the web view's test and bench share: `topofit serve` on 127.0.0.1 ports of its own (verbs on one,
ops and /ui on the other), ready before it is used and stopped after; plain HTTP calls; finding chromium.
"""
import contextlib
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def http(method, url, body=None, content_type="application/json"):
    data = body.encode() if isinstance(body, str) else body
    req = urllib.request.Request(url, data=data, method=method, headers={"Content-Type": content_type})
    with urllib.request.urlopen(req, timeout=30) as res:
        return res.status, res.read().decode()


def chromium_binary():
    for name in ("chromium", "chromium-browser"):
        if shutil.which(name):
            return shutil.which(name)
    return None


@contextlib.contextmanager
def serve(topofit, *args):
    """`topofit serve ARGS`; yields (verbs base URL, ops base URL, process id) once /readyz answers 200."""
    port, ops = free_port(), free_port()
    log = tempfile.TemporaryFile("w+")  # Not a pipe: a server that logs much never blocks on it.
    server = subprocess.Popen([topofit, "serve", "--listen", f"127.0.0.1:{port}", "--ops-listen", f"127.0.0.1:{ops}",
                               *args], stdout=subprocess.DEVNULL, stderr=log, text=True)
    base, ops_base = f"http://127.0.0.1:{port}", f"http://127.0.0.1:{ops}"
    try:
        for _ in range(600):
            try:
                if http("GET", ops_base + "/readyz")[0] == 200:
                    break
            except OSError:
                if server.poll() is not None:
                    break
                time.sleep(0.1)
        else:
            sys.exit("topofit serve never became ready")
        if server.poll() is not None:
            log.seek(0)
            sys.exit("topofit serve ended: " + log.read()[-3000:])
        yield base, ops_base, server.pid
    finally:
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
        log.close()


def cpu_seconds(pid):
    """User plus system CPU time the process has used (/proc/PID/stat), in seconds."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
