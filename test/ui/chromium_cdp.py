"""Headless Chromium driven over the DevTools protocol on a pipe (--remote-debugging-pipe: no port to
open, no websocket library): open a page, evaluate JavaScript (awaiting its promise), click an element
with the mouse as a person would. The web view's test and its bench use it; both point it only at
127.0.0.1.

Contract: one page per Chromium; every call waits at most `timeout` seconds and raises CdpError past
it, or when Chromium answers an error or exits. Not thread-safe. close() ends the browser and removes
its profile.
"""
import json
import os
import select
import shutil
import subprocess
import tempfile
import time


class CdpError(Exception):
    pass


class Chromium:
    def __init__(self, binary, width=1400, height=900):
        self.profile = tempfile.mkdtemp(prefix="topofit-ui-")
        to_browser, self._in = os.pipe()   # Chromium reads commands on fd 3 ...
        self._out, from_browser = os.pipe()  # ... and writes replies and events on fd 4.

        def pipes_at_3_and_4():
            a, b = os.dup(to_browser), os.dup(from_browser)  # dup2 onto a free, inheritable number
            os.dup2(a, 3)
            os.dup2(b, 4)

        self.proc = subprocess.Popen(
            [binary, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             "--remote-debugging-pipe", f"--user-data-dir={self.profile}", f"--window-size={width},{height}",
             "about:blank"],
            preexec_fn=pipes_at_3_and_4, close_fds=False, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(to_browser)
        os.close(from_browser)
        self._buf, self._next_id, self._events = b"", 0, []
        page = next(t for t in self.call("Target.getTargets")["targetInfos"] if t["type"] == "page")
        self.session = self.call("Target.attachToTarget", {"targetId": page["targetId"], "flatten": True})["sessionId"]
        self.call("Page.enable", session=True)

    def _messages(self, deadline):
        while True:
            while b"\0" in self._buf:
                raw, self._buf = self._buf.split(b"\0", 1)
                yield json.loads(raw)
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self._out], [], [], left)[0]:
                raise CdpError("Chromium did not answer in time")
            chunk = os.read(self._out, 1 << 20)
            if not chunk:
                raise CdpError("Chromium exited")
            self._buf += chunk

    def call(self, method, params=None, session=False, timeout=60):
        self._next_id += 1
        msg = {"id": self._next_id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = self.session
        os.write(self._in, json.dumps(msg).encode() + b"\0")
        for m in self._messages(time.monotonic() + timeout):
            if m.get("id") == self._next_id:
                if "error" in m:
                    raise CdpError(f"{method}: {m['error']}")
                return m["result"]
            if "method" in m:
                self._events.append(m)

    def open(self, url, timeout=60):
        """Navigates and waits for the page's load event (its scripts have run; fetches may be pending)."""
        assert url.startswith("http://127.0.0.1:"), url
        self._events.clear()
        self.call("Page.navigate", {"url": url}, session=True)
        deadline = time.monotonic() + timeout
        if any(e["method"] == "Page.loadEventFired" for e in self._events):
            return
        for m in self._messages(deadline):
            if m.get("method") == "Page.loadEventFired":
                return

    def evaluate(self, expression, timeout=60):
        """The value of `expression` in the page, awaited when it is a promise."""
        r = self.call("Runtime.evaluate", {"expression": expression, "awaitPromise": True, "returnByValue": True},
                      session=True, timeout=timeout)
        if "exceptionDetails" in r:
            raise CdpError(f"{expression[:80]}: {r['exceptionDetails'].get('exception', {}).get('description')}")
        return r["result"].get("value")

    def wait_for(self, condition, timeout=60):
        """Waits until the JavaScript `condition` holds and the frame after it is drawn; returns
        performance.now() then: milliseconds since the page's navigation started."""
        script = f"""new Promise((resolve, reject) => {{
          const until = performance.now() + {timeout * 1000};
          const check = () => {{
            if ({condition}) requestAnimationFrame(() => requestAnimationFrame(() => resolve(performance.now())));
            else if (performance.now() > until) reject(new Error("timed out waiting for: " + {json.dumps(condition)}));
            else setTimeout(check, 10);
          }};
          check();
        }})"""
        return self.evaluate(script, timeout=timeout + 5)

    def click(self, selector, timeout=60):
        """A left click of the mouse at the middle of the first element matching `selector`."""
        box = self.evaluate(f"""(() => {{ const e = document.querySelector({json.dumps(selector)});
            if (!e) return null; e.scrollIntoView({{block: "center"}}); const r = e.getBoundingClientRect();
            return [r.x + r.width / 2, r.y + r.height / 2]; }})()""", timeout)
        if box is None:
            raise CdpError(f"nothing matches {selector}")
        for kind in ("mousePressed", "mouseReleased"):
            self.call("Input.dispatchMouseEvent", {"type": kind, "x": box[0], "y": box[1], "button": "left",
                                                   "clickCount": 1}, session=True, timeout=timeout)

    def close(self):
        self.proc.kill()
        self.proc.wait()
        os.close(self._in)
        os.close(self._out)
        shutil.rmtree(self.profile, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
