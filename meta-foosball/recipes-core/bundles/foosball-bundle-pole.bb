SUMMARY = "RAUC update bundle of the foosball pole board"
DESCRIPTION = "Signed verity bundle with the pole board's root filesystem, for RAUC."
FOOSBALL_BUNDLE_BOARD = "pole"
require foosball-bundle.inc
