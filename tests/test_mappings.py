"""Variable mappings (``Process.mapping``, Camunda 8's input and output mappings): inputs
seen by the element alone, outputs the only fields written back."""

import pytest
from conftest import recover

import gobpm_nb as bpm


def charge(inputs=None, outputs=None):
    """start -> a worker job 'charge' (topic card) with mappings -> end."""
    p = bpm.Process("pay")
    p.start("s")
    p.service_task("charge", topic="card")
    p.end("e")
    p.flow("s", "charge", "e")
    p.mapping("charge", inputs=inputs, outputs=outputs)
    return p


def test_a_job_sees_its_inputs_and_only_its_outputs_are_written():
    """Inputs (a constant, a path, a dotted target) are in the job's data and never in the
    instance's; with outputs, only they are written: the job's other results are dropped,
    and a dotted output target updates one field of a dict."""
    eng = bpm.Engine()
    inst = eng.start(charge({"url": "'https://pay'", "auth.type": "'basic'",
                             "amount": "order['total']"},
                            {"paid": "status == 'ok'", "receipt.id": "rid"}),
                     {"order": {"total": 5}, "receipt": {"kept": 1}})
    eng.run()
    (job,) = eng.fetch_jobs("card", "w")
    assert job.data == {"order": {"total": 5}, "receipt": {"kept": 1}, "url": "https://pay",
                        "auth": {"type": "basic"}, "amount": 5}
    assert inst.data == {"order": {"total": 5}, "receipt": {"kept": 1}}
    eng.complete_job(job.id, {"status": "ok", "rid": 7, "noise": True})
    eng.run()
    assert inst.state == "completed"
    assert inst.data == {"order": {"total": 5}, "receipt": {"kept": 1, "id": 7},
                         "paid": True}


def test_without_outputs_the_job_result_is_merged_and_the_inputs_are_dropped():
    eng = bpm.Engine()
    inst = eng.start(charge({"url": "'https://pay'"}), {"n": 1})
    eng.run()
    (job,) = eng.fetch_jobs("card", "w")
    eng.complete_job(job.id, {"ok": True})
    eng.run()
    assert inst.data == {"n": 1, "ok": True}


def test_an_input_that_names_a_missing_field_is_an_incident_naming_it():
    eng = bpm.Engine()
    inst = eng.start(charge({"amount": "total"}))
    eng.run()
    assert inst.state == "failed"
    (fact,) = [f for f in eng.facts if f.kind == "incident"]
    assert fact.node == "charge"
    assert "input 'amount'" in fact.details["cause"] and "total" in fact.details["cause"]


def guarded():
    """start -> subprocess 'sub' (input limit = 3) holding a job 'work' -> end; a user
    task 'ask' with an output over its own result."""
    p = bpm.Process("guarded")
    p.start("s")
    with p.subprocess("sub") as sp:
        sp.start("ss")
        sp.service_task("work", topic="work")
        sp.end("se")
        sp.flow("ss", "work", "se")
    p.user_task("ask")
    p.end("e")
    p.flow("s", "sub", "ask", "e")
    p.mapping("sub", inputs={"limit": "3"}, outputs={"used": "limit"})
    p.mapping("ask", outputs={"answer": "reply == 'yes'"})
    return p


def test_a_subprocess_input_is_seen_inside_and_a_write_to_it_stays_local():
    """What runs inside a subprocess sees its inputs; a job inside that writes a field the
    subprocess maps in writes the subprocess's own (Camunda's propagation to the scope that
    has the variable), which its output then reads; the instance never holds it."""
    eng = bpm.Engine()
    inst = eng.start(guarded(), {"n": 1})
    eng.run()
    (job,) = eng.fetch_jobs("work", "w")
    assert job.data == {"n": 1, "limit": 3}
    eng.complete_job(job.id, {"limit": 9, "done": True})
    eng.run()
    assert inst.data == {"n": 1, "done": True, "used": 9}
    (task,) = eng.tasks()
    eng.complete_task(task.id, {"reply": "yes"})
    eng.run()
    assert inst.state == "completed"
    assert inst.data == {"n": 1, "done": True, "used": 9, "answer": True}


def test_inputs_survive_a_checkpoint_and_recovery(tmp_path):
    """A job waiting inside a subprocess with inputs: its instance's checkpoint keeps them
    (JSON), and after a crash the recovered engine gives the job the same data."""
    db = tmp_path / "run.db"
    eng = bpm.Engine(store=bpm.SQLiteStore(db))
    inst = eng.start(guarded(), {"n": 1})
    eng.run()
    doc = eng.checkpoint(inst.id)
    assert [t["inputs"] for t in doc["tracks"] if "inputs" in t] == [{"limit": 3}]
    eng.store.close()  # the process dies here
    eng2 = recover(db, guarded())
    (job,) = eng2.fetch_jobs("work", "w")
    assert job.data == {"n": 1, "limit": 3}
    eng2.complete_job(job.id, {"done": True})
    eng2.run()
    assert eng2.instance(inst.id).data == {"n": 1, "done": True, "used": 3}


