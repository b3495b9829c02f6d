#!/usr/bin/python3
"""The test oracle of DBC signal scaling, independent of tagd: physical = raw × factor + offset
computed with Python's exact integers and fractions, then rounded once to the nearest double.

Input (stdin): JSON list of {"raw": "<decimal integer>", "factor": "<DBC text>",
"offset": "<DBC text>"}.
When factor and offset both name integers (as decimals, e.g. "1", "-9223372036854775808",
"1E+018"), the value is the integer raw × factor + offset; otherwise factor and offset are the
doubles their texts parse to (as the DBC parser reads them) and the value is the exact rational
raw × factor + offset.
Output (stdout): JSON list of {"value": repr(nearest double), "exact": "<decimal>" | null}, the
exact decimal given for integer results only.
"""

import json
import sys
from decimal import Decimal
from fractions import Fraction


def scaled(case):
    raw = int(case["raw"])
    factor, offset = Decimal(case["factor"]), Decimal(case["offset"])
    if factor == factor.to_integral_value() and offset == offset.to_integral_value():
        exact = raw * int(factor) + int(offset)
        # int -> float rounds to nearest, ties to even.
        return {"value": repr(float(exact)), "exact": str(exact)}
    exact = (
        Fraction(raw) * Fraction(float(case["factor"])) + Fraction(float(case["offset"]))
    )
    # Fraction -> float divides the integers, correctly rounded.
    return {"value": repr(float(exact)), "exact": None}


def main():
    cases = json.load(sys.stdin)
    json.dump([scaled(case) for case in cases], sys.stdout)


if __name__ == "__main__":
    main()
