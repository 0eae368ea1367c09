"""Chat services' incoming webhooks, on free loopback ports, for the webhook tests."""

from __future__ import annotations

import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Receiver:
    """Answers from ``answers`` in turn (then 200; an answer may be ``(code, headers)``), and
    records every request, each POST after ``delay`` seconds. ``hold`` cleared: each POST waits
    until it is set again."""

    def __init__(self, answers=(), delay: float = 0.0):
        self.answers = list(answers)
        self.posts: list[dict] = []
        self.hold = threading.Event()
        self.hold.set()
        self.arrived = threading.Event()  # a POST came in (before any hold)
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers["Content-Length"]))
                outer.arrived.set()
                outer.hold.wait(30)
                if delay:
                    time.sleep(delay)  # a receiver that takes its time over each post
                outer.posts.append({"headers": dict(self.headers), "body": body})
                answer = outer.answers.pop(0) if outer.answers else 200
                code, headers = answer if isinstance(answer, tuple) else (answer, {})
                self.send_response(code)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.end_headers()

            def do_GET(self):  # what a redirected POST turns into: recorded as well
                outer.posts.append({"headers": dict(self.headers), "body": b""})
                self.send_response(200)
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}/hook"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.hold.set()
        self.server.shutdown()
        self.server.server_close()


class Dribbler:
    """A receiver that reads the request, then sends its answer one byte every ``every``
    seconds: each read is quick, the answer never ends in time. ``cut`` is set when the sender
    hung up before the answer was all sent."""

    ANSWER = b"HTTP/1.1 200 OK\r\n" + b"X-Slow: " + b"a" * 60 + b"\r\n\r\n"

    def __init__(self, every: float = 0.2):
        self.every = every
        self.cut = threading.Event()
        self.finished = threading.Event()
        self.requests = 0
        self.listener = socket.socket()
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(8)
        self.port = self.listener.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}/hook"
        self.stop = threading.Event()
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self):
        while not self.stop.is_set():
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self._answer, args=(conn,), daemon=True).start()

    def _answer(self, conn):
        with conn:
            conn.settimeout(5)
            seen = b""
            while b"\r\n\r\n" not in seen:
                chunk = conn.recv(65536)
                if not chunk:
                    return
                seen += chunk
            self.requests += 1
            for byte in self.ANSWER:
                if self.stop.wait(self.every):
                    return
                try:
                    conn.sendall(bytes([byte]))
                except OSError:
                    self.cut.set()
                    return
            self.finished.set()

    def close(self):
        self.stop.set()
        self.listener.close()
