from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from toolrag import ScriptedLLM, Settings
from toolrag.cli.main import app
from toolrag.errors import ConfigError, ModelMissingError
from toolrag.models.embeddings import embed_model_path, embedding_name
from toolrag.models.llms import chatml_messages_to_prompt, make_llm, resolve_provider
from toolrag.settings import load_settings


def test_env_vars_override_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOOLRAG_TOP_K", "7")
    monkeypatch.setenv("TOOLRAG_LLM_PROVIDER", "openai_like")
    s = Settings()
    assert s.top_k == 7 and s.llm_provider == "openai_like"


def test_a_user_gets_router_then_react_without_flags(monkeypatch: pytest.MonkeyPatch) -> None:
    """The measured best mode is the default (decision 0046); the tests' own pin to ``react``
    (conftest) is an environment variable a user does not have."""
    monkeypatch.delenv("TOOLRAG_AGENT_MODE")
    assert Settings().agent_mode == "router+react"
    monkeypatch.setenv("TOOLRAG_AGENT_MODE", "react")
    assert Settings().agent_mode == "react"


def test_toml_file_is_read(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    cfg = tmp_path / "toolrag.toml"
    cfg.write_text('index_dir = "/srv/idx"\ntool_top_k = 9\n')
    monkeypatch.setenv("TOOLRAG_CONFIG", str(cfg))
    s = Settings()
    assert s.index_dir == Path("/srv/idx") and s.tool_top_k == 9
    monkeypatch.setenv("TOOLRAG_TOOL_TOP_K", "2")  # env beats the file
    assert Settings().tool_top_k == 2


def test_reports_name_the_embedding_model_in_use(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("TOOLRAG_EMBED_MODEL", raising=False)
    assert embedding_name(Settings()) == "all-MiniLM-L6-v2"
    monkeypatch.setenv("TOOLRAG_EMBED_MODEL", str(tmp_path / "all-mpnet-base-v2"))
    assert embedding_name(Settings()) == str(tmp_path / "all-mpnet-base-v2")
    with pytest.raises(ConfigError, match="neither"):  # not a model folder
        embed_model_path(Settings().embed_model)


def test_invalid_setting_is_rejected(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOOLRAG_CONTEXT_WINDOW", "1024")  # the local model needs >= 4096
    with pytest.raises(ValueError):
        Settings()


@pytest.mark.parametrize(
    ("var", "value", "named"),
    [
        ("TOOLRAG_AGENT_MODE", "chatty", "agent_mode"),
        ("TOOLRAG_TOP_K", "many", "top_k"),
    ],
)
def test_a_bad_setting_is_one_line_naming_the_field(
    monkeypatch: pytest.MonkeyPatch, var: str, value: str, named: str
) -> None:
    monkeypatch.setenv(var, value)
    with pytest.raises(ConfigError, match=f"Invalid settings: {named}"):
        load_settings()
    for command in (["config", "show"], ["index"]):
        result = CliRunner().invoke(app, command)
        assert result.exit_code != 0 and "Traceback" not in result.output
        assert f"Invalid settings: {named}" in result.output
        assert value.strip('[]"') in result.output


@pytest.mark.parametrize("name", ["content_types", "projects_file", "chunk_size"])
def test_a_removed_setting_says_what_replaced_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, name: str
) -> None:
    monkeypatch.setenv(f"TOOLRAG_{name.upper()}", "[]")
    with pytest.raises(ConfigError, match=f"The setting {name}") as caught:
        Settings()
    assert "collections.yaml" in (caught.value.hint or "")
    monkeypatch.delenv(f"TOOLRAG_{name.upper()}")
    config = tmp_path / "toolrag.toml"
    config.write_text(f'{name} = "x"\n')
    monkeypatch.setenv("TOOLRAG_CONFIG", str(config))
    with pytest.raises(ConfigError, match="was removed"):
        load_settings()
    result = CliRunner().invoke(app, ["config", "show"])
    assert result.exit_code == 2
    assert "was removed" in result.output


def test_config_show_masks_secrets(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOOLRAG_API_KEY", "sk-secret-value-1234")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-other-secret-9876")
    result = CliRunner().invoke(app, ["config", "show", "--json"])
    assert result.exit_code == 0
    assert "sk-secret" not in result.output and "sk-other" not in result.output
    assert "****1234" in result.output and "****9876" in result.output
    assert '"llm_provider (resolved)": "openai"' in result.output


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({}, "local"),
        ({"TOOLRAG_API_BASE": "http://127.0.0.1:9/v1"}, "openai_like"),
        ({"OPENAI_API_KEY": "sk-x", "TOOLRAG_API_BASE": "http://127.0.0.1:9/v1"}, "openai"),
        ({"OPENAI_API_KEY": "sk-x", "TOOLRAG_LLM_PROVIDER": "local"}, "local"),
    ],
)
def test_provider_resolution_order(
    monkeypatch: pytest.MonkeyPatch, env: dict[str, str], expected: str
) -> None:
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    assert resolve_provider(Settings()) == expected


