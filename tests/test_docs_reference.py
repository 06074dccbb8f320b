"""The docs site's generated references: every command, flag, config key, env and API route is on its page, and the
server answers the same OpenAPI document it is built from."""

import argparse, dataclasses, html, json, re

import pytest

from test_app import Server, get
from workbench.core import field_docs
from workbench.app.serve import API_ROUTES, NotFoundApi, openapi_document
from workbench.docs.reference import (
    api_reference,
    command_parsers,
    config_classes,
    config_reference,
    env_listing,
    write_references,
)

EXTENSIONS = ["tables", "attr_list", "admonition", "toc"]  # as mkdocs renders the site


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    "The references as `write_references` writes them: {file name: text}."
    folder = tmp_path_factory.mktemp("reference")
    return {p.name: p.read_text() for p in write_references(folder)}


def walk(parser, words=()):
    "(words, parser) of `parser` and each subcommand under it, walked here independently of the module's own walk."
    yield list(words), parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from walk(sub, (*words, name))


def subparsers(parser) -> dict:
    return next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices


def every_command():
    "Every command and subcommand of `workbench`, each top-level command built as `make_parser([name])` builds it."
    from workbench.cli import make_parser

    for name in subparsers(make_parser([])):
        yield from walk(subparsers(make_parser([name]))[name], (name,))


def test_every_command_is_a_heading(pages):
    commands = list(every_command())
    assert {" ".join(w) for w, _ in commands} >= {"train", "judge score", "judge benchmark", "sweep", "serve"}
    for words, _ in commands:
        title = " ".join(["workbench", *words])
        assert f"\n## {title} {{#{'-'.join(title.split())}}}\n" in pages["cli.md"], title
    assert pages["cli.md"].count("\n## workbench ") == len(commands) == len(command_parsers())


def test_every_flag_of_every_command_is_listed(pages):
    text, seen = pages["cli.md"], 0
    for words, parser in every_command():
        section = text.split(f"## workbench {' '.join(words)} {{", 1)[1].split("\n## ", 1)[0]
        for action in parser._actions:
            if isinstance(action, (argparse._HelpAction, argparse._SubParsersAction)):
                continue  # -h (every command has it), and the subcommands (their own sections)
            for flag in action.option_strings or [action.dest]:
                assert f"`{flag}`" in section, f"workbench {' '.join(words)}: {flag}"
                seen += 1
    assert seen > 150  # train's and sweep's config flags included


def test_every_config_key_is_listed(pages):
    for config_cls in config_classes():
        for section, cls in config_cls.SECTIONS.items():
            part = pages["config.md"].split(f"{{#{config_cls.__name__.lower()}-{section}}}", 1)[1].split("\n##", 1)[0]
            keys = [f.name for f in dataclasses.fields(cls) if f.init]
            assert keys, section
            for key in keys:
                assert f"\n| `{key}` |" in part, f"{config_cls.__name__}.{section}.{key}"
    assert config_reference() == pages["config.md"]  # the same page every time: nothing depends on the run


def test_every_env_is_listed(pages):
    listing = env_listing()
    assert listing["native"] and listing["gym"]
    for found in listing.values():
        for name in found:
            assert f"\n| `{name}` |" in pages["envs.md"], name
    assert pages["envs.md"].count("\n| `") == sum(len(found) for found in listing.values())


def test_every_api_route_has_a_path():
    "Each path of the document, its parameters filled in, is routed by the server to a handler of its own: every one."
    doc = openapi_document()
    assert API_ROUTES[-1][1] is NotFoundApi  # the catch-all, last
    routed = [
        next(handler for pattern, handler in API_ROUTES if re.fullmatch(pattern, re.sub(r"\{\w+\}", "x", path)))
        for path in doc["paths"]
    ]
    assert sorted(h.__name__ for h in routed) == sorted(h.__name__ for _, h in API_ROUTES if h is not NotFoundApi)
    assert "/api/runs/{run_id}/metrics" in doc["paths"] and "/api/openapi.json" in doc["paths"]
    assert all(list(item) == ["get"] for item in doc["paths"].values())  # the API is read-only
    page = api_reference()
    assert all(f"| `{path}` | GET |" in page for path in doc["paths"]) and "`/api/openapi.json`" in page


def test_the_pages_render_as_mkdocs_renders_them(pages):
    "Python-Markdown with the site's extensions: every help text and every key's description whole in its cell."
    markdown = pytest.importorskip("markdown")
    rendered = {
        name: markdown.markdown(text, extensions=EXTENSIONS) for name, text in pages.items() if name.endswith(".md")
    }
    whole = lambda text: html.escape(" ".join(text.split()), quote=False)  # noqa: E731  as a cell shows it
    helps = [
        a.help
        for _, parser in every_command()
        for a in parser._actions
        if a.help and not isinstance(a, argparse._HelpAction) and "`" not in a.help and "%" not in a.help
    ]
    docs = [
        doc
        for c in config_classes()
        for cls in c.SECTIONS.values()
        for doc in field_docs(cls).values()
        if "`" not in doc
    ]
    assert len(helps) > 200 and len(docs) > 100
    assert [h for h in helps if whole(h) not in rendered["cli.md"]] == []
    assert [d for d in docs if whole(d) not in rendered["config.md"]] == []
    assert all("\\|" not in page for page in rendered.values())  # no escape left showing
    assert 'id="workbench-judge-score"' in rendered["cli.md"] and 'id="trainconfig-ppo"' in rendered["config.md"]


def test_the_server_answers_its_openapi_document(runs_dir, pages):
    "A real `workbench serve` (with a token) answers /api/openapi.json with the document the docs are built from."
    server = Server(runs_dir, "--token", "s3cret-token")
    try:
        assert get(f"{server.base}/api/openapi.json")[0] == 401
        code, served = get(f"{server.base}/api/openapi.json?token=s3cret-token")
        assert code == 200 and served == openapi_document() == json.loads(pages["openapi.json"])
        assert get(f"{server.base}/api/openapi.json", {"Authorization": "Bearer s3cret-token"}) == (200, served)
    finally:
        server.stop()
