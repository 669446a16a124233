"""Issue 41, items 6, 7, 9, 13-15: no credential shown, no control character printed raw, SQL edges, the warm process.

Cases as data, run by test_hostile.py like hostile_cases.py's; each has issue=41 and the item it proves."""

CASES = []
