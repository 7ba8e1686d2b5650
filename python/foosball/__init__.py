"""Firmware of a robotic table-soccer opponent.

Three boards run six agents that talk in authenticated CBOR messages over raw Ethernet:
see docs/architecture.md for the boards, the agents and every message.
"""

__version__ = "0.1.0"
