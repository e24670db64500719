"""The hidden tests' own copy of the tools and their data (the task package is not
readable inside the sandbox). tasks/tools/tests keeps it identical to toolbox.py."""

MAX_TURNS = 12
QUESTION_SKU = "TEA-042"
QUESTION_REGION = "north"
KG_PER = {"kg": 1.0, "g": 0.001, "lb": 0.45359237}
WAREHOUSES = {
    "north": ["WH-101", "WH-104", "WH-107", "WH-110"],
    "south": ["WH-201", "WH-202"],
    "east": ["WH-301"],
    "west": ["WH-401", "WH-402"],
}
STOCK = {
    ("WH-101", "TEA-042"): (120.5, "kg"),
    ("WH-104", "TEA-042"): (300.0, "lb"),
    ("WH-107", "TEA-042"): (2500.0, "g"),
    ("WH-110", "TEA-042"): (0.0, "kg"),
    ("WH-201", "TEA-042"): (75.0, "kg"),
    ("WH-202", "TEA-042"): (410.0, "lb"),
    ("WH-301", "TEA-042"): (19.25, "kg"),
    ("WH-401", "TEA-042"): (1200.0, "g"),
    ("WH-101", "COF-007"): (64.0, "kg"),
    ("WH-104", "COF-007"): (12.0, "lb"),
}
SCHEMAS = {
    "list_warehouses": {"type": "object", "additionalProperties": False, "required": ["region"],
                        "properties": {"region": {"type": "string", "enum": ["east", "north", "south", "west"]}}},
    "get_stock": {"type": "object", "additionalProperties": False, "required": ["warehouse_id", "sku"],
                  "properties": {"warehouse_id": {"type": "string", "pattern": "^WH-[0-9]{3}$"},
                                 "sku": {"type": "string", "minLength": 1}}},
    "convert": {"type": "object", "additionalProperties": False, "required": ["quantity", "from_unit", "to_unit"],
                "properties": {"quantity": {"type": "number"},
                               "from_unit": {"type": "string", "enum": ["g", "kg", "lb"]},
                               "to_unit": {"type": "string", "enum": ["g", "kg", "lb"]}}},
}


def expected_total_kg() -> float:
    """Summed with exact fractions, independently of any float order a solver might use."""
    from fractions import Fraction
    total = Fraction(0)
    for warehouse in WAREHOUSES[QUESTION_REGION]:
        quantity, unit = STOCK.get((warehouse, QUESTION_SKU), (0.0, "kg"))
        total += Fraction(quantity) * Fraction(str(KG_PER[unit]))
    return float(total)
