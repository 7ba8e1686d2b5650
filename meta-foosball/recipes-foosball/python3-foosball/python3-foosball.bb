SUMMARY = "The foosball opponent's agents, wire protocol and tools (Python)"
DESCRIPTION = "The Python distribution 'foosball', split by board role so each \
image carries only its agents and their dependencies."
HOMEPAGE = "https://github.com/foosball-opponent"
LICENSE = "MIT"
LIC_FILES_CHKSUM = "file://${COMMON_LICENSE_DIR}/MIT;md5=0835ade698e0bcf8506ecda2f7b4f302"

# The source is this very repository (meta-foosball sits beside python/), so the
# image built from a commit carries the Python code of that same commit: no
# SRCREV to bump, nothing to drift. bitbake checksums every file under python/,
# so a change there rebuilds this recipe and nothing else.
PV = "0.1.0"
SRC_URI = "file://${FOOSBALL_REPO_DIR}/python/"
S = "${WORKDIR}${FOOSBALL_REPO_DIR}/python"

inherit python_setuptools_build_meta

FOOSBALL_SITE = "${PYTHON_SITEPACKAGES_DIR}/foosball"

do_install:append() {
    # The table geometry every agent reads (board.toml: [table] geometry).
    install -d ${D}${sysconfdir}/foosball
    install -m 0644 ${S}/foosball/data/table.json ${D}${sysconfdir}/foosball/table.json
}

# Role packages first: FILES are matched in PACKAGES order, ${PN} (common) takes the rest.
PACKAGES =+ "${PN}-pole ${PN}-vision ${PN}-strategy ${PN}-panels ${PN}-sim"

def foosball_module_files(d, modules):
    site = d.getVar("FOOSBALL_SITE")
    files = []
    for module in modules.split():
        parent, _, name = module.rpartition("/")
        base = site + "/" + parent if parent else site
        files += [base + "/" + name, base + "/" + name + ".py", base + "/__pycache__/" + name + ".*"]
    return " ".join(files)

FILES:${PN}-pole = "${@foosball_module_files(d, 'ethercat agents/motor_driver agents/pole_driver agents/supervisory_panel')}"
FILES:${PN}-vision = "${@foosball_module_files(d, 'vision agents/ball_tracker')}"
FILES:${PN}-strategy = "${@foosball_module_files(d, 'strategy agents/strategy agents/game_panel agents/match_recorder')}"
FILES:${PN}-panels = "${@foosball_module_files(d, 'panels')}"
FILES:${PN}-sim = "${@foosball_module_files(d, 'sim')}"
FILES:${PN} += "${sysconfdir}/foosball"

# python3-jeepney: the update agent's D-Bus client to RAUC (foosball.ota, on every board).
RDEPENDS:${PN} = "python3-asyncio python3-cbor2 python3-core python3-jeepney python3-json \
    python3-logging python3-numpy python3-psutil python3-tomllib"
RDEPENDS:${PN}-panels = "${PN} python3-aiohttp"
RDEPENDS:${PN}-pole = "${PN} ${PN}-panels python3-pysoem"
RDEPENDS:${PN}-vision = "${PN} python3-opencv"
RDEPENDS:${PN}-strategy = "${PN} ${PN}-panels"
RDEPENDS:${PN}-sim = "${PN}"