def test_events_map_their_payload_and_the_data():
    """A message catch's output reads the payload (which is not merged); a start event's
    output and an end event's output write at once."""
    p = bpm.Process("events")
    p.start("s")
    p.message_catch("wait", message="paid", key="order")
    p.end("e")
    p.flow("s", "wait", "e")
    p.mapping("s", outputs={"status": "'new'"})
    p.mapping("wait", outputs={"amount": "payment['amount']"})
    p.mapping("e", outputs={"status": "'done'"})
    eng = bpm.Engine()
    inst = eng.start(p, {"order": "o1"})
    eng.run()
    assert inst.data == {"order": "o1", "status": "new"}
    eng.publish_message("paid", "o1", {"payment": {"amount": 12}, "other": 1})
    eng.run()
    assert inst.state == "completed"
    assert inst.data == {"order": "o1", "status": "done", "amount": 12}


@pytest.mark.parametrize("node, inputs, says", [
    ("gw", {"a": "1"}, "exclusive_gateway 'gw' takes no variable mappings"),
    ("t", {"a b": "1"}, "input target 'a b' is not a field name"),
    ("t", {"a.__class__": "1"}, "input target 'a.__class__' is not a field name"),
    ("nope", {"a": "1"}, "process 'p' has no element 'nope'"),
])
def test_a_mapping_that_cannot_be_is_refused_naming_it(node, inputs, says):
    p = bpm.Process("p")
    p.start("s")
    p.user_task("t")
    p.exclusive_gateway("gw")
    with pytest.raises(bpm.ModelError, match=says):
        p.mapping(node, inputs=inputs)


def test_a_mapping_changes_the_signature():
    """Two processes that differ only by a mapping are different versions."""
    assert charge({"a": "1"}).definition().signature != charge().definition().signature
    assert charge().definition().signature == charge().definition().signature


def test_each_inner_instance_of_a_multi_instance_task_maps_for_itself():
    """Inputs see the inner instance's item; outputs go into its collected element."""
    p = bpm.Process("many")
    p.start("s")
    p.service_task("ship", topic="ship")
    p.end("e")
    p.flow("s", "ship", "e")
    p.multi_instance("ship", collection="boxes", element="box", output_collection="sent",
                     output_element="label")
    p.mapping("ship", inputs={"size": "box['size']"}, outputs={"label": "'L' + str(n)"})
    eng = bpm.Engine()
    inst = eng.start(p, {"boxes": [{"size": 1}, {"size": 2}]})
    eng.run()
    jobs = eng.fetch_jobs("ship", "w")
    assert sorted(j.data["size"] for j in jobs) == [1, 2]
    for job in jobs:
        eng.complete_job(job.id, {"n": job.data["size"]})
    eng.run()
    assert inst.state == "completed"
    assert inst.data == {"boxes": [{"size": 1}, {"size": 2}], "sent": ["L1", "L2"]}


def test_rewind_and_replay_give_the_same_facts_and_a_callable_is_not_called_again():
    """A Python callable in a mapping answers through the tape: rewound to the start and
    replayed, the run gives the same facts, byte for byte, and the same data, without
    calling it again; the subprocess's inputs come back with the replay."""
    calls = []

    def limit(data):
        calls.append(data["n"])
        return data["n"] * 10

    p = guarded()
    p.mapping("sub", inputs={"limit": limit}, outputs={"used": "limit"})
    eng = bpm.Engine()
    inst = eng.start(p, {"n": 2})
    eng.run()
    (job,) = eng.fetch_jobs("work", "w")
    assert job.data["limit"] == 20
    eng.complete_job(job.id, {"done": True})
    eng.run()
    before, data = [f.as_dict() for f in eng.facts], dict(inst.data)
    eng.rewind(0)
    eng.replay()
    assert [f.as_dict() for f in eng.facts] == before
    assert eng.instance(inst.id).data == data == {"n": 2, "done": True, "used": 20}
    assert calls == [2]


def test_a_script_task_with_outputs_writes_only_them_over_what_its_function_returned():
    p = bpm.Process("calc")
    p.start("s")
    p.script_task("add", fn=lambda data: {"sum": data["a"] + data["b"], "noise": 1})
    p.end("e")
    p.flow("s", "add", "e")
    p.mapping("add", inputs={"b": "10"}, outputs={"total": "sum"})
    eng = bpm.Engine()
    inst = eng.start(p, {"a": 1, "b": 2})
    eng.run()
    assert inst.data == {"a": 1, "b": 2, "total": 11}
