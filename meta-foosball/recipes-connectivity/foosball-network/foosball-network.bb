SUMMARY = "systemd-networkd units for the agent LAN (lan0) and the EtherCAT port (ecat0)"
DESCRIPTION = "The .link files in image-config/<board>/ give the board's ports \
fixed names, so board.toml, the .network units and ptp4l all say lan0/ecat0."
LICENSE = "MIT"
LIC_FILES_CHKSUM = "file://${COMMON_LICENSE_DIR}/MIT;md5=0835ade698e0bcf8506ecda2f7b4f302"

FILESEXTRAPATHS:prepend := "${FOOSBALL_IMAGE_CONFIG_DIR}/${FOOSBALL_BOARD}:"
SRC_URI = "file://10-lan0.link file://20-lan0.network"
# Only the pole board owns an EtherCAT segment.
SRC_URI:append:board-pole = " file://10-ecat0.link file://20-ecat0.network"
S = "${WORKDIR}"

PACKAGE_ARCH = "${MACHINE_ARCH}"
do_compile[noexec] = "1"

do_install() {
    install -d ${D}${sysconfdir}/systemd/network
    for unit in ${S}/*.link ${S}/*.network; do
        install -m 0644 $unit ${D}${sysconfdir}/systemd/network/
    done
}

RDEPENDS:${PN} = "systemd"
