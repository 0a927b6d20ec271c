"""Scripted demo agent: writes a faithful reconstruction of the HTML5 Boilerplate page.

It knows the answer because it is a script, not a model: it stands in for a strong
Candidate so the demo release has a top of the ladder.
"""

import sys
from pathlib import Path

site = Path(sys.argv[1]) / "site"
(site / "css").mkdir(parents=True, exist_ok=True)
(site / "css" / "style.css").write_text(
    "html { color: #222; font-size: 1em; line-height: 1.4; }\n"
)
(site / "index.html").write_text(
    """<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title></title>
  <link rel="stylesheet" href="css/style.css">
</head>
<body>
  <p>Hello world! This is HTML5 Boilerplate.</p>
</body>
</html>
"""
)
print("turns: 1")
print("tool_calls: 2")
