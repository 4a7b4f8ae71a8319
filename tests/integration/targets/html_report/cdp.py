# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Headless Chromium driven through the DevTools protocol on a pipe (--remote-debugging-pipe: commands on the
browser's file descriptor 3, replies and events on its 4, each a JSON text ended by a NUL byte): standard library
only, no port, no websocket. Browser.open() opens a file in a tab of a browser context of its own, and
Page.problems() lists what a page must never do: send a request, break its Content-Security-Policy, throw, log an
error or a warning, or open a dialog (alert() from an injected value).

A page's requests are counted where the page makes them: the DevTools Fetch domain pauses every request of the
page's own target (and of any worker or frame it starts, attached to automatically), lets the page's own file
load, and fails and records every other request. The browser's own background traffic (Chromium asks Google's
services whatever the flags, and what it asks changes with its version) belongs to no page target: it goes to a
recording proxy, so it never reaches the network, and is not counted as the page's. A page request cannot hide
there either: every request of the page's targets is paused before it leaves."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import base64
import fcntl
import json
import os
import select
import shutil
import subprocess
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-extensions",
    "--disable-default-apps",
    "--mute-audio",
    "--remote-debugging-pipe",
]


class BrowserError(Exception):
    pass


def find_chromium():
    for name in ("chromium", "chromium-browser"):
        path = shutil.which(name)
        if path:
            return path
    raise BrowserError(
        "Chromium is not installed: the HTML report's browser test needs Debian's chromium "
        "(tests/tools/install_chromium.sh installs it, as run_integration.sh does)"
    )


class Recorder:
    """An HTTP proxy on the loopback that answers every request 404 and records it: the browser's only way out
    (--proxy-server, loopback included), so that nothing the browser asks reaches the network."""

    def __init__(self):
        self.requests = []
        recorder = self

        class Handler(BaseHTTPRequestHandler):
            def handle_one_request(self):
                try:
                    BaseHTTPRequestHandler.handle_one_request(self)
                except OSError:
                    pass

            def answer(self):
                recorder.requests.append("%s %s" % (self.command, self.path))
                self.send_response(404)
                self.send_header("Content-Length", "0")
                self.end_headers()

            do_GET = do_POST = do_HEAD = do_PUT = do_CONNECT = do_OPTIONS = answer

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = "http://127.0.0.1:%d" % self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


