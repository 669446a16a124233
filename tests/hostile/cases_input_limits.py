"""Issue 41, items 8, 10-12: JSON Lines under attack, no non-finite value written unasked, memory bounded per value and per key.

Cases as data, run by test_hostile.py like hostile_cases.py's; each has issue=41 and the item it proves."""

CASES = []
