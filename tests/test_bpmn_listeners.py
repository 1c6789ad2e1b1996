"""Real Activiti and Flowable files with listeners (tests/data/listeners): each listener is a
warning naming it, the process runs without it, and the export keeps it."""

from pathlib import Path

import pytest

import gobpm_nb as bpm

DATA = Path(__file__).parent / "data" / "listeners"


def run_through(process):
    """Start ``process``, complete every user task until none is left; the instance."""
    eng = bpm.Engine()
    instance = eng.start(process)
    eng.run()
    while eng.tasks():
        eng.complete_task(eng.tasks()[0].id)
        eng.run()
    return eng, instance


@pytest.mark.parametrize("name, listeners", [
    ("AsyncTaskTest.testAsyncUserTask.bpmn20.xml",
     ["activiti:executionListener on userTask 'userTask' is not run (event 'start', class "
      "'org.activiti.engine.test.bpmn.async.AsyncListener')",
      "activiti:taskListener on userTask 'userTask' is not run (event 'create', class "
      "'org.activiti.engine.test.bpmn.async.AsyncTaskListener')"]),
    ("AsyncLeaveTest.testExecutionListenersAsyncLeave.bpmn20.xml",
     ["flowable:executionListener on userTask 'theTask' is not run (event 'start', "
      "expression \"${execution.setVariable('start', true)}\")",
      "flowable:executionListener on userTask 'theTask' is not run (event 'end', "
      "expression \"${execution.setVariable('end', true)}\")"]),
])
def test_a_real_file_with_listeners_runs_without_them_each_a_warning(name, listeners):
    model = bpm.load_bpmn(DATA / name)
    said = [n.message for n in model.report if "Listener" in n.message]
    assert [n.severity for n in model.report] == ["warning"] * len(model.report)
    assert [m.split("): ")[0] + ")" for m in said] == listeners
    eng, instance = run_through(model.process())
    assert instance.state == "completed"
    assert "start" not in eng.instance_data(instance.id)  # the listener set nothing
    assert model.to_bpmn().count("Listener event=") == 2
