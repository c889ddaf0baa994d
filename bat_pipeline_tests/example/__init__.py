"""Tests of the offline demo: scripted model server and example agent, as real processes."""
