"""The road network: OpenDRIVE parsing, geometry, lanes, lane graph and queries."""
