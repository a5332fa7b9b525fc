"""The ``router+react`` agent mode: the router decides first; its validated calls run through the
guard in parallel and become the first steps of the trace, and the ReActAgent answers from
their results (or calls more tools when they are not enough). The calls and their results are
handed to the ReActAgent as its own first Thought/Action/Observation steps, the format it was
prompted with, so a small model answers from them rather than calling the same tool again.
A direct answer or a clarifying question from the router is the answer. A decision still
invalid after its repair round falls back to the plain ReAct run.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from llama_index.core.agent.react.types import (
    ActionReasoningStep,
    BaseReasoningStep,
    ObservationReasoningStep,
)

from toolrag.agent import Answer, TraceStep, build_agent, emit_answer, run_agent
from toolrag.events import emit
from toolrag.guarded_tools import RunState

if TYPE_CHECKING:
    from toolrag.toolbox import Toolbox

ROUTED_THOUGHT = "I need to use a tool to help me answer the question."


async def ask_routed(toolbox: Toolbox, question: str) -> Answer:
    """Answer ``question`` in router+react mode (see the module docstring)."""
    started = time.perf_counter()
    run = RunState()
    retriever = toolbox.tool_retriever(run)
    tools = await retriever.aretrieve(question)
    offered = [t.metadata.get_name() for t in tools]
    routed = await toolbox.router().arun(question, tools, toolbox.guard, run_id=run.run_id)
    routed.id = toolbox.decisions.record(routed)
    decision = routed.decision
    emit(
        "route",
        tools=offered,
        text=decision.model_dump_json() if decision else "; ".join(routed.errors),
        success=routed.valid,
        data={"decision_id": routed.id, "repaired": routed.repaired},
    )
    if routed.valid and decision is not None and decision.action != "call_tools":
        answer = Answer(
            question=question,
            answer=decision.message,
            tools_offered=offered,
            run_id=run.run_id,
            route_id=routed.id,
            llm_calls=len(routed.raw),
            prompt_tokens=routed.prompt_tokens,
            completion_tokens=routed.completion_tokens,
            seconds=round(time.perf_counter() - started, 3),
        )
        emit_answer(answer)
        return answer
    first: list[TraceStep] = []
    reasoning: list[BaseReasoningStep] = []
    sources = []
    if routed.valid and decision is not None:
        remember = getattr(retriever.retriever, "remember", None)
        for n, (call, result) in enumerate(zip(decision.calls, routed.results, strict=True)):
            rendered = result.render(max_chars=4000)
            first.append(
                TraceStep(
                    step=n + 1,
                    tool=call.tool,
                    tools_offered=offered,
                    arguments=call.arguments,
                    success=result.success,
                    error_code=result.error_code.value if result.error_code else None,
                    recoverable=result.recoverable,
                    empty=result.empty,
                    observation=rendered[:600],
                )
            )
            emit(
                "tool_result",
                tool=call.tool,
                step=n + 1,
                arguments=call.arguments,
                success=result.success,
                text=rendered[:600],
                data={"error_code": first[-1].error_code, "empty": result.empty},
            )
            reasoning += [
                ActionReasoningStep(
                    thought=ROUTED_THOUGHT, action=call.tool, action_input=call.arguments
                ),
                ObservationReasoningStep(observation=rendered),
            ]
            sources += [s for s in result.sources if s not in sources]
            if remember is not None:
                remember(call.tool)
    agent = build_agent([], toolbox.llm, tool_retriever=retriever)
    answer = await run_agent(
        agent,
        question,
        max_iterations=toolbox.settings.max_iterations,
        approver=toolbox.approver(),
        run_id=run.run_id,
        final_event=False,
        reasoning=reasoning,
    )
    for step in answer.trace:
        step.step += len(first)
    answer.question = question
    answer.trace = first + answer.trace
    answer.sources = sources + [s for s in answer.sources if s not in sources]
    answer.route_id = routed.id
    answer.llm_calls += len(routed.raw)
    answer.prompt_tokens += routed.prompt_tokens
    answer.completion_tokens += routed.completion_tokens
    answer.seconds = round(time.perf_counter() - started, 3)
    emit_answer(answer)
    return answer
