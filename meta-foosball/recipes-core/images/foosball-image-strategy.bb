SUMMARY = "Strategy board image: strategy and game panel"
FOOSBALL_IMAGE_BOARD = "strategy"
FOOSBALL_IMAGE_AGENTS = "python3-foosball-strategy"
require foosball-image.inc
