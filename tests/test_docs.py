"""The documentation site: it builds with ``mkdocs build --strict``, its pages hold the API of the
named objects, and the guide's commands print what the guide shows.

The site needs the ``docs`` extra (in ``dev`` from Python 3.11 on); without mkdocs the build tests
are skipped. The guide's commands run with the core package alone.
"""

from __future__ import annotations

import dataclasses
import doctest
import html
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import tomllib

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
GUIDE = DOCS / "agents" / "your-own.md"
EXAMPLES = DOCS / "examples"


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site as ``mkdocs build --strict`` writes it (any warning fails the build)."""
    for module in ("mkdocs", "mkdocstrings_handlers.python", "material", "griffe_sphinx", "griffe_typingdoc"):
        pytest.importorskip(module, reason="the docs extra is not installed (pip install -e '.[docs]')")
    out = tmp_path_factory.mktemp("site")
    build = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file", str(ROOT / "mkdocs.yml"), "--site-dir", str(out)],
        capture_output=True, text=True, timeout=300, cwd=ROOT,
    )  # fmt: skip
    assert build.returncode == 0, f"mkdocs build --strict failed:\n{build.stderr[-5000:]}"
    return out


def page(site: Path, name: str) -> str:
    path = site / name / "index.html" if name else site / "index.html"
    assert path.is_file(), f"no page {name!r} in the site"
    return path.read_text(encoding="utf-8")


def text_of(markup: str) -> str:
    """The visible text of an HTML page, whitespace collapsed."""
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", markup)).split())


@pytest.mark.parametrize(
    ("name", "anchors"),
    [
        ("engine", ["skyjo_env.engine.SkyjoEngine", "skyjo_env.engine.SkyjoEngine.step", "skyjo_env.rules.Rules"]),
        (
            "agents",
            ["skyjo_env.agents.specs.make", "skyjo_env.agents.base.Policy", "skyjo_env.agents.registry.register"],
        ),
        ("training", ["skyjo_env.train.config.TrainConfig", "skyjo_env.train.ppo"]),
        ("tournaments", ["skyjo_env.evaluation.tournament", "skyjo_env.evaluation.stats"]),
        ("environments/pettingzoo", ["skyjo_env.pettingzoo_env", "skyjo_env.pettingzoo_env.raw_env"]),
        (
            "environments/gymnasium",
            ["skyjo_env.gymnasium_env.SkyjoEnv", "skyjo_env.gymnasium_env.SkyjoEnv.action_masks"],
        ),
        ("environments/gymnasium-vector", ["skyjo_env.gymnasium_vector_env.SkyjoVectorEnv"]),
        ("environments/sb3", ["skyjo_env.sb3_vec_env.SkyjoSB3VecEnv"]),
    ],
)
def test_pages_document_their_objects(site: Path, name: str, anchors: list[str]) -> None:
    markup = page(site, name)
    for anchor in anchors:
        assert f'id="{anchor}"' in markup, f"{name}: no entry for {anchor}"


def test_every_module_has_its_reference(site: Path) -> None:
    # Every module the package installs (pyproject's package-dir folders) is documented on some page,
    # so a new module cannot be left out of the site unnoticed.
    package_dir = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-dir"]
    modules = {
        name if path.stem == "__init__" else f"{name}.{path.stem}"
        for name, folder in package_dir.items()
        for path in (ROOT / folder).glob("*.py")
        if path.read_text(encoding="utf-8").strip()  # an empty __init__.py has nothing to show
    }
    assert {"skyjo_env.engine", "skyjo_env.agents.specs", "skyjo_env.train.config"} <= modules
    markup = "".join(path.read_text(encoding="utf-8") for path in site.rglob("index.html"))
    missing = sorted(module for module in modules if f'id="{module}"' not in markup)
    assert not missing, f"modules on no page of the site: {missing}"


def test_the_step_entry_shows_its_signature_and_docstring(site: Path) -> None:
    from skyjo_env.engine import SkyjoEngine

    text = text_of(page(site, "engine"))
    summary = SkyjoEngine.step.__doc__.splitlines()[0].replace("`", "")  # `games`: code on the page
    assert summary in text
    signature = (
        r"step \( actions : ndarray , games : ndarray \| None = None , \* , check : bool = True ,? \) -> StepResult"
    )
    assert re.search(signature, text)


def test_train_config_fields_carry_their_documentation(site: Path) -> None:
    from skyjo_env.apps.flags import field_docs
    from skyjo_env.train.config import TrainConfig

    markup = page(site, "training")
    text = text_of(markup)
    docs = field_docs(TrainConfig)
    assert len(docs) == len(dataclasses.fields(TrainConfig))
    for field, doc in docs.items():
        assert f'id="skyjo_env.train.config.TrainConfig.{field}"' in markup
        assert " ".join(doc.split()[:6]) in text, f"TrainConfig.{field}: docstring not shown"


def test_rules_page_is_rules_md(site: Path) -> None:
    text = text_of(page(site, "rules"))
    rules = (ROOT / "RULES.md").read_text(encoding="utf-8")
    for heading in re.findall(r"^#+ (.+)$", rules, flags=re.M):
        assert heading in text
    for rule in range(1, 21):
        assert f"R{rule}." in text
    assert "--8<--" not in text


def test_links_to_source_files_lead_to_their_api(site: Path) -> None:
    # RULES.md links skyjo_env/observation.py; on the site that is the module's reference.
    assert 'href="../engine/#skyjo_env.observation"' in page(site, "rules")


def test_docstring_markup_renders_everywhere(site: Path) -> None:
    # Docstrings are Markdown: no Sphinx role, reST table, pipe table or reference link shows as text.
    pages = sorted(site.rglob("index.html"))
    assert len(pages) >= 15
    for path in pages:
        text = text_of(path.read_text(encoding="utf-8"))
        for pattern, what in [
            (r"(?<![\w:]):(class|func|meth|mod|data|attr|obj|exc):(?=[\s`])", "a Sphinx role"),
            (r"={5,} +={5,}", "a reST table"),
            (r"-{3,} \| -{3,}", "a Markdown table"),
            (r"\]\[[\w.]*\]", "a cross-reference"),
        ]:
            found = re.search(pattern, text)
            assert found is None, (
                f"{path.relative_to(site)}: {what} was left as text: {text[found.start() : found.start() + 80]}"
            )
    # The tables of actions.py, among others, are HTML tables with their rows.
    engine = page(site, "engine")
    assert "<table>" in engine and "replace k" in text_of(engine)


def test_docstrings_are_markdown() -> None:
    # The package's docstrings are Markdown as mkdocstrings reads it: [`Rules`][] links, pipe tables.
    package_dir = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-dir"]
    for folder in package_dir.values():
        for path in (ROOT / folder).glob("*.py"):
            source = path.read_text(encoding="utf-8")
            for pattern, what in [
                (r":(class|func|meth|mod|data|attr|obj|exc):`", "a Sphinx role"),
                (r"(?m)^ *={3,}( +={3,})+ *$", "a reST table"),
                (r"(?m)::$", "a reST literal block"),
            ]:
                found = re.search(pattern, source)
                assert found is None, f"{folder}/{path.name}: {what}: {source[found.start() : found.start() + 80]!r}"


def test_index_holds_the_readme_commands(site: Path) -> None:
    text = text_of(page(site, ""))
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    commands = [line for line in readme.splitlines() if line.startswith("python3 -m venv")][:2]
    assert len(commands) == 2
    for command in commands:
        assert " ".join(html.unescape(command).split()) in text


# ---------------------------------------------------------------------------- the guide's commands
def guide_runs() -> list[tuple[str, str]]:
    """``(command, output file)`` for each ``$ command`` of the guide whose output it includes."""
    lines = GUIDE.read_text(encoding="utf-8").splitlines()
    runs = []
    for command, after in zip(lines, lines[1:]):
        included = re.fullmatch(r'--8<-- "docs/examples/([\w.-]+\.out)"', after)
        if command.startswith("$ ") and included:
            runs.append((command[2:], included.group(1)))
    return runs


def _timing_free(output: str) -> str:
    return re.sub(r", [\d.]+ s$", ", <time> s", output, flags=re.M)


def test_the_guide_shows_its_commands_with_their_outputs() -> None:
    runs = guide_runs()
    assert ("skyjo tournament --agents mine=greedy.py:policy counting --games 1000", "counting.out") in runs
    assert ("python observation.py", "observation.out") in runs
    assert len(runs) >= 4


@pytest.mark.parametrize(("command", "output"), guide_runs(), ids=[out for _, out in guide_runs()])
def test_guide_command_prints_what_the_guide_shows(tmp_path: Path, command: str, output: str) -> None:
    for example in EXAMPLES.glob("*.py"):
        shutil.copy(example, tmp_path)
    program, *args = shlex.split(command)
    if program == "python":
        executable = sys.executable
    else:  # the console script of the environment that runs the tests, else the one on PATH
        beside = Path(sys.executable).with_name(program)
        executable = str(beside) if beside.is_file() else shutil.which(program)
        assert executable, f"no {program} command beside {sys.executable} or on PATH"
    run = subprocess.run([executable, *args], capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert run.returncode == 0, run.stderr[-3000:]
    assert _timing_free(run.stdout) == _timing_free((EXAMPLES / output).read_text(encoding="utf-8"))


def test_guide_python_session(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shutil.copy(EXAMPLES / "greedy.py", tmp_path)
    monkeypatch.chdir(tmp_path)
    session = re.search(r"```pycon\n(.*?)```", GUIDE.read_text(encoding="utf-8"), flags=re.S)
    assert session is not None
    test = doctest.DocTestParser().get_doctest(session.group(1), {}, "your-own.md", str(GUIDE), 0)
    assert len(test.examples) == 4
    result = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS).run(test)
    assert result.failed == 0
