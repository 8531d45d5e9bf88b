"""The one probe of "does HOST:PORT answer", shared by the hub check, --ray-address and the cluster's wait."""

import socket

from ktrain_recipes.network import connection_error, split_address


def test_split_address_reads_ipv4_names_and_bracketed_ipv6():
    assert split_address("127.0.0.1:8265") == ("127.0.0.1", 8265)
    assert split_address("head-node:6379") == ("head-node", 6379)
    assert split_address("[::1]:10001") == ("::1", 10001)


def test_a_listening_port_answers_and_a_closed_one_gives_its_error():
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)
        port = listener.getsockname()[1]
        assert connection_error("127.0.0.1", port, timeout_s=2) is None
    error = connection_error("127.0.0.1", port, timeout_s=2)  # closed now: refused
    assert isinstance(error, ConnectionRefusedError)
