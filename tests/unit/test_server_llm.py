"""The ``openai_like`` LLM against a fake chat-completions server (httpx.MockTransport): the
requests it sends (ReAct stop sequences, tool-call and tool-result shapes) and the one-line
errors a failing server turns into. The real server is in test_openai_server.py."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import pytest
from llama_index.core.llms import ChatMessage, MessageRole
from llama_index.core.tools import FunctionTool

from toolrag import Settings
from toolrag.agent.loop import build_agent, run_agent
from toolrag.errors import LLMServerError
from toolrag.models.llms import make_llm
from toolrag.models.server import ServerLLM, reshape_messages

BASE = "http://127.0.0.1:9/v1"


def completion(content: str | None = "Thought: done.\nAnswer: 4", calls: Any = None) -> dict:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if calls:
        message["tool_calls"] = calls
    return {
        "id": "c1", "object": "chat.completion", "created": 0, "model": "m",
        "choices": [{"index": 0, "message": message,
                     "finish_reason": "tool_calls" if calls else "stop"}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12},
    }  # fmt: skip


class FakeServer:
    """Records each request body and answers with the next reply (a dict or a status)."""

    def __init__(self, *replies: Any) -> None:
        self.replies, self.bodies = list(replies), []  # type: list[Any], list[dict]

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.bodies.append(json.loads(request.content))
        reply = self.replies.pop(0) if len(self.replies) > 1 else self.replies[0]
        if isinstance(reply, int):
            return httpx.Response(reply, json={"error": {"message": "7 validation errors: ..."}})
        return httpx.Response(200, json=reply)


def server_llm(
    fake: FakeServer, mode: str = "react", role: str = "tool", response_format: str = "auto"
) -> ServerLLM:
    settings = Settings(llm_provider="openai_like", api_base=BASE, llm_model="m",
                        agent_mode=mode, tool_result_role=role,
                        response_format=response_format)  # fmt: skip
    llm = make_llm(settings)
    assert isinstance(llm, ServerLLM)
    transport = httpx.MockTransport(fake)
    # same settings, the fake server under the reshaping transport
    return ServerLLM(**{**_kwargs(llm), "transport": transport, "async_transport": transport,
                        "max_retries": 0})  # fmt: skip


def _kwargs(llm: ServerLLM) -> dict[str, Any]:
    keep = ("model", "api_base", "api_key", "is_chat_model", "is_function_calling_model",
            "temperature", "max_tokens", "additional_kwargs", "agent_mode",
            "tool_result_role", "response_format")  # fmt: skip
    return {k: getattr(llm, k) for k in keep}


def test_react_mode_sends_the_observation_stop_sequence() -> None:
    fake = FakeServer(completion())
    server_llm(fake, "react").chat([ChatMessage(role=MessageRole.USER, content="2+2?")])
    assert fake.bodies[0]["stop"] == ["\nObservation:"]
    fake = FakeServer(completion())
    server_llm(fake, "function").chat([ChatMessage(role=MessageRole.USER, content="2+2?")])
    assert "stop" not in fake.bodies[0]  # the function agent's replies are tool calls


def test_tool_call_messages_take_the_shapes_strict_servers_accept() -> None:
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": "total?"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_1", "type": "function",
             "function": {"name": "run_sql", "arguments": '{"sql": "SELECT 1"}'}}]},
        {"role": "tool", "content": '{"rows": [[1]]}', "tool_call_id": "call_1"},
    ]  # fmt: skip
    as_tool = json.loads(json.dumps(messages))
    reshape_messages(as_tool, "tool")
    assert as_tool[1]["content"] == "" and as_tool[1]["tool_calls"]  # not null: HTTP 500
    assert as_tool[2] == messages[2]  # OpenAI's shape: role tool, with its tool_call_id
    as_user = json.loads(json.dumps(messages))
    reshape_messages(as_user, "user")
    assert as_user[2] == {"role": "user", "content": 'Result of run_sql:\n{"rows": [[1]]}'}


def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: the first. b: the second.
    """
    return a + b


