require foosball-image-pole.bb
require foosball-image-dev.inc
SUMMARY:append = " (development: debug tools, password-less root)"
