"""What each command runs, start to end: the job (`skewless run`), `apply`, `predict`, `verify`."""
