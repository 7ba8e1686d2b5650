"""The simulated rig: the product's agents as processes on three boards (foosball.rig.rig)."""
