# RAUC's verity bundles need dm-verity, squashfs and loop in the ST kernels. meta-rauc's
# fragment reaches linux-yocto only; ST's kernel merges KERNEL_CONFIG_FRAGMENTS
# (linux-stm32mp.inc: merge_config.sh), so the same file goes in that way.
FILESEXTRAPATHS:prepend:stm32mpcommon := "${FOOSBALL_KERNEL_FRAGMENT_DIR}:"
SRC_URI:append:stm32mpcommon = " file://foosball-rauc-verity.cfg;subdir=fragments/foosball"
KERNEL_CONFIG_FRAGMENTS:append:stm32mpcommon = " ${WORKDIR}/fragments/foosball/foosball-rauc-verity.cfg"
