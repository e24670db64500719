"""The reference solver for a tool loop: a scripted agent driven through the harness's
real loop, exactly as a model would be (list, look up each warehouse, convert, answer)."""

import json

from sb.models.base import ToolSession
from sb.toolloop import ModelTurn, ToolCall


class ScriptedAgent(ToolSession):
    model_answered = "reference"

    def __init__(self):
        self.stage = 0
        self.stock = []

    def step(self, results: list) -> ModelTurn:
        self.stage += 1
        if self.stage == 1:
            return ModelTurn(calls=[ToolCall("c1", "list_warehouses", {"region": "north"})])
        if self.stage == 2:
            ids = json.loads(results[0][1])
            return ModelTurn(calls=[ToolCall(f"s{i}", "get_stock", {"warehouse_id": w, "sku": "TEA-042"})
                                    for i, w in enumerate(ids)])
        if self.stage == 3:
            self.stock = [json.loads(r) for _, r in results]
            return ModelTurn(calls=[ToolCall(f"v{i}", "convert", {"quantity": s["quantity"], "from_unit": s["unit"],
                                                                  "to_unit": "kg"})
                                    for i, s in enumerate(self.stock)])
        total = sum(float(r) for _, r in results)
        return ModelTurn(text=f"ANSWER: {total:.2f}")
