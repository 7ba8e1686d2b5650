"""The [wire] section of a board's configuration file, and opening an endpoint from it."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from foosball.wire.catalogue import Agent
from foosball.wire.codec import WireCodec, load_key
from foosball.wire.endpoint import Endpoint
from foosball.wire.transports import open_transport
from foosball.wire.transports.raw import BROADCAST, ETHERTYPE_FOOSBALL
from foosball.wire.transports.udp import DEFAULT_GROUP, DEFAULT_PORT


@dataclass(frozen=True, slots=True)
class WireSettings:
    transport: str = "raw"
    iface: str = "eth0"
    ethertype: int = ETHERTYPE_FOOSBALL
    mac_destination: str = BROADCAST
    udp_destination: str = DEFAULT_GROUP
    udp_port: int = DEFAULT_PORT
    key_file: str = "/data/foosball/wire.key"
    max_age_s: float = 0.5

    @classmethod
    def from_section(cls, section: dict[str, Any]) -> WireSettings:
        known = set(cls.__dataclass_fields__)
        unknown = set(section) - known
        if unknown:
            raise ValueError(f"[wire]: unknown keys {sorted(unknown)}; known: {sorted(known)}")
        return cls(**section)

    def transport_options(self) -> dict[str, Any]:
        if self.transport == "raw":
            return {"iface": self.iface, "ethertype": self.ethertype,
                    "destination": self.mac_destination}
        if self.transport == "udp":
            return {"destination": self.udp_destination, "port": self.udp_port}
        return {}


def open_endpoint(
    settings: WireSettings,
    sender: Agent,
    *,
    key: bytes | None = None,
    clock: Callable[[], int] = time.time_ns,
    **transport_options: Any,
) -> Endpoint:
    codec = WireCodec(
        key if key is not None else load_key(settings.key_file),
        sender,
        clock=clock,
        max_age_s=settings.max_age_s,
    )
    options = settings.transport_options() | transport_options
    return Endpoint(open_transport(settings.transport, **options), codec)
