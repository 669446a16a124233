"""Issue 41, items 1-5: only what a skewless command made may be removed or replaced; export publishes whole; Ctrl-C ends every phase.

Cases as data, run by test_hostile.py like hostile_cases.py's; each has issue=41 and the item it proves."""

CASES = []
