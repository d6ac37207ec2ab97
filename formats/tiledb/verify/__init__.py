"""verify's TileDB checks: cross-checks, cell checks, verify units, reader faults, batch decode."""
