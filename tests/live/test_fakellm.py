"""The live suite's fake LLM on its own: what a prompt makes it answer (no agent, no tmux).

Not a live test: it runs everywhere in about a second. It keeps the dialog walk
(test_live_dialogs.py) honest: CALLTOOL chains, the typed text of a message that carries a
cancelled turn too, and a held reply that ends only when released.
"""

from __future__ import annotations

import json
import threading
import time
import urllib.request

import pytest

from tests.helpers.live.fakellm import AFTER_TOOL, QUICK, FakeLLM


@pytest.fixture
def llm():
    server = FakeLLM(slow_tick=0.05, slow_max=10).start(0)
    yield server
    server.stop()


def post(llm: FakeLLM, path: str, body: dict, stream: bool = False):
    req = urllib.request.Request(llm.url + path,
                                 data=json.dumps(dict(body, stream=stream)).encode(),
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=15) as resp:
        data = resp.read()
    return data.decode() if stream else json.loads(data)


TOOLS = [{"type": "function", "function": {"name": n, "parameters": {"type": "object"}}}
         for n in ("bash", "question", "write")]
PROMPT = ('ask1 CALLTOOL:question{"questions":[{"question":"Which {colour}"}]} '
          'CALLTOOL:write{"file_path":"@PLANFILE@"}')


def chat(llm: FakeLLM, messages: list[dict]) -> dict:
    return post(llm, "/v1/chat/completions", {"messages": messages, "tools": TOOLS})["choices"][0][
        "message"]


def test_calltool_calls_each_tool_in_turn_then_answers(llm):
    msgs = [{"role": "system", "content": "plans go to /home/u/.agent/plans/p-1.md here"},
            {"role": "user", "content": PROMPT}]
    first = chat(llm, msgs)["tool_calls"][0]["function"]
    assert first["name"] == "question"
    assert json.loads(first["arguments"]) == {"questions": [{"question": "Which {colour}"}]}
    msgs += [{"role": "assistant", "tool_calls": []}, {"role": "tool", "content": "Blue"}]
    second = chat(llm, msgs)["tool_calls"][0]["function"]
    assert (second["name"], json.loads(second["arguments"])) == (
        "write", {"file_path": "/home/u/.agent/plans/p-1.md"})
    msgs += [{"role": "assistant", "tool_calls": []}, {"role": "tool", "content": "ok"}]
    assert chat(llm, msgs)["content"] == AFTER_TOOL


def test_a_tool_the_request_does_not_offer_is_not_called_without_forcetool(llm):
    msgs = [{"role": "user", "content": 'CALLTOOL:ExitPlanMode{}'}]
    assert chat(llm, msgs)["content"] == QUICK
    msgs = [{"role": "user", "content": 'FORCETOOL CALLTOOL:ExitPlanMode{}'}]
    assert chat(llm, msgs)["tool_calls"][0]["function"]["name"] == "ExitPlanMode"


def test_the_typed_text_is_the_last_part_of_a_message(llm):
    # gemini sends a cancelled turn's text again, in the same entry as the new prompt
    body = {"contents": [{"role": "user", "parts": [{"text": PROMPT},
                                                     {"text": "plan1 SAY{Planned.}SAY"}]}],
            "tools": [{"functionDeclarations": [{"name": "question"}]}]}
    out = post(llm, "/v1beta/models/m:generateContent", body)
    assert out["candidates"][0]["content"]["parts"] == [{"text": "Planned."}]
    # claude sends a declined tool's result with the next prompt, in one message
    body = {"messages": [
        {"role": "user", "content": PROMPT},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "question",
                                           "input": {}}]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t1", "content": "declined"},
            {"type": "text", "text": "<system-reminder>r</system-reminder>"},
            {"type": "text", "text": 'again CALLTOOL:question{"q":2}'}]}],
        "tools": [{"name": "question", "input_schema": {"type": "object"}}]}
    blocks = post(llm, "/v1/messages", body)["content"]
    assert [b["input"] for b in blocks if b["type"] == "tool_use"] == [{"q": 2}]


def test_a_held_reply_streams_until_released(llm):
    llm.hold("h1")
    box: list[str] = []
    worker = threading.Thread(target=lambda: box.append(post(llm, "/v1/chat/completions", {
        "messages": [{"role": "user", "content": "Summarise the conversation"}]}, True)))
    worker.start()
    time.sleep(0.5)
    assert worker.is_alive() and llm.streaming("h1")
    llm.release("h1")
    worker.join(5)
    assert box and "Slow reply complete." in box[0]
    assert chat(llm, [{"role": "user", "content": "hi"}])["content"] == QUICK  # hold is over


def test_httpfail_answers_the_scripted_error_and_nothing_else(llm):
    import urllib.error

    body = {"model": "m", "tools": TOOLS,
            "messages": [{"role": "user", "content": "HTTPFAIL:400 now"}]}
    with pytest.raises(urllib.error.HTTPError) as err:
        post(llm, "/v1/chat/completions", body)
    assert err.value.code == 400
    assert json.loads(err.value.read())["error"]["message"] == "fakellm: scripted HTTP 400"
    assert llm.requests[-1]["decision"] == "http_400"
    # a prompt without it is answered as usual
    ok = post(llm, "/v1/chat/completions", dict(body, messages=[
        {"role": "user", "content": "say hello"}]))
    assert ok["choices"][0]["message"]["content"] == QUICK
