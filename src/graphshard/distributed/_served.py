"""The graph server as a Ray actor: loads in the background and answers a heartbeat.

A :class:`~graphshard.distributed._server.GraphServer` in a Ray actor loads its partition
and compiles its kernels (:meth:`~graphshard.distributed._server.GraphServer.warm`) on a
thread started by the actor's constructor, so the actor exists at once and its
``health`` method, in a concurrency group of its own, answers while it loads, compiles or
serves a long request: ``{"stage": "loading" | "compiling kernels" | "ready" | "failed",
"pid": ...}``.  Every served method waits for the load first (and raises its error if it
failed).  Callers wait for readiness and answers as long as the heartbeat answers
(:mod:`graphshard.distributed._liveness`), never on a fixed deadline that a busy machine
can outlast.  A server Ray restarts runs the constructor again: it reloads the same way.
"""

from __future__ import annotations

import functools
import os
import threading
from typing import Any

from ..errors import ServerError
from ._server import GraphServer

__all__ = ["HEALTH_GROUP", "SERVED_METHODS", "served_class"]

#: The concurrency group of ``health``: its own thread, beside the one serving requests.
HEALTH_GROUP = "health"

#: The methods a client calls (each waits for the load; ``health`` does not).
SERVED_METHODS = ("info", "neighbors", "degrees", "node_features", "edge_features",
                  "find_edges", "sample", "multi", "tensor_create", "tensor_exists",
                  "tensor_delete", "tensor_read", "tensor_write", "tensor_update")

_CLASSES: dict[int, Any] = {}


class _BackgroundServer(GraphServer):
    """A GraphServer whose load and warm-up run on a thread (see the module)."""

    def __init__(self, config: Any, part_id: int, tensor_dir: str, verify: bool = True
                 ) -> None:
        self.part_id = int(part_id)
        self.config = str(config)  # for repr() while loading (a Ray actor's is asked at once)
        self._stage = "loading"
        self._failure: BaseException | None = None
        self._loaded = threading.Event()
        threading.Thread(target=self._load, args=(config, part_id, tensor_dir, verify),
                         name=f"graphshard-load-part{part_id}", daemon=True).start()

    def _load(self, config: Any, part_id: int, tensor_dir: str, verify: bool) -> None:
        try:
            GraphServer.__init__(self, config, part_id, tensor_dir, verify)
            self._stage = "compiling kernels"
            self.warm()
            self._stage = "ready"
        except BaseException as exc:  # reported to every caller, and by health
            self._failure = exc
            self._stage = "failed"
        finally:
            self._loaded.set()

    def health(self) -> dict[str, Any]:
        """``{"stage", "pid", "part_id", "error"}``: answers at once, whatever the server is
        doing (the heartbeat a client's wait relies on)."""
        failure = self._failure
        return {"stage": self._stage, "pid": os.getpid(), "part_id": self.part_id,
                "error": None if failure is None else f"{type(failure).__name__}: {failure}"}

    def _wait_loaded(self) -> None:
        self._loaded.wait()
        if self._failure is not None:
            raise ServerError(f"graph server of partition {self.part_id} failed to load: "
                              f"{type(self._failure).__name__}: {self._failure}",
                              field="part_id", value=self.part_id) from self._failure


def _gated(name: str) -> Any:
    served = getattr(GraphServer, name)

    @functools.wraps(served)
    def method(self: _BackgroundServer, *args: Any, **kwargs: Any) -> Any:
        self._wait_loaded()
        return served(self, *args, **kwargs)

    return method


for _name in SERVED_METHODS:
    setattr(_BackgroundServer, _name, _gated(_name))


def served_class(ray: Any) -> Any:
    """The Ray actor class of a graph server (made once per ``ray`` module): the default
    group serves one request at a time, as before; ``health`` has a thread of its own."""
    key = id(ray)
    if key not in _CLASSES:
        class ServedPart(_BackgroundServer):
            @ray.method(concurrency_group=HEALTH_GROUP)
            def health(self) -> dict[str, Any]:
                return _BackgroundServer.health(self)

        ServedPart.__name__ = ServedPart.__qualname__ = "GraphServer"
        _CLASSES[key] = ray.remote(concurrency_groups={HEALTH_GROUP: 1})(ServedPart)
    return _CLASSES[key]
