"""The ports the tests' own servers take (tests/support/ports.py)."""

import socket

from tests.support.ports import ephemeral_ports, unused_port


def test_a_port_held_by_a_socket_that_does_not_listen_is_not_taken():
    first = unused_port(20000)
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", first))  # as a client's socket holds its port, without listening
        assert unused_port(20000) != first
    assert unused_port(20000) == first


def test_a_port_is_never_one_outgoing_connections_draw_from():
    ephemeral = ephemeral_ports()
    assert unused_port(ephemeral.start - 2) not in ephemeral
