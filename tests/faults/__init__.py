"""Crashes, kill -9, restarts, outages: the guarantees under faults."""
