"""Names in a run directory that the job writing it and every reader of it (report, inspect, the Keras
layers, the object-store copies) share. It imports nothing of the project, so any part can import it.
"""

RUN_FILE = "run.json"  # written last: a run directory with it is complete
