SUMMARY = "Pole board image: EtherCAT master, pole driver, supervisory panel"
FOOSBALL_IMAGE_BOARD = "pole"
FOOSBALL_IMAGE_AGENTS = "python3-foosball-pole"
require foosball-image.inc
