"""The connection layer, by property (hypothesis): any sequence of requests of any size, chunked or not, sent one
after another on one kept-alive connection, is answered as its size deserves: 200 up to ``--max-body-bytes``, 413
past it, never 431 (its headers are small). Battery v7: a 313 KB body sent right after a small request on the same
connection was answered 431 every time (a read that started a message and ended inside its body was counted as
chunk framing)."""

from __future__ import annotations

import re
import socket

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from servers import running

MAX_BODY = 400_000
pytestmark = pytest.mark.network


@pytest.fixture(scope="module")
def server(exported):
    with running(["-m", "ktrain_recipes", "serve", "--predictor", str(exported), "--max-body-bytes", str(MAX_BODY),
                  "--max-header-bytes", "32768"]) as (url, _):
        host, port = url.removeprefix("http://").split(":")
        yield host, int(port)


def body_of(size: int) -> bytes:
    """A valid /predict body of exactly ``size`` bytes (at least 21): one short text, padded with JSON whitespace."""
    core = b'{"texts": ["i am glad"]}'
    return core[:-1] + b" " * max(0, size - len(core)) + b"}"


def request(body: bytes, chunk_sizes: list[int] | None) -> bytes:
    head = b"POST /predict HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
    if chunk_sizes is None:
        return head + b"Content-Length: %d\r\n\r\n" % len(body) + body
    parts, at, i = [], 0, 0
    while at < len(body):
        n = chunk_sizes[i % len(chunk_sizes)]
        parts.append(b"%x\r\n" % len(body[at:at + n]) + body[at:at + n] + b"\r\n")
        at, i = at + n, i + 1
    return head + b"Transfer-Encoding: chunked\r\n\r\n" + b"".join(parts) + b"0\r\n\r\n"


def answer(conn: socket.socket) -> tuple[int, bool]:
    """One answer's status, and whether the server closes the connection after it."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        if not chunk:
            raise ConnectionError(f"closed before an answer: {data[:200]!r}")
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = int(re.search(rb"content-length: *(\d+)", head, re.I).group(1))
    while len(body) < length:
        chunk = conn.recv(65536)
        if not chunk:
            break
        body += chunk
    return int(head.split()[1]), b"connection: close" in head.lower()


sizes = st.one_of(st.integers(30, 2_000), st.integers(2_000, 120_000), st.integers(120_000, 2 * MAX_BODY))
one_request = st.tuples(sizes, st.one_of(st.none(), st.lists(st.integers(1, 70_000), min_size=1, max_size=4)))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(one_request, min_size=2, max_size=5))
def test_every_request_on_a_kept_alive_connection_is_answered_by_its_size(server, sequence):
    conn = socket.create_connection(server, timeout=30)
    try:
        for size, chunks in sequence:
            conn.sendall(request(body_of(size), chunks))
            status, closes = answer(conn)
            assert status == (200 if size <= MAX_BODY else 413), (size, chunks, status)
            if closes:  # a refused body ends its connection: the next request goes on a new one
                conn.close()
                conn = socket.create_connection(server, timeout=30)
    finally:
        conn.close()


def test_a_large_body_after_a_small_one_on_one_connection_is_not_431(server):
    """The battery's case itself: a small request, then a 313 KB one, on one connection."""
    with socket.create_connection(server, timeout=30) as conn:
        conn.sendall(request(body_of(200), None))
        assert answer(conn)[0] == 200
        conn.sendall(request(body_of(313_000), None))
        assert answer(conn)[0] == 200


def test_the_connections_own_refusals_on_vllms_routes_are_in_vllms_shape(server):
    """431 and 413 answered by the connection layer and the guard, before any route: on /classify in vLLM's
    ``{"error": {"message", "type", "param", "code"}}``, on /predict as ``{"error": "one line"}``."""
    import json

    for path, vllm in (("/classify", True), ("/predict", False)):
        with socket.create_connection(server, timeout=30) as conn:
            conn.sendall(f"POST {path} HTTP/1.1\r\nHost: x\r\nX-Big: ".encode() + b"a" * 40_000 + b"\r\n\r\n")
            data = b""
            while chunk := conn.recv(65536):
                data += chunk
        head, _, body = data.partition(b"\r\n\r\n")
        error = json.loads(body)["error"]
        assert head.startswith(b"HTTP/1.1 431")
        assert (error["code"] == 431 and "over 32768 bytes" in error["message"]) if vllm else isinstance(error, str)
        with socket.create_connection(server, timeout=30) as conn:
            conn.sendall(request(body_of(MAX_BODY + 10), None).replace(b"/predict", path.encode()))
            status, _ = answer(conn)
        assert status == 413
