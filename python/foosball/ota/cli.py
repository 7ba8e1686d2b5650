"""`foosball ota ...`: update the boards over the agent LAN from a laptop.

    foosball ota push foosball-bundle-pole-*.raucb vision=v.raucb --boards pole,vision --staged
    foosball ota status
"""

from __future__ import annotations

import argparse
import sys

from foosball.ota.push import (
    BOARDS,
    PushError,
    assign_bundles,
    default_http_host,
    hear_statuses,
    push,
    status_table,
)
from foosball.wire.catalogue import Agent
from foosball.wire.cli import _add_link_options, _settings  # the same link options as `wire`
from foosball.wire.settings import open_endpoint
from foosball.wire.transports import TransportError


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("ota", help="update the boards over the LAN (RAUC)")
    sub = parser.add_subparsers(dest="ota_command", required=True)
    push_parser = sub.add_parser("push", help="install bundles on boards and follow them")
    push_parser.add_argument("bundles", nargs="+", metavar="BUNDLE",
                             help="a .raucb file with its board in its name, or BOARD=FILE")
    push_parser.add_argument("--boards", default=",".join(BOARDS),
                             help="boards to update, in this order (default: %(default)s)")
    push_parser.add_argument("--staged", action="store_true",
                             help="one board after another; stop at the first failure")
    push_parser.add_argument("--http-host",
                             help="this laptop's address as the boards reach it (default: "
                                  "the address of the LAN interface; loopback for UDP)")
    push_parser.add_argument("--http-port", type=int, default=0)
    push_parser.add_argument("--find-timeout", type=float, default=15.0,
                             help="seconds to find every board")
    push_parser.add_argument("--timeout", type=float, default=900.0,
                             help="seconds for each board's install, reboot and health check")
    _add_link_options(push_parser)
    push_parser.set_defaults(func=_push)
    status = sub.add_parser("status", help="what each board runs")
    status.add_argument("--wait", type=float, default=2.0, help="seconds to listen")
    _add_link_options(status)
    status.set_defaults(func=_status)


def _push(args: argparse.Namespace) -> int:
    boards = [b for b in args.boards.split(",") if b]
    try:
        bundles = assign_bundles(args.bundles, boards)
        settings = _settings(args)
        host = args.http_host or default_http_host(settings.transport, settings.iface)
        endpoint = open_endpoint(settings, Agent.TOOL)
    except (PushError, ValueError, OSError, TransportError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    try:
        ok = push(endpoint, bundles, boards, http_host=host, staged=args.staged,
                  http_port=args.http_port, find_timeout_s=args.find_timeout,
                  timeout_s=args.timeout)
    finally:
        endpoint.close()
    return 0 if ok else 1


def _status(args: argparse.Namespace) -> int:
    try:
        endpoint = open_endpoint(_settings(args), Agent.TOOL)
    except (ValueError, OSError, TransportError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    try:
        statuses = hear_statuses(endpoint, args.wait)
    finally:
        endpoint.close()
    if not statuses:
        print(f"no update agent heard within {args.wait:.0f} s")
        return 1
    print(status_table(statuses), end="")
    return 0
