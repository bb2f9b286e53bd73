"""A real headless Chromium (Debian's ``chromium``) driven over the DevTools protocol on a pipe
(``--remote-debugging-pipe``: JSON messages ended by NUL on file descriptors 3 and 4; no websocket, no port), to
look at a page as a person's browser shows it: what it logged to the console, what a script run in it finds,
screenshots of elements.  Used by the ``kdump report`` tests and by ``python -m tests.headless_chromium PAGE``
(screenshots of a report's overview, first partition and first consumer-group chart)."""

from __future__ import annotations

import base64
import fcntl
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from typing import Any

FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-extensions",
    "--hide-scrollbars",
    "--remote-debugging-pipe",
)


def chromium_path() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


class Browser:
    """One Chromium process with a fresh profile, one page attached."""

    def __init__(self, width: int = 1100, height: int = 1400) -> None:
        path = chromium_path()
        if path is None:
            raise RuntimeError("chromium is not installed (apt-get install chromium)")
        self.profile = tempfile.mkdtemp(prefix="kdump-chromium-")
        to_browser_r, self._to_browser = os.pipe()
        self._from_browser, from_browser_w = os.pipe()
        # above 4, so that moving them onto 3 and 4 in the child cannot overwrite one with the other
        high = [fcntl.fcntl(fd, fcntl.F_DUPFD, 10) for fd in (to_browser_r, from_browser_w)]
        os.close(to_browser_r)
        os.close(from_browser_w)
        to_browser_r, from_browser_w = high
        # the browser reads commands on fd 3 and writes answers on fd 4
        self.process = subprocess.Popen(
            [
                path,
                *FLAGS,
                f"--user-data-dir={self.profile}",
                f"--window-size={width},{height}",
                "about:blank",
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=None if os.environ.get("KDUMP_CHROMIUM_LOG") else subprocess.DEVNULL,
            pass_fds=(3, 4, to_browser_r, from_browser_w),
            preexec_fn=lambda: (os.dup2(to_browser_r, 3), os.dup2(from_browser_w, 4)) and None,
        )
        os.close(to_browser_r)
        os.close(from_browser_w)
        self._buffer = b""
        self._id = 0
        self.events: list[dict[str, Any]] = []
        target = self.call("Target.createTarget", url="about:blank")["targetId"]
        self.session = self.call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        for domain in ("Page", "Runtime", "Log"):
            self.call(f"{domain}.enable", session=True)
        self.call(
            "Emulation.setDeviceMetricsOverride",
            session=True,
            width=width,
            height=height,
            deviceScaleFactor=1,
            mobile=False,
        )

    def _send(self, message: dict[str, Any]) -> None:
        os.write(self._to_browser, json.dumps(message).encode() + b"\0")

    def _receive(self, timeout: float) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while b"\0" not in self._buffer:
            if time.monotonic() > deadline:
                raise TimeoutError("no answer from chromium")
            chunk = os.read(self._from_browser, 1 << 16)
            if not chunk:
                raise RuntimeError("chromium closed the pipe")
            self._buffer += chunk
        message, _, self._buffer = self._buffer.partition(b"\0")
        return json.loads(message)

    def call(
        self, method: str, *, session: bool = False, timeout: float = 60, **params: Any
    ) -> dict[str, Any]:
        self._id += 1
        message: dict[str, Any] = {"id": self._id, "method": method, "params": params}
        if session:
            message["sessionId"] = self.session
        self._send(message)
        while True:
            answer = self._receive(timeout)
            if answer.get("id") == self._id:
                if "error" in answer:
                    raise RuntimeError(f"{method}: {answer['error']}")
                return answer.get("result", {})
            self.events.append(answer)

    def wait_for(self, event: str, timeout: float = 60) -> dict[str, Any]:
        for i, e in enumerate(self.events):
            if e.get("method") == event:
                return self.events.pop(i)
        while True:
            e = self._receive(timeout)
            if e.get("method") == event:
                return e
            self.events.append(e)

    def open(self, url: str) -> None:
        self.call("Page.navigate", session=True, url=url)
        self.wait_for("Page.loadEventFired")

    def evaluate(self, expression: str, timeout: float = 60) -> Any:
        result = self.call(
            "Runtime.evaluate", session=True, timeout=timeout, expression=expression, returnByValue=True
        )
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def console_errors(self) -> list[str]:
        """Errors the page raised or logged: uncaught exceptions, console.error/assert, and the browser's own
        log entries of level error (a resource that failed to load, a blocked request, a parse error)."""
        self.call("Runtime.evaluate", session=True, expression="1")  # collect the events sent so far
        found = []
        for e in self.events:
            method, params = e.get("method"), e.get("params", {})
            if method == "Runtime.exceptionThrown":
                found.append(json.dumps(params.get("exceptionDetails", {}))[:300])
            elif method == "Runtime.consoleAPICalled" and params.get("type") in (
                "error",
                "assert",
                "warning",
            ):
                found.append(json.dumps(params.get("args", []))[:300])
            elif method == "Log.entryAdded" and params.get("entry", {}).get("level") in ("error", "warning"):
                found.append(params["entry"].get("text", "")[:300])
        return found

    def screenshot(self, path: str, selector: str | None = None) -> None:
        """A PNG of the element ``selector`` (whole, however tall), or of the viewport."""
        params: dict[str, Any] = {"format": "png", "captureBeyondViewport": True}
        if selector is not None:
            box = self.evaluate(
                f"(() => {{ const r = document.querySelector({json.dumps(selector)}).getBoundingClientRect();"
                " return [r.left + window.scrollX, r.top + window.scrollY, r.width, r.height]; })()"
            )
            x, y, w, h = box
            params["clip"] = {"x": x, "y": y, "width": w, "height": h, "scale": 1}
        data = self.call("Page.captureScreenshot", session=True, timeout=600, **params)["data"]
        with open(path, "wb") as f:
            f.write(base64.b64decode(data))

    def close(self) -> None:
        try:
            self._send({"id": 0, "method": "Browser.close"})
        except OSError:
            pass
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        os.close(self._to_browser)
        os.close(self._from_browser)
        shutil.rmtree(self.profile, ignore_errors=True)

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


#: What a script in the page finds of each chart: its id or title, how many marks it says it has, how many
#: data elements the browser drew with a size (a rectangle, a line, a polyline, a dot of non-zero extent).
CHARTS_JS = """Array.from(document.querySelectorAll('svg.chart')).map(svg => {
  const marks = Array.from(svg.querySelectorAll('.mark'));
  const drawn = marks.filter(m => { const b = m.getBBox(); return b.width > 0 || b.height > 0; });
  return {id: svg.id, title: svg.getAttribute('aria-label'), said: Number(svg.dataset.marks),
          marks: marks.length, drawn: drawn.length, width: svg.getBoundingClientRect().width};
})"""

#: Words of the charts that a person could not read: a text running out of its chart's box (cut at the edge),
#: or two texts of one chart drawn over each other (more than 2 pixels each way), as the browser lays them out.
TEXT_JS = """Array.from(document.querySelectorAll('svg.chart')).flatMap(svg => {
  const w = svg.viewBox.baseVal.width, h = svg.viewBox.baseVal.height;
  const texts = Array.from(svg.querySelectorAll('text')).map(t => [t, t.getBBox()]);
  const bad = [];
  texts.forEach(([t, b]) => { if (b.x < -1 || b.y < -1 || b.x + b.width > w + 1 || b.y + b.height > h + 1)
    bad.push(svg.getAttribute('aria-label') + ': cut: ' + t.textContent); });
  texts.forEach(([t, b], i) => texts.slice(i + 1).forEach(([u, c]) => {
    const dx = Math.min(b.x + b.width, c.x + c.width) - Math.max(b.x, c.x);
    const dy = Math.min(b.y + b.height, c.y + c.height) - Math.max(b.y, c.y);
    if (dx > 2 && dy > 2) bad.push(svg.getAttribute('aria-label') + ': overlap: ' + t.textContent + ' / ' + u.textContent);
  }));
  return bad;
})"""

#: The JSON each section of the page carries.
DATA_JS = """Array.from(document.querySelectorAll('script.kdump-data')).map(s => JSON.parse(s.textContent))"""


def main(argv: list[str]) -> int:
    page, out = os.path.abspath(argv[0]), argv[1] if len(argv) > 1 else "."
    os.makedirs(out, exist_ok=True)
    with Browser() as b:
        b.open("file://" + page)
        # a page of 10,000 partitions lays out for minutes on a loaded machine
        charts = b.evaluate(CHARTS_JS, timeout=900)
        unreadable = b.evaluate(TEXT_JS, timeout=900)
        errors = b.console_errors()
        b.screenshot(os.path.join(out, "overview.png"), "#overview")
        first = b.evaluate("(document.querySelector('section.partition') || {}).id")
        if first:
            b.screenshot(os.path.join(out, "partition.png"), f"#{first}")
        if b.evaluate("!!document.querySelector('#groups svg.chart')"):
            b.screenshot(os.path.join(out, "groups.png"), "#groups svg.chart")
    empty = [c for c in charts if not c["drawn"]]
    print(
        f"{len(charts)} charts, {len(empty)} without data; {len(unreadable)} texts cut or overlapping; "
        f"console errors: {len(errors)}"
    )
    for e in errors + unreadable:
        print("  ", e)
    return 1 if empty or errors or unreadable else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
