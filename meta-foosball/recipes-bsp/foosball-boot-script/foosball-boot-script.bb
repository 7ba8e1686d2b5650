SUMMARY = "U-Boot script choosing the RAUC slot (A/B) with boot counting"
DESCRIPTION = "Compiled to boot.scr and placed in the boot partition. The slot \
names come from foosball-partitions.inc, the kernel file from KERNEL_IMAGETYPE."
LICENSE = "MIT"
LIC_FILES_CHKSUM = "file://${COMMON_LICENSE_DIR}/MIT;md5=0835ade698e0bcf8506ecda2f7b4f302"

DEPENDS = "u-boot-mkimage-native"
INHIBIT_DEFAULT_DEPS = "1"

SRC_URI = "file://boot.cmd.in"
S = "${WORKDIR}"
PACKAGE_ARCH = "${MACHINE_ARCH}"

# kernel-arch: UBOOT_ARCH for mkimage (empty without it: "mkimage -A " fails).
inherit deploy kernel-arch nopackages

FOOSBALL_KERNEL_ARGS ?= "rootwait ro rootfstype=ext4 console=${FOOSBALL_CONSOLE}"
# The machine's first serial console as "tty,baud". Not KERNEL_CONSOLE: OE-core's
# default-distrovars.inc sets that to ttyS0 first, which is no console of these boards.
FOOSBALL_CONSOLE = "${@d.getVar('SERIAL_CONSOLES').split()[0].split(';')[1]},${@d.getVar('SERIAL_CONSOLES').split()[0].split(';')[0]}"
# The device tree of this board's machine, as the kernel installs it in /boot. Not
# "the first KERNEL_DEVICETREE": X-LINUX-RT's stm32mp1-rt lists every -rt board, with
# stm32mp135f-dk-rt first, so the pole board would boot the STM32MP135 tree.
FOOSBALL_FDT = "${@foosball_fdt(d)}"
# A fitImage carries its device tree; other images load FOOSBALL_FDT from the slot.
# Built in python functions: U-Boot's own ${kernel_addr_r} inside a ${@...} expression
# stops bitbake's expansion (the whole value stays unexpanded, and do_compile would hand
# "${@..." to the shell); in a def body bitbake expands nothing.
FOOSBALL_LOAD_FDT = "${@foosball_load_fdt(d)}"
FOOSBALL_BOOT_CMD = "${@foosball_boot_cmd(d)}"

def foosball_fdt(d):
    """FOOSBALL_ST_DT on the ST boards (their kas files name the board's tree); on other
    machines the one KERNEL_DEVICETREE entry. Stops the parse when the choice is not
    among the device trees the kernel installs, or when a machine lists several and
    names none."""
    installed = [os.path.basename(path) for path in (d.getVar("KERNEL_DEVICETREE") or "").split()]
    if d.getVar("KERNEL_IMAGETYPE") == "fitImage":
        return ""
    own = d.getVar("FOOSBALL_ST_DT")
    if own:
        fdt = own + ".dtb"
    elif len(installed) == 1:
        fdt = installed[0]
    else:
        bb.fatal("KERNEL_DEVICETREE of %s lists %d device trees (%s); set FOOSBALL_ST_DT to "
                 "the board's own" % (d.getVar("MACHINE"), len(installed), " ".join(installed)))
    if fdt not in installed:
        bb.fatal("the boot script would load %s, which KERNEL_DEVICETREE of %s does not "
                 "install (%s)" % (fdt, d.getVar("MACHINE"), " ".join(installed)))
    return fdt

def foosball_load_fdt(d):
    fdt = d.getVar("FOOSBALL_FDT")
    return "load ${devtype} ${devnum}:${rauc_partnum} ${fdt_addr_r} /boot/" + fdt if fdt else ""

def foosball_boot_cmd(d):
    commands = {
        "fitImage": "bootm ${kernel_addr_r}",
        "zImage": "bootz ${kernel_addr_r} - ${fdt_addr_r}",
        "uImage": "bootm ${kernel_addr_r} - ${fdt_addr_r}",
    }
    return commands.get(d.getVar("KERNEL_IMAGETYPE"), "booti ${kernel_addr_r} - ${fdt_addr_r}")

do_compile() {
    sed -e 's|@@PART_ROOTFS_A@@|${FOOSBALL_PART_ROOTFS_A}|' \
        -e 's|@@PART_ROOTFS_B@@|${FOOSBALL_PART_ROOTFS_B}|' \
        -e 's|@@KERNEL_ARGS@@|${FOOSBALL_KERNEL_ARGS}|' \
        -e 's|@@KERNEL_IMAGETYPE@@|${KERNEL_IMAGETYPE}|' \
        -e 's|@@LOAD_FDT@@|${FOOSBALL_LOAD_FDT}|' \
        -e 's|@@BOOT_CMD@@|${FOOSBALL_BOOT_CMD}|' \
        ${S}/boot.cmd.in > ${B}/boot.cmd
    mkimage -A ${UBOOT_ARCH} -T script -C none -n "foosball RAUC boot" -d ${B}/boot.cmd ${B}/boot.scr
}

do_deploy() {
    install -m 0644 ${B}/boot.scr ${DEPLOYDIR}/boot.scr
}
addtask deploy after do_compile before do_build
