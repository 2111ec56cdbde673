"""The polling kazoo handler answers `select` as kazoo's own does (real socket pairs)."""

from __future__ import annotations

import socket
import time

import pytest
from kazoo.handlers.threading import SequentialThreadingHandler

from kafkaops.cluster.zk.handler import PollingHandler

HANDLERS = [PollingHandler(), SequentialThreadingHandler()]


@pytest.fixture
def pair():
    a, b = socket.socketpair()
    yield a, b
    a.close()
    b.close()


@pytest.mark.parametrize("handler", HANDLERS, ids=["polling", "kazoo"])
def test_nothing_ready_waits_for_the_timeout(handler, pair):
    a, _ = pair
    started = time.monotonic()
    assert handler.select([a], [], [], 0.05) == ([], [], [])
    assert time.monotonic() - started >= 0.04


@pytest.mark.parametrize("handler", HANDLERS, ids=["polling", "kazoo"])
def test_readable_and_writable_objects_come_back_as_given(handler, pair):
    a, b = pair
    b.send(b"x")
    assert handler.select([a], [b], [a], 1.0) == ([a], [b], [])
    # a descriptor ready both ways counts as readable only, once for each list it was given in (kazoo's)
    assert handler.select([a], [a], [], 1.0) == ([a, a], [], [])


@pytest.mark.parametrize("handler", HANDLERS, ids=["polling", "kazoo"])
def test_a_hung_up_peer_makes_the_socket_readable(handler, pair):
    a, b = pair
    b.close()
    assert handler.select([a], [], [], 1.0)[0] == [a]


@pytest.mark.parametrize("handler", HANDLERS, ids=["polling", "kazoo"])
def test_a_bad_timeout_is_refused(handler, pair):
    a, _ = pair
    with pytest.raises(ValueError):
        handler.select([a], [], [], -1)
    with pytest.raises(TypeError):
        handler.select([a], [], [], "1")
