"""`python -m foosball.panels token --key-file /data/foosball/wire.key`: print the
installation's panel token (what every control action on a panel page needs)."""

from __future__ import annotations

import argparse
import sys

from foosball.panels.server import panel_token
from foosball.wire.codec import load_key


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m foosball.panels")
    sub = parser.add_subparsers(dest="command", required=True)
    token = sub.add_parser("token", help="print the panel token made from the wire key")
    token.add_argument("--key-file", default="/data/foosball/wire.key")
    args = parser.parse_args(argv)
    try:
        key = load_key(args.key_file)
    except (OSError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(panel_token(key))
    return 0


if __name__ == "__main__":
    sys.exit(main())
