"""Headless Chromium driven through the DevTools protocol over a pipe
(``--remote-debugging-pipe``: no port, no extra package): open a page,
evaluate JavaScript, take screenshots. Used to render video frames of the
exported player (:func:`multibody.viz.export_video`) and by the tests to
check what the pages draw.

WebGL runs on SwiftShader (Chromium's CPU renderer), so no GPU or display
is needed.
"""
import base64
import io
import json
import os
import queue
import shutil
import subprocess
import tempfile
import threading
import time

import numpy as np

from ..errors import MultibodyError

#: executable names tried, in order (Debian's package installs "chromium"); MULTIBODY_CHROMIUM overrides
CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome")


class RendererUnavailable(MultibodyError, RuntimeError):
    """No offscreen renderer (headless Chromium) or encoder is installed;
    the message names what is missing and how to install it."""


def find_chromium():
    """Path of a Chromium/Chrome executable, or None."""
    env = os.environ.get("MULTIBODY_CHROMIUM")
    if env:
        return shutil.which(env) or (env if os.path.isfile(env) else None)
    for name in CANDIDATES:
        path = shutil.which(name)
        if path:
            return path
    return None


class Browser:
    """One headless Chromium with one page of ``width`` x ``height`` CSS
    pixels (device scale 1). Use as a context manager, or call
    :meth:`close`."""

    def __init__(self, width=800, height=600, executable=None, timeout=60.0):
        exe = executable or find_chromium()
        if exe is None:
            raise RendererUnavailable("headless rendering needs Chromium: install it (Debian/Ubuntu: apt-get install "
                                      "chromium) or set MULTIBODY_CHROMIUM to a Chrome executable")
        self.timeout = float(timeout)
        self._profile = tempfile.mkdtemp(prefix="mb-chromium-")
        to_child, self._out = os.pipe()      # we write commands, Chromium reads them on fd 3
        self._in, from_child = os.pipe()     # Chromium writes replies on fd 4

        def fds():  # in the child: the pipe ends at 3 and 4, via high numbers so neither clobbers the other
            import fcntl
            a, b = fcntl.fcntl(to_child, fcntl.F_DUPFD, 10), fcntl.fcntl(from_child, fcntl.F_DUPFD, 10)
            os.dup2(a, 3)
            os.dup2(b, 4)
        args = [exe, "--headless=new", "--no-sandbox", "--remote-debugging-pipe", "--use-angle=swiftshader",
                "--enable-unsafe-swiftshader", "--disable-gpu-sandbox", "--no-first-run", "--no-default-browser-check",
                "--disable-extensions", "--mute-audio", "--hide-scrollbars", f"--user-data-dir={self._profile}",
                f"--window-size={int(width)},{int(height)}", "about:blank"]
        self._proc = subprocess.Popen(args, preexec_fn=fds, close_fds=False, stdin=subprocess.DEVNULL,
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(to_child)
        os.close(from_child)
        self._next = 0
        self._replies = {}
        self._cond = threading.Condition()
        self.console = queue.Queue()  # console messages and exceptions of the page (strings)
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        try:
            target = self._call("Target.createTarget", url="about:blank")["targetId"]
            self._session = self._call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
            for domain in ("Page", "Runtime"):
                self.call(f"{domain}.enable")
            self.call("Emulation.setDeviceMetricsOverride", width=int(width), height=int(height),
                      deviceScaleFactor=1, mobile=False)
        except BaseException:
            self.close()
            raise

    # ------------------------------------------------------------------ protocol
    def _read(self):
        buf = b""
        while True:
            try:
                chunk = os.read(self._in, 1 << 20)
            except OSError:
                chunk = b""
            if not chunk:
                with self._cond:
                    self._replies[None] = "Chromium closed the DevTools pipe"
                    self._cond.notify_all()
                return
            buf += chunk
            *messages, buf = buf.split(b"\0")
            for raw in messages:
                msg = json.loads(raw)
                if "id" in msg:
                    with self._cond:
                        self._replies[msg["id"]] = msg
                        self._cond.notify_all()
                elif msg.get("method") == "Runtime.consoleAPICalled":
                    args = msg["params"].get("args", [])
                    self.console.put(" ".join(str(a.get("value", a.get("description", ""))) for a in args))
                elif msg.get("method") == "Runtime.exceptionThrown":
                    d = msg["params"]["exceptionDetails"]
                    self.console.put("exception: " + d.get("exception", {}).get("description", d.get("text", "")))

    def _call(self, method, session=None, **params):
        with self._cond:
            self._next += 1
            mid = self._next
        msg = {"id": mid, "method": method, "params": params}
        if session:
            msg["sessionId"] = session
        os.write(self._out, json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + self.timeout
        with self._cond:
            while mid not in self._replies:
                if None in self._replies:
                    raise RendererUnavailable(f"Chromium stopped during {method}")
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError(f"Chromium did not answer {method} within {self.timeout} s")
                self._cond.wait(left)
            reply = self._replies.pop(mid)
        if "error" in reply:
            raise RuntimeError(f"Chromium: {method} failed: {reply['error'].get('message')}")
        return reply.get("result", {})

    def call(self, method, **params):
        """Send a DevTools command to the page; its result (a dict)."""
        return self._call(method, self._session, **params)

    # ------------------------------------------------------------------ page
    def evaluate(self, expression, await_promise=True):
        """The value of JavaScript ``expression`` in the page (awaited if a
        promise); a JavaScript exception raises RuntimeError."""
        r = self.call("Runtime.evaluate", expression=expression, awaitPromise=await_promise, returnByValue=True)
        if "exceptionDetails" in r:
            d = r["exceptionDetails"]
            raise RuntimeError("JavaScript: " + d.get("exception", {}).get("description", d.get("text", "")))
        return r["result"].get("value")

    def goto(self, url, ready="document.readyState === 'complete'", timeout=None):
        """Load ``url`` and wait until the JavaScript ``ready`` is true."""
        self.call("Page.navigate", url=url)
        self.wait_for(ready, timeout)

    def wait_for(self, expression, timeout=None):
        """Poll JavaScript ``expression`` until it is true (TimeoutError
        after ``timeout`` s, default the browser's), naming the page's
        errors."""
        deadline = time.monotonic() + (self.timeout if timeout is None else timeout)
        while True:
            try:
                if self.evaluate(f"!!({expression})"):
                    return
            except RuntimeError:
                pass  # the page is still loading
            if time.monotonic() > deadline:
                log = []
                while not self.console.empty():
                    log.append(self.console.get())
                raise TimeoutError(f"page not ready ({expression}) after {timeout or self.timeout} s; "
                                   f"console: {log[-5:]}")
            time.sleep(0.05)

    def screenshot(self):
        """The page as an (height, width, 3) uint8 RGB array."""
        from PIL import Image
        data = base64.b64decode(self.call("Page.captureScreenshot", format="png")["data"])
        return np.asarray(Image.open(io.BytesIO(data)).convert("RGB"))

    def close(self):
        """Quit Chromium and remove its temporary profile."""
        if self._proc.poll() is None:
            try:
                os.write(self._out, json.dumps({"id": 0, "method": "Browser.close"}).encode() + b"\0")
                self._proc.wait(timeout=10)
            except (OSError, subprocess.TimeoutExpired):
                self._proc.kill()
                self._proc.wait()
        for fd in (self._out, self._in):
            try:
                os.close(fd)
            except OSError:
                pass
        shutil.rmtree(self._profile, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
