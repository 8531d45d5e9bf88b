"""Whether something answers at a network address: the one probe shared by the hub check, the check of
``--ray-address`` and the multiworker cluster's wait for its workers."""

from __future__ import annotations

import socket


def split_address(address: str) -> tuple[str, int]:
    """``("HOST", PORT)`` from ``"HOST:PORT"`` (an IPv6 host in brackets: ``"[::1]:PORT"``)."""
    host, _, port = address.rpartition(":")
    return host.strip("[]"), int(port)


def connection_error(host: str, port: int, timeout_s: float) -> OSError | None:
    """None when ``host:port`` accepts a TCP connection within ``timeout_s`` (closed at once), else the error."""
    try:
        socket.create_connection((host, port), timeout=timeout_s).close()
    except OSError as exc:
        return exc
    return None
