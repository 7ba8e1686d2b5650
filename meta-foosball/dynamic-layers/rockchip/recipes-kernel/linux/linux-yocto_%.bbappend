# meta-rockchip lists its machines one by one; without this the Rock Pi N10 has
# no kernel provider.
COMPATIBLE_MACHINE:rock-pi-n10 = "rock-pi-n10"
