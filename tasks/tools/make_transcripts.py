"""Regenerate reference/transcript.json and each mutant's transcript by driving scripted
agents through the harness's real tool loop (python tasks/tools/make_transcripts.py).
tests/test_consistency.py checks the committed files equal a fresh drive."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from sb.session import default_session
from sb.models.base import ModelOptions
from sb.mutant_patch import make_patch
from sb.toolloop import ModelTurn, ToolCall, drive_tool_loop
from sb_task_tools.agent import ScriptedAgent

PACKAGE = Path(__file__).parent / "src" / "sb_task_tools"


class StringQuantity(ScriptedAgent):
    """Sends the quantity to convert as a string: invalid against the schema."""

    def step(self, results):
        turn = super().step(results)
        for call in turn.calls:
            if call.name == "convert":
                call.arguments["quantity"] = str(call.arguments["quantity"])
        return turn


class InventedTool(ScriptedAgent):
    """Calls a tool that does not exist before doing the right thing."""

    def step(self, results):
        if self.stage == 0:
            self.stage = 0.5
            return ModelTurn(calls=[ToolCall("x", "get_inventory", {"sku": "TEA-042"})])
        if self.stage == 0.5:
            self.stage = 0
            results = []
        return super().step(results)


class NeverAnswers(ScriptedAgent):
    """Keeps calling tools until the bound: the loop never ends with an answer."""

    def step(self, results):
        if self.stage >= 3:
            self.stage += 1
            return ModelTurn(calls=[ToolCall(f"again{self.stage}", "list_warehouses", {"region": "north"})])
        return super().step(results)


class ChattyAnswer(ScriptedAgent):
    def step(self, results):
        turn = super().step(results)
        return turn if turn.calls else ModelTurn(text=f"Sure! The total is {turn.text} kg.")


class OneWarehouse(ScriptedAgent):
    """Looks up only the first warehouse of the region."""

    def step(self, results):
        turn = super().step(results)
        if self.stage == 2:
            turn.calls = turn.calls[:1]
        return turn


class UnconvertedSum(ScriptedAgent):
    """Adds the raw quantities, whatever their unit."""

    def step(self, results):
        if self.stage == 2:
            self.stage += 1
            total = sum(json.loads(r)["quantity"] for _, r in results)
            return ModelTurn(text=f"ANSWER: {total:.2f}")
        return super().step(results)


class ExtraArgument(ScriptedAgent):
    """Adds an argument the schema does not allow."""

    def step(self, results):
        turn = super().step(results)
        for call in turn.calls:
            if call.name == "get_stock":
                call.arguments["include_reserved"] = True
        return turn


class MentalConversion(ScriptedAgent):
    """Converts g and lb to kg by itself instead of calling convert: the right total."""

    def step(self, results):
        if self.stage == 2:
            self.stage += 1
            kg_per = {"kg": 1.0, "g": 0.001, "lb": 0.45359237}
            stock = [json.loads(r) for _, r in results]
            total = sum(s["quantity"] * kg_per[s["unit"]] for s in stock)
            return ModelTurn(text=f"ANSWER: {total:.2f}")
        return super().step(results)


class GuessedWarehouses(ScriptedAgent):
    """Never lists the region: guesses ids WH-101 to WH-110 and looks each one up."""

    def step(self, results):
        if self.stage == 0:
            self.stage = 2
            return ModelTurn(calls=[ToolCall(f"s{n}", "get_stock", {"warehouse_id": f"WH-{n}", "sku": "TEA-042"})
                                    for n in range(101, 111)])
        return super().step(results)


class TruncatedNotRounded(ScriptedAgent):
    """Cuts the total to two decimals instead of rounding it."""

    def step(self, results):
        turn = super().step(results)
        if not turn.calls:
            total = sum(float(r) for _, r in results)
            turn = ModelTurn(text=f"ANSWER: {int(total * 100) / 100:.2f}")
        return turn


class MemorisedAnswer(ScriptedAgent):
    """Answers at once with the right number, calling no tool."""

    def step(self, results):
        return ModelTurn(text="ANSWER: 259.08")


class AllRegions(ScriptedAgent):
    """Reads "across all warehouses" as every region: sums the SKU over all of them."""

    def step(self, results):
        self.stage += 1
        if self.stage == 1:
            return ModelTurn(calls=[ToolCall(f"r{i}", "list_warehouses", {"region": r})
                                    for i, r in enumerate(["east", "north", "south", "west"])])
        if self.stage == 2:
            ids = [w for _, r in results for w in json.loads(r)]
            return ModelTurn(calls=[ToolCall(f"s{i}", "get_stock", {"warehouse_id": w, "sku": "TEA-042"})
                                    for i, w in enumerate(ids)])
        self.stage -= 1
        return super().step(results)


class BrokenJsonArguments(ScriptedAgent):
    """Sends its first call's arguments as broken JSON text, then retries correctly."""

    def step(self, results):
        if self.stage == 0:
            self.stage = 0.5
            return ModelTurn(calls=[ToolCall("bad", "list_warehouses", '{"region": "north"')])
        if self.stage == 0.5:
            self.stage = 0
            results = []
        return super().step(results)


