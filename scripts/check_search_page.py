#!/usr/bin/env python3
"""The search page in a real browser: start ``xlsent serve`` with a corpus, open ``/`` in headless chromium,
type a query, press Enter, wait for the result rows, save a screenshot and print what the page shows.

    apt-get install chromium              # Debian's chromium (root)
    pip install websocket-client          # or: pip install -e '.[page-check]'
    python scripts/check_search_page.py [--model e5-small] [--index udhr:nya] \\
        [--query "All human beings are born free and equal in dignity and rights."] [--out docs/search_page.png] \\
        [--api-key KEY]

Run by hand: CI has no browser. The tests cover the page's HTML and the ``/search`` calls it makes
(``tests/test_serve.py``); this script checks that a browser really runs that page end to end. It drives
chromium through the DevTools protocol (``Input.insertText`` types the query as a user would, an Enter key
event submits the form) — no test framework, no network beyond 127.0.0.1. Exit status 1 if no result row
appears within ``--wait`` seconds. With ``--api-key`` the server is started with that key (``XLSENT_API_KEYS``),
and the script first checks that the page asks for a key, then types it into the page's key field.
"""

from __future__ import annotations

import argparse
import base64
import itertools
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_http(url: str, seconds: float, proc: subprocess.Popen, what: str) -> None:
    import httpx

    deadline = time.time() + seconds
    while time.time() < deadline:
        try:
            if httpx.get(url, timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        if proc.poll() is not None:
            sys.exit(f"{what} exited with {proc.returncode}")
        time.sleep(0.5)
    sys.exit(f"{what} did not answer {url} within {seconds:.0f} s")


class DevTools:
    """The smallest DevTools-protocol client: send a command, wait for its answer (events are skipped)."""

    def __init__(self, ws_url: str) -> None:
        import websocket

        self.ws = websocket.create_connection(ws_url, timeout=60, suppress_origin=True)  # newer chromium checks Origin
        self.ids = itertools.count(1)

    def __call__(self, method: str, **params):
        i = next(self.ids)
        self.ws.send(json.dumps({"id": i, "method": method, "params": params}))
        while True:
            msg = json.loads(self.ws.recv())
            if msg.get("id") == i:
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error']}")
                return msg.get("result", {})

    def js(self, expression: str):
        return self("Runtime.evaluate", expression=expression, returnByValue=True)["result"].get("value")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default="e5-small")
    ap.add_argument("--index", default="udhr:nya")
    ap.add_argument("--query", default="All human beings are born free and equal in dignity and rights.")
    ap.add_argument("--out", default="docs/search_page.png")
    ap.add_argument("--browser", default=shutil.which("chromium") or "chromium")
    ap.add_argument("--wait", type=float, default=60)
    ap.add_argument("--api-key", default=None, help="start the server with this key and enter it in the page")
    args = ap.parse_args()
    if not Path(args.browser).exists() and not shutil.which(args.browser):
        sys.exit(f"{args.browser}: no browser — apt-get install chromium, or give --browser")

    port, debug = free_port(), free_port()
    server = subprocess.Popen([sys.executable, "-m", "xlsent.cli.main", "serve", args.model, "--port", str(port),
                               "--index", args.index], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                              env={**os.environ, **({"XLSENT_API_KEYS": args.api_key} if args.api_key else {})})
    profile = tempfile.mkdtemp(prefix="xlsent-chromium-")
    browser = None
    try:
        wait_http(f"http://127.0.0.1:{port}/health", 900, server, "xlsent serve")
        browser = subprocess.Popen([args.browser, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                                    f"--user-data-dir={profile}", f"--remote-debugging-port={debug}",
                                    "--window-size=1200,900", "about:blank"],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_http(f"http://127.0.0.1:{debug}/json/version", 60, browser, "chromium")
        import httpx

        page = next(t for t in httpx.get(f"http://127.0.0.1:{debug}/json/list").json() if t["type"] == "page")
        cdp = DevTools(page["webSocketDebuggerUrl"])
        cdp("Page.enable")
        cdp("Page.navigate", url=f"http://127.0.0.1:{port}/")
        deadline = time.time() + args.wait
        while time.time() < deadline and cdp.js("document.readyState") != "complete":
            time.sleep(0.2)
        if args.api_key:
            while time.time() < deadline and cdp.js("document.getElementById('keyform').hidden") is not False:
                time.sleep(0.2)  # the page asks for the key once /info answers 401
            if cdp.js("document.getElementById('keyform').hidden") is not False:
                sys.exit("the page did not ask for an API key")
            asked = cdp.js("document.getElementById('status').textContent")
            print(f"page asked for a key: {asked!r}")
            cdp.js("document.getElementById('key').focus()")
            cdp("Input.insertText", text=args.api_key)
            cdp.js("document.getElementById('usekey').click()")
        while time.time() < deadline and "Corpus:" not in (cdp.js("document.getElementById('about').textContent") or ""):
            time.sleep(0.2)  # the page fills in the corpus line from /info
        cdp.js("document.getElementById('query').focus()")
        cdp("Input.insertText", text=args.query)
        for kind in ("keyDown", "keyUp"):
            cdp("Input.dispatchKeyEvent", type=kind, key="Enter", code="Enter", windowsVirtualKeyCode=13,
                **({"text": "\r"} if kind == "keyDown" else {}))
        rows = []
        while time.time() < deadline:
            rows = cdp.js("[...document.querySelectorAll('#results tr.match')].map(r => [...r.cells].map(c => c.innerText))")
            if rows:
                break
            time.sleep(0.2)
        about = cdp.js("document.getElementById('about').textContent")
        status = cdp.js("document.getElementById('status').textContent")
        shot = cdp("Page.captureScreenshot", format="png")["data"]
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_bytes(base64.b64decode(shot))
        print(f"page: {about}")
        print(f"typed: {args.query!r}, pressed Enter; status line: {status!r}")
        print(f"{len(rows)} result rows; the first five:")
        for r in rows[:5]:
            print("  " + " | ".join(" ".join(c.split()) for c in r))
        print(f"screenshot: {args.out}")
        if not rows:
            sys.exit(1)
    finally:
        if browser is not None:
            browser.terminate()
        server.terminate()
        server.wait(30)
        shutil.rmtree(profile, ignore_errors=True)


if __name__ == "__main__":
    main()
