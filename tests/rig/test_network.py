"""The rig's cable faults: a link pulled and plugged in this process, timed where it happens
(the fault suites measure detection from that moment)."""

from __future__ import annotations

import subprocess
import time

import pytest

from foosball.rig.network import set_link
from tests.conftest import needs_root_netns

pytestmark = needs_root_netns()


@pytest.fixture
def namespace():
    name = f"fb-link-{time.monotonic_ns()}"
    subprocess.run(["ip", "netns", "add", name], check=True)
    try:
        subprocess.run(["ip", "-n", name, "link", "add", "a0", "type", "veth", "peer", "name",
                        "a1"], check=True)
        subprocess.run(["ip", "-n", name, "link", "set", "a0", "up"], check=True)
        yield name
    finally:
        subprocess.run(["ip", "netns", "del", name], check=True)


def link_up(namespace: str, iface: str) -> bool:
    shown = subprocess.run(["ip", "-n", namespace, "-o", "link", "show", iface],
                           capture_output=True, text=True, check=True).stdout
    return ",UP" in shown or "<UP" in shown


def test_a_link_pulled_and_plugged_says_when(namespace):
    before = time.monotonic()
    pulled = set_link(namespace, "a0", False)
    assert before <= pulled <= time.monotonic()
    assert not link_up(namespace, "a0")
    set_link(namespace, "a0", True)
    assert link_up(namespace, "a0")


def test_a_link_that_does_not_exist_is_an_error(namespace):
    with pytest.raises(OSError):
        set_link(namespace, "nope0", False)
