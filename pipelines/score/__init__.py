"""`skewless predict`'s work: raw rows scored by a serving export with Beam's RunInference, staged and published
as a run is."""
