SUMMARY = "Kiosk browser showing the board's panel on its display"
DESCRIPTION = "cog (WPE WebKit) on DRM, pointed at the panel the board's agents \
serve: the supervisory panel on the pole board, the game panel on the strategy board."
LICENSE = "MIT"
LIC_FILES_CHKSUM = "file://${COMMON_LICENSE_DIR}/MIT;md5=0835ade698e0bcf8506ecda2f7b4f302"

SRC_URI = "file://foosball-kiosk.service"
S = "${WORKDIR}"

inherit systemd

PACKAGE_ARCH = "${MACHINE_ARCH}"
do_compile[noexec] = "1"

# The panels' ports are fixed by the Python package: 8080 game/strategy, 8081 supervisory/pole.
FOOSBALL_KIOSK_URL ?= "http://localhost:8080/"
FOOSBALL_KIOSK_URL:board-pole ?= "http://localhost:8081/"

SYSTEMD_SERVICE:${PN} = "foosball-kiosk.service"

do_install() {
    install -d ${D}${systemd_system_unitdir}
    sed -e 's|@@URL@@|${FOOSBALL_KIOSK_URL}|' ${S}/foosball-kiosk.service \
        > ${D}${systemd_system_unitdir}/foosball-kiosk.service
}

RDEPENDS:${PN} = "cog foosball-base wpewebkit"
