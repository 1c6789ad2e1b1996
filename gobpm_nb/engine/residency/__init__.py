"""Residency: the one router that decides what every trigger does (``router``), quiet points
and dehydration, hydration, wake and restart recovery, the timer plans, messages and signals
(``hub``) and the start events that create instances.
"""