class LowerCaseSku(ScriptedAgent):
    """Looks the SKU up as tea-042: every warehouse answers 0."""

    def step(self, results):
        turn = super().step(results)
        for call in turn.calls:
            if call.name == "get_stock":
                call.arguments["sku"] = "tea-042"
        return turn


MUTANTS = {
    "string_quantity": (StringQuantity, "sends a number argument as a string (invalid against the schema)"),
    "invented_tool": (InventedTool, "calls a tool that does not exist"),
    "never_answers": (NeverAnswers, "keeps calling tools until the turn bound: no final answer"),
    "chatty_answer": (ChattyAnswer, "wraps the answer in chatter instead of the exact one-line form"),
    "one_warehouse": (OneWarehouse, "sums the stock of one warehouse of the region only"),
    "unconverted_sum": (UnconvertedSum, "adds quantities recorded in different units without converting"),
    "extra_argument": (ExtraArgument, "passes an argument the tool's schema does not allow"),
    "mental_conversion": (MentalConversion, "converts g and lb to kg by hand instead of with the convert tool"),
    "guessed_warehouses": (GuessedWarehouses, "never lists the region's warehouses: guesses their ids"),
    "truncated_not_rounded": (TruncatedNotRounded, "cuts the total to two decimals instead of rounding it"),
    "memorised_answer": (MemorisedAnswer, "answers with the right number at once, calling no tool"),
    "all_regions": (AllRegions, "sums the SKU over the warehouses of every region, not only north"),
    "broken_json_arguments": (BrokenJsonArguments, "sends one call's arguments as broken JSON text"),
    "lower_case_sku": (LowerCaseSku, "looks the SKU up in lower case: every warehouse answers 0"),
}


class _Adapter:
    provider = ""  # a scripted agent: no API, nothing to price

    def __init__(self, agent_class):
        self.agent_class = agent_class

    def tool_session(self, model, task, tools, options):
        return self.agent_class()


def transcript_of(agent_class) -> bytes:
    task = default_session().tasks()["tools"]
    with tempfile.TemporaryDirectory() as tmp:
        drive_tool_loop(_Adapter(agent_class), "scripted", task, Path(tmp), ModelOptions())
        return (Path(tmp) / "transcript.json").read_bytes()


def main() -> None:
    reference = {"transcript.json": transcript_of(ScriptedAgent)}
    (PACKAGE / "reference" / "transcript.json").write_bytes(reference["transcript.json"])
    for name, (agent_class, description) in MUTANTS.items():
        files = {"transcript.json": transcript_of(agent_class)}
        (PACKAGE / "mutants" / f"{name}.patch").write_text(make_patch("caught", description, reference, files))


if __name__ == "__main__":
    main()
