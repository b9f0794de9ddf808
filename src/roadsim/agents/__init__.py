"""Controllers and dynamics: what moves the actors (traffic, the ego, vehicle physics)."""