def test_missing_openai_key_says_what_to_set() -> None:
    with pytest.raises(ConfigError) as exc:
        make_llm(Settings(llm_provider="openai"))
    assert "OPENAI_API_KEY" in str(exc.value) and "\n" not in str(exc.value)


def test_openai_like_needs_api_base_and_model() -> None:
    with pytest.raises(ConfigError, match="TOOLRAG_API_BASE"):
        make_llm(Settings(llm_provider="openai_like", llm_model="m"))
    with pytest.raises(ConfigError, match="TOOLRAG_LLM_MODEL"):
        make_llm(Settings(llm_provider="openai_like", api_base="http://127.0.0.1:9/v1"))


def test_openai_like_is_a_chat_model() -> None:
    llm = make_llm(
        Settings(llm_provider="openai_like", api_base="http://127.0.0.1:9/v1", llm_model="qwen")
    )
    assert llm.metadata.is_chat_model


def test_missing_local_model_says_what_to_run(tmp_path: Path) -> None:
    with pytest.raises(ModelMissingError) as exc:
        make_llm(Settings(llm_provider="local", cache_dir=tmp_path))
    assert "toolrag model install" in str(exc.value)


def test_missing_local_model_cli_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TOOLRAG_CACHE_DIR", str(tmp_path))
    result = CliRunner().invoke(app, ["model", "path"])
    assert result.exit_code == 2
    assert result.output.strip().count("\n") == 0
    assert "toolrag model install" in result.output and "Traceback" not in result.output


def test_scripted_llm_plays_turns_in_order_then_stops() -> None:
    llm = ScriptedLLM(["one", lambda msgs: f"saw {len(msgs)}"])
    assert llm.complete("a").text == "one"
    assert llm.complete("b").text == "saw 1"
    assert len(llm.prompts) == 2
    with pytest.raises(RuntimeError, match="ran out of turns"):
        llm.complete("c")


def test_scripted_turns_file(tmp_path: Path) -> None:
    f = tmp_path / "turns.json"
    f.write_text('["Thought: done\\nAnswer: 42"]')
    llm = make_llm(Settings(llm_provider="scripted", scripted_turns_file=f))
    assert "42" in llm.complete("q").text
    f.write_text("{not json")
    with pytest.raises(ConfigError, match="JSON list"):
        make_llm(Settings(llm_provider="scripted", scripted_turns_file=f))


def test_chatml_prompt_format() -> None:
    from llama_index.core.llms import ChatMessage

    prompt = chatml_messages_to_prompt(
        [ChatMessage(role="system", content="S"), ChatMessage(role="user", content="U")]
    )
    assert prompt == (
        "<|im_start|>system\nS<|im_end|>\n<|im_start|>user\nU<|im_end|>\n<|im_start|>assistant\n"
    )


def test_database_url_password_is_masked() -> None:
    s = Settings(database_url="postgresql+psycopg://toolrag:s3cretpw@127.0.0.1:5432/demo")
    shown = s.masked()["database_url"]
    assert "s3cretpw" not in shown and "127.0.0.1:5432/demo" in shown
    assert Settings(index_dir=Path("ix")).resolved_database_url.endswith("ix/sample.sqlite")


def test_the_router_takes_its_settings(tmp_path: Path) -> None:
    from llama_index.core.embeddings import MockEmbedding

    from toolrag import Toolbox

    def toolbox(**settings: object) -> Toolbox:
        config = Settings(
            toolspecs_dir=tmp_path,
            index_dir=tmp_path / "indexes",
            state_dir=tmp_path / "state",
            llm_provider="scripted",
            **settings,  # type: ignore[arg-type]
        )
        return Toolbox(config, embed=MockEmbedding(embed_dim=8))

    assert toolbox().router().k_examples == 8
    assert toolbox(router_examples=3).router().k_examples == 3
    with pytest.raises(ValueError, match="router_examples"):
        Settings(router_examples=-1)
    assert toolbox().router().tool_grammar is True
    assert toolbox(router_tool_grammar=False).router().tool_grammar is False
    assert toolbox().router().tool_order == "cache"
    assert toolbox(router_tool_order="relevance").router().tool_order == "relevance"
    with pytest.raises(ValueError, match="router_tool_order"):
        Settings(router_tool_order="random")  # type: ignore[arg-type]
