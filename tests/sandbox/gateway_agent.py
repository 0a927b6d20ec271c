"""A tiny agent that runs *inside* the container (standard library only): it calls the model
gateway once in each protocol, streamed and not, through the base-URL and key variables the
harness sets, and writes what each reply says to ``dist/<call>.txt``. It also copies its own
environment (``/proc/self/environ``) to ``dist/environ.bin``, so a test can look for a key in
every byte of it. It stops at the first call that is not answered (exit 1), printing why.
"""

import json
import os
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


def body(name, vendor, stream):
    text = ask(name)
    if name.startswith("anthropic"):
        return {"model": "claude-haiku-4-5", "max_tokens": 64, "stream": stream,
                "messages": [{"role": "user", "content": text}]}  # fmt: skip
    if name.startswith("responses"):
        return {"model": "gpt-4.1-mini", "stream": True, "input": text}
    if name.startswith("chat"):
        return {"model": "gpt-4.1-mini", "stream": stream,
                "messages": [{"role": "user", "content": text}]}  # fmt: skip
    return {"contents": [{"role": "user", "parts": [{"text": text}]}]}


def headers(vendor):
    if vendor == "anthropic":
        return {"x-api-key": KEY[vendor], "anthropic-version": "2023-06-01"}
    if vendor == "gemini":
        return {"x-goog-api-key": KEY[vendor]}
    return {"authorization": f"Bearer {KEY[vendor]}"}


def main():
    os.makedirs("dist", exist_ok=True)
    with open("/proc/self/environ", "rb") as src, open("dist/environ.bin", "wb") as dst:
        dst.write(src.read())
    for name, url, vendor, stream, read in CALLS:
        status, reply = post(url, body(name, vendor, stream), headers(vendor))
        print(f"{name}: {status}", flush=True)
        if status != 200:
            print(reply[:500], flush=True)
            sys.exit(1)
        with open(f"dist/{name}.txt", "w") as out:
            out.write(read(reply, stream))


if __name__ == "__main__":
    main()
