"""How a pipeline runs: Beam runner options, and what makes an in-process run cheap."""
