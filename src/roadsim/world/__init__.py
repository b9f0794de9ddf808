"""The simulated world: its state, the tick, collisions and traffic lights."""
