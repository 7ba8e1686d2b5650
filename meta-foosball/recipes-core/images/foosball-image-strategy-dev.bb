require foosball-image-strategy.bb
require foosball-image-dev.inc
SUMMARY:append = " (development: debug tools, password-less root)"
