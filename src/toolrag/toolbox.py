"""``Toolbox``: the one entry object of the Python API.

from toolrag import Toolbox
tb = Toolbox()                 # settings from TOOLRAG_* env vars / toolrag.toml
tb.index()                     # build or update the content indexes (incremental)
answer = tb.ask("What does the handbook say about travel expenses?")
print(answer.answer, answer.sources, answer.trace)
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
from collections.abc import AsyncIterator, Coroutine, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, TypeVar

from llama_index.core.base.embeddings.base import BaseEmbedding
from llama_index.core.llms import LLM
from llama_index.core.memory import ChatMemoryBuffer
from llama_index.core.objects.base import ObjectRetriever
from llama_index.core.tools import BaseTool, FunctionTool
from llama_index.core.tools.tool_spec.base import BaseToolSpec

from toolrag.agent.loop import Answer, build_agent, run_agent
from toolrag.agent.routed import ask_routed
from toolrag.batch.questions import Question, load_questions
from toolrag.batch.run import BatchSummary, load_batch_questions, run_batch
from toolrag.cards import background
from toolrag.cards.card import ToolCard, apply_overlays, cards_from_tools, load_yaml_cards
from toolrag.cards.synthetic import SyntheticQueries
from toolrag.content.collection_index import CollectionIndex
from toolrag.content.collection_spec import CollectionSpec, load_collections
from toolrag.content.collection_tools import CollectionSearch, collection_search
from toolrag.content.index import BuildRows, ContentIndex, ProgressFn, SyncReport
from toolrag.content.retrievers import query_engine_tool
from toolrag.errors import IndexMissingError, InputError, ToolragError
from toolrag.events import AgentEvent, listening
from toolrag.guard import AuditLog, IdempotencyStore, ToolGuard
from toolrag.guard.function_tools import RunState, guarded_tools, unknown_tool
from toolrag.guard.grounding.filters import FilterValues, Vocabulary
from toolrag.guard.policy import Approver, approve_all
from toolrag.models.embeddings import make_embedding
from toolrag.models.llms import make_llm, resolve_provider
from toolrag.retrieval.agent_retriever import make_tool_retriever
from toolrag.retrieval.gate import GateChoice, choose_gate
from toolrag.retrieval.index import ToolIndex
from toolrag.retrieval.translation import QueryTranslator
from toolrag.routing import ExampleStore, Router, RouteResult
from toolrag.routing.feedback import DecisionLog
from toolrag.routing.router import ExampleMode
from toolrag.settings import Settings
from toolrag.text import MAX_QUERY_CHARS
from toolrag.tools.compute import ComputeToolSpec
from toolrag.tools.mcp_source import MCPSource, load_mcp_configs
from toolrag.tools.rest.spec import OpenAPIToolSpec, load_rest_configs
from toolrag.tools.result import ToolResult
from toolrag.tools.sql.seed import build_sqlite
from toolrag.tools.sql.spec import SQLSpecConfig, SQLToolSpec

T = TypeVar("T")
MAX_QUESTION_CHARS = MAX_QUERY_CHARS  # every text pattern downstream reads at most this


def _mtime(path: Path) -> float | None:
    try:
        return path.stat().st_mtime
    except OSError:
        return None


def run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine from sync code, also inside a running loop (a notebook cell)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    context = contextvars.copy_context()  # event listeners follow the run into the thread
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(context.run, asyncio.run, coro).result()


@dataclass
class ChatSession:
    """A conversation's memory and the tools it has used (kept offered on later turns)."""

    memory: ChatMemoryBuffer
    sticky: list[str] = field(default_factory=list)
    # the user's turns so far: a follow-up may keep the dates an earlier turn gave
    asked: list[str] = field(default_factory=list)


