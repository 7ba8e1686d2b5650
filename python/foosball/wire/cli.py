"""`foosball wire ...`: see and speak the agents' protocol from a shell on the rig.

    foosball wire keygen /data/foosball/wire.key
    foosball wire send GameControl command=PAUSE --iface eth0
    foosball wire dump --iface eth0 --json --count 10
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from foosball.files import load_file, write_atomically
from foosball.schema import SettingError
from foosball.wire import catalogue
from foosball.wire.catalogue import Agent, SchemaError
from foosball.wire.codec import KEY_LENGTH, Drop, WireCodec, load_key, new_key
from foosball.wire.settings import LOOPBACK, WireSettings
from foosball.wire.transports import TransportError, open_transport


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("wire", help="send, dump and key the agents' messages")
    sub = parser.add_subparsers(dest="wire_command", required=True)

    keygen = sub.add_parser("keygen", help="write a new installation key (atomically)")
    keygen.add_argument("file")
    keygen.add_argument("--force", action="store_true", help="replace an existing key")
    keygen.set_defaults(func=_keygen)

    send = sub.add_parser("send", help="send one message")
    send.add_argument("type", choices=sorted(catalogue.BY_NAME), metavar="TYPE",
                      help="message type: " + ", ".join(sorted(catalogue.BY_NAME)))
    send.add_argument("fields", nargs="*", metavar="NAME=VALUE",
                      help="field values (JSON literals; enums by name)")
    send.add_argument("--json", dest="json_fields", help="all fields as one JSON object")
    send.add_argument("--sender", default="TOOL", choices=[a.name for a in Agent])
    send.add_argument("--repeat", type=int, default=1, help="send this many times")
    send.add_argument("--interval", type=float, default=0.0, help="seconds between repeats")
    _add_link_options(send)
    send.set_defaults(func=_send)

    dump = sub.add_parser("dump", help="print every message received, and every drop")
    dump.add_argument("--count", type=int, default=0, help="stop after N messages (0 = never)")
    dump.add_argument("--timeout", type=float, default=0.0,
                      help="stop after this many seconds (0 = never)")
    dump.add_argument("--json", action="store_true", help="one JSON object per line")
    _add_link_options(dump)
    dump.set_defaults(func=_dump)


def _add_link_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", help="board configuration file (its [wire] section)")
    parser.add_argument("--iface", help="network interface (raw transport)")
    parser.add_argument("--transport", choices=["raw", "udp"])
    parser.add_argument("--udp-port", type=int)
    parser.add_argument("--udp-destination", help="multicast group, broadcast or peer address")
    parser.add_argument("--udp-iface-address",
                        help="the interface's address for UDP (default without --config: "
                             f"{LOOPBACK}, this host only)")
    parser.add_argument("--key-file")
    parser.add_argument("--max-age", type=float, help="drop messages older than this (s)")


def _settings(args: argparse.Namespace) -> WireSettings:
    """The board's [wire] section with --config; without it a developer's tool stays on
    this host: UDP on loopback, unless --iface (raw Ethernet there) or --transport says
    otherwise."""
    section: dict[str, Any] = {}
    if args.config:  # read as the board loader reads it: every error names the file
        section = load_file(args.config, lambda data: dict(data.get("wire", {})),
                            SettingError, kind="TOML")
    elif args.iface is None and args.transport in (None, "udp"):
        section = {"transport": "udp", "udp_iface_address": LOOPBACK}
    overrides = {
        "iface": args.iface,
        "transport": args.transport,
        "udp_port": args.udp_port,
        "udp_destination": args.udp_destination,
        "udp_iface_address": args.udp_iface_address,
        "key_file": args.key_file,
        "max_age_s": args.max_age,
    }
    section.update({k: v for k, v in overrides.items() if v is not None})
    try:
        return WireSettings.from_section(section)
    except SettingError as exc:  # "[wire] key: why", and the file it is in
        raise SettingError(f"{args.config}: {exc}" if args.config else str(exc)) from exc


def _open(args: argparse.Namespace, sender: Agent) -> tuple[WireSettings, WireCodec, Any]:
    settings = _settings(args)
    codec = WireCodec(load_key(settings.key_file), sender, max_age_s=settings.max_age_s)
    transport = open_transport(settings.transport, **settings.transport_options())
    return settings, codec, transport


def _keygen(args: argparse.Namespace) -> int:
    path = Path(args.file)
    if path.exists() and not args.force:
        print(f"error: {path} exists; use --force to replace it", file=sys.stderr)
        return 1
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomically(path, (new_key() + "\n").encode(), mode=0o600)
    print(f"wrote a new {KEY_LENGTH}-byte key to {path}")
    return 0


def _parse_fields(args: argparse.Namespace) -> dict[str, Any]:
    values: dict[str, Any] = json.loads(args.json_fields) if args.json_fields else {}
    for item in args.fields:
        name, sep, raw = item.partition("=")
        if not sep:
            raise SchemaError(f"expected NAME=VALUE, got {item!r}")
        try:
            values[name] = json.loads(raw)
        except json.JSONDecodeError:
            values[name] = raw  # bare words: enum names, text
    return values


def _send(args: argparse.Namespace) -> int:
    try:
        message = catalogue.from_json(catalogue.BY_NAME[args.type], _parse_fields(args))
        catalogue.check_sender(message, Agent[args.sender])  # receivers would drop it
        _, codec, transport = _open(args, Agent[args.sender])
    except (SchemaError, ValueError, OSError, TransportError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    with transport:
        for i in range(args.repeat):
            if i and args.interval:
                time.sleep(args.interval)
            transport.send(codec.encode(message))
    return 0


def _dump(args: argparse.Namespace) -> int:
    try:
        _, codec, transport = _open(args, Agent.TOOL)
    except (ValueError, OSError, TransportError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    deadline = time.monotonic() + args.timeout if args.timeout else None
    shown = 0
    try:
        with transport:
            while not args.count or shown < args.count:
                wait = 0.2 if deadline is None else deadline - time.monotonic()
                if wait <= 0:
                    break
                frame = transport.recv(min(wait, 0.2))
                if frame is None:
                    continue
                result = codec.decode(frame)  # never raises: a bad frame is a counted Drop
                _print(result, args.json)
                if not isinstance(result, Drop):
                    shown += 1
    except KeyboardInterrupt:
        pass  # the usual end of an endless dump: the summary follows
    drops = ", ".join(f"{n} {reason}" for reason, n in sorted(codec.drops.items()))
    print(f"{codec.accepted} accepted, {codec.drops.total()} dropped"
          + (f" ({drops})" if drops else ""), file=sys.stderr)
    return 0


def _print(result: Any, as_json: bool) -> None:
    if isinstance(result, Drop):
        record: dict[str, Any] = {"drop": result.reason, "detail": result.detail}
        if result.sender is not None:
            record["sender"] = result.sender.name
    else:
        record = {
            "type": type(result.message).__name__,
            "sender": result.sender.name,
            "seq": result.seq,
            "timestamp": result.timestamp,
            "fields": catalogue.to_json(result.message),
        }
    # ASCII only, escapes shown as escapes: a peer's text can neither crash a terminal whose
    # encoding lacks its characters nor send control sequences to it.
    if as_json:
        line = json.dumps(record)  # ensure_ascii: every non-ASCII or control character escaped
    elif "drop" in record:
        sender = f" from {record['sender']}" if "sender" in record else ""
        line = f"DROP {record['drop']}{sender}: {ascii(record['detail'])[1:-1]}"
    else:
        line = (f"{record['type']} from {record['sender']} #{record['seq']}: "
                f"{record['fields']!a}")
    print(line, flush=True)
