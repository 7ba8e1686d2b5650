"""Safety plumbing shared by every agent: board health, heartbeats and their deadlines,
and systemd's notify/watchdog protocol."""