def test_function_agent_history_reaches_the_server_reshaped() -> None:
    """The FunctionAgent's second request carries its tool call and the result: content ""
    on the assistant message and the result as role tool (what failed with HTTP 500)."""
    call = [{"id": "call_1", "type": "function",
             "function": {"name": "add", "arguments": '{"a": 2, "b": 2}'}}]  # fmt: skip
    fake = FakeServer(completion(None, call), completion("2 + 2 is 4."))
    llm = server_llm(fake, "function")
    agent = build_agent([FunctionTool.from_defaults(add)], llm, kind="function")
    answer = asyncio.run(run_agent(agent, "What is 2 + 2?", max_repairs=0))
    assert answer.answer == "2 + 2 is 4." and answer.tools_called == ["add"]
    second = fake.bodies[1]["messages"]
    assistant = next(m for m in second if m.get("tool_calls"))
    assert assistant["content"] == ""
    assert {"role": "tool", "content": "4", "tool_call_id": "call_1"} in second
    assert fake.bodies[1]["tools"][0]["function"]["name"] == "add"


def test_a_server_refusing_tool_calls_names_the_mode_that_works() -> None:
    fake = FakeServer(500)
    agent = build_agent(
        [FunctionTool.from_defaults(add)], server_llm(fake, "function"), kind="function"
    )
    with pytest.raises(LLMServerError) as err:
        asyncio.run(run_agent(agent, "What is 2 + 2?", max_repairs=0))
    line = err.value.one_line()
    assert "does not accept tool calls" in line and "--mode react" in line
    assert "validation" not in line and "\n" not in line  # not the provider's raw message


def test_an_unreachable_server_is_one_sentence() -> None:
    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection refused", request=request)

    llm = server_llm(FakeServer(completion()), "react")
    llm = ServerLLM(**{**_kwargs(llm), "transport": httpx.MockTransport(refuse), "max_retries": 0})
    with pytest.raises(LLMServerError, match=r"cannot be reached\. Start the server"):
        llm.chat([ChatMessage(role=MessageRole.USER, content="hi")])


def test_a_silent_reply_to_a_tool_request_is_asked_again_without_tools() -> None:
    """llama-cpp-python's chatml-function-calling answers with neither text nor a call when
    the model chooses to answer; the same messages without tools get the answer."""
    call = [{"id": "call_1", "type": "function",
             "function": {"name": "add", "arguments": '{"a": 2, "b": 2}'}}]  # fmt: skip
    fake = FakeServer(completion(None, call), completion(None), completion("It is 4."))
    llm = server_llm(fake, "function")
    agent = build_agent([FunctionTool.from_defaults(add)], llm, kind="function")
    answer = asyncio.run(run_agent(agent, "What is 2 + 2?", max_repairs=0))
    assert answer.answer == "It is 4." and answer.unreadable == 0
    assert "tools" in fake.bodies[1] and "tools" not in fake.bodies[2]
    assert fake.bodies[2]["messages"] == fake.bodies[1]["messages"]


DECISION = {"action": "call_tools", "calls": [{"tool": "add", "arguments": {"a": 2, "b": 2}}]}


def test_the_router_asks_for_its_schema_in_the_first_format_the_server_takes() -> None:
    """A server that refuses ``json_schema`` (llama-cpp-python's answers 422) gets
    ``json_object`` with the schema, then that format only: one refusal per server."""
    from toolrag.routing.router import Router

    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    fake = FakeServer(422, completion(json.dumps(DECISION)), completion(json.dumps(DECISION)))
    router = Router(server_llm(fake, "router+react"))
    tools = [FunctionTool.from_defaults(add)]
    for _ in range(2):
        result = router.route("What is 2 plus 2?", tools)
        assert result.decision is not None and result.decision.calls[0].tool == "add"
    formats = [b["response_format"] for b in fake.bodies]
    assert [f["type"] for f in formats] == ["json_schema", "json_object", "json_object"]
    schema = formats[1]["schema"]
    assert set(schema["properties"]) >= {"action", "calls", "message"}
    assert formats[0]["json_schema"]["name"] == "RouteDecision"
    assert formats[0]["json_schema"]["schema"] == schema
    assert result.prompt_tokens == 10  # the server's usage still reaches the route


def test_a_server_that_takes_no_response_format_gets_a_plain_request() -> None:
    fake = FakeServer(400, 422, completion('{"action": "answer_directly", "message": "4"}'))
    llm = server_llm(fake)
    reply = llm.complete_json("2+2?", {"type": "object"}, "Reply")
    assert json.loads(reply.text)["message"] == "4"
    assert ["response_format" in b for b in fake.bodies] == [True, True, False]


def test_a_format_set_by_hand_that_the_server_refuses_is_one_line_naming_auto() -> None:
    fake = FakeServer(422)
    llm = server_llm(fake, response_format="json_schema")
    with pytest.raises(LLMServerError) as info:
        llm.complete_json("2+2?", {"type": "object"}, "Reply")
    assert "refused response_format 'json_schema' (HTTP 422)" in str(info.value)
    assert "TOOLRAG_RESPONSE_FORMAT=auto" in (info.value.hint or "")
    assert len(fake.bodies) == 1


