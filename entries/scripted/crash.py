"""Scripted demo agent: crashes before it submits anything."""

raise SystemExit("scripted crash: the agent died before writing a submission")
