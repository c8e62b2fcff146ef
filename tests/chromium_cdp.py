"""Headless Chromium driven over the DevTools protocol on a pipe, for pages that need real time (a JS app).

`--dump-dom` with `--virtual-time-budget` snapshots a page when its virtual clock runs out; a single-page app
that fetches and decompresses in a web worker (Inspect's viewer) is still "Loading…" then. Here Chromium runs
with `--remote-debugging-pipe` (commands on fd 3, replies on fd 4, each a JSON message ending in NUL), so no
extra TCP port is opened and no websocket client is needed: the test waits, in real time, until the page shows
what it should, then reads the DOM and takes a screenshot.

Contract: `ChromiumPage(chromium, profile)` starts Chromium in its own process group (the same flags as
tests/test_report_html.py: no background networking, no component update, no sync); `open(url)` navigates a
1600x1000 page (a fresh one each call; `requested` lists every URL the pages asked for); `wait_text(texts,
timeout_s)` polls `document.body.innerText` until every text is in it (or fails naming the missing ones and what
the page showed); `dom()` is the page's HTML; `screenshot(path)` writes a PNG. Leaving the `with` block kills the
process group, whatever happened.
"""

from __future__ import annotations

import base64
import fcntl
import json
import os
import select
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from test_report_html import CHROMIUM_FLAGS

REPLY_LIMIT = 64 * 1024 * 1024
"""Bytes of one DevTools reply we read at most (a 1600x1000 PNG in base64 is well under it)."""


def _high_pipe() -> tuple[int, int]:
    """A pipe whose two ends are numbered 10 or more, so the shell's `3<&N 4>&M` never overwrites one of them."""
    ends = os.pipe()
    high = tuple(fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10) for fd in ends)
    for fd in ends:
        os.close(fd)
    return high[0], high[1]


class ChromiumPage:
    """One headless Chromium with one page, driven over the DevTools pipe."""

    def __init__(self, chromium: str, profile: Path) -> None:
        self._cmd_r, self._cmd_w = _high_pipe()
        self._out_r, self._out_w = _high_pipe()
        # bash (dash takes one-digit fds only) maps our pipe ends to the fds 3 and 4 Chromium reads, then becomes it
        argv = ["bash", "-c", f'exec "$0" "$@" 3<&{self._cmd_r} 4>&{self._out_w}', chromium, *CHROMIUM_FLAGS,
                f"--user-data-dir={profile}", "--remote-debugging-pipe", "--no-default-browser-check",
                "--hide-scrollbars", "--mute-audio", "about:blank"]
        profile.mkdir(parents=True, exist_ok=True)
        # its TMPDIR: a short folder of its own (a socket's path stays under 108 bytes), removed at close()
        self._temp = tempfile.mkdtemp(prefix="chromium-")
        with open(profile / "chromium.log", "wb") as log:  # Chromium's own complaints, for a failing test
            self.process = subprocess.Popen(argv, pass_fds=(self._cmd_r, self._out_w), stdout=log, stderr=log,
                                            stdin=subprocess.DEVNULL, start_new_session=True,
                                            env={**os.environ, "TMPDIR": self._temp})
        os.close(self._cmd_r)
        os.close(self._out_w)
        self._buffer = b""
        self.requested: list[str] = []
        """Every URL the page asked for (DevTools' `Network.requestWillBeSent`), in order."""
        self._next_id = 0
        self._session: str | None = None

    def __enter__(self) -> ChromiumPage:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=30)
        for fd in (self._cmd_w, self._out_r):
            try:
                os.close(fd)
            except OSError:
                pass
        shutil.rmtree(self._temp, ignore_errors=True)

    def _read_message(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            ready, _, _ = select.select([self._out_r], [], [], max(left, 0))
            if not ready:
                raise AssertionError("Chromium did not answer over the DevTools pipe in time")
            chunk = os.read(self._out_r, 1 << 20)
            if not chunk:
                raise AssertionError(f"Chromium closed the DevTools pipe (exit code {self.process.poll()})")
            self._buffer += chunk
            assert len(self._buffer) < REPLY_LIMIT, "a DevTools reply over the limit"
        message, _, self._buffer = self._buffer.partition(b"\0")
        return json.loads(message)

    def send(self, method: str, params: dict[str, Any] | None = None, timeout_s: float = 60,
             session: bool = True) -> dict[str, Any]:
        """One DevTools command; returns its result (of the events read meanwhile, requests are kept)."""
        self._next_id += 1
        command: dict[str, Any] = {"id": self._next_id, "method": method, "params": params or {}}
        if session and self._session:
            command["sessionId"] = self._session
        os.write(self._cmd_w, json.dumps(command).encode() + b"\0")
        deadline = time.monotonic() + timeout_s
        while True:
            reply = self._read_message(deadline)
            if reply.get("method") == "Network.requestWillBeSent":
                self.requested.append(reply["params"]["request"]["url"])
            if reply.get("id") == self._next_id:
                assert "error" not in reply, f"{method}: {reply['error']}"
                return reply.get("result", {})

    def open(self, url: str) -> None:
        target = self.send("Target.createTarget", {"url": "about:blank"}, session=False)["targetId"]
        self._session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True},
                                  session=False)["sessionId"]
        self.send("Emulation.setDeviceMetricsOverride",
                  {"width": 1600, "height": 1000, "deviceScaleFactor": 1, "mobile": False})
        self.send("Network.enable")
        self.send("Page.navigate", {"url": url})

    def evaluate(self, expression: str) -> Any:
        result = self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True})
        return result.get("result", {}).get("value")

    def wait_text(self, texts: Iterable[str], timeout_s: float) -> str:
        """The page's visible text once it holds every one of `texts`."""
        wanted = list(texts)
        deadline = time.monotonic() + timeout_s
        shown = ""
        while time.monotonic() < deadline:
            shown = self.evaluate("document.body ? document.body.innerText : ''") or ""
            if all(text in shown for text in wanted):
                return shown
            time.sleep(0.5)
        missing = [text for text in wanted if text not in shown]
        raise AssertionError(f"after {timeout_s} s the page lacks {missing}; it shows: {shown[:2000]!r}")

    def dom(self) -> str:
        return self.evaluate("document.documentElement.outerHTML") or ""

    def screenshot(self, path: Path) -> Path:
        data = self.send("Page.captureScreenshot", {"format": "png"})["data"]
        path.write_bytes(base64.b64decode(data))
        return path
