SUMMARY = "systemd units and board configuration of the foosball agents"
DESCRIPTION = "Installs image-config/<board>/board.toml as /etc/foosball/board.toml \
and enables one foosball-agent@<name> unit per agent section found in it, so the \
board file alone says which agents a board runs."
LICENSE = "MIT"
LIC_FILES_CHKSUM = "file://${COMMON_LICENSE_DIR}/MIT;md5=0835ade698e0bcf8506ecda2f7b4f302"

FILESEXTRAPATHS:prepend := "${FOOSBALL_IMAGE_CONFIG_DIR}/${FOOSBALL_BOARD}:"
SRC_URI = " \
    file://board.toml \
    file://foosball-agent@.service \
    file://foosball.target \
    file://realtime.conf \
    file://update-agent.conf \
"
S = "${WORKDIR}"

inherit systemd python3native

PACKAGE_ARCH = "${MACHINE_ARCH}"
SYSTEMD_SERVICE:${PN} = "foosball.target"

# Sections of board.toml that are not agents.
FOOSBALL_NON_AGENT_SECTIONS = "wire table safety"
# agent:drop-in pairs: the EtherCAT master's real-time limits, the update agent's reboot.
FOOSBALL_AGENT_DROPINS = "motor_driver:realtime.conf update_agent:update-agent.conf"

do_install() {
    install -d ${D}${sysconfdir}/foosball ${D}${systemd_system_unitdir}/foosball.target.wants
    install -m 0644 ${S}/board.toml ${D}${sysconfdir}/foosball/board.toml
    install -m 0644 ${S}/foosball-agent@.service ${S}/foosball.target ${D}${systemd_system_unitdir}/
    agents=$(nativepython3 -c 'import sys, tomllib; print(" ".join(s for s in tomllib.load(open(sys.argv[1], "rb")) if s not in sys.argv[2:]))' \
        ${S}/board.toml ${FOOSBALL_NON_AGENT_SECTIONS})
    [ -n "$agents" ] || bbfatal "board.toml of ${FOOSBALL_BOARD} names no agent"
    for agent in $agents; do
        ln -s ../foosball-agent@.service ${D}${systemd_system_unitdir}/foosball.target.wants/foosball-agent@$agent.service
        for dropin in ${FOOSBALL_AGENT_DROPINS}; do
            if [ "${dropin%%:*}" = "$agent" ]; then
                install -d ${D}${systemd_system_unitdir}/foosball-agent@$agent.service.d
                install -m 0644 ${S}/${dropin#*:} ${D}${systemd_system_unitdir}/foosball-agent@$agent.service.d/
            fi
        done
    done
}

FILES:${PN} += "${systemd_system_unitdir}"
RDEPENDS:${PN} = "foosball-base python3-foosball"
