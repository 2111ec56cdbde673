"""kazoo's threading handler, with a `select` that polls.

kazoo's connection thread calls its handler's `select` once per request it sends and once per answer it
reads. `SequentialThreadingHandler.select` builds a `selectors.DefaultSelector` (an epoll instance) for
each call, registers the sockets, waits and closes it: five system calls and the selectors module's
Python each time. Profiled in a controller reassigning 10,000 partitions, that was 680 of the 1,245 busy
samples of kazoo's thread, competing for the GIL with the controller's event thread. `poll` needs one
system call and no set-up; it has no limit on descriptor numbers either (kazoo left `select.select` for
that limit).
"""

from __future__ import annotations

import math
import select
from typing import Any

from kazoo.handlers.threading import SequentialThreadingHandler
from kazoo.handlers.utils import fileobj_to_fd

_READ = select.POLLIN | select.POLLPRI
_WRITE = select.POLLOUT


class PollingHandler(SequentialThreadingHandler):  # type: ignore[misc]  # kazoo is untyped
    def select(self, rlist: list[Any], wlist: list[Any], xlist: list[Any], timeout: float | None = None) -> Any:
        """kazoo's `selector_select`, answered the same way: the ready objects of `rlist` and `wlist`
        (a descriptor hung up or in error counts as ready, as the selectors module reports it), none of
        `xlist`."""
        if timeout is not None:
            if not isinstance(timeout, (int, float)):
                raise TypeError("timeout must be a number")
            if timeout < 0:
                raise ValueError("timeout must be non-negative")
        by_fd: dict[int, list[Any]] = {}
        masks: dict[int, int] = {}
        for objects, mask in ((rlist, _READ), (wlist, _WRITE)):
            for fileobj in objects:
                fd = fileobj_to_fd(fileobj)
                masks[fd] = masks.get(fd, 0) | mask
                by_fd.setdefault(fd, []).append(fileobj)
        poller = select.poll()
        for fd, mask in masks.items():
            poller.register(fd, mask)
        ready = poller.poll(None if timeout is None else math.ceil(timeout * 1000))
        readable: list[Any] = []
        writable: list[Any] = []
        for fd, events in ready:
            # as selectors' PollSelector: anything but "writable" makes a descriptor readable, and back
            if events & ~_WRITE:
                readable.extend(by_fd[fd])
            elif events & ~_READ:
                writable.extend(by_fd[fd])
        return readable, writable, []
