"""The task's tools: JSON schemas the model is offered and the implementations the harness
runs for it. The data is small and fixed so the right final answer is known exactly."""

import json

MAX_TURNS = 12
KG_PER = {"kg": 1.0, "g": 0.001, "lb": 0.45359237}  # the pound is defined as exactly 0.45359237 kg

WAREHOUSES = {
    "north": ["WH-101", "WH-104", "WH-107", "WH-110"],
    "south": ["WH-201", "WH-202"],
    "east": ["WH-301"],
    "west": ["WH-401", "WH-402"],
}
STOCK = {  # (warehouse, sku) -> (quantity, unit)
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

TOOLS = [
    {"name": "list_warehouses",
     "description": "List the ids of the warehouses in a region.",
     "input_schema": {"type": "object", "additionalProperties": False, "required": ["region"],
                      "properties": {"region": {"type": "string", "enum": sorted(WAREHOUSES)}}}},
    {"name": "get_stock",
     "description": "The quantity of one SKU held in one warehouse, in the unit that warehouse records it in.",
     "input_schema": {"type": "object", "additionalProperties": False, "required": ["warehouse_id", "sku"],
                      "properties": {"warehouse_id": {"type": "string", "pattern": "^WH-[0-9]{3}$"},
                                     "sku": {"type": "string", "minLength": 1}}}},
    {"name": "convert",
     "description": "Convert a mass between units (kg, g, lb).",
     "input_schema": {"type": "object", "additionalProperties": False,
                      "required": ["quantity", "from_unit", "to_unit"],
                      "properties": {"quantity": {"type": "number"},
                                     "from_unit": {"type": "string", "enum": sorted(KG_PER)},
                                     "to_unit": {"type": "string", "enum": sorted(KG_PER)}}}},
]


def call(name: str, arguments: dict) -> str:
    """Run one tool; raises ValueError for arguments it cannot serve (the loop reports it)."""
    if name == "list_warehouses":
        return json.dumps(WAREHOUSES[arguments["region"]])
    if name == "get_stock":
        quantity, unit = STOCK.get((arguments["warehouse_id"], arguments["sku"]), (0.0, "kg"))
        return json.dumps({"quantity": quantity, "unit": unit})
    if name == "convert":
        quantity = float(arguments["quantity"])
        return repr(quantity * KG_PER[arguments["from_unit"]] / KG_PER[arguments["to_unit"]])
    raise ValueError(f"unknown tool {name}")
