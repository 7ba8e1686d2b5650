SUMMARY = "Cython wrapper for the Simple Open EtherCAT Master (SOEM)"
DESCRIPTION = "pysoem lets Python programs act as an EtherCAT master. The sdist \
bundles the SOEM C sources and links them into the extension, so this one recipe \
also provides SOEM; no separate soem recipe is needed."
HOMEPAGE = "https://github.com/bnjmnp/pysoem"
SECTION = "devel/python"
# The wrapper is MIT. The bundled SOEM is "GPL-2.0 with exceptions" (its
# headers say so; the sdist leaves SOEM's LICENSE out). The exception only
# widens what linking programs may do, so declaring GPL-2.0-only for the
# binary is the conservative reading for licence manifests and compliance.
LICENSE = "MIT & GPL-2.0-only"
LIC_FILES_CHKSUM = " \
    file://LICENSE;md5=48183edd2ac7508ba96b0512cb867541 \
    file://soem/soem/ethercatmain.c;beginline=1;endline=4;md5=c57f9b32b0c13a25a422d039730de622 \
"

SRC_URI[sha256sum] = "4be98d8531e492f2ee5d21f6ef51e51493a10ee1322ed22e909c91a8bcfff950"

inherit pypi python_setuptools_build_meta

# pyproject.toml asks for Cython at build time; scarthgap has no cython class.
DEPENDS += "python3-cython-native"

RDEPENDS:${PN} += "python3-ctypes python3-logging"
