"""A tiny agent that runs *inside* the container (standard library only), through the
base-URL and key variables the harness sets for the model gateway.

``python3 agent.py probe``: one call in each protocol, streamed and not; what each reply
says goes to ``dist/<call>.txt``. ``python3 agent.py solve BRIEF [VENDOR]``: a bash agent
for the scripted model's case scripts; each turn speaks the next protocol of the list (the
vendor's alone when one is named: ``anthropic``), with the whole conversation so far; it
runs the command of each reply and stops at the submit line.
Both copy the agent's own environment (``/proc/self/environ``) to ``environ.bin`` (in
``dist/``, or beside the build output), so a test can look for a key in every byte of it.
A call that is not answered stops the agent (exit 1), printing why.
"""

import json
import os
import re
import subprocess
import sys
import urllib.request

A = os.environ.get("ANTHROPIC_BASE_URL", "")
O = os.environ.get("OPENAI_BASE_URL", "")  # noqa: E741
G = os.environ.get("GOOGLE_GEMINI_BASE_URL", "")
KEY = {
    "anthropic": os.environ.get("ANTHROPIC_API_KEY", ""),
    "openai": os.environ.get("OPENAI_API_KEY", ""),
    "gemini": os.environ.get("GEMINI_API_KEY", ""),
}


def post(url, body, headers):
    data = json.dumps(body).encode()
    request = urllib.request.Request(url, data, {"content-type": "application/json", **headers})
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # the loopback bridge
    try:
        with opener.open(request, timeout=120) as reply:
            return reply.status, reply.read().decode()
    except urllib.error.HTTPError as err:
        return err.code, err.read().decode()


def events(text):
    return [json.loads(line[5:]) for line in text.splitlines() if line.startswith("data:")
            and line[5:].strip() not in ("", "[DONE]")]  # fmt: skip


def anthropic_text(reply, stream):
    if not stream:
        return "".join(b.get("text", "") for b in json.loads(reply)["content"])
    return "".join(e["delta"].get("text", "") for e in events(reply)
                   if e.get("type") == "content_block_delta")  # fmt: skip


def responses_text(reply, stream):
    return "".join(
        e["delta"] for e in events(reply) if e.get("type") == "response.output_text.delta"
    )


def chat_text(reply, stream):
    if not stream:
        return json.loads(reply)["choices"][0]["message"]["content"]
    return "".join(c["delta"].get("content") or "" for e in events(reply) for c in e["choices"])


def gemini_text(reply, stream):
    found = events(reply) if stream else [json.loads(reply)]
    return "".join(p.get("text", "") for e in found for c in e.get("candidates", [])
                   for p in c["content"]["parts"])  # fmt: skip


def ask(name):
    return f"say {name}"


CALLS = [
    ("anthropic", f"{A}/v1/messages", "anthropic", False, anthropic_text),
    ("anthropic-stream", f"{A}/v1/messages?beta=true", "anthropic", True, anthropic_text),
    ("responses-stream", f"{O}/responses", "openai", True, responses_text),
    ("chat", f"{O}/chat/completions", "openai", False, chat_text),
    ("chat-stream", f"{O}/chat/completions", "openai", True, chat_text),
    ("gemini", f"{G}/v1beta/models/gemini-2.5-flash:generateContent", "gemini", False,
     gemini_text),
    ("gemini-stream", f"{G}/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse",
     "gemini", True, gemini_text),
]  # fmt: skip


def body(name, stream, turns):
    """The request of call ``name`` for the conversation ``turns`` ((role, text) pairs)."""
    messages = [{"role": role, "content": text} for role, text in turns]
    if name.startswith("anthropic"):
        return {"model": "claude-haiku-4-5", "max_tokens": 64, "stream": stream,
                "messages": messages}  # fmt: skip
    if name.startswith("responses"):
        return {"model": "gpt-4.1-mini", "stream": True, "input": messages}
    if name.startswith("chat"):
        return {"model": "gpt-4.1-mini", "stream": stream, "messages": messages}
    return {"contents": [{"role": "model" if role == "assistant" else "user",
                          "parts": [{"text": text}]} for role, text in turns]}  # fmt: skip


def headers(vendor):  # each vendor's way of sending a key
    if vendor == "anthropic":
        return {"x-api-key": KEY[vendor], "anthropic-version": "2023-06-01"}
    if vendor == "gemini":
        return {"x-goog-api-key": KEY[vendor]}
    return {"authorization": f"Bearer {KEY[vendor]}"}


def call(number, turns, calls=CALLS):
    """Call ``number`` (cycling through ``calls``): the reply's text."""
    name, url, vendor, stream, read = calls[number % len(calls)]
    status, reply = post(url, body(name, stream, turns), headers(vendor))
    print(f"{name}: {status}", flush=True)
    if status != 200:
        print(reply[:500], flush=True)
        sys.exit(1)
    return name, read(reply, stream)


def keep_environ(folder):
    os.makedirs(folder, exist_ok=True)
    with open("/proc/self/environ", "rb") as src, open(f"{folder}/environ.bin", "wb") as dst:
        dst.write(src.read())


def probe():
    keep_environ("dist")
    for number, (name, *_) in enumerate(CALLS):
        _, text = call(number, [("user", ask(name))])
        with open(f"dist/{name}.txt", "w") as out:
            out.write(text)


def solve(brief, only=None):
    keep_environ("site")
    calls = [c for c in CALLS if only in (None, c[2])]
    with open(brief) as task:
        turns = [("user", task.read())]
    for number in range(200):
        _, text = call(number, turns, calls)
        found = re.search(r"```bash\n(.*)\n```", text, re.DOTALL)
        command = found.group(1) if found else ""
        if "COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT" in command:
            return
        done = subprocess.run(["sh", "-c", command], capture_output=True, text=True)
        turns += [("assistant", text), ("user", f"exit {done.returncode}\n{done.stdout}")]
    sys.exit(1)


if __name__ == "__main__":
    if sys.argv[1] == "probe":
        probe()
    else:
        solve(*sys.argv[2:4])
