SUMMARY = "DEVELOPMENT RAUC keys, generated at build time (never for release)"
DESCRIPTION = "An EC CA and a code-signing leaf made with openssl when the recipe \
first builds. They live in this build's sstate only, never in git, so no secret is \
shipped; an image built here accepts bundles built here. FOOSBALL_RAUC_KEYS = \
'release' replaces them with keys from FOOSBALL_RAUC_KEY_DIR."
LICENSE = "MIT"
LIC_FILES_CHKSUM = "file://${COMMON_LICENSE_DIR}/MIT;md5=0835ade698e0bcf8506ecda2f7b4f302"

DEPENDS = "openssl-native"
INHIBIT_DEFAULT_DEPS = "1"

# Nothing to fetch: the keys are made in do_compile.
SRC_URI = ""

inherit native

FOOSBALL_DEV_KEY_SUBJECT ?= "/O=Foosball opponent/OU=DEVELOPMENT ONLY - NOT FOR RELEASE"

do_compile() {
    cat > ${B}/codesign.ext <<EOC
basicConstraints=CA:FALSE
keyUsage=critical,digitalSignature
extendedKeyUsage=critical,codeSigning
EOC
    openssl ecparam -name prime256v1 -genkey -noout -out ${B}/ca.key.pem
    openssl req -x509 -new -key ${B}/ca.key.pem -days 3650 -sha256 \
        -subj "${FOOSBALL_DEV_KEY_SUBJECT}/CN=foosball DEV CA" -out ${B}/ca.cert.pem
    openssl ecparam -name prime256v1 -genkey -noout -out ${B}/signing.key.pem
    openssl req -new -key ${B}/signing.key.pem \
        -subj "${FOOSBALL_DEV_KEY_SUBJECT}/CN=foosball DEV bundle signer" -out ${B}/signing.csr
    openssl x509 -req -in ${B}/signing.csr -CA ${B}/ca.cert.pem -CAkey ${B}/ca.key.pem \
        -CAcreateserial -days 3650 -sha256 -extfile ${B}/codesign.ext -out ${B}/signing.cert.pem
}

do_install() {
    install -d ${D}${datadir}/foosball-rauc-dev-keys
    install -m 0644 ${B}/ca.cert.pem ${B}/signing.cert.pem -t ${D}${datadir}/foosball-rauc-dev-keys
    install -m 0600 ${B}/signing.key.pem ${D}${datadir}/foosball-rauc-dev-keys/
}
