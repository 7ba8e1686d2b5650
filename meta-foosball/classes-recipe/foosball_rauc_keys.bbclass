# Where the RAUC keyring (into the image) and the bundle signer come from, for the
# recipes that need them (foosball-rauc-conf, the bundles). FOOSBALL_RAUC_KEYS picks
# the folder (conf/distro/include/foosball-features.inc):
#   dev     FOOSBALL_RAUC_DEV_KEY_DIR, made once by tools/rauc-dev-keys
#   release FOOSBALL_RAUC_KEY_DIR, made by the lab (docs/images.md)
# Both hold ca.cert.pem, signing.cert.pem and the signing key: signing.key.pem, or
# signing.key.uri holding a PKCS#11 URI ("pkcs11:token=...;object=...") of a key in a
# token or HSM; RAUC then loads FOOSBALL_RAUC_PKCS11_MODULE.
# The keys are read where they are, never copied into sstate: the same keys in every
# rebuild, and a missing one stops the task that needs it with how to make it.

FOOSBALL_RAUC_KEY_SOURCE = "${@d.getVar('FOOSBALL_RAUC_DEV_KEY_DIR') if d.getVar('FOOSBALL_RAUC_KEYS') == 'dev' else d.getVar('FOOSBALL_RAUC_KEY_DIR')}"
FOOSBALL_RAUC_SIGNING_KEY = "${@foosball_rauc_signing_key(d)}"

def foosball_rauc_signing_key(d):
    """The signing key as RAUC's --key takes it: a PKCS#11 URI from signing.key.uri if
    that file exists, else the path of signing.key.pem."""
    folder = d.getVar("FOOSBALL_RAUC_KEY_SOURCE") or ""
    uri_file = os.path.join(folder, "signing.key.uri")
    # Parse again when the file appears, changes or goes.
    bb.parse.mark_dependency(d, uri_file)
    if os.path.isfile(uri_file):
        with open(uri_file) as handle:
            uri = handle.read().strip()
        if not uri.startswith("pkcs11:"):
            bb.fatal("%s must hold one PKCS#11 URI (pkcs11:...), not %r" % (uri_file, uri[:40]))
        return uri
    return os.path.join(folder, "signing.key.pem")

def foosball_rauc_missing_keys(d, names):
    folder = d.getVar("FOOSBALL_RAUC_KEY_SOURCE") or ""
    missing = [name for name in names if not os.path.isfile(os.path.join(folder, name))]
    if not folder or not missing:
        return None if folder else "no key folder (FOOSBALL_RAUC_KEY_DIR is empty)"
    return "%s has no %s" % (folder, ", ".join(missing))

def foosball_rauc_keys_fatal(d, problem):
    if d.getVar("FOOSBALL_RAUC_KEYS") == "dev":
        bb.fatal("RAUC development keys: %s. Make them once with\n"
                 "    tools/rauc-dev-keys %s\n"
                 "(in the repository of this layer), or set FOOSBALL_RAUC_DEV_KEY_DIR to the "
                 "folder where they are." % (problem, d.getVar("FOOSBALL_RAUC_DEV_KEY_DIR")))
    bb.fatal("RAUC release keys: %s. FOOSBALL_RAUC_KEY_DIR must name the lab's folder with "
             "ca.cert.pem, signing.cert.pem and signing.key.pem or signing.key.uri "
             "(docs/images.md, \"How a lab makes and keeps its own release keys\")." % problem)

python foosball_check_rauc_keyring() {
    problem = foosball_rauc_missing_keys(d, ["ca.cert.pem"])
    if problem:
        foosball_rauc_keys_fatal(d, problem)
}

python foosball_check_rauc_signer() {
    names = ["signing.cert.pem"]
    if not d.getVar("FOOSBALL_RAUC_SIGNING_KEY").startswith("pkcs11:"):
        names.append("signing.key.pem")
    problem = foosball_rauc_missing_keys(d, names)
    if problem:
        foosball_rauc_keys_fatal(d, problem)
}
