"""The [wire] section of a board's configuration file, and opening an endpoint from it."""

from __future__ import annotations

import ipaddress
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from foosball.schema import SettingError, parse, seconds, setting
from foosball.wire.catalogue import Agent
from foosball.wire.codec import WireCodec, load_key
from foosball.wire.endpoint import Endpoint
from foosball.wire.transports import open_transport
from foosball.wire.transports.raw import BROADCAST, ETHERTYPE_FOOSBALL
from foosball.wire.transports.udp import DEFAULT_GROUP, DEFAULT_PORT


def _mac(value: Any, where: str) -> str:
    if not isinstance(value, str) or not re.fullmatch(r"([0-9a-fA-F]{2}:){5}[0-9a-fA-F]{2}",
                                                      value):
        raise SettingError(f"{where}: a MAC address like ff:ff:ff:ff:ff:ff, not {value!r}")
    return value


def _ipv4(value: Any, where: str) -> str:
    try:
        ipaddress.IPv4Address(value)
    except ValueError:
        raise SettingError(f"{where}: an IPv4 address, not {value!r}") from None
    return str(value)


# A person's tools (wire send/dump) without a board configuration stay on this host.
LOOPBACK = "127.0.0.1"


@dataclass(frozen=True, slots=True)
class WireSettings:
    transport: str = setting("raw", choices=("raw", "udp"))
    iface: str = "eth0"
    ethertype: int = setting(ETHERTYPE_FOOSBALL, low=0x0600, high=0xFFFF)
    mac_destination: str = setting(BROADCAST, convert=_mac)
    udp_destination: str = setting(DEFAULT_GROUP, convert=_ipv4)
    udp_port: int = setting(DEFAULT_PORT, low=1, high=65535)
    # the interface (by its address) the UDP transport joins the group on and sends from;
    # 0.0.0.0: the default route's
    udp_iface_address: str = setting("0.0.0.0", convert=_ipv4)
    key_file: str = "/data/foosball/wire.key"
    max_age_s: float = seconds(0.5, high=10.0)

    def __post_init__(self) -> None:
        if self.transport == "raw" and not self.iface.strip():
            raise SettingError('[wire] iface: empty; the raw transport needs the LAN '
                               'interface (e.g. "lan0")')

    @classmethod
    def from_section(cls, section: dict[str, Any]) -> WireSettings:
        return parse(cls, section, "[wire]")  # type: ignore[no-any-return]

    def transport_options(self) -> dict[str, Any]:
        if self.transport == "raw":
            return {"iface": self.iface, "ethertype": self.ethertype,
                    "destination": self.mac_destination}
        if self.transport == "udp":
            return {"destination": self.udp_destination, "port": self.udp_port,
                    "iface_address": self.udp_iface_address}
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
