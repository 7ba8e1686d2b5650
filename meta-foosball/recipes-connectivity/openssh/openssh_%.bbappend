# Foosball distro only: host keys and authorized keys live on /data (the root
# filesystem is read-only), and only keys log in. -dev images add password-less
# root through IMAGE_FEATURES instead (see foosball-image.inc).
FILESEXTRAPATHS:prepend:foosball := "${THISDIR}/files:"
SRC_URI:append:foosball = " file://50-foosball.conf"

do_install:append:foosball() {
    # Host keys generated once on first boot and kept on /data. The read-only
    # rootfs hook appends SYSCONFDIR=${SYSCONFDIR:-...}, which keeps this value.
    sed -i -e 's|^SYSCONFDIR=.*|SYSCONFDIR=/data/ssh|' ${D}${sysconfdir}/default/ssh
    install -d ${D}${sysconfdir}/ssh/sshd_config.d
    install -m 0644 ${WORKDIR}/50-foosball.conf ${D}${sysconfdir}/ssh/sshd_config.d/
}
