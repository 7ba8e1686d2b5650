SUMMARY = "RAUC update bundle of the foosball vision board"
DESCRIPTION = "Signed verity bundle with the vision board's root filesystem, for RAUC."
FOOSBALL_BUNDLE_BOARD = "vision"
require foosball-bundle.inc
