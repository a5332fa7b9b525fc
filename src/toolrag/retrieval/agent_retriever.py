"""The agent's ``tool_retriever``: ToolIndex hits resolved to tools from the registry.

A LlamaIndex ``ObjectRetriever`` over a ``BaseRetriever`` whose nodes carry tool names, and an
object-node mapping that resolves a name to the registered tool. On top of retrieval:

- pinned tools are always offered;
- a tool the question names ("... with send_email") comes first (:meth:`ToolIndex.retrieve`,
  :mod:`toolrag.cards.names`);
- a ``floor`` or a ``gate`` (cosines, :meth:`ToolIndex.retrieve`) lets a question no tool fits
  get none, so the agent answers it without tools;
- a companion card (``ToolCard.companion``: arithmetic over what other tools return) is
  offered beside the top k when it ranks among them and the request asks for arithmetic
  (:func:`~toolrag.retrieval.intent.asks_for_arithmetic`), never in the place of one;
- a write, delete or external tool is offered only to a request that asks for its action
  (:mod:`toolrag.retrieval.intent`), or that names it;
- a tool whose parameter takes another tool's output brings that tool along
  (``last_required``; :mod:`toolrag.retrieval.prerequisites`);
- a sticky set keeps the tools used earlier in a conversation available on later turns, and
  a follow-up that leaves slots empty is searched again with the turn before it (``context``);
- a query that *is* a tool name returns that tool: the workflow agent re-retrieves with the
  tool name when it executes a call, and a plain index would answer "Tool X not found" for any
  tool it does not rank first for its own name;
- a question not in English (another alphabet or language) is searched in the English the
  index's translator makes of it (``last_searched`` says what was searched);
- a query shaped like a tool name (``get_wether``, ``cancelInvoice``) that no tool has is
  resolved by the ``unknown`` factory: a stand-in whose call returns a structured
  ``UNKNOWN_TOOL`` result with the closest real names, instead of the agent's bare text error.
  So is a bare word (``call``, ``search``) after the first query: a retriever serves one run,
  whose first query is the question, so a later one-word query is an ``Action:`` name.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from llama_index.core.base.base_retriever import BaseRetriever
from llama_index.core.objects.base import ObjectRetriever
from llama_index.core.objects.base_node_mapping import BaseObjectNodeMapping
from llama_index.core.schema import BaseNode, NodeWithScore, QueryBundle, TextNode
from llama_index.core.tools import BaseTool

from toolrag.cards.names import ONE_WORD, TOOL_NAME
from toolrag.retrieval.index import Gate, ToolHit, ToolIndex
from toolrag.retrieval.intent import asks_for_action, asks_for_arithmetic
from toolrag.text import bounded

UnknownTool = Callable[[str], BaseTool]
MAX_PARTS = 4  # parts of one question searched for their own best tool
# a part counts as served by a call of any of its best few tools: its best one alone is often
# wrong when the part names a record that another tool's examples name too
PART_CANDIDATES = 3


class RegistryNodeMapping(BaseObjectNodeMapping[BaseTool]):
    """Maps tool-name nodes to tools by name (stable, unlike ``str(hash(tool))``)."""

    def __init__(self, tools: Sequence[BaseTool], unknown: UnknownTool | None = None) -> None:
        self._tools = {t.metadata.get_name(): t for t in tools}
        self._unknown = unknown

    @classmethod
    def from_objects(
        cls, objs: Sequence[BaseTool], *args: Any, **kwargs: Any
    ) -> RegistryNodeMapping:
        return cls(objs)

    @property
    def obj_node_mapping(self) -> dict[Any, Any]:
        return dict(self._tools)

    @obj_node_mapping.setter
    def obj_node_mapping(self, mapping: dict[Any, Any]) -> None:
        self._tools = dict(mapping)

    def _add_object(self, obj: BaseTool) -> None:
        self._tools[obj.metadata.get_name()] = obj

    def to_node(self, obj: BaseTool) -> TextNode:
        name = obj.metadata.get_name()
        return TextNode(
            id_=name, text=f"{name}: {obj.metadata.description}", metadata={"name": name}
        )

    def _from_node(self, node: BaseNode) -> BaseTool:
        name = node.metadata["name"]
        if name not in self._tools and self._unknown is not None:
            return self._unknown(name)
        return self._tools[name]

    def persist(self, persist_dir: str = "", obj_node_mapping_fname: str = "") -> None:
        """Nothing to persist: the registry is rebuilt from the tool sources."""

    @classmethod
    def from_persist_dir(
        cls, persist_dir: str = "", obj_node_mapping_fname: str = ""
    ) -> RegistryNodeMapping:
        raise NotImplementedError("Rebuild the mapping from the registry's tools.")

    def names(self) -> set[str]:
        return set(self._tools)


class ToolIndexRetriever(BaseRetriever):
    """Tool names for a question: exact name, pinned, sticky, then ToolIndex hits."""

    def __init__(
        self,
        index: ToolIndex,
        names: set[str],
        k: int = 4,
        pinned: Sequence[str] = (),
        floor: float | None = None,
        resolve_unknown: bool = False,
        gate: Gate | None = None,
    ) -> None:
        super().__init__()
        self.resolve_unknown = resolve_unknown
        self.index = index
        self.names = names
        self.k = k
        self.pinned = [p for p in pinned if p in names]
        self.floor = floor
        self.gate = gate
        self.sticky: list[str] = []
        # a conversation's earlier user turns, newest last: a follow-up that names nothing
        # ("and for ORD-1043?") is searched again with the turn before it, to fill its slots
        self.context: list[str] = []
        self.last_retrieved: list[tuple[str, float]] = []
        # the last question's prerequisites: tool -> the retrieved tool whose parameter takes
        # its output (ToolHit.required_by)
        self.last_required: dict[str, str] = {}
        # the last question's tools that it names (ToolHit.named): ranked first
        self.last_named: list[str] = []
        # the text the last question was searched with: its English translation when the
        # index's translator made one, else the question itself
        self.last_searched = ""
        # the last question's parts when it asks several things: (part, the part's best tool)
        self.last_parts: list[tuple[str, str]] = []
        # for each of last_parts, its best few tools (PART_CANDIDATES), the best first
        self.last_part_tools: list[list[str]] = []
        # the queries searched as requests: the first is the run's question, and a later bare
        # word that is none of them is an Action name the model made up ("call")
        self.searched: set[str] = set()

    def _made_up(self, query: str) -> bool:
        """Whether ``query`` is a tool name the model made up: shaped like a tool name, or
        a bare word once the run's question was searched (and not that question)."""
        if not self.resolve_unknown:
            return False
        if TOOL_NAME.fullmatch(query):
            return True
        return (
            bool(self.searched) and query not in self.searched and bool(ONE_WORD.fullmatch(query))
        )

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        query = query_bundle.query_str.strip()
        if query in self.names:  # execution resolves by name, whatever the ranking
            return [self._node(query, 1.0)]
        if self._made_up(query):  # a call to a made-up name
            return [self._node(query, 0.0)]
        self.searched.add(query)
        self.last_searched = self.index.search_text(query)
        companions = self._companions()
        ranked = [
            h
            for h in self.index.retrieve(
                self.last_searched,
                k=self.k + len(companions),
                floor=self.floor,
                translate=False,
                gate=self.gate,
            )
            if h.name in self.names and (h.named or self._asked(h.id))
        ]
        # companions (compute helpers) ride along when they rank in the top k, in no one's place
        arithmetic = asks_for_arithmetic(self.last_searched)
        found = [h for h in ranked if h.name not in companions][: self.k] + [
            h for h in ranked[: self.k] if h.name in companions and arithmetic
        ]
        found += self._from_context(query, found, companions)
        hits = [(h.name, h.score) for h in found]
        self.last_retrieved = hits
        parts = self._parts(self.last_searched) if found else []
        self.last_parts = [(part, tools[0]) for part, tools in parts]
        self.last_part_tools = [tools for _, tools in parts]
        self.last_required = {h.name: h.required_by for h in found if h.required_by}
        self.last_named = [h.name for h in found if h.named]
        chosen: dict[str, float] = {}
        for name, score in [
            *((p, 1.0) for p in self.pinned),
            *((s, 1.0) for s in self.sticky),
            *hits,
        ]:
            chosen.setdefault(name, score)
        return [self._node(n, s) for n, s in chosen.items()]

    def _from_context(
        self, query: str, found: list[ToolHit], companions: set[str]
    ) -> list[ToolHit]:
        """In a conversation, the tools that the previous user turn and this message together
        retrieve, for the slots this message alone left empty (none when it filled all ``k``
        or there is no earlier turn). A follow-up such as "and the one before that?" names no
        tool, so on its own it retrieves nothing or noise."""
        if not self.context or len(found) >= self.k:
            return []
        combined = bounded(f"{bounded(self.context[-1], 1_000)} {query}")
        searched = self.index.search_text(combined)
        have = {h.name for h in found}
        extra = []
        for h in self.index.retrieve(
            searched, k=self.k + len(companions), floor=self.floor, translate=False,
            gate=self.gate,
        ):  # fmt: skip
            card = self.index.cards.get(h.id)
            wanted = card is None or asks_for_action(searched, card)
            if (
                h.name in self.names
                and h.name not in have
                and h.name not in companions
                and (h.named or wanted)
            ):
                extra.append(h)
                have.add(h.name)
        return extra[: self.k - len(found)]

    def _parts(self, query: str) -> list[tuple[str, list[str]]]:
        """Each part of a question that asks several things ("What is the total of
        ORD-1042 and what is the weather in Oslo?"), with the read tools (or asked-for
        actions) that fit it best, at most ``PART_CANDIDATES``, the best first; [] for a
        question of one part, or when every part's best tool is the same. The agent checks
        that it called one of them for every part."""
        parts, _ = self.index.stages.split(query)
        companions = self._companions()
        out = []
        for part in parts[:MAX_PARTS]:
            hits = self.index.retrieve(
                part, k=PART_CANDIDATES + len(companions), translate=False, floor=self.floor
            )
            best = [
                h.name
                for h in hits
                if h.name not in companions and h.name in self.names and self._asked(h.id)
            ][:PART_CANDIDATES]
            first = next((h for h in hits if h.name not in companions), None)
            if best and first is not None and first.name == best[0]:
                out.append((part, best))
        return out if len({tools[0] for _, tools in out}) > 1 else []

    def _companions(self) -> set[str]:
        """The names of the index's companion cards (``ToolCard.companion``)."""
        return {c.name for c in self.index.cards.values() if c.companion}

    def _asked(self, card_id: str) -> bool:
        """A read tool, or an action tool the question asks for (:mod:`.intent`): a question
        that asks for information is never offered write, delete or external tools."""
        card = self.index.cards.get(card_id)
        return card is None or asks_for_action(self.last_searched, card)

    @staticmethod
    def _node(name: str, score: float) -> NodeWithScore:
        return NodeWithScore(
            node=TextNode(id_=name, text=name, metadata={"name": name}), score=score
        )

    def remember(self, name: str) -> None:
        """Keep a tool the conversation used available on later turns."""
        if name in self.names and name not in self.sticky:
            self.sticky.append(name)


def make_tool_retriever(
    index: ToolIndex,
    tools: Sequence[BaseTool],
    k: int = 4,
    pinned: Sequence[str] = (),
    floor: float | None = None,
    unknown: UnknownTool | None = None,
    gate: Gate | None = None,
) -> ObjectRetriever[BaseTool]:
    """The agent's ``tool_retriever`` over ``index``, resolving names to ``tools``. ``floor``
    and ``gate``: :meth:`ToolIndex.retrieve`'s cuts ("no tool fits"); pinned and sticky tools
    are offered whatever they cut."""
    mapping = RegistryNodeMapping(tools, unknown)
    retriever = ToolIndexRetriever(
        index,
        mapping.names(),
        k=k,
        pinned=pinned,
        floor=floor,
        resolve_unknown=bool(unknown),
        gate=gate,
    )
    return ObjectRetriever(retriever=retriever, object_node_mapping=mapping)


def default_index_dir(index_dir: Path) -> Path:
    return index_dir / "tools"
