SUMMARY = "Base files of the foosball distro: /data, watchdog, journal, service user"
DESCRIPTION = "Mounts the data partition on /data and lays it out, keeps the \
journal there, hands the hardware watchdog to systemd and creates the user the \
agents run as."
LICENSE = "MIT"
LIC_FILES_CHKSUM = "file://${COMMON_LICENSE_DIR}/MIT;md5=0835ade698e0bcf8506ecda2f7b4f302"

SRC_URI = " \
    file://10-foosball-watchdog.conf \
    file://10-foosball-journal.conf \
    file://data.mount \
    file://var-log-journal.mount \
    file://foosball-data.conf \
"
S = "${WORKDIR}"

inherit systemd useradd allarch

USERADD_PACKAGES = "${PN}"
# The agents run as this user; raw sockets and RT priority come from their units.
USERADD_PARAM:${PN} = "--system --home-dir /data/foosball --no-create-home --shell /sbin/nologin --user-group foosball"

SYSTEMD_SERVICE:${PN} = "data.mount var-log-journal.mount"

do_install() {
    install -d ${D}${systemd_system_unitdir} ${D}${sysconfdir}/systemd/system.conf.d \
        ${D}${sysconfdir}/systemd/journald.conf.d ${D}${nonarch_libdir}/tmpfiles.d ${D}/data
    sed -e 's|@@WATCHDOG_SEC@@|${FOOSBALL_HW_WATCHDOG_SEC}|' ${S}/10-foosball-watchdog.conf \
        > ${D}${sysconfdir}/systemd/system.conf.d/10-foosball-watchdog.conf
    install -m 0644 ${S}/10-foosball-journal.conf ${D}${sysconfdir}/systemd/journald.conf.d/
    sed -e 's|@@PART_DATA@@|${FOOSBALL_PART_DATA}|' ${S}/data.mount > ${D}${systemd_system_unitdir}/data.mount
    install -m 0644 ${S}/var-log-journal.mount ${D}${systemd_system_unitdir}/
    install -m 0644 ${S}/foosball-data.conf ${D}${nonarch_libdir}/tmpfiles.d/
}

FILES:${PN} += "/data ${nonarch_libdir}/tmpfiles.d"
