# Stops the build at parse time when a foosball switch has a value we do not
# handle (see conf/distro/include/foosball-features.inc).
addhandler foosball_check_features
foosball_check_features[eventmask] = "bb.event.ConfigParsed"
python foosball_check_features() {
    d = e.data
    allowed = {
        "FOOSBALL_BOARD": ("pole", "vision", "strategy"),
        "FOOSBALL_RAUC_KEYS": ("dev", "release"),
        "FOOSBALL_KIOSK": ("0", "1"),
    }
    for name, values in allowed.items():
        value = d.getVar(name) or ""
        if value not in values:
            bb.fatal("%s = '%s' is not one of: %s" % (name, value, ", ".join(values)))
    if d.getVar("FOOSBALL_RAUC_KEYS") == "release":
        key_dir = d.getVar("FOOSBALL_RAUC_KEY_DIR") or ""
        if not os.path.isfile(os.path.join(key_dir, "ca.cert.pem")):
            bb.fatal("FOOSBALL_RAUC_KEYS = 'release' needs FOOSBALL_RAUC_KEY_DIR with ca.cert.pem (got '%s')" % key_dir)
    if not d.getVar("FOOSBALL_HW_WATCHDOG_SEC"):
        bb.fatal("FOOSBALL_HW_WATCHDOG_SEC must be a systemd time span such as 10s")
}
