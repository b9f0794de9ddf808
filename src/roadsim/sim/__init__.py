"""The simulation: a scenario's world built and advanced tick by tick.

This layer ties the others together (road network, scenario, world state, controllers),
so it sits below all of them.
"""

from roadsim.sim.actor import Actor
from roadsim.sim.simulation import CollisionEvent, EgoCommand, Simulation

__all__ = ["Actor", "CollisionEvent", "EgoCommand", "Simulation"]
