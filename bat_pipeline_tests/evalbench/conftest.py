"""The scripted model server of the EvalBench tests: the fault tests' session fixture."""

from bat_pipeline_tests.faults.conftest import scripted  # noqa: F401 - a fixture, used by name
