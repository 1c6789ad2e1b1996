"""What the engine keeps of an instance: tracks, triggers, tasks and jobs; what a parked track
waits for and the holders that keep those waits; a dehydrated instance's record; instance
data as JSON values; and reading a stored document back, every field checked.
"""
