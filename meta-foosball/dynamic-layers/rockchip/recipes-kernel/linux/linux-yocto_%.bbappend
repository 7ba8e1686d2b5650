# meta-rockchip lists its machines one by one; without this the Rock Pi N10 has
# no kernel provider.
COMPATIBLE_MACHINE:rock-pi-n10 = "rock-pi-n10"

# RAUC's verity bundles: the fragment the ST kernels take too (linux-yocto merges a
# .cfg in SRC_URI). meta-rauc adds its own rauc.cfg with the same options here.
FILESEXTRAPATHS:prepend:rock-pi-n10 := "${FOOSBALL_KERNEL_FRAGMENT_DIR}:"
SRC_URI:append:rock-pi-n10 = " file://foosball-rauc-verity.cfg"
