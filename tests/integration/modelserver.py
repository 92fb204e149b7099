#!/usr/bin/env python3
"""A scripted model server on loopback for driving real agent harnesses.

Speaks enough of three wire protocols to play an agent that issues a
scripted list of shell tool calls and then finishes:

  - Anthropic Messages API  (POST /v1/messages, SSE or JSON; also
    /v1/messages/count_tokens)          -- Claude Code
  - OpenAI Responses API    (POST /v1/responses, SSE)   -- Codex CLI
  - OpenAI Chat Completions (POST /v1/chat/completions, SSE) -- others

The script is a JSON file (--script) holding a list of "turns"; each turn
is a list of shell commands issued in parallel in one assistant message
(a plain string is a one-command turn; an object {"tool": NAME, "input":
{...}} is a call of another tool, e.g. Agent).  The script may be an
object {"main": [...], "sub": [...]}: a conversation whose first user
message holds "[sub]" (a subagent's prompt) plays "sub".  After the last turn the model
says FINAL_TEXT and stops.  The position in the script is derived from
the conversation itself (how many tool results it already holds), so
one server serves any number of independent sessions, subagents and
retries.  A request that offers no shell tool (title generation, quota
checks, ...) gets a short text answer.

Every request (path, headers without auth, body) is appended to --log as
one JSON line; every tool result the harness sends back is appended to
--results as one JSON line.

  python3 modelserver.py --port 0 --portfile P --log L --script S
"""
import argparse
import json
import sys
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

LOCK = threading.Lock()
ARGS = None
SCRIPT = []
FINAL_TEXT = "All done."
SHELL_TOOLS = ("Bash", "shell", "shell_command", "exec_command",
               "local_shell", "container.exec")


def log(path, obj):
    if not path:
        return
    with LOCK, open(path, "a") as f:
        f.write(json.dumps(obj) + "\n")
        f.flush()


SUBSCRIPT = []


def turn_commands(i, script=None):
    t = (SCRIPT if script is None else script)[i]
    return t if isinstance(t, list) else [t]


def first_user_text(body):
    for m in body.get("messages") or []:
        if m.get("role") != "user":
            continue
        c = m.get("content")
        if isinstance(c, str):
            return c
        return " ".join(b.get("text", "") for b in c if isinstance(b, dict))
    return ""


def pick_script(body):
    """A subagent's conversation starts with a prompt holding '[sub]'."""
    return SUBSCRIPT if "[sub]" in first_user_text(body) else SCRIPT


# ---------------------------------------------------------------- Anthropic

def anth_tool_names(body):
    return [t.get("name") for t in body.get("tools") or [] if isinstance(t, dict)]


def anth_progress(body):
    """Count assistant turns that issued tool calls; collect tool results."""
    turns = 0
    results = []
    for m in body.get("messages") or []:
        c = m.get("content")
        if not isinstance(c, list):
            continue
        if m.get("role") == "assistant" and any(
                b.get("type") == "tool_use" for b in c if isinstance(b, dict)):
            turns += 1
        if m.get("role") == "user":
            for b in c:
                if isinstance(b, dict) and b.get("type") == "tool_result":
                    results.append(b)
    return turns, results


def sse(handler, event, data):
    payload = ""
    if event:
        payload += "event: %s\n" % event
    payload += "data: %s\n\n" % json.dumps(data)
    handler.wfile.write(payload.encode())
    handler.wfile.flush()