def test_a_call_written_as_fenced_json_text_is_read_as_the_call() -> None:
    """Qwen2.5-Coder under llama-server's native template writes its call in a ```json fence:
    the FunctionAgent gets it as a tool call, and the next request carries it as one."""
    text = '```json\n{"name": "add", "arguments": {"a": 2, "b": 2}}\n```\n\n'
    fake = FakeServer(completion(text), completion("2 + 2 is 4."))
    agent = build_agent([FunctionTool.from_defaults(add)], server_llm(fake, "function"),
                        kind="function")  # fmt: skip
    answer = asyncio.run(run_agent(agent, "What is 2 + 2?", max_repairs=0))
    assert answer.tools_called == ["add"] and answer.answer == "2 + 2 is 4."
    second = fake.bodies[1]["messages"]
    assistant = next(m for m in second if m.get("tool_calls"))
    assert assistant["tool_calls"][0]["function"]["name"] == "add"
    call_id = assistant["tool_calls"][0]["id"]
    assert {"role": "tool", "content": "4", "tool_call_id": call_id} in second


@pytest.mark.parametrize(
    "text",
    [
        "The answer is 4.",
        '{"name": "subtract", "arguments": {"a": 2}}',  # not an offered tool
        '{"name": "add", "arguments": "not json"}',
        'Here you go: {"name": "add", "arguments": {"a": 2, "b": 2}}',  # text around it
        '[{"name": "add", "arguments": {}}, {"result": 4}]',  # one item is no call
    ],
)
def test_text_that_is_not_only_calls_stays_the_answer(text: str) -> None:
    from toolrag.models.server import calls_in_text

    assert calls_in_text(text, {"add"}) == []


def test_a_list_of_calls_in_text_is_read_in_order() -> None:
    from toolrag.models.server import calls_in_text

    text = '[{"name": "add", "arguments": {"a": 1}}, {"name": "add", "parameters": "{\\"b\\": 2}"}]'
    assert calls_in_text(text, {"add"}) == [("add", {"a": 1}), ("add", {"b": 2})]


# what servers reply when the prompt is longer than the model's context
OVERFLOWS = {
    "llama-server": (
        400,
        {"error": {"code": 400, "type": "exceed_context_size_error", "n_prompt_tokens": 78928,
                   "n_ctx": 16384, "message": "request (78928 tokens) exceeds the available "
                   "context size (16384 tokens), try increasing it"}},
        "(78,928 tokens; it holds 16,384)",
    ),
    "openai": (
        400,
        {"error": {"code": "context_length_exceeded", "type": "invalid_request_error",
                   "message": "This model's maximum context length is 128000 tokens. However, "
                   "your messages resulted in 130512 tokens. Please reduce the length."}},
        "(130,512 tokens; it holds 128,000)",
    ),
    "vllm": (
        400,
        {"object": "error", "message": "This model's maximum context length is 4096 tokens. "
         "However, you requested 5120 tokens (4736 in the messages, 384 in the completion).",
         "type": "BadRequestError", "code": 400},
        "(5,120 tokens; it holds 4,096)",
    ),
}  # fmt: skip


@pytest.mark.parametrize("server", sorted(OVERFLOWS))
def test_a_prompt_past_the_context_is_one_line_saying_so(server: str) -> None:
    status, body, sizes = OVERFLOWS[server]
    llm = server_llm(FakeServer(completion()), "react")

    def reply(request: httpx.Request) -> httpx.Response:
        return httpx.Response(status, json=body)

    llm = ServerLLM(**{**_kwargs(llm), "transport": httpx.MockTransport(reply), "max_retries": 0})
    with pytest.raises(LLMServerError) as err:
        llm.chat([ChatMessage(role=MessageRole.USER, content="hi")])
    line = err.value.one_line()
    assert "longer than the model's context" in line and sizes in line, line
    assert "TOOLRAG_TOOL_TOP_K" in line and "\n" not in line


def test_other_bad_requests_are_not_taken_for_an_overflow() -> None:
    llm = server_llm(FakeServer(400), "react")
    with pytest.raises(LLMServerError) as err:
        llm.chat([ChatMessage(role=MessageRole.USER, content="hi")])
    assert "context" not in err.value.one_line()
