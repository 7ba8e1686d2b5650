SUMMARY = "PTP (linuxptp) on the agent LAN of a foosball board"
DESCRIPTION = "Runs ptp4l and phc2sys on lan0 with our configuration; the strategy \
board is the preferred grandmaster."
LICENSE = "MIT"
LIC_FILES_CHKSUM = "file://${COMMON_LICENSE_DIR}/MIT;md5=0835ade698e0bcf8506ecda2f7b4f302"

SRC_URI = "file://foosball-ptp4l.conf file://foosball.conf"
S = "${WORKDIR}"

PACKAGE_ARCH = "${MACHINE_ARCH}"
do_compile[noexec] = "1"

FOOSBALL_PTP_IFACE = "lan0"
# The strategy board sits in the middle of the data flow: make it grandmaster.
FOOSBALL_PTP_PRIORITY = ""
FOOSBALL_PTP_PRIORITY:board-strategy = "--priority1 64"

do_install() {
    install -d ${D}${sysconfdir}/linuxptp \
        ${D}${systemd_system_unitdir}/ptp4l@${FOOSBALL_PTP_IFACE}.service.d \
        ${D}${systemd_system_unitdir}/multi-user.target.wants
    install -m 0644 ${S}/foosball-ptp4l.conf ${D}${sysconfdir}/linuxptp/
    sed -e 's|@@PRIORITY@@|${FOOSBALL_PTP_PRIORITY}|' ${S}/foosball.conf \
        > ${D}${systemd_system_unitdir}/ptp4l@${FOOSBALL_PTP_IFACE}.service.d/foosball.conf
    ln -s ../ptp4l@.service ${D}${systemd_system_unitdir}/multi-user.target.wants/ptp4l@${FOOSBALL_PTP_IFACE}.service
    # phc2sys steers the system clock from the NIC's PTP clock, so agents'
    # capture times compare across boards.
    ln -s ../phc2sys@.service ${D}${systemd_system_unitdir}/multi-user.target.wants/phc2sys@${FOOSBALL_PTP_IFACE}.service
}

FILES:${PN} += "${systemd_system_unitdir}"
RDEPENDS:${PN} = "linuxptp"
