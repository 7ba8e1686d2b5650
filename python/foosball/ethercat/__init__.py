"""EtherCAT: the shared drive layout, the drive model and ESC emulator, the bus backends."""
