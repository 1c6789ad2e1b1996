"""The golden scenario: one engine driven through every element, residency transition and
trigger kind; its fact log is checked in (tests/data/golden_facts.jsonl) so that any change
to what the engine does — a fact more or less, another order, another detail — shows.

    python tests/scenarios/golden.py --write     # after a change meant to change facts
"""

from __future__ import annotations

import sys
from pathlib import Path

import gobpm_nb as bpm

GOLDEN = Path(__file__).resolve().parent.parent / "data" / "golden_facts.jsonl"


def order() -> bpm.Process:
    p = bpm.Process("order")
    p.start("received")
    p.script_task("price", fn=lambda d: {"total": d["qty"] * 10})
    p.exclusive_gateway("big", default="merge")
    p.user_task("approve", assignee="ann")
    p.timer_boundary("late", attached_to="approve", duration="PT24H")
    p.timer_boundary("remind", attached_to="approve", cycle="R2/PT8H", interrupting=False)
    p.exclusive_gateway("merge")
    p.parallel_gateway("split")
    p.receive_task("paid", message="payment", key="id")
    p.message_boundary("cancel", attached_to="paid", message="cancel", key="id")
    p.service_task("pack", topic="warehouse")
    p.error_boundary("broken", attached_to="pack", error="BROKEN")
    p.parallel_gateway("join")
    p.event_gateway("race")
    p.timer_catch("wait_pickup", duration="P2D")
    p.signal_catch("courier", signal="courier")
    p.conditional_catch("ready", condition="total > 0")
    p.message_throw("notify", message="shipped", key="id", payload=("id",))
    p.signal_throw("done_signal", signal="order_done")
    p.end("done")
    p.end("escalated")
    p.end("reminded")
    p.end("cancelled", terminate=True)
    p.end("repair")
    p.flow("received", "price", "big")
    p.flow("big", "approve", condition="total >= 100")
    p.flow("big", "merge")
    p.flow("approve", "merge", "split")
    p.flow("split", "paid", "join")
    p.flow("split", "pack", "join")
    p.flow("join", "race")
    p.flow("race", "wait_pickup", "ready")
    p.flow("race", "courier", "ready")
    p.flow("ready", "notify", "done_signal", "done")
    p.flow("late", "escalated")
    p.flow("remind", "reminded")
    p.flow("cancel", "cancelled")
    p.flow("broken", "repair")
    return p.validate()


def listener() -> bpm.Process:
    p = bpm.Process("listener")
    p.start("s")
    p.message_catch("hear", message="shipped", key="id")
    p.signal_catch("finished", signal="order_done")
    p.end("e")
    p.flow("s", "hear", "finished", "e")
    return p.validate()


class Down(bpm.MemoryStore):
    """A store whose reads fail while ``down``."""

    down = False

    def get(self, instance: str) -> bytes:
        if self.down:
            raise OSError("down")
        return super().get(instance)


def play() -> bpm.Engine:
    """The scenario: five orders and their listeners down different paths."""
    store = Down()
    eng = bpm.Engine(store=store, keep_facts=None)
    o, lis = order(), listener()
    for n, qty in enumerate((20, 3, 15, 30, 50), start=1):
        eng.start(o, {"id": f"o{n}", "qty": qty}, key=f"o{n}")
        eng.start(lis, {"id": f"o{n}"}, key=f"l{n}")
    eng.publish_message("payment", key="o2", payload={"paid": 30}, ttl="PT2H",
                        message_id="pay-o2")
    eng.advance("PT1H")
    for task in eng.tasks():
        if task.instance != "o5":  # o5 is never approved: reminded twice, then escalated
            eng.complete_task(task.id, {"ok": task.instance != "o3"})
    eng.advance("PT1M")
    eng.publish_message("payment", key="o1", payload={"paid": 200})
    eng.publish_message("payment", key="o1", payload={"paid": 200}, message_id="pay-o2")
    for job in eng.fetch_jobs("warehouse", worker="w1"):
        if job.instance == "o3":
            eng.fail_job(job.id, "BROKEN")
        else:
            eng.complete_job(job.id, {"packed": True})
    eng.advance("PT9H")
    store.down = True
    eng.publish_message("cancel", key="o4")
    eng.advance("PT30S")
    store.down = False
    eng.advance("PT1H")
    eng.broadcast_signal("order_done")
    eng.broadcast_signal("courier", {"by": "bike"})
    eng.advance("P3D")
    eng.broadcast_signal("order_done")
    eng.run()
    return eng


def lines(eng: bpm.Engine) -> list[str]:
    return [f.to_json() for f in eng.facts]


def main(argv: list[str]) -> int:
    if argv[1:] != ["--write"]:
        print(__doc__)
        return 2
    GOLDEN.parent.mkdir(parents=True, exist_ok=True)
    GOLDEN.write_text("\n".join(lines(play())) + "\n", encoding="utf-8")
    print(f"wrote {GOLDEN}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
