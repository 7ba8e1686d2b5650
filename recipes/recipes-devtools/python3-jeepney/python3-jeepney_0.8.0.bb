SUMMARY = "Low-level, pure Python D-Bus protocol wrapper"
DESCRIPTION = "jeepney speaks the D-Bus wire protocol itself, with no C library \
and no dependency outside the standard library. The update agent (foosball.ota) \
uses it to talk to RAUC's service on the system bus."
HOMEPAGE = "https://gitlab.com/takluyver/jeepney"
SECTION = "devel/python"
LICENSE = "MIT"
LIC_FILES_CHKSUM = "file://LICENSE;md5=aad69c93f605003e3342b174d9b0708c"

# 0.8.0, not 0.9.0: 0.9.0's pyproject.toml needs flit_core >= 3.11 and scarthgap
# ships python3-flit-core 3.9.0; 0.8.0 asks flit_core >= 2,< 4 (and is Debian 12's).
SRC_URI[sha256sum] = "5efe48d255973902f6badc3ce55e2aa6c5c3b3bc642059ef3a91247bcfcc5806"

inherit pypi python_flit_core

# Its imports, by OE-core's python3 package split (python3-manifest.json);
# xml for jeepney.bindings (introspection), threading for its queue.
RDEPENDS:${PN} += "python3-asyncio python3-core python3-io python3-logging \
    python3-threading python3-xml"
