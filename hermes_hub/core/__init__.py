"""What the hub does with a call: the pipeline around every tool call, the merged catalog, toolsets,
the agent loop, schedules and the hub's own tools. It uses ``downstream``, ``services`` and ``infra``."""
