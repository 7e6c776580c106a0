"""The app a lattice runs in: its agent tree, and the handlers' declarations checked against it."""
