"""Tiny HTTP servers on loopback that misbehave on purpose: one that accepts and never
answers, one that trickles its answer a byte at a time, one that answers late, one that
ignores `Range`. Each runs in a thread and records what happened to its connections."""
from __future__ import annotations

import socket
import threading
import time
from typing import Callable, Dict, List, Optional


class LoopbackServer:
    """Accepts connections on 127.0.0.1 and hands each to `handle(conn, request)` in a
    thread of its own; `closed_by_client` counts connections the client gave up on."""

    def __init__(self, handle: Callable[["LoopbackServer", socket.socket, bytes], None]):
        self.handle = handle
        self.stop = threading.Event()
        self.requests: List[bytes] = []
        self.closed_by_client = 0
        self._sock = socket.socket()
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen(16)
        self._sock.settimeout(0.1)
        self.port = self._sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self._threads: List[threading.Thread] = []
        t = threading.Thread(target=self._serve, daemon=True)
        t.start()
        self._threads.append(t)

    def _serve(self) -> None:
        while not self.stop.is_set():
            try:
                conn, _ = self._sock.accept()
            except OSError:
                continue
            t = threading.Thread(target=self._one, args=(conn,), daemon=True)
            t.start()
            self._threads.append(t)

    def _one(self, conn: socket.socket) -> None:
        with conn:
            conn.settimeout(0.1)
            while not self.stop.is_set():
                request = _read_request(conn, self.stop)
                if request is None:
                    self.closed_by_client += 1
                    return
                self.requests.append(request)
                try:
                    self.handle(self, conn, request)
                except OSError:   # the client went away mid-answer
                    self.closed_by_client += 1
                    return

    def wait_closed(self) -> bool:
        """True once the client has closed a connection (it gave up, as it must)."""
        for _ in range(200):
            if self.closed_by_client:
                return True
            time.sleep(0.05)
        return False

    def close(self) -> None:
        self.stop.set()
        for t in self._threads:
            t.join(5)
        self._sock.close()


def _read_request(conn: socket.socket, stop: threading.Event) -> Optional[bytes]:
    data = b""
    while b"\r\n\r\n" not in data:
        if stop.is_set():
            return None
        try:
            got = conn.recv(65536)
        except socket.timeout:
            continue
        except OSError:
            return None
        if not got:
            return None
        data += got
    return data


def _headers(request: bytes) -> Dict[str, str]:
    lines = request.split(b"\r\n\r\n", 1)[0].decode("latin-1").split("\r\n")[1:]
    return {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines)}


def never_answers(server: LoopbackServer, conn: socket.socket, request: bytes) -> None:
    """Reads the request, then holds the connection open and silent."""
    while not server.stop.is_set():
        try:
            if not conn.recv(1):
                raise OSError("closed")
        except socket.timeout:
            continue


def trickles(body: bytes, every: float = 0.05) -> Callable:
    """Answers 200 with the right length, one byte every `every` seconds."""
    def handle(server: LoopbackServer, conn: socket.socket, request: bytes) -> None:
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % len(body))
        for i in range(len(body)):
            if server.stop.is_set():
                return
            conn.sendall(body[i:i + 1])
            time.sleep(every)
    return handle


def serves(body: bytes, delay: float = 0.0, honour_range: bool = True) -> Callable:
    """Answers HEAD and GET of any path with `body` after `delay` seconds; a `Range` is
    answered 206 with the range, or (honour_range=False) ignored: 200 with all of it."""
    def handle(server: LoopbackServer, conn: socket.socket, request: bytes) -> None:
        end = time.monotonic() + delay
        while time.monotonic() < end and not server.stop.is_set():
            time.sleep(0.02)
        head = request.startswith(b"HEAD ")
        rng = _headers(request).get("range", "")
        status, payload, extra = b"200 OK", body, b""
        if rng.startswith("bytes=") and honour_range:
            a, _, b = rng[len("bytes="):].partition("-")
            lo, hi = int(a), min(int(b) if b else len(body) - 1, len(body) - 1)
            status, payload = b"206 Partial Content", body[lo:hi + 1]
            extra = b"Content-Range: bytes %d-%d/%d\r\n" % (lo, hi, len(body))
        conn.sendall(b"HTTP/1.1 " + status + b"\r\nContent-Length: %d\r\n" % len(payload) +
                     extra + b"Content-Type: application/octet-stream\r\n\r\n" +
                     (b"" if head else payload))
    return handle
