"""`foosball wire dump` facing hostile peers: it prints every frame, accepted or dropped,
counts the drops, and nothing a peer sends stops it or reaches the terminal raw."""

import argparse
import json
import socket

from foosball.wire import cli
from foosball.wire.catalogue import Agent, Alarm, AlarmCode, GameCommand, GameControl
from foosball.wire.codec import WireCodec
from foosball.wire.transports.memory import MemoryHub, MemoryTransport
from tests.wire.hostile import KEY, fixed_clock, heartbeat_with_a_huge_cpu_load, valid_frame


def peer(agent: Agent) -> WireCodec:
    return WireCodec(KEY, agent, clock=fixed_clock)


# Dropped (schema: the frame; malformed; sender), then two accepted.
RAW_TEXT = "\x1b[2J\x07 snow \u2603 caf\xe9"
FRAMES = [
    heartbeat_with_a_huge_cpu_load(),
    b"\x00\x05hello",
    valid_frame(peer(Agent.TOOL)),  # TOOL may not send BallState
    peer(Agent.POLE_DRIVER).encode(Alarm(source=Agent.POLE_DRIVER, code=AlarmCode.WATCHDOG,
                                         text=RAW_TEXT, latched=False, axis=-1)),
    peer(Agent.TOOL).encode(GameControl(command=GameCommand.STOP)),
]


def run(monkeypatch, *argv: str) -> int:
    parser = argparse.ArgumentParser()
    cli.register(parser.add_subparsers())
    args = parser.parse_args(["wire", *argv])
    return args.func(args)  # type: ignore[no-any-return]


def dump(monkeypatch, capsys, *flags: str) -> tuple[list[str], str]:
    hub = MemoryHub()
    listener, sender = MemoryTransport(hub), MemoryTransport(hub)
    receiver = WireCodec(KEY, Agent.TOOL, clock=fixed_clock)
    monkeypatch.setattr(cli, "_open", lambda args, agent: (None, receiver, listener))
    for frame in FRAMES:
        sender.send(frame)
    assert run(monkeypatch, "dump", "--count", "2", "--timeout", "10", *flags) == 0
    out, err = capsys.readouterr()
    assert out.isascii()  # nothing raw from a peer: no escape, no bell, no UTF-8
    return out.splitlines(), err


def test_dump_prints_drops_and_messages_and_counts_the_drops(monkeypatch, capsys):
    lines, err = dump(monkeypatch, capsys)
    assert len(lines) == len(FRAMES)
    assert lines[0].startswith("DROP schema from POLE_DRIVER: cpu_load: an integer of 1101 bits")
    assert lines[1].startswith("DROP malformed: ")
    assert lines[2] == "DROP sender from TOOL: TOOL may not send BallState"
    assert lines[3].startswith("Alarm from POLE_DRIVER #1: ") and "\\x1b[2J" in lines[3]
    assert lines[4] == "GameControl from TOOL #1: {'command': 'STOP'}"
    assert err == "2 accepted, 3 dropped (1 malformed, 1 schema, 1 sender)\n"


def test_dump_as_json_keeps_one_parseable_ascii_object_per_frame(monkeypatch, capsys):
    lines, _ = dump(monkeypatch, capsys, "--json")
    records = [json.loads(line) for line in lines]
    assert [r.get("drop") for r in records] == ["schema", "malformed", "sender", None, None]
    assert records[0]["sender"] == "POLE_DRIVER" and "sender" not in records[1]
    assert records[3]["fields"]["text"] == RAW_TEXT


def test_send_refuses_what_receivers_would_drop_as_from_the_wrong_sender(monkeypatch, capsys):
    assert run(monkeypatch, "send", "BallState", "capture_time=1", "frame=1", "x=0", "y=0",
               "vx=0", "vy=0", "covariance=[0,0,0,0]", "status=DETECTED", "--sender",
               "TOOL") == 1
    assert capsys.readouterr().err == "error: TOOL may not send BallState\n"


def _link_settings(*argv: str):  # type: ignore[no-untyped-def]
    parser = argparse.ArgumentParser()
    cli.register(parser.add_subparsers())
    return cli._settings(parser.parse_args(["wire", "send", "GameControl", *argv]))


def test_without_a_board_configuration_the_tools_stay_on_loopback() -> None:
    settings = _link_settings()
    assert (settings.transport, settings.udp_iface_address) == ("udp", "127.0.0.1")
    transport = cli.open_transport(settings.transport, **settings.transport_options())
    try:  # the socket sends its multicast out of lo, not the default route's interface
        chosen = transport._sock.getsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_IF, 4)
        assert socket.inet_ntoa(chosen) == "127.0.0.1"
    finally:
        transport.close()
    assert _link_settings("--iface", "eth0").transport == "raw"  # told otherwise
    assert _link_settings("--udp-iface-address", "192.0.2.7").udp_iface_address == "192.0.2.7"


def test_a_wrong_board_file_is_named_with_its_section_and_key(tmp_path, capsys) -> None:
    """--config is read as the board loader reads it: the error names the file, the
    section and the key, as `foosball agent check` would."""
    board = tmp_path / "board.toml"
    board.write_text('[wire]\ntransport = "carrier-pigeon"\n')
    assert run(None, "dump", "--config", str(board), "--count", "1") == 1
    err = capsys.readouterr().err
    assert f"{board}: [wire] transport" in err, err
    board.write_text("[wire\n")
    assert run(None, "dump", "--config", str(board), "--count", "1") == 1
    assert f"{board}: not TOML" in capsys.readouterr().err
    assert run(None, "dump", "--config", str(tmp_path / "none.toml"), "--count", "1") == 1
    assert f"{tmp_path / 'none.toml'}: cannot read" in capsys.readouterr().err
