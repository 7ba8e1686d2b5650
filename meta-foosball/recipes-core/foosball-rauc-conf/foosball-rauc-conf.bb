SUMMARY = "RAUC system.conf, keyring and U-Boot env location of the foosball boards"
DESCRIPTION = "Takes image-config/<board>/system.conf, fills in the machine and \
partition names, and installs the CA chosen by FOOSBALL_RAUC_KEYS as keyring."
LICENSE = "MIT"
LIC_FILES_CHKSUM = "file://${COMMON_LICENSE_DIR}/MIT;md5=0835ade698e0bcf8506ecda2f7b4f302"

inherit foosball_rauc_keys

FILESEXTRAPATHS:prepend := "${FOOSBALL_IMAGE_CONFIG_DIR}/${FOOSBALL_BOARD}:"
SRC_URI = "file://system.conf"
# Where Linux finds U-Boot's environment, for boards whose BSP does not install it
# (meta-rockchip writes one for the vision board).
SRC_URI:append:board-pole = " file://fw_env.config"
SRC_URI:append:board-strategy = " file://fw_env.config"
S = "${WORKDIR}"

INHIBIT_DEFAULT_DEPS = "1"
PACKAGE_ARCH = "${MACHINE_ARCH}"
RPROVIDES:${PN} += "virtual-rauc-conf"

do_compile[noexec] = "1"
do_install[file-checksums] += "${FOOSBALL_RAUC_KEY_SOURCE}/ca.cert.pem:False"
do_install[prefuncs] += "foosball_check_rauc_keyring"

do_install() {
    install -d ${D}${sysconfdir}/rauc
    sed -e 's|@@MACHINE@@|${MACHINE}|' \
        -e 's|@@PART_ROOTFS_A@@|${FOOSBALL_PART_ROOTFS_A}|' \
        -e 's|@@PART_ROOTFS_B@@|${FOOSBALL_PART_ROOTFS_B}|' \
        ${S}/system.conf > ${D}${sysconfdir}/rauc/system.conf
    if grep -q '@@' ${D}${sysconfdir}/rauc/system.conf; then
        bbfatal "system.conf of board ${FOOSBALL_BOARD} has a placeholder this recipe does not fill"
    fi
    install -m 0644 ${FOOSBALL_RAUC_KEY_SOURCE}/ca.cert.pem ${D}${sysconfdir}/rauc/ca.cert.pem
    if [ -e ${S}/fw_env.config ]; then
        install -m 0644 ${S}/fw_env.config ${D}${sysconfdir}/fw_env.config
    fi
}
