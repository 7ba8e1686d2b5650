# Commands the RAUC boot script needs (boot counting with setexpr, slot lookup
# by partition name); only for our vision board.
FILESEXTRAPATHS:prepend:rock-pi-n10 := "${THISDIR}/files:"
SRC_URI:append:rock-pi-n10 = " file://foosball-boot-count.cfg"
