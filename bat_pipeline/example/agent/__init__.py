"""The example A2A weather agent (and its Forecaster sub-agent).

Run from an agent folder (`CONFIG_PATH` defaults to `./config.yaml`):
`python -m bat_pipeline.example.agent`; the Forecaster child is
`python -m bat_pipeline.example.agent --role forecaster --port N`, started by the main agent.
"""
