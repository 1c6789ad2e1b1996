"""What each BPMN element does, one module per family: events, tasks, gateways (the
inclusive gateway apart), subprocesses and what is thrown across them, boundary events, call
activities, multi-instance; ``table`` maps each element kind to its enter and fire paths.
"""