def anth_reply(handler, body):
    model = body.get("model", "claude-test")
    names = anth_tool_names(body)
    blocks = []
    stop = "end_turn"
    if "Bash" in names:
        script = pick_script(body)
        sub = script is SUBSCRIPT and script is not SCRIPT
        turns, results = anth_progress(body)
        if results:
            log(ARGS.results, {"t": time.time(), "api": "anthropic", "sub": sub,
                               "turn": turns, "last": results[-len(turn_commands(turns - 1, script)):]
                               if turns else results})
        if turns < len(script):
            for k, cmd in enumerate(turn_commands(turns, script)):
                if isinstance(cmd, dict):   # {"tool": NAME, "input": {...}}
                    name, inp = cmd["tool"], cmd["input"]
                else:
                    name, inp = "Bash", {"command": cmd,
                                         "description": "scripted call %d.%d" % (turns, k)}
                blocks.append({"type": "tool_use",
                               "id": "toolu_%s%02d_%02d_%s" % ("s" if sub else "", turns, k,
                                                              uuid.uuid4().hex[:8]),
                               "name": name, "input": inp})
            stop = "tool_use"
        else:
            blocks.append({"type": "text", "text": FINAL_TEXT})
    else:
        blocks.append({"type": "text", "text": "ok"})
    msg_id = "msg_" + uuid.uuid4().hex[:24]
    usage = {"input_tokens": 10, "output_tokens": 5,
             "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
    if not body.get("stream"):
        out = {"id": msg_id, "type": "message", "role": "assistant", "model": model,
               "content": blocks, "stop_reason": stop, "stop_sequence": None,
               "usage": usage}
        data = json.dumps(out).encode()
        handler.send_response(200)
        handler.send_header("content-type", "application/json")
        handler.send_header("content-length", str(len(data)))
        handler.end_headers()
        handler.wfile.write(data)
        return
    handler.send_response(200)
    handler.send_header("content-type", "text/event-stream")
    handler.send_header("cache-control", "no-cache")
    handler.end_headers()
    sse(handler, "message_start", {"type": "message_start", "message": {
        "id": msg_id, "type": "message", "role": "assistant", "model": model,
        "content": [], "stop_reason": None, "stop_sequence": None,
        "usage": dict(usage, output_tokens=1)}})
    for i, b in enumerate(blocks):
        if b["type"] == "text":
            sse(handler, "content_block_start", {"type": "content_block_start", "index": i,
                "content_block": {"type": "text", "text": ""}})
            sse(handler, "content_block_delta", {"type": "content_block_delta", "index": i,
                "delta": {"type": "text_delta", "text": b["text"]}})
        else:
            sse(handler, "content_block_start", {"type": "content_block_start", "index": i,
                "content_block": {"type": "tool_use", "id": b["id"], "name": b["name"],
                                  "input": {}}})
            sse(handler, "content_block_delta", {"type": "content_block_delta", "index": i,
                "delta": {"type": "input_json_delta",
                          "partial_json": json.dumps(b["input"])}})
        sse(handler, "content_block_stop", {"type": "content_block_stop", "index": i})
    sse(handler, "message_delta", {"type": "message_delta",
        "delta": {"stop_reason": stop, "stop_sequence": None},
        "usage": {"output_tokens": 5}})
    sse(handler, "message_stop", {"type": "message_stop"})


# ---------------------------------------------------------------- OpenAI Responses

def resp_tool(body):
    """The shell tool the harness offers, and how its arguments look."""
    names = []
    for t in body.get("tools") or []:
        if t.get("type") == "function":
            names.append(t.get("name"))
        elif t.get("type") == "local_shell":
            names.append("local_shell")
    for n in ("shell_command", "exec_command", "shell", "local_shell"):
        if n in names:
            return n
    return None


def resp_args(tool, cmd):
    if tool == "exec_command":
        return {"cmd": cmd}
    if tool == "shell_command":
        return {"command": cmd}
    return {"command": ["bash", "-lc", cmd]}


def resp_progress(body):
    turns, results, last_was_call = 0, [], False
    for it in body.get("input") or []:
        t = it.get("type")
        if t in ("function_call", "local_shell_call", "custom_tool_call"):
            if not last_was_call:
                turns += 1
            last_was_call = True
        else:
            last_was_call = False
        if t in ("function_call_output", "local_shell_call_output", "custom_tool_call_output"):
            results.append(it)
    return turns, results


def responses_reply(handler, body):
    tool = resp_tool(body)
    rid = "resp_" + uuid.uuid4().hex[:24]
    items = []
    if tool:
        turns, results = resp_progress(body)
        if results:
            log(ARGS.results, {"t": time.time(), "api": "responses", "turn": turns,
                               "last": results[-1]})
        if turns < len(SCRIPT):
            for k, cmd in enumerate(turn_commands(turns)):
                call_id = "call_%02d_%02d_%s" % (turns, k, uuid.uuid4().hex[:8])
                if tool == "local_shell":
                    items.append({"type": "local_shell_call", "id": "lsh_" + call_id,
                                  "call_id": call_id, "status": "completed",
                                  "action": {"type": "exec", "command": ["bash", "-lc", cmd]}})
                else:
                    items.append({"type": "function_call", "id": "fc_" + call_id,
                                  "call_id": call_id, "name": tool, "status": "completed",
                                  "arguments": json.dumps(resp_args(tool, cmd))})
    if not items:
        items.append({"type": "message", "id": "msg_" + uuid.uuid4().hex[:16],
                      "role": "assistant", "status": "completed",
                      "content": [{"type": "output_text", "text": FINAL_TEXT if tool else "ok",
                                   "annotations": []}]})
    base = {"id": rid, "object": "response", "created_at": int(time.time()),
            "model": body.get("model", "test"), "status": "in_progress", "output": []}
    handler.send_response(200)
    handler.send_header("content-type", "text/event-stream")
    handler.send_header("cache-control", "no-cache")
    handler.end_headers()
    seq = 0

    def ev(name, data):
        nonlocal seq
        data = dict(data, type=name, sequence_number=seq)
        seq += 1
        sse(handler, name, data)

    ev("response.created", {"response": base})
    for i, it in enumerate(items):
        ev("response.output_item.added", {"output_index": i, "item": it})
        ev("response.output_item.done", {"output_index": i, "item": it})
    done = dict(base, status="completed", output=items,
                usage={"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0},
                       "output_tokens": 5, "output_tokens_details": {"reasoning_tokens": 0},
                       "total_tokens": 15})
    ev("response.completed", {"response": done})


# ---------------------------------------------------------------- OpenAI Chat

def chat_reply(handler, body):
    names = [t.get("function", {}).get("name") for t in body.get("tools") or []]
    tool = next((n for n in ("shell_command", "exec_command", "shell") if n in names), None)
    turns = 0
    prev_tool = False
    for m in body.get("messages") or []:
        if m.get("role") == "assistant" and m.get("tool_calls"):
            turns += 1
        if m.get("role") == "tool":
            log(ARGS.results, {"t": time.time(), "api": "chat", "turn": turns, "last": m})
    cid = "chatcmpl-" + uuid.uuid4().hex[:16]
    handler.send_response(200)
    handler.send_header("content-type", "text/event-stream")
    handler.end_headers()

    def chunk(delta, finish=None):
        sse(handler, None, {"id": cid, "object": "chat.completion.chunk",
                            "created": int(time.time()), "model": body.get("model", "test"),
                            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
    if tool and turns < len(SCRIPT):
        calls = []
        for k, cmd in enumerate(turn_commands(turns)):
            calls.append({"index": k, "id": "call_%d_%d" % (turns, k), "type": "function",
                          "function": {"name": tool,
                                       "arguments": json.dumps(resp_args(tool, cmd))}})
        chunk({"role": "assistant", "tool_calls": calls})
        chunk({}, "tool_calls")
    else:
        chunk({"role": "assistant", "content": FINAL_TEXT if tool else "ok"})
        chunk({}, "stop")
    handler.wfile.write(b"data: [DONE]\n\n")
    handler.wfile.flush()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *a):
        pass

    def _body(self):
        n = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(n) if n else b""
        try:
            return raw, json.loads(raw) if raw else {}
        except ValueError:
            return raw, {"_raw": raw.decode("utf-8", "replace")}

    def _log(self, body):
        hdrs = {k: v for k, v in self.headers.items()
                if k.lower() not in ("authorization", "x-api-key")}
        log(ARGS.log, {"t": time.time(), "method": self.command, "path": self.path,
                       "headers": hdrs, "body": body})

    def do_GET(self):
        self._log(None)
        path = self.path.split("?")[0]
        if path.endswith("/models"):
            data = json.dumps({"data": [], "object": "list", "models": []}).encode()
            self.send_response(200)
        else:
            data = b'{"error":{"type":"not_found_error","message":"scripted server"}}'
            self.send_response(404)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_HEAD(self):
        self._log(None)
        self.send_response(200)
        self.send_header("content-length", "0")
        self.end_headers()

    def do_POST(self):
        raw, body = self._body()
        self._log(body)
        path = self.path.split("?")[0]
        try:
            if path.endswith("/messages/count_tokens"):
                data = json.dumps({"input_tokens": 42}).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            elif path.endswith("/messages"):
                anth_reply(self, body)
            elif path.endswith("/responses"):
                responses_reply(self, body)
            elif path.endswith("/chat/completions"):
                chat_reply(self, body)
            else:
                data = b'{"error":{"type":"not_found_error","message":"scripted server"}}'
                self.send_response(404)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass
        self.close_connection = True


def main():
    global ARGS, SCRIPT, FINAL_TEXT
    p = argparse.ArgumentParser()
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--portfile")
    p.add_argument("--log")
    p.add_argument("--results")
    p.add_argument("--script", help="JSON list of turns; default: one turn, echo hello")
    p.add_argument("--final", default="All done.")
    ARGS = p.parse_args()
    global SUBSCRIPT
    SCRIPT = json.load(open(ARGS.script)) if ARGS.script else ["echo hello"]
    if isinstance(SCRIPT, dict):
        SUBSCRIPT = SCRIPT.get("sub", [])
        SCRIPT = SCRIPT["main"]
    FINAL_TEXT = ARGS.final
    srv = ThreadingHTTPServer((ARGS.host, ARGS.port), Handler)
    srv.daemon_threads = True
    port = srv.server_address[1]
    if ARGS.portfile:
        with open(ARGS.portfile + ".tmp", "w") as f:
            f.write("%d\n" % port)
        import os
        os.rename(ARGS.portfile + ".tmp", ARGS.portfile)
    print("listening on %s:%d" % (ARGS.host, port), file=sys.stderr, flush=True)
    srv.serve_forever()


if __name__ == "__main__":
    main()
