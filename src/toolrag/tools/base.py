"""``GuardedToolSpec``: a ``BaseToolSpec`` whose tools validate arguments and never raise.

Each spec function keeps its typed signature and LLM-facing docstring (LlamaIndex builds the
JSON schema from them). ``to_tool_list`` wraps every function so that arguments are validated
against that schema first, and any failure becomes a :class:`ToolResult` the agent can read.
"""

from __future__ import annotations

import dataclasses
import inspect
import logging
from collections.abc import Callable, Collection
from typing import Any, ClassVar

from llama_index.core.tools import FunctionTool
from llama_index.core.tools.tool_spec.base import BaseToolSpec
from pydantic import BaseModel, ValidationError, create_model
from pydantic.fields import FieldInfo

from toolrag.errors import IndexMissingError, InputError, ToolragError
from toolrag.tools.result import ErrorCode, ToolResult
from toolrag.tools.self_timed import SelfTimedTool

log = logging.getLogger(__name__)


def _describe_errors(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors():
        loc = ".".join(str(x) for x in err["loc"]) or "arguments"
        parts.append(f"{loc}: {err['msg']}")
    return "; ".join(parts)


def split_docstring(doc: str) -> tuple[str, dict[str, str]]:
    """Split a Google-style docstring into the description and the ``Args:`` descriptions.

    ``doc`` is dedented (``inspect.getdoc``); an argument line is the least indented line of
    the block, and deeper-indented lines continue the argument above them.
    """
    head, _, args_block = doc.partition("\nArgs:")
    lines = [line for line in args_block.splitlines() if line.strip()]
    indent = min((len(line) - len(line.lstrip()) for line in lines), default=0)
    arg_docs: dict[str, str] = {}
    current = None
    for line in lines:
        if len(line) - len(line.lstrip()) == indent:
            name, _, text = line.strip().partition(":")
            current = name.split(" (")[0].strip()
            arg_docs[current] = text.strip()
        elif current:
            arg_docs[current] += " " + line.strip()
    return " ".join(head.split()), arg_docs


def described_schema(schema: type[BaseModel], arg_docs: dict[str, str]) -> type[BaseModel]:
    """A copy of ``schema`` whose fields carry the docstring's per-argument descriptions."""
    fields: dict[str, Any] = {}
    for name, info in schema.model_fields.items():
        merged = FieldInfo.merge_field_infos(
            info, description=arg_docs.get(name) or info.description
        )
        fields[name] = (info.annotation, merged)
    model: type[BaseModel] = create_model(schema.__name__, **fields)
    return model


def check_arguments(
    name: str,
    schema: type[BaseModel],
    arguments: dict[str, Any],
    allowed_extra: Collection[str] = (),
) -> dict[str, Any] | ToolResult:
    """The arguments a caller set, validated against ``schema``, or the ``INVALID_ARGUMENT``
    result to return: an argument the schema does not name (``allowed_extra`` excepted) is
    refused with the real ones, a value of the wrong type gets the schema's message. Extra
    arguments that are allowed come back unchanged."""
    fields = schema.model_fields
    wanted = ", ".join(f"{k}{'' if f.is_required() else '?'}" for k, f in fields.items())
    unknown = sorted(str(k) for k in arguments if k not in fields and k not in allowed_extra)
    if unknown:
        listing = ", ".join(repr(k[:40]) for k in unknown[:5])
        return ToolResult.fail(
            ErrorCode.INVALID_ARGUMENT,
            f"{name} has no argument {listing}; its arguments are ({wanted or 'none'}).",
            suggestion=f"Call {name} again with only its own arguments ({wanted}).",
        )
    try:
        model = schema.model_validate({k: v for k, v in arguments.items() if k in fields})
    except ValidationError as exc:
        return ToolResult.fail(
            ErrorCode.INVALID_ARGUMENT,
            f"Invalid arguments for {name}: {_describe_errors(exc)}",
            suggestion=f"Call {name} with arguments ({wanted}) of the documented types.",
        )
    extra = {k: v for k, v in arguments.items() if k not in fields}
    return {**{k: getattr(model, k) for k in model.model_fields_set}, **extra}


def call_validated(
    name: str, fn: Callable[..., Any], schema: type[BaseModel] | None, kwargs: dict[str, Any]
) -> ToolResult:
    """Validate ``kwargs`` against ``schema``, run ``fn``, and always return a ToolResult."""
    call_kwargs = kwargs if schema is None else check_arguments(name, schema, kwargs)
    if isinstance(call_kwargs, ToolResult):
        return call_kwargs
    try:
        result = fn(**call_kwargs)
    except InputError as exc:
        code = (
            ErrorCode.UNKNOWN_PROJECT
            if "project" in exc.message.lower()
            else (ErrorCode.INVALID_ARGUMENT)
        )
        return ToolResult.fail(code, exc.message, suggestion=exc.hint)
    except IndexMissingError as exc:
        return ToolResult.fail(
            ErrorCode.INDEX_MISSING, exc.message, suggestion=exc.hint, recoverable=False
        )
    except ToolragError as exc:
        return ToolResult.fail(ErrorCode.INTERNAL_ERROR, exc.message, suggestion=exc.hint)
    except Exception as exc:  # a tool must never crash the agent
        log.exception("tool %s failed", name)
        return ToolResult.fail(
            ErrorCode.INTERNAL_ERROR,
            f"{name} failed: {exc.__class__.__name__}: {exc}",
            suggestion="Try different arguments or another tool.",
        )
    if not isinstance(result, ToolResult):
        result = ToolResult.ok(result)
    return result


def validated_call(
    name: str, fn: Callable[..., Any], schema: type[BaseModel] | None
) -> Callable[..., ToolResult]:
    """``fn`` behind :func:`call_validated`, as a function of the tool's arguments only: no
    parameter of the wrapper can be set by a caller (a ``_schema=None`` argument is just an
    unknown argument, refused)."""

    def run(**kwargs: Any) -> ToolResult:
        return call_validated(name, fn, schema, kwargs)

    return run


class GuardedToolSpec(BaseToolSpec):
    """Base for toolrag tool specs. Subclasses list ``spec_functions`` like any BaseToolSpec,
    and set ``self_timed`` when their functions enforce their own deadline (the guard then runs
    their tools inline, :mod:`toolrag.tools.self_timed`)."""

    self_timed: ClassVar[bool] = False

    def describe_tool(self, name: str, description: str) -> str:
        """The tool's description; a spec over user data appends what that data holds."""
        return description

    def to_tool_list(
        self, spec_functions: Any = None, func_to_metadata_mapping: Any = None
    ) -> list[FunctionTool]:
        tools = []
        for plain in super().to_tool_list(spec_functions, func_to_metadata_mapping):
            name = plain.metadata.get_name()
            fn = getattr(self, name)
            description, arg_docs = split_docstring(inspect.getdoc(fn) or "")
            schema = plain.metadata.fn_schema
            if schema is not None:
                schema = described_schema(schema, arg_docs)

            run = validated_call(name, fn, schema)
            metadata = dataclasses.replace(
                plain.metadata,
                description=self.describe_tool(name, description),
                fn_schema=schema,
            )
            kind = SelfTimedTool if self.self_timed else FunctionTool
            tools.append(kind(fn=run, metadata=metadata))
        return tools
