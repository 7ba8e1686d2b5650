"""The simulated rig's keyword components, one per area (SeleniumLibrary's layout): each
reaches the rig through one context object (`context.SimulatedTable`)."""
