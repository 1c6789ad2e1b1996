"""A resident instance: its record (``Run``), its coroutines (``tracks``), what its nodes
compute from its data and clock, its finished record, and what it needs of the engine and the
outside (protocols).
"""
