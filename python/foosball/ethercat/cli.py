"""`foosball ethercat ...`: run the drive emulator, scan a segment."""

from __future__ import annotations

import argparse
import dataclasses
import json
import logging
import sys

from foosball.ethercat import layout as L


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    group = subparsers.add_parser("ethercat", help="EtherCAT: drive emulator, bus scan")
    sub = group.add_subparsers(dest="ethercat_command", metavar="{emulate,scan}")

    emulate = sub.add_parser("emulate", help="emulate STEVAL-ETH001 drives on a raw interface")
    emulate.add_argument("--iface", required=True, help="interface (e.g. one end of a veth)")
    emulate.add_argument("--drives", type=int, default=8)
    emulate.add_argument("--geometry", help="table JSON (default: the packaged table)")
    emulate.add_argument("--start-fraction", type=float, default=0.5,
                         help="where each rod stands at power-up, 0 = on the switch, 1 = far end")
    emulate.add_argument("--alignment-time", type=float, default=0.2, help="seconds")
    emulate.add_argument("--foreign", type=int, action="append", default=[],
                         help="give slave POSITION (1-based) another identity (tests)")
    emulate.add_argument("--complete-access-quirk", action="store_true",
                         help="advertise Complete Access and answer it like the stack of the "
                              "facts' mapping pitfall (tests the master's defence)")
    emulate.add_argument("--watchdog-divider", type=int, default=L.WATCHDOG_DIVIDER,
                         help="reset value of the watchdog divider 0x0400 (another stack: 0)")
    emulate.add_argument("--default-mapping", choices=("layout", "other"), default="layout",
                         help="the drives' default PDO mapping: the layout's or another one")
    emulate.add_argument("--fixed-mapping", action="store_true",
                         help="the default PDO mapping is fixed (writes to 0x1C12/0x1C13/"
                              "0x1600/0x1A00 abort read-only), like drives without PDO config")
    emulate.add_argument("--ignore-quick-stop", action="store_true",
                         help="the drives ignore quick stop (stay in operation enabled until "
                              "voltage is disabled)")
    emulate.add_argument("--no-home-switch", action="store_true",
                         help="translation axes without a home switch (homing never ends)")
    emulate.add_argument("--dc", action="store_true",
                         help="drives run from distributed clocks: they reach SAFE-OP only "
                              "with SYNC0 active (AL code 0x0030 else)")
    emulate.add_argument("--plain-cia402", action="store_true",
                         help="standard CiA 402 drives: no alignment bits 14/15, aligned "
                              "when they follow the command value (bit 12)")
    emulate.add_argument("--control-socket", help="also take control commands on this UNIX socket")
    emulate.add_argument("--rt-priority", type=int, default=0, help="SCHED_FIFO priority (0: off)")
    emulate.add_argument("--cpu", type=int, help="run on this CPU only (its own core)")
    emulate.add_argument("--rod-poses", metavar="HOST:PORT",
                         help="send the robot rods' poses (JSON over UDP) to a simulator")
    emulate.set_defaults(func=_emulate)

    scan = sub.add_parser("scan", help="list the slaves found on an interface")
    scan.add_argument("--iface", required=True)
    scan.add_argument("--json", action="store_true", help="print JSON")
    scan.set_defaults(func=_scan)
    group.set_defaults(func=lambda _args: group.print_help() or 2)


def emulator_config_from_table(table: object, drives: int, start_fraction: float,
                               alignment_time_s: float,
                               foreign: tuple[int, ...] = ()) -> object:
    from foosball.drivetrain import translation_to_motor
    from foosball.ethercat.emulator import EmulatorConfig

    starts, travels = [], []
    for rod in table.robot_rods:  # type: ignore[attr-defined]
        span = translation_to_motor(rod, rod.travel_max)  # radians from the homing zero
        travels.append(span + 0.5)  # the springs stop the rod a little beyond its travel
        starts.append(max(0.05, min(1.0, start_fraction)) * span)
    return EmulatorConfig(drives=drives, start_above_switch=tuple(starts),
                          travel_above_switch=tuple(travels),
                          alignment_time_s=alignment_time_s, foreign_positions=foreign)


def _emulate(args: argparse.Namespace) -> int:
    from foosball.ethercat.emulator_process import serve
    from foosball.geometry import default_table, load_table

    logging.basicConfig(level=logging.INFO, stream=sys.stderr)
    table = load_table(args.geometry) if args.geometry else default_table()
    config = emulator_config_from_table(table, args.drives, args.start_fraction,
                                        args.alignment_time, tuple(args.foreign))
    config = dataclasses.replace(config, complete_access_quirk=args.complete_access_quirk,
                                 watchdog_divider=args.watchdog_divider,
                                 default_mapping=args.default_mapping,
                                 fixed_mapping=args.fixed_mapping,
                                 ignores_quick_stop=args.ignore_quick_stop,
                                 home_switch=not args.no_home_switch,
                                 plain_cia402=args.plain_cia402, needs_dc=args.dc)
    make_listeners = None
    if args.rod_poses:
        from foosball.ethercat.coupling import RodPosePublisher

        host, _, port = args.rod_poses.rpartition(":")
        address = (host or "127.0.0.1", int(port))

        def make_listeners(drives):  # type: ignore[no-untyped-def]
            return [RodPosePublisher(table, drives, address)]

    return serve(args.iface, config, control_socket=args.control_socket,  # type: ignore[arg-type]
                 rt_priority=args.rt_priority, make_listeners=make_listeners, cpu=args.cpu)


def _scan(args: argparse.Namespace) -> int:
    from foosball.ethercat.bus import BusConfig, BusConfigurationError, open_bus

    try:
        bus = open_bus(BusConfig(backend="pysoem", iface=args.iface, discovery_attempts=5))
    except BusConfigurationError as exc:
        print(f"foosball ethercat scan: {exc}", file=sys.stderr)
        return 1
    try:
        slaves = bus.scan()
        diagnose = getattr(bus, "diagnose", None)
        if slaves and diagnose is not None:
            slaves = diagnose()
    finally:
        bus.close()
    rows = [{"position": s.position, "name": s.name,
             "vendor_id": f"0x{s.identity.vendor_id:08x}",
             "product_code": f"0x{s.identity.product_code:08x}",
             "revision": f"0x{s.identity.revision:08x}",
             "expected": s.identity == L.EXPECTED_IDENTITY,
             "al_state": s.al_state,
             "al_status_code": f"0x{s.al_status_code:04x}",
             "al_status_text": s.al_status_text,
             "rx_errors": [list(p) for p in s.rx_errors],
             "lost_links": list(s.lost_links)} for s in slaves]
    if args.json:
        print(json.dumps({"iface": args.iface, "slaves": rows}, indent=2))
    else:
        for r in rows:
            mark = "" if r["expected"] else "  <- not an expected drive"
            print(f"{r['position']:2d}  {r['name']:<20} {r['vendor_id']} {r['product_code']} "
                  f"{r['revision']}{mark}")
            print(f"    AL state 0x{r['al_state']:02x}, AL status {r['al_status_code']} "
                  f"({r['al_status_text']}); RX errors (invalid frame, physical) per port "
                  f"{r['rx_errors']}; lost links {r['lost_links']}")
        print(f"{len(rows)} slave(s) on {args.iface}")
    return 0 if rows else 1
