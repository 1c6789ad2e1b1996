"""Durability: what the store records besides checkpoints and when (``journal``), and an
instance's checkpoint (``checkpoint``).
"""
