"""Two processes in two network namespaces joined by veth: messages cross a real link."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from foosball.wire.codec import new_key
from tests.conftest import needs_root_netns
from tests.netns import veth_link

pytestmark = needs_root_netns()
FOOSBALL = [sys.executable, "-m", "foosball.cli"]


@pytest.mark.parametrize("transport", ["raw", "udp"])
def test_messages_sent_in_one_namespace_arrive_decoded_in_the_other(tmp_path, transport):
    key_file = tmp_path / "wire.key"
    key_file.write_text(new_key())
    wrong_key = tmp_path / "wrong.key"
    wrong_key.write_text(new_key())
    with veth_link(transport[0]) as link:
        common = ["--transport", transport, "--key-file"]
        receiver = subprocess.Popen(
            link.exec_in(link.ns_b, *FOOSBALL, "wire", "dump", "--iface", link.iface_b,
                         *common, str(key_file), "--json", "--count", "3", "--timeout", "30"),
            stdout=subprocess.PIPE, text=True,
        )
        send = [*FOOSBALL, "wire", "send", "--iface", link.iface_a, *common]
        # Senders repeat until the receiver (which may still be starting) has seen enough.
        intruder = subprocess.Popen(link.exec_in(
            link.ns_a, *send, str(wrong_key), "GameControl", "command=STOP",
            "--repeat", "200", "--interval", "0.05"))
        sender = subprocess.Popen(link.exec_in(
            link.ns_a, *send, str(key_file), "GameControl", "command=START",
            "--repeat", "200", "--interval", "0.05"))
        try:
            out, _ = receiver.communicate(timeout=60)
        finally:
            for process in (sender, intruder):
                process.kill()
                process.wait()
    records = [json.loads(line) for line in out.splitlines()]
    accepted = [r for r in records if "type" in r]
    assert len(accepted) == 3
    for record in accepted:
        assert record["type"] == "GameControl"
        assert record["sender"] == "TOOL"
        assert record["fields"] == {"command": "START"}
    assert [r["seq"] for r in accepted] == sorted(r["seq"] for r in accepted)
    assert all(r["drop"] == "mac" for r in records if "drop" in r)
