"""Board-level plumbing every agent shares: the board's health, systemd's notify/watchdog
protocol, the stop signal, rate-limited logs. The FAULT latch, heartbeats and deadlines are
foosball.runtime's."""
