"""What every request passes before a route sees it (a plain ASGI middleware): HEAD as GET without a body, the
API key, the body limit as the body streams in (``Transfer-Encoding: chunked`` included), the bound on requests
in flight, a request id, and the request metrics."""

from __future__ import annotations

import asyncio
import hmac
import json
import uuid

from ktrain_recipes_tools.service import heap

PUBLIC = ("/health", "/health/live", "/health/ready", "/metrics")  # health checks and scrapes need no key
MODEL_ROUTES = ("/predict", "/classify", "/v1/classify")  # the routes that reach the model: bounded in flight
LARGE_BODY = 256 * 1024  # a request body from this size on: its memory is given back to the system when it ends


async def send_json(send, status: int, message: str, headers: list | None = None, path: str | None = None) -> None:
    from ktrain_recipes_tools.service.schemas import error_content

    body = json.dumps(error_content(status, message, path)).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                            *(headers or [])]})
    await send({"type": "http.response.body", "body": body})


def _without_body(send):
    async def headers_only(message):
        if message["type"] == "http.response.body":
            message = {**message, "body": b""}
        await send(message)
    return headers_only


def _replay(body: bytes, receive):
    """An ASGI ``receive`` that gives the body already read, whole, then what ``receive`` gives (a disconnect)."""
    pending = [{"type": "http.request", "body": body, "more_body": False}]

    async def replayed():
        return pending.pop() if pending else await receive()

    return replayed


class Exchange:
    """One request's passage through the guard: the status it was answered with, its request id on the answer, and
    the body counted as it streams in (chunked bodies have no Content-Length): past the limit, the app is told the
    body ended, and its answer is replaced by a 413; nothing more is read."""

    def __init__(self, send, request_id: str | None, max_body: int, path: str | None = None):
        self.send, self.request_id, self.max_body, self.path = send, request_id, max_body, path
        # None until an answer starts: a request never answered (its client or its body deadline gave up first)
        # is not counted as a status no client received
        self.status: int | None = None
        self.over, self.replaced, self.received = False, False, 0

    async def send_with_id(self, message) -> None:
        if message["type"] == "http.response.start":
            self.status = message["status"]
            if self.request_id is not None:
                message["headers"] = [*message.get("headers", []), (b"x-request-id", self.request_id.encode("latin-1"))]
        await self.send(message)

    async def tracked_send(self, message) -> None:
        if self.over:  # the body went past the limit: the app's answer is replaced by a 413
            if message["type"] == "http.response.start" and not self.replaced:
                self.replaced = True
                await self.too_large()
            return
        await self.send_with_id(message)

    async def too_large(self) -> None:
        # no "connection: close": the server reads and drops the rest of the body (bounded, see service.protocol),
        # so that a client that sends the whole body before reading gets this answer, not a broken pipe
        await send_json(self.send_with_id, 413, f"the request body is over {self.max_body} bytes: send fewer or "
                        "shorter texts per request", path=self.path)

    def limited(self, receive):
        """``receive``, counting the body: past the limit, the app is told the body ended."""
        async def limited_receive():
            if self.over:
                return {"type": "http.disconnect"}
            message = await receive()
            if message["type"] == "http.request":
                self.received += len(message.get("body", b""))
                if self.received > self.max_body:
                    self.over = True
                    return {"type": "http.request", "body": b"", "more_body": False}
            return message
        return limited_receive


class Guard:
    def __init__(self, app, max_body_bytes: int, api_key: str | None, metrics, max_concurrent: int,
                 request_ids: bool = True):
        """``request_ids=False``: leave X-Request-ID to a proxy in front that echoes or makes it (Ray Serve's)."""
        self.app, self.max_body, self.key, self.metrics = app, max_body_bytes, api_key, metrics
        self.request_ids = request_ids
        self.max_concurrent, self.in_flight = max_concurrent, 0  # /predict requests inside the server

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        if scope.get("method") == "HEAD":  # HEAD wherever GET works: the GET answer without its body
            scope, send = {**scope, "method": "GET"}, _without_body(send)
        headers = dict(scope.get("headers") or [])
        request_id = headers.get(b"x-request-id", b"")[:128].decode("latin-1") or uuid.uuid4().hex
        route = scope.get("path", "")
        exchange = Exchange(send, request_id if self.request_ids else None, self.max_body, route)
        counted = False
        try:
            if self.key and route not in PUBLIC and scope.get("method") != "OPTIONS" and not self._authorized(headers):
                return await send_json(exchange.send_with_id, 401, "send the API key as 'Authorization: Bearer KEY'",
                                       [(b"www-authenticate", b"Bearer")], route)
            length = headers.get(b"content-length")
            if length is not None and (not length.isdigit() or int(length) > self.max_body):
                return await exchange.too_large()
            if route in MODEL_ROUTES:
                # a request counts against --max-concurrent once its whole body is in: clients that open
                # connections and send their bodies slowly (or never) hold no place that others need; the body
                # is bounded by --max-body-bytes and by the connection's body deadline meanwhile
                body, over = await self._read_body(receive)
                if over:
                    return await exchange.too_large()
                if body is None:  # the client went away
                    return None
                if self.in_flight >= self.max_concurrent:
                    return await send_json(exchange.send_with_id, 429, f"the server is busy ({self.in_flight} "
                                           "requests in flight): retry after a second", [(b"retry-after", b"1")],
                                           route)
                self.in_flight += 1
                counted = True
                receive = _replay(body, receive)
            await self.app(scope, exchange.limited(receive), exchange.tracked_send)
        except asyncio.CancelledError:
            # the server is stopping and cancels what is left (a second SIGTERM, or the end of the drain): the
            # request gets a JSON 503 to retry elsewhere, where uvicorn would log a traceback and send a plain-text
            # 500; the task ends here either way
            if exchange.status is not None:
                raise
            await send_json(exchange.send_with_id, 503, "the service is shutting down: retry on another replica",
                            [(b"retry-after", b"1"), (b"connection", b"close")], route)
        except Exception:
            if exchange.status is None:  # uvicorn answers it with a 500
                exchange.status = 500
            raise
        finally:
            if counted:
                self.in_flight -= 1
                self._give_back_after(len(body))
            known = route if route in ("/", *MODEL_ROUTES, "/v1/models", "/metadata", "/docs", "/openapi.json",
                                        *PUBLIC) else "other"
            if exchange.status is not None:
                self.metrics.requests.labels(known, str(exchange.status)).inc()

    def _give_back_after(self, size: int) -> None:
        """After a large request (its body, items and answer freed), the free heap goes back to the system, off the
        event loop; a small one leaves nothing worth the walk of the heap."""
        if size >= LARGE_BODY:
            asyncio.get_running_loop().run_in_executor(None, heap.give_back)

    async def _read_body(self, receive) -> tuple[bytes | None, bool]:
        """(the whole request body, False); (None, True) once the body passes ``max_body`` (nothing more is
        read); (None, False) when the client went away."""
        chunks, size = [], 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                return None, False
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_body:
                return None, True
            chunks.append(chunk)
            if not message.get("more_body", False):
                return b"".join(chunks), False

    def _authorized(self, headers: dict) -> bool:
        given = headers.get(b"authorization", b"").decode("latin-1")
        scheme, _, token = given.partition(" ")
        return scheme.lower() == "bearer" and hmac.compare_digest(token.strip().encode(), self.key.encode())
