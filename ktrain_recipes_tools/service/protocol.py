"""The HTTP connection bounds a client must not control, on uvicorn's httptools protocol.

uvicorn applies no limit to the size or number of headers and no timeout while a request's headers or body are
being sent: one client could send a 100 MB header, or keep connections open forever half-way through a request.
This protocol adds, per connection:

* the request line and headers limited in bytes and count: past either, 431. The bytes are counted as they
  arrive, not only when a header line is complete (one endless header line would otherwise grow the server until
  its deadline); so are the bytes of a chunked body that are not body (chunk sizes, trailers);
* a deadline for the request line and headers (from the connection's first byte, or the end of the previous
  request), and one for the body once the headers are in: past either, 408 and the connection closes;
* a body refused with 413 is drained (read and dropped, up to ``DRAIN_BYTES`` and the body deadline) rather than
  the connection closed under the client, so that clients which send the whole body before reading (urllib,
  requests) read the 413 instead of a broken pipe;
* uvicorn's own plain-text 400 page for bytes that are not HTTP becomes JSON, as every other error.

The answers are JSON with one line (``{"error": "..."}``), like the app's.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from uvicorn.protocols.http.httptools_impl import STATUS_LINE, HttpToolsProtocol

DRAIN_BYTES = 64 * 2**20  # most of a refused body read and dropped so that the client sees the 413
DISCARD_S = 1.0  # after a 431 for a head still coming in: how long its bytes are read and dropped before closing


@dataclass(frozen=True)
class ConnectionLimits:
    """The per-connection bounds, from ``ServiceSettings`` (whose fields hold the defaults and check them)."""

    max_header_bytes: int
    max_headers: int
    header_timeout_s: float
    body_timeout_s: float


class _Refused(Exception):
    """Raised from a parser callback to stop parsing a request that is refused."""


class _CloseAfterBody:
    """The transport as a request's cycle sees it: a close asked for while the request's body is still coming in
    (an answer sent before the body was read, with "Connection: close") waits until the body is drained."""

    def __init__(self, transport, protocol):
        self._transport, self._protocol = transport, protocol

    def close(self) -> None:
        if self._protocol.body_pending():
            self._protocol.close_when_drained = True
        else:
            self._transport.close()

    def __getattr__(self, name):
        return getattr(self._transport, name)


class LimitedHttpToolsProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol with the module's bounds; ``limited_protocol`` makes one per service."""

    connection_limits: ConnectionLimits
    refusal_hook = None  # told of every answer given here (``limited_protocol``'s ``on_refusal``)

    def connection_made(self, transport) -> None:
        super().connection_made(transport)
        self._timer = None
        self._refusal: tuple[int, str] | None = None
        self._header_bytes = self._header_count = self._drained = 0
        self._body_expected = self._message_complete = self.close_when_drained = False
        self._in_headers, self._unparsed = True, 0  # bytes of this message's head not yet seen whole
        self._discarding, self._discarded = False, 0
        self._framing = self._body_calls = 0  # a chunked body's bytes that are not body (sizes, trailers)
        # body calls on this connection, never reset: whether a read fed any body is told by this count, since
        # a read that ends one request and starts the next resets the per-request one inside the parse
        self._body_seen = 0
        self._path: str | None = None
        self._arm_headers()

    def _arm_headers(self) -> None:
        self._arm(self.connection_limits.header_timeout_s, 408, f"the request's headers did not arrive within "
                                                f"{self.connection_limits.header_timeout_s:g} s: send them at once")

    def body_pending(self) -> bool:
        return self._body_expected and not self._message_complete

    def connection_lost(self, exc) -> None:
        self._disarm()
        super().connection_lost(exc)

    def _arm(self, seconds: float, status: int, message: str) -> None:
        self._disarm()
        self._timer = self.loop.call_later(seconds, self._expire, status, message)

    def _disarm(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _expire(self, status: int, message: str) -> None:
        self._timer = None
        if self.transport.is_closing():
            return
        cycle = self.cycle
        if cycle is not None and cycle.response_started:  # answered already (a 413 being drained): just close
            self.transport.close()
            return
        if cycle is not None:  # the app, if it waits for the body, is told the client went away
            cycle.disconnected = True
            cycle.message_event.set()
        self._answer(status, message)

    def _answer(self, status: int, message: str, close: bool = True) -> None:
        if self.refusal_hook is not None:
            self.refusal_hook(status)
        from ktrain_recipes_tools.service.schemas import error_content

        body = json.dumps(error_content(status, message, self._path)).encode()
        head = [STATUS_LINE[status]]
        for name, value in self.server_state.default_headers:
            head += [name, b": ", value, b"\r\n"]
        head += [b"content-type: application/json\r\n", b"content-length: ", str(len(body)).encode(), b"\r\n",
                 b"connection: close\r\n\r\n"]
        self.transport.write(b"".join(head) + body)
        if close:
            self.transport.close()

    def _count(self, n: int, header: bool) -> None:
        self._header_bytes += n
        self._header_count += header
        if self._header_bytes > self.connection_limits.max_header_bytes:
            self._refusal = (431, self._head_too_long())
        elif self._header_count > self.connection_limits.max_headers:
            self._refusal = (431, f"the request has over {self.connection_limits.max_headers} headers: send fewer")
        if self._refusal:
            raise _Refused

    def _head_too_long(self) -> str:
        return (f"the request line and headers are over {self.connection_limits.max_header_bytes} bytes: send "
                "shorter headers")

    def data_received(self, data: bytes) -> None:
        if self._discarding:  # after a 431 for an endless head: dropped unread, so the client reads the 431
            self._discarded += len(data)
            if self._discarded > DRAIN_BYTES:
                self.transport.close()
            return
        body_before = self._body_seen
        super().data_received(data)
        if self.transport.is_closing():
            return
        if self._in_headers:  # the whole chunk went into a head that is still incomplete
            self._unparsed += len(data)
            over = self._unparsed > self.connection_limits.max_header_bytes
        elif self._body_expected and not self._message_complete and self._body_seen == body_before:
            self._framing += len(data)  # nothing of it was body: chunk framing or an endless trailer
            over = self._framing > self.connection_limits.max_header_bytes + 16 * self._body_calls
        else:
            return
        if over:
            self._refuse_head()

    def _refuse_head(self) -> None:
        message = self._head_too_long()
        if self.cycle is not None and self.cycle.response_started:
            self.transport.close()
            return
        if self.cycle is not None:
            self.cycle.disconnected = True
            self.cycle.message_event.set()
        self._disarm()
        self._answer(431, message, close=False)
        # the rest of what the client sends is read and dropped for a moment, then the connection closes:
        # closed at once with bytes unread, the kernel would reset it and the client might never see the 431
        self._discarding, self._discarded = True, 0
        self.loop.call_later(DISCARD_S, self.transport.close)

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self._header_bytes = self._header_count = self._drained = 0
        self._body_expected = self._message_complete = self.close_when_drained = False
        self._in_headers, self._unparsed, self._framing, self._body_calls = True, 0, 0, 0
        self._path = None
        if self._timer is None:  # the next request on a kept-alive connection
            self._arm_headers()

    def on_url(self, url: bytes) -> None:
        self._path = url.split(b"?")[0].decode("latin-1")  # which error shape a refusal answers in (schemas)
        self._count(len(url), header=False)
        super().on_url(url)

    def on_header(self, name: bytes, value: bytes) -> None:
        self._count(len(name) + len(value) + 4, header=True)
        super().on_header(name, value)

    def on_headers_complete(self) -> None:
        self._disarm()
        self._in_headers = False
        headers = dict(self.headers)
        self._body_expected = (headers.get(b"content-length", b"0") not in (b"0", b"")
                               or b"transfer-encoding" in headers)
        if self._body_expected:
            self._arm(self.connection_limits.body_timeout_s, 408, f"the request's body did not arrive within "
                                                  f"{self.connection_limits.body_timeout_s:g} s: send it at once")
        super().on_headers_complete()
        if self.cycle is not None:
            self.cycle.transport = _CloseAfterBody(self.transport, self)

    def on_body(self, body: bytes) -> None:
        self._body_calls += 1
        self._body_seen += 1
        if self.cycle is not None and self.cycle.response_complete:  # a refused body, drained
            self._drained += len(body)
            if self._drained > DRAIN_BYTES:
                self.transport.close()
                return
        super().on_body(body)

    def on_message_complete(self) -> None:
        self._disarm()
        self._message_complete = True
        super().on_message_complete()
        if self.close_when_drained:
            self.transport.close()

    def send_400_response(self, msg: str) -> None:
        status, message = self._refusal or (400, "the request is not valid HTTP/1.1")
        self._disarm()
        self._answer(status, message)


def limited_protocol(limits: ConnectionLimits, on_refusal=None) -> type:
    """uvicorn's httptools protocol class with ``limits`` (pass it as ``uvicorn.Config(http=...)``).
    ``on_refusal(status)``: told of every answer given here, before the app sees a request (the service's metrics
    count them: 400, 408, 431)."""
    return type("LimitedHttpToolsProtocol", (LimitedHttpToolsProtocol,),
                {"connection_limits": limits, "refusal_hook": staticmethod(on_refusal) if on_refusal else None})