class Browser:
    """One headless Chromium with a profile of its own (removed by close()), whose requests go to a recording
    proxy instead of the network (``self.background``: Chromium still asks a few Google services, even with the
    flags above); each page's requests are paused and judged in ``_judge`` (see the module's docstring)."""

    def __init__(self, timeout=30.0):
        self.timeout = timeout
        self.profile = tempfile.mkdtemp(prefix="nac-chromium-")
        self.log = open(os.path.join(self.profile, "stderr.log"), "w+b")
        to_browser, self._commands = os.pipe()
        self._replies, from_browser = os.pipe()

        def as_fds_3_and_4():
            # Moved above 10 first, so that neither dup2 overwrites the other pipe.
            command_fd = fcntl.fcntl(to_browser, fcntl.F_DUPFD, 10)
            reply_fd = fcntl.fcntl(from_browser, fcntl.F_DUPFD, 10)
            os.dup2(command_fd, 3)
            os.dup2(reply_fd, 4)

        self.background = Recorder()
        argv = [find_chromium()] + FLAGS
        argv += ["--proxy-server=" + self.background.url, "--proxy-bypass-list=<-loopback>"]
        argv += ["--user-data-dir=" + self.profile, "about:blank"]
        self.process = subprocess.Popen(
            argv, stdin=subprocess.DEVNULL, stdout=self.log, stderr=self.log, preexec_fn=as_fds_3_and_4, pass_fds=(3, 4)
        )
        os.close(to_browser)
        os.close(from_browser)
        self._buffer = b""
        self._next_id = 0
        self.events = []
        # Each page's session and the sessions of the targets it started: {session: the page's own URL}.
        self.allowed = {}
        # The requests each page's targets tried and were refused: {page session: ["GET http://..."]}.
        self.blocked = {}
        self.page_of = {}
        self.version = self.call("Browser.getVersion")["product"]

    def call(self, method, params=None, session=None):
        """Send one command and wait for its reply; events that come meanwhile are kept in self.events."""
        number = self._send(method, params, session)
        while True:
            reply = self._read()
            if reply.get("id") == number:
                if "error" in reply:
                    raise BrowserError("%s: %s" % (method, reply["error"].get("message")))
                return reply.get("result", {})
            if "method" in reply:
                self.events.append(reply)

    def _send(self, method, params=None, session=None):
        self._next_id += 1
        message = dict(id=self._next_id, method=method, params=params or {})
        if session:
            message["sessionId"] = session
        os.write(self._commands, json.dumps(message).encode("utf-8") + b"\0")
        return self._next_id

    def wait_for(self, method, session, timeout=None):
        """The first event ``method`` of ``session``, kept or still to come."""
        deadline = time.monotonic() + (timeout or self.timeout)
        while True:
            for event in self.events:
                if event["method"] == method and event.get("sessionId") == session:
                    return event
            message = self._read(deadline)
            if "method" in message:
                self.events.append(message)

    def _read(self, deadline=None):
        deadline = deadline or time.monotonic() + self.timeout
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self._replies], [], [], left)[0]:
                raise BrowserError("Chromium did not answer within %.0f s%s" % (self.timeout, self._stderr()))
            chunk = os.read(self._replies, 1 << 20)
            if not chunk:
                raise BrowserError("Chromium closed its DevTools pipe%s" % self._stderr())
            self._buffer += chunk
        message, self._buffer = self._buffer.split(b"\0", 1)
        message = json.loads(message.decode("utf-8"))
        method, session = message.get("method"), message.get("sessionId")
        if method == "Page.javascriptDialogOpening":
            # A dialog blocks its page: closed at once (its reply is not awaited); problems() reports it.
            self._send("Page.handleJavaScriptDialog", dict(accept=True), session)
        elif method == "Fetch.requestPaused":
            self._judge(session, message["params"])
        elif method == "Target.attachedToTarget" and session in self.page_of:
            self._watch_child(session, message["params"]["sessionId"])
        return message

    def watch(self, session, url):
        """Pause every request of the page ``session`` (and of the targets it starts): its own ``url`` goes on."""
        self.page_of[session] = session
        self.allowed[session] = url
        self.blocked[session] = []
        self.call("Fetch.enable", dict(patterns=[dict(urlPattern="*")]), session)
        self.call("Target.setAutoAttach", dict(autoAttach=True, waitForDebuggerOnStart=True, flatten=True), session)

    def _watch_child(self, parent, child):
        """Watch a worker or frame that a page started as the page itself (replies not awaited)."""
        page = self.page_of[parent]
        self.page_of[child] = page
        self._send("Fetch.enable", dict(patterns=[dict(urlPattern="*")]), child)
        self._send("Target.setAutoAttach", dict(autoAttach=True, waitForDebuggerOnStart=True, flatten=True), child)
        self._send("Runtime.runIfWaitingForDebugger", None, child)

    def _judge(self, session, params):
        """Let a paused request of a page go on when it is the page's own file; fail and record any other."""
        page = self.page_of.get(session, session)
        request = params["request"]
        if request["url"] == self.allowed.get(page):
            self._send("Fetch.continueRequest", dict(requestId=params["requestId"]), session)
            return
        self.blocked.setdefault(page, []).append("%s %s" % (request["method"], request["url"]))
        self._send("Fetch.failRequest", dict(requestId=params["requestId"], errorReason="BlockedByClient"), session)

    def _stderr(self):
        self.log.seek(0)
        return ": " + self.log.read().decode("utf-8", "replace")[-2000:]

    def open(self, path, width=1280, height=900):
        return Page(self, path, width, height)

    def close(self):
        try:
            self.call("Browser.close")
            self.process.wait(10)
        except (BrowserError, OSError, subprocess.TimeoutExpired):
            self.process.kill()
            self.process.wait()
        for fd in (self._commands, self._replies):
            os.close(fd)
        self.background.close()
        self.log.close()
        shutil.rmtree(self.profile, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class Page:
    """A tab that loaded one file, in a browser context of its own whose every request is paused and judged
    (Browser.watch); ``problems()`` lists what it did that a report page must never do."""

    def __init__(self, browser, path, width, height):
        self.browser = browser
        self.url = "file://" + os.path.abspath(path)
        context = browser.call(
            "Target.createBrowserContext", dict(proxyServer=browser.background.url, proxyBypassList="<-loopback>")
        )["browserContextId"]
        target = browser.call("Target.createTarget", dict(url="about:blank", browserContextId=context))["targetId"]
        self.session = browser.call("Target.attachToTarget", dict(targetId=target, flatten=True))["sessionId"]
        browser.watch(self.session, self.url)
        for domain in ("Page", "Runtime", "Network", "Log"):
            self.call(domain + ".enable")
        self.call(
            "Emulation.setDeviceMetricsOverride", dict(width=width, height=height, deviceScaleFactor=1, mobile=False)
        )
        self.call(
            "Page.addScriptToEvaluateOnNewDocument",
            dict(
                source="window.__violations = [];"
                "document.addEventListener('securitypolicyviolation', function (e) {"
                " window.__violations.push(e.violatedDirective + ' ' + e.blockedURI); });"
            ),
        )
        self.first_event = len(browser.events)
        self.call("Page.navigate", dict(url=self.url))
        browser.wait_for("Page.loadEventFired", self.session)

    def call(self, method, params=None):
        return self.browser.call(method, params, self.session)

    def js(self, expression):
        """The value of a JavaScript expression in the page (evaluated by DevTools, outside the page's policy)."""
        reply = self.call("Runtime.evaluate", dict(expression=expression, returnByValue=True, awaitPromise=True))
        if "exceptionDetails" in reply:
            raise BrowserError("%s: %s" % (expression, reply["exceptionDetails"].get("text")))
        return reply["result"].get("value")

    def problems(self):
        """Every request other than the page's own, policy violation, exception, error or warning, dialog."""
        self.js("0")  # lets the events of the last action arrive first
        found = ["policy violation: %s" % v for v in self.js("window.__violations") or []]
        found += ["request blocked: %s" % request for request in self.browser.blocked.get(self.session, [])]
        for event in self.browser.events[self.first_event :]:
            method, params = event["method"], event.get("params", {})
            if self.browser.page_of.get(event.get("sessionId")) != self.session:
                continue
            if method == "Network.requestWillBeSent" and params["request"]["url"] != self.url:
                found.append("request: %s %s" % (params["request"]["method"], params["request"]["url"]))
            elif method == "Runtime.exceptionThrown":
                found.append("exception: %s" % params["exceptionDetails"].get("text"))
            elif method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "warning", "assert"):
                found.append("console %s: %s" % (params["type"], params.get("args")))
            elif method == "Log.entryAdded" and params["entry"].get("level") in ("error", "warning"):
                found.append("log %s: %s" % (params["entry"]["level"], params["entry"].get("text")))
            elif method == "Page.javascriptDialogOpening":
                found.append("dialog: %s" % params.get("message"))
        return found

    def close(self):
        """Forget the page's sessions (the browser context stays until the browser closes)."""
        for session in [s for s, page in self.browser.page_of.items() if page == self.session]:
            self.browser.page_of.pop(session, None)

    def screenshot(self, path):
        """The whole page as a PNG file."""
        size = self.call("Page.getLayoutMetrics")["cssContentSize"]
        clip = dict(x=0, y=0, width=size["width"], height=size["height"], scale=1)
        data = self.call("Page.captureScreenshot", dict(format="png", clip=clip, captureBeyondViewport=True))["data"]
        with open(path, "wb") as handle:
            handle.write(base64.b64decode(data))
