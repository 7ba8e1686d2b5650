SUMMARY = "RAUC update bundle of the foosball strategy board"
DESCRIPTION = "Signed verity bundle with the strategy board's root filesystem, for RAUC."
FOOSBALL_BUNDLE_BOARD = "strategy"
require foosball-bundle.inc
