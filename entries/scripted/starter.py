"""Scripted demo agent: submits the starter workspace unchanged."""

print("turns: 1")
print("tool_calls: 0")
