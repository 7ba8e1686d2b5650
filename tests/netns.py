"""Throwaway network namespaces joined by a veth pair, for tests that cross a real link."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass


@dataclass(frozen=True)
class VethLink:
    ns_a: str
    ns_b: str
    iface_a: str
    iface_b: str
    ip_a: str
    ip_b: str

    def exec_in(self, ns: str, *command: str) -> list[str]:
        return ["ip", "netns", "exec", ns, *command]


def _ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True)


@contextmanager
def veth_link(tag: str, subnet: str = "10.231.0") -> Iterator[VethLink]:
    suffix = f"{tag}{os.getpid() % 100000}"
    link = VethLink(f"fb-{suffix}-a", f"fb-{suffix}-b", "veth-a", "veth-b",
                    f"{subnet}.1", f"{subnet}.2")
    _ip("netns", "add", link.ns_a)
    try:
        _ip("netns", "add", link.ns_b)
        _ip("link", "add", link.iface_a, "netns", link.ns_a, "type", "veth",
            "peer", "name", link.iface_b, "netns", link.ns_b)
        for ns, iface, address in ((link.ns_a, link.iface_a, link.ip_a),
                                   (link.ns_b, link.iface_b, link.ip_b)):
            _ip("-n", ns, "link", "set", "lo", "up")
            _ip("-n", ns, "link", "set", iface, "up")
            _ip("-n", ns, "addr", "add", f"{address}/24", "dev", iface)
            _ip("-n", ns, "route", "add", "224.0.0.0/4", "dev", iface)  # multicast goes here
        yield link
    finally:
        for ns in (link.ns_a, link.ns_b):
            subprocess.run(["ip", "netns", "del", ns], capture_output=True)
