"""How long an OTA update takes on a simulated board (real rauc service, file slots, the
simulated U-Boot counter; tests/ota/rauc_env.py), from the laptop's OtaCommand:

- installed: the update agent has downloaded the bundle over HTTP, RAUC has written the
  other slot and made it primary;
- updated: rebooted into it, the board's agent heard steadily for `healthy_for_s`, marked
  good; rolled back: the same with a new image whose agent never starts.

    sudo .venv/bin/python benchmarks/ota_cycle.py --runs 3 --image-mib 8 --json
"""

from __future__ import annotations

import argparse
import json
import signal
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from foosball.ota.push import BundleServer
from foosball.wire.catalogue import Agent, OtaCommand
from tests.ota.conftest import StatusLog, lan_endpoint, make_lan
from tests.ota.rauc_env import (
    RebootWatcher,
    SimBoard,
    make_bundle,
    make_keys,
    rauc_skip_reason,
)


def one_cycle(root: Path, image_mib: int, agents_start: bool, healthy_for_s: float,
              health_deadline_s: float) -> dict[str, float]:
    lan = make_lan(root)  # its key 0600: the update agent refuses one others can read
    keys = make_keys(root / "keys", "benchmark")
    board = SimBoard(root / "pole", "pole", keys, lan, health_deadline_s=health_deadline_s,
                     healthy_for_s=healthy_for_s)
    board.flash("1.0")
    bundle = make_bundle(root / "b.raucb", keys, board.compatible, "2.0",
                         agents_start=agents_start, image_size=image_mib << 20)
    tool = lan_endpoint(lan, Agent.TOOL)
    statuses = StatusLog(tool)
    server = BundleServer({"pole": bundle}, "127.0.0.1")
    watcher = RebootWatcher([board])
    try:
        start = time.monotonic()
        board.power_on()
        statuses.wait("pole", lambda s: s.state == "idle", 60)
        booted = time.monotonic()
        tool.send(OtaCommand(board="pole", action="install", url=server.url("pole")))
        statuses.wait("pole", lambda s: s.state == "installed", 120)
        installed = time.monotonic()
        final = "updated" if agents_start else "rolled_back"
        statuses.wait("pole", lambda s: s.state == final, 180)
        done = time.monotonic()
    finally:
        watcher.stop()
        server.close()
        statuses.stop()
        tool.close()
        board.power_off()
    return {"first_boot_judged_s": booted - start, "install_s": installed - booted,
            final + "_s": done - booted}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--image-mib", type=int, default=4,
                        help="the slot image in the bundle")
    parser.add_argument("--healthy-for", type=float, default=1.0)
    parser.add_argument("--health-deadline", type=float, default=5.0)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    # A SIGTERM still powers the simulated board off (the finally blocks).
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    reason = rauc_skip_reason()
    if reason:
        print(f"skipped: {reason}", file=sys.stderr)
        return 2
    rows: dict[str, list[float]] = {}
    for run in range(args.runs):
        for agents_start in (True, False):
            with tempfile.TemporaryDirectory(prefix="ota-cycle-") as tmp:
                cycle = one_cycle(Path(tmp), args.image_mib, agents_start, args.healthy_for,
                                  args.health_deadline)
            for name, seconds in cycle.items():
                rows.setdefault(name, []).append(seconds)
            print(f"run {run + 1}: {cycle}", file=sys.stderr)
    summary = {name: {"median_s": round(statistics.median(v), 2), "max_s": round(max(v), 2),
                      "n": len(v)} for name, v in rows.items()}
    summary["settings"] = {"image_mib": args.image_mib, "healthy_for_s": args.healthy_for,
                           "health_deadline_s": args.health_deadline}
    print(json.dumps(summary, indent=2) if args.json else summary)
    return 0


if __name__ == "__main__":
    sys.exit(main())