class Toolbox:
    """Content indexes, the tools over them, and the agent that uses them."""

    def __init__(
        self,
        settings: Settings | None = None,
        *,
        llm: LLM | None = None,
        embed: BaseEmbedding | None = None,
        approve: Approver | None = None,
        collections: Sequence[CollectionSpec] = (),
        tools: Sequence[BaseTool | BaseToolSpec] = (),
    ) -> None:
        """``approve(request) -> bool`` decides delete/external calls (default: the
        ``approval`` setting, which denies them). ``collections`` are indexed and searched
        beside those of ``toolspecs/collections.yaml``; ``tools`` (LlamaIndex tools or tool
        specs) join the built-in ones: they get cards, are retrieved and go through the
        guard like them."""
        self.settings = settings or Settings()
        self._collections = list(collections)
        self._own_tools: list[BaseTool] = []
        for item in tools:
            if isinstance(item, BaseToolSpec):
                self._own_tools += item.to_tool_list()
            elif isinstance(item, BaseTool):
                self._own_tools.append(item)
            else:
                raise InputError(
                    f"{type(item).__name__} is not a LlamaIndex tool or tool spec.",
                    hint="Pass FunctionTool, QueryEngineTool or BaseToolSpec objects as tools.",
                )
        self.approve = approve
        self._llm = llm
        self._embed = embed
        self.database_status: str | None = None
        self.requests_status: str | None = None
        self.gate_status: str | None = None
        self._writer_busy = False
        self._requests_seen: float | None = None
        self._sessions: dict[str, ChatSession] = {}

    # --- parts (built lazily: `toolrag config show` must not load models) -----------------------
    @property
    def embed(self) -> BaseEmbedding:
        if self._embed is None:
            self._embed = make_embedding(self.settings)
        return self._embed

    @property
    def llm(self) -> LLM:
        if self._llm is None:
            self._llm = make_llm(self.settings)
        return self._llm

    @cached_property
    def collections(self) -> list[CollectionSpec]:
        """The declared collections: those given to the constructor, then those of
        ``toolspecs/collections.yaml``. A name used twice is refused."""
        found = [*self._collections, *load_collections(self.settings.resolved_collections_file)]
        names = [c.name for c in found]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise InputError(
                f"Collections named twice: {', '.join(twice)}.",
                hint="Give each collection its own name.",
            )
        return found

    @cached_property
    def collection_indexes(self) -> dict[str, CollectionIndex]:
        return {c.name: CollectionIndex(self.settings.index_dir, c, self.embed,
                                        self.settings.toolspecs_dir)
                for c in self.collections}  # fmt: skip

    @cached_property
    def collection_searches(self) -> dict[str, CollectionSearch]:
        """The search tool of each indexed collection, by tool name."""
        out = {}
        for index in self.collection_indexes.values():
            if index.exists():
                search = collection_search(index, self.settings.top_k, self.settings.toolspecs_dir)
                out[index.spec.tool_name] = search
        return out

    # --- indexing -------------------------------------------------------------------------------
    def index(
        self,
        progress: ProgressFn | None = None,
        collections: Sequence[str] | None = None,
        *,
        engine: str = "local",
        address: str | None = None,
        actors: int = 2,
    ) -> list[SyncReport]:
        """Build or update the collections' indexes from ``settings.data_dir`` (incremental;
        ``collections``: only these, by name) and the sample SQL database. With
        ``engine="ray"`` the changed files are read, chunked and embedded on a Ray cluster
        (``address``, or a local one) by ``actors`` actors, and written here
        (:mod:`toolrag.content.ray_sync`)."""
        if engine not in ("local", "ray"):
            raise InputError(f"Unknown engine {engine!r}.", hint="Use local or ray.")
        if not self.settings.data_dir.is_dir():
            raise InputError(
                f"The data folder {self.settings.data_dir} does not exist.",
                hint="Set TOOLRAG_DATA_DIR to your data folder, or run from the project root.",
            )
        reports = []

        def build(index: ContentIndex) -> BuildRows | None:
            if engine != "ray":
                return None
            from toolrag.content.ray_sync import ray_build_rows

            return ray_build_rows(index, self.settings, actors, address)

        self._check_collection_names()
        if unknown := set(collections or ()) - set(self.collection_indexes):
            raise InputError(
                f"No collection named {', '.join(sorted(unknown))}.",
                hint="Declared: " + (", ".join(self.collection_indexes) or "none") + ".",
            )
        for name, index in self.collection_indexes.items():
            if collections is not None and name not in collections:
                continue
            loader = index.loader(self.settings.data_dir)
            report = index.sync(loader, progress, build(index))
            if not report.rows_total and not report.errors:
                report.errors.append(
                    f"{name}: no file matches its paths ({', '.join(index.spec.paths)}) under "
                    f"{self.settings.data_dir}; nothing indexed. Fix the paths in "
                    "collections.yaml, or add the files."
                )
            reports.append(report)
        self.database_status = self.build_database()
        for cached in ("tool_index", "sql_spec", "gate", "collection_searches"):
            self.__dict__.pop(cached, None)
        if "guard" in self.__dict__:  # new field values a question can name
            self.guard.vocabulary = self.filter_vocabulary()
        if collections is None:
            self.requests_status = self.write_requests()
            self.gate_status = self.choose_gate_now()
        return reports

    def choose_gate_now(self) -> str | None:
        """With ``tool_gate = auto``, build the tool index and choose its "no tool fits" gate
        now (saved beside the index, :func:`toolrag.retrieval.gate.choose_gate`), so the first
        question does not wait for it. What was chosen, in a sentence; None when the gate is
        not automatic or a background writer is still writing requests (the gate is chosen
        from them on the first question after it finishes)."""
        if self.settings.tool_gate != "auto" or self._writer_busy:
            return None
        try:
            choice = self.gate
        except ToolragError as exc:  # a tool source not reachable now: the first question tries
            return f"no tool gate chosen now ({exc}); the first question chooses it"
        if choice.gate is None:
            return f"no tool gate chosen: {choice.reason}"
        kept = choice.evidence_kept if choice.evidence is not None else choice.kept
        how = "cosine and shared words" if choice.evidence is not None else "cosine"
        said = [f"tool gate ({how}) chosen from {choice.requests} written requests"]
        if kept is not None:
            said.append(f"offers tools to {kept:.0%} of them")
        if choice.offtopic_emptied is not None:
            said.append(f"withholds them from {choice.offtopic_emptied:.0%} of off-topic questions")
        return ", ".join(said) + "; kept beside the tool index"

    def _cards_with_requests(self) -> list[ToolCard]:
        """The tool cards with the requests cached for them (``toolrag tools synth`` or the
        background writer), where their YAML overlay gives none."""
        cards = self.cards()
        if self.settings.synthetic_db.is_file():
            cards = SyntheticQueries(self.settings.synthetic_db).augment(cards)
        return cards

    def missing_requests(self) -> list[ToolCard]:
        """The tool cards with no example requests: none declared in their YAML overlay and
        none written into the cache (``toolrag tools synth`` or the background writer)."""
        return [c for c in self._cards_with_requests() if not c.synthetic]

    def _forget_tool_index(self) -> None:
        """Build the tool index (new requests embedded) and choose the gate again when next
        used."""
        for cached in ("tool_index", "gate"):
            self.__dict__.pop(cached, None)

    def write_requests(self) -> str | None:
        """Have the LLM write example requests for the cards that have none, as the
        ``write_requests`` setting says (``background``: a separate low-priority process,
        :mod:`toolrag.cards.background`; ``index``: now). What it did, in a sentence, or None
        when there was nothing to do. The scripted LLM writes none, and an LLM object given to
        the constructor is not handed to another process (``background`` leaves it to
        ``toolrag tools synth``)."""
        mode = self.settings.write_requests
        if mode == "off" or resolve_provider(self.settings) == "scripted":
            return None
        missing = self.missing_requests()
        if not missing:
            return None
        if mode == "index":
            written = background.write(self.settings, missing, self.llm)
            self._forget_tool_index()
            return f"wrote example requests for {written} of {len(missing)} tool(s)"
        if self._llm is not None:
            return None
        pid = background.start(self.settings, missing)
        self._writer_busy = True  # this one, or another writer that is running
        if pid is None:
            return "example requests are being written by another process"
        return (
            f"writing example requests for {len(missing)} tool(s) in the background "
            f"(pid {pid}, log {background.log_file(self.settings)}); questions use them once "
            "it finishes"
        )

    def build_database(self) -> str | None:
        """Build the sample SQLite database from ``data_dir/db/seed.sql`` when no
        ``database_url`` is configured and the script exists (only when the script changed).
        Returns "built", "unchanged", or None when there is nothing to build."""
        if self.settings.database_url or not self.settings.seed_sql.is_file():
            return None
        built = build_sqlite(self.settings.seed_sql, self.settings.sample_db_path)
        return "built" if built else "unchanged"

    def _check_collection_names(self) -> None:
        """A collection's tool may not take the name of another tool (a SQL, REST or MCP
        tool, one given to the constructor, or another collection's)."""
        others = {t.metadata.get_name() for t in [*self._builtin_tools(), *self._own_tools]}
        for spec in self.collections:
            if spec.tool_name in others:
                raise InputError(
                    f"The collection {spec.name!r} would make a tool {spec.tool_name!r}, "
                    "and another tool has that name.",
                    hint="Rename the collection in collections.yaml.",
                )
            others.add(spec.tool_name)

    def indexed(self) -> bool:
        """Every declared collection has its index, and the sample database (when there is
        one to build) is built."""
        settings = self.settings
        database = (
            bool(settings.database_url)
            or not settings.seed_sql.is_file()
            or settings.sample_db_path.is_file()
        )
        return database and all(i.exists() for i in self.collection_indexes.values())

    def warm_up(self) -> None:
        """Open the indexes and load the models now, not on the first question (a batch calls
        this before any question's deadline starts)."""
        self.require_indexes()
        self.content_ready  # noqa: B018
        self.tool_index  # noqa: B018
        self.guard  # noqa: B018
        self.llm  # noqa: B018

    def missing_collections(self) -> list[str]:
        """The declared collections with no index yet (never indexed, or no file matched
        their paths); their search tools are not offered."""
        return [n for n, i in self.collection_indexes.items() if not i.exists()]

    def require_indexes(self) -> None:
        """Refuse to answer when collections are declared and none is indexed: the questions
        are about them. Some indexed is enough (a collection whose paths match no file yet
        must not stop the others)."""
        missing = self.missing_collections()
        if missing and len(missing) == len(self.collection_indexes):
            raise IndexMissingError(
                f"No {', '.join(missing)} index in {self.settings.index_dir}.",
                hint="Run `toolrag index` first.",
            )

    # --- tools ----------------------------------------------------------------------------------
    @cached_property
    def sql_spec(self) -> SQLToolSpec | None:
        """Read-only SQL tools over ``database_url`` (default: the sample SQLite file), limited
        by ``toolspecs/sql.yaml``; None when no database is there yet."""
        path = self.settings.toolspecs_dir / "sql.yaml"
        config = SQLSpecConfig.load(path) if path.is_file() else SQLSpecConfig()
        url = config.url or self.settings.resolved_database_url
        uses_sample = not self.settings.database_url and not config.url
        if uses_sample and not self.settings.sample_db_path.is_file():
            return None
        return SQLToolSpec.from_url(url, config)

    @cached_property
    def rest_specs(self) -> list[OpenAPIToolSpec]:
        """One OpenAPIToolSpec per entry of ``toolspecs/rest.yaml`` (none without the file)."""
        path = self.settings.toolspecs_dir / "rest.yaml"
        if not path.is_file():
            return []
        return [
            OpenAPIToolSpec.from_config(config, self.settings.toolspecs_dir)
            for config in load_rest_configs(path)
        ]

    def _spec_tools(self) -> list[BaseTool]:
        tools = self._builtin_tools()
        tools += [s.tool() for s in self.collection_searches.values()]
        tools += self._own_tools
        if self.settings.compute_tools and tools:  # arithmetic over what the other tools read
            tools += ComputeToolSpec().to_tool_list()
        return tools

    def _builtin_tools(self) -> list[BaseTool]:
        """The SQL, REST and MCP tools of ``toolspecs/``."""
        tools: list[BaseTool] = []
        if self.sql_spec is not None:
            exposed = set(self.sql_spec.config.expose)
            tools += [t for t in self.sql_spec.to_tool_list() if t.metadata.name in exposed]
        for spec in self.rest_specs:
            tools += spec.to_tool_list()
        tools += self.mcp_tools[0]
        return tools

    @cached_property
    def mcp_tools(self) -> tuple[list[FunctionTool], list[ToolCard]]:
        """The tools and cards of the MCP servers in ``toolspecs/mcp.yaml`` (none without it)."""
        path = self.settings.toolspecs_dir / "mcp.yaml"
        if not path.is_file():
            return [], []
        tools: list[FunctionTool] = []
        cards: list[ToolCard] = []
        for config in load_mcp_configs(path):
            more, more_cards = run_sync(MCPSource(config).aload())
            tools += more
            cards += more_cards
        return tools, cards

    def tools(self, include_qa: bool = False) -> list[BaseTool]:
        """The agent's tools: each collection's search tool, the SQL tools when a database is
        configured, the REST and MCP tools of ``toolspecs/``, the tools given to the
        constructor, and optionally the answer-synthesis tools (each collection's
        QueryEngineTool ``ask_<name>``, and the text-to-SQL ``query_<name>`` tool)."""
        tools: list[BaseTool] = list(self._spec_tools())
        if include_qa:
            tools += [
                query_engine_tool(s.index, self.llm, self.settings.top_k, s.qa_description())
                for s in self.collection_searches.values()
            ]
            if self.sql_spec is not None:
                tools.append(self.sql_spec.query_tool(self.llm, self.embed))
        return tools

    def tool(self, name: str) -> BaseTool:
        for t in self._spec_tools():
            if t.metadata.get_name() == name:
                return t
        raise InputError(f"Unknown tool {name!r}.")

    # --- Tool RAG -------------------------------------------------------------------------------
    def cards(self, include_qa: bool = False) -> list[ToolCard]:
        """The tool cards of :meth:`tools`: name, description and parameters from the code,
        side effects from the REST specs, examples, tags or ``deprecated_by`` from the
        YAML cards in ``toolspecs/cards/``, and for each collection's search tool what its
        index holds (``ToolCard.holds``: titles and headings), so questions about the
        contents find it."""
        effects = {n: e for spec in self.rest_specs for n, e in spec.side_effects().items()}
        from_mcp = {c.name: c for c in self.mcp_tools[1]}
        cards = [
            from_mcp.get(card.name)
            or card.model_copy(update={"side_effect": effects.get(card.name, "read")})
            for card in cards_from_tools(self.tools(include_qa))
        ]
        cards = apply_overlays(cards, load_yaml_cards(self.settings.toolspecs_dir / "cards"))
        searches = self.collection_searches
        return [
            self._collection_card(card, searches[card.name]) if card.name in searches else card
            for card in cards
        ]

    @staticmethod
    def _collection_card(card: ToolCard, search: CollectionSearch) -> ToolCard:
        """A collection tool's card: its examples (declared, else written from what the
        index holds) and what it holds."""
        update: dict[str, Any] = {"holds": search.index.outline()}
        if not card.examples:
            update["examples"] = search.examples()
        return card.model_copy(update=update)

    @cached_property
    def tool_index(self) -> ToolIndex:
        """The persistent ToolIndex over the toolbox's tool cards (re-embeds changed cards),
        with the requests `toolrag tools synth` wrote for them, when there are any."""
        index = ToolIndex(
            self.settings.index_dir,
            self.embed,
            table="tools",
            name_weight=self.settings.tool_name_weight,
        )
        self._requests_seen = _mtime(background.done_marker(self.settings))
        index.sync(self._cards_with_requests())
        if self.settings.translate_questions:
            # the LLM is built only when a question needs translating
            index.translator = QueryTranslator(self.settings.translations_db, lambda: self.llm)
        return index

    @cached_property
    def guard(self) -> ToolGuard:
        """The one door of every tool call: the active profile, the approval gate, idempotent
        writes, timeouts and the audit log (SQLite files in ``state_dir``)."""
        state = self.settings.state_dir
        return ToolGuard(
            self.tools(),
            self.cards(),
            audit=AuditLog(state / "audit.sqlite"),
            store=IdempotencyStore(state / "idempotency.sqlite"),
            approver=self.approver(),
            profile=self.settings.active_profile(),
            default_timeout_s=self.settings.tool_timeout_s,
            vocabulary=self.filter_vocabulary(),
        )

    def filter_vocabulary(self) -> Vocabulary:
        """The filter values a question can name, from the data: each collection's keyword
        filters (the values its index holds, with their alias files' names and distinctive
        word pairs) for its search tool; and a keyword field with an alias file names the
        same things for a parameter of that name in any tool (an API's or an MCP server's
        ``customer``, say, as the documents' ``customer`` field). Enum parameters need none."""
        by_tool: dict[str, dict[str, FilterValues]] = {}
        shared: dict[str, dict[str, list[str]]] = {}
        for tool, search in self.collection_searches.items():
            by_tool[tool] = {}
            for name, known in search.keywords.items():
                names = known.question_names()
                by_tool[tool][name] = FilterValues.of(names)
                if search.spec.field(name).aliases:
                    for value, words in names.items():
                        merged = shared.setdefault(name, {}).setdefault(value, [])
                        merged += [w for w in words if w not in merged]
        return Vocabulary(
            by_parameter={name: FilterValues.of(values) for name, values in shared.items()},
            by_tool=by_tool,
        )

    def approver(self) -> Approver | None:
        """The ``approve`` callback, else the ``approval`` setting (None: deny). With
        ``approval = "prompt"`` the caller supplies the asking: the CLI passes its terminal
        prompt as ``approve``; without one, gated calls are denied."""
        if self.approve is not None:
            return self.approve
        if self.settings.approval == "approve":
            return approve_all
        return None

    def call(self, name: str, **arguments: Any) -> ToolResult:
        """Call one tool by name through the guard (profile, approval, idempotency, audit)."""
        return self.guard.call(name, arguments, run_id="api")

    def tool_retriever(self, run: RunState | None = None) -> ObjectRetriever[BaseTool]:
        """The agent's ``tool_retriever``: the top ``tool_top_k`` permitted tools for each
        question (none when ``tool_gate`` or ``tool_floor`` says no tool fits, pinned ones
        always), each called through the guard for ``run``."""
        pinned = [c.name for c in self.tool_index.cards.values() if c.pinned]
        run = run or RunState()
        tools = guarded_tools(self.guard, self.tools(), run)
        return make_tool_retriever(
            self.tool_index,
            tools,
            k=self.settings.tool_top_k,
            pinned=pinned,
            floor=self.settings.tool_floor,
            unknown=lambda name: unknown_tool(self.guard, name, run),
            gate=self.gate.rule(),
        )

    @cached_property
    def gate(self) -> GateChoice:
        """The "no tool fits" gate in use: ``tool_gate`` when it is a number, none when it
        is off, and with ``auto`` the gate chosen from the tool index's written requests
        (:func:`toolrag.retrieval.gate.choose_gate`)."""
        setting = self.settings.tool_gate
        keep = self.settings.tool_gate_keep
        if setting is None or setting == "off":
            return GateChoice(gate=None, keep=keep, requests=0, reason="tool_gate is off")
        if setting != "auto":
            return GateChoice(gate=float(setting), keep=keep, requests=0, reason="tool_gate")
        return choose_gate(self.tool_index, keep=keep, k=self.settings.tool_top_k)

    # --- asking ---------------------------------------------------------------------------------
    def _pick_up_requests(self) -> None:
        """When a background writer finished since the tool index was built, build it again
        (only the new requests are embedded) and choose the gate again from them."""
        if "tool_index" not in self.__dict__:
            return
        if _mtime(background.done_marker(self.settings)) != self._requests_seen:
            self._forget_tool_index()

    def _check_question(self, question: str) -> str:
        question = (question or "").strip()
        if not question:
            raise InputError("The question is empty.", hint='Ask something, e.g. toolrag ask "…".')
        if len(question) > MAX_QUESTION_CHARS:
            raise InputError(
                f"The question is longer than {MAX_QUESTION_CHARS} characters.",
                hint="Shorten it to the essential request.",
            )
        self.require_indexes()
        self._pick_up_requests()
        if not self.tools():
            raise InputError(
                "The toolbox has no tools: no collection, database, REST API or MCP server.",
                hint="Declare collections in toolspecs/collections.yaml (`toolrag init DIR` "
                "writes one), or set TOOLRAG_DATABASE_URL or toolspecs/rest.yaml.",
            )
        return question

    @property
    def _agent_kind(self) -> str:
        return "function" if self.settings.agent_mode == "function" else "react"

    @cached_property
    def content_ready(self) -> bool:
        """The content indexes opened (and, with ``auto`` fusion, their weights chosen) once
        per toolbox, so that no search pays for them inside its tool's deadline."""
        for index in self.collection_indexes.values():
            if index.exists():
                index.warm_up()
        return True

    async def aask(self, question: str) -> Answer:
        """Answer one question with the agent over the toolbox's retrieved tools, in the
        configured ``agent_mode`` (react, router+react or function)."""
        question = self._check_question(question)
        self.content_ready  # noqa: B018
        if self.settings.agent_mode == "router+react":
            return await ask_routed(
                question,
                retriever_for=self.tool_retriever,
                router=self.router(),
                guard=self.guard,
                decisions=self.decisions,
                llm=self.llm,
                max_iterations=self.settings.max_iterations,
                approver=self.approver(),
                step_grammar=self.settings.react_step_grammar,
            )
        run = RunState(question=question)
        agent = build_agent(
            [],
            self.llm,
            tool_retriever=self.tool_retriever(run),
            kind=self._agent_kind,
            step_grammar=self.settings.react_step_grammar,
            tool_order=self.settings.router_tool_order,
        )
        return await run_agent(
            agent,
            question,
            max_iterations=self.settings.max_iterations,
            approver=self.approver(),
            run_id=run.run_id,
        )

    def ask(self, question: str) -> Answer:
        """Sync form of :meth:`aask` (works in scripts and in notebook cells)."""
        return run_sync(self.aask(question))

    async def achat(self, session_id: str, message: str) -> Answer:
        """One turn of a conversation: the agent sees the session's earlier turns (memory),
        and the tools it used before stay offered (the sticky set). Each turn is its own run
        for idempotency keys and approvals."""
        message = self._check_question(message)
        self.content_ready  # noqa: B018
        session = self._sessions.setdefault(
            session_id, ChatSession(memory=ChatMemoryBuffer.from_defaults(llm=self.llm))
        )
        earlier = [str(m.content) for m in session.memory.get_all() if m.content]
        session.asked.append(message)
        run = RunState(question="\n".join(session.asked), seen=earlier)
        retriever = self.tool_retriever(run)
        retriever.retriever.sticky = session.sticky  # type: ignore[attr-defined]
        retriever.retriever.context = session.asked[:-1]  # type: ignore[attr-defined]
        agent = build_agent(
            [],
            self.llm,
            tool_retriever=retriever,
            kind=self._agent_kind,
            step_grammar=self.settings.react_step_grammar,
            tool_order=self.settings.router_tool_order,
        )
        return await run_agent(
            agent,
            message,
            max_iterations=self.settings.max_iterations,
            approver=self.approver(),
            run_id=run.run_id,
            memory=session.memory,
        )

    def chat(self, session_id: str, message: str) -> Answer:
        """Sync form of :meth:`achat`."""
        return run_sync(self.achat(session_id, message))

    async def astream(
        self, question: str, session_id: str | None = None
    ) -> AsyncIterator[AgentEvent]:
        """Answer like :meth:`aask` (or :meth:`achat` with a ``session_id``), yielding the run's
        events as they happen: tools retrieved, the router's decision, model steps, tool
        calls and results, approvals. The last event is ``answer``; its ``data["answer"]``
        holds the whole :class:`Answer`. Errors in the question raise before any event."""
        queue: asyncio.Queue[AgentEvent | None] = asyncio.Queue()
        loop = asyncio.get_running_loop()

        def put(event: AgentEvent) -> None:
            loop.call_soon_threadsafe(queue.put_nowait, event)

        async def run() -> Answer:
            with listening(put):
                if session_id is not None:
                    return await self.achat(session_id, question)
                return await self.aask(question)

        task = asyncio.create_task(run())
        task.add_done_callback(lambda _: loop.call_soon_threadsafe(queue.put_nowait, None))
        final: AgentEvent | None = None
        try:
            while (event := await queue.get()) is not None:
                if event.kind == "answer":
                    final = event  # sent last, with the whole answer attached
                else:
                    yield event
            answer = await task  # raises what the run raised
        finally:
            if not task.done():
                task.cancel()
        final = final or AgentEvent(kind="answer", text=answer.answer)
        final.data["answer"] = answer
        yield final

    # --- routing --------------------------------------------------------------------------------
    @cached_property
    def example_store(self) -> ExampleStore:
        """Few-shot examples (``state_dir/examples.sqlite``): the cards' example queries and
        ``data/questions/examples.jsonl``, never closer than cosine 0.9 to a question of
        ``data/questions/test.jsonl``, plus promoted decisions."""

        store = ExampleStore(self.settings.state_dir / "examples.sqlite", self.embed)
        folder = self.settings.data_dir / "questions"
        if (folder / "test.jsonl").is_file():
            tests = load_questions(folder / "test.jsonl")
            store.register_test_questions((q.id, q.query) for q in tests)
        store.seed(list(self.tool_index.cards.values()), folder / "examples.jsonl")
        return store

    @cached_property
    def decisions(self) -> DecisionLog:
        """Every routing decision and its outcome (``state_dir/decisions.sqlite``)."""
        return DecisionLog(self.settings.state_dir / "decisions.sqlite")

    def router(self, mode: ExampleMode = "dynamic") -> Router:
        return Router(
            self.llm,
            self.example_store,
            mode=mode,
            k_examples=self.settings.router_examples,
            vocabulary=self.guard.vocabulary,
            tool_grammar=self.settings.router_tool_grammar,
            tool_order=self.settings.router_tool_order,
        )

    async def aroute(
        self, question: str, execute: bool = True, mode: ExampleMode = "dynamic"
    ) -> RouteResult:
        """Route a question over its retrieved tools: validated calls (run through the guard,
        in parallel, when ``execute``), a direct answer or a clarifying question. The decision
        is logged; rate it with :meth:`rate_decision`."""
        question = self._check_question(question)
        run = RunState(question=question)
        retriever = self.tool_retriever(run)
        tools = await retriever.aretrieve(question)
        searched = getattr(retriever.retriever, "last_searched", "")
        router = self.router(mode)
        if execute:
            result = await router.arun(question, tools, self.guard, run_id=run.run_id)
        else:
            result = await asyncio.to_thread(router.route, question, tools)
        if searched and searched != question:  # translated for the tool search
            result.tools_searched = searched
        result.id = self.decisions.record(result)
        return result

    def route(
        self, question: str, execute: bool = True, mode: ExampleMode = "dynamic"
    ) -> RouteResult:
        """Sync form of :meth:`aroute`."""
        return run_sync(self.aroute(question, execute, mode))

    def rate_decision(self, decision_id: str, good: bool) -> None:
        """Record the user's verdict; good decisions become examples on promotion."""
        self.decisions.rate(decision_id, good)

    def end_chat(self, session_id: str) -> None:
        """Forget a conversation's memory and sticky tools."""
        self._sessions.pop(session_id, None)

    def batch(
        self,
        questions: Path | Sequence[Question],
        output: Path,
        concurrency: int | None = None,
        timeout_s: float = 300.0,
    ) -> BatchSummary:
        """Answer many questions into a JSONL file, resumably (see :mod:`toolrag.batch.run`):
        ids already answered in ``output`` are skipped, each question has a deadline, and a
        failure becomes a record. Returns the summary (accuracy, tool accuracy, p50/p95)."""
        qs = load_batch_questions(questions) if isinstance(questions, Path) else list(questions)
        return run_batch(self, qs, output, concurrency=concurrency, timeout_s=timeout_s)
