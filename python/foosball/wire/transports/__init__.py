"""Transports: the same frame bytes over raw Ethernet, UDP or an in-process hub.

The backend is chosen by name from configuration, and only the chosen backend's module is
imported (as python-can does with its interfaces).
"""

from __future__ import annotations

import importlib
from typing import Any

from foosball.wire.transports.base import Transport, TransportError

# name -> (module, class). The one table of backends.
BACKENDS: dict[str, tuple[str, str]] = {
    "raw": ("foosball.wire.transports.raw", "RawEthernetTransport"),
    "udp": ("foosball.wire.transports.udp", "UdpTransport"),
    "memory": ("foosball.wire.transports.memory", "MemoryTransport"),
}


def open_transport(kind: str, **options: Any) -> Transport:
    try:
        module_name, class_name = BACKENDS[kind]
    except KeyError:
        raise TransportError(
            f"unknown transport {kind!r}; choose one of {sorted(BACKENDS)}"
        ) from None
    cls = getattr(importlib.import_module(module_name), class_name)
    return cls(**options)  # type: ignore[no-any-return]


__all__ = ["BACKENDS", "Transport", "TransportError", "open_transport"]
