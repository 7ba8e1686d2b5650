"""The simulated rig: the product's agents as processes on three boards (foosball.rig.rig)."""

# How the rig runs the boards (`foosball rig up --mode`), by the name it prints.
MODES = {"booted": "booted boards", "processes": "namespaced processes",
         "single-host": "single host"}
