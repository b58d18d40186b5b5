"""The notebooks in notebooks/: each is a plain jupytext script (``notebooks/<name>.py``, what the
linter reads and what to edit) paired with its ``.ipynb`` (written by ``jupytext --sync``), committed
without outputs; each one runs top to bottom at the small budget and draws its figures.

The kernel is started from a kernel spec made here that names this interpreter (``sys.executable``),
so the notebooks run in the environment that runs the tests whatever kernels the machine has
installed (a user's ``python3`` kernel may point at another Python).
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
jupytext = pytest.importorskip("jupytext")
pytest.importorskip("ipykernel")
pytest.importorskip("matplotlib")

from jupyter_client.kernelspec import KernelSpecManager  # noqa: E402 (nbclient depends on it)
from jupyter_client.manager import KernelManager  # noqa: E402

FOLDER = Path(__file__).resolve().parents[1] / "notebooks"
#: Notebook -> (figures it must draw at least, modules it needs beyond the dev extra's basics).
NOTEBOOKS = {
    "quickstart": (3, ()),
    "training": (3, ("torch", "sb3_contrib")),
    "strategy": (5, ()),
}
KERNEL = "skyjo-notebook-tests"


def test_every_notebook_is_a_script_paired_with_its_ipynb():
    assert sorted(p.stem for p in FOLDER.glob("*.ipynb")) == sorted(NOTEBOOKS)
    assert sorted(p.stem for p in FOLDER.glob("*.py")) == sorted(NOTEBOOKS)
    for name in NOTEBOOKS:
        assert (
            nbformat.read(FOLDER / f"{name}.ipynb", as_version=4).metadata["jupytext"]["formats"] == "ipynb,py:percent"
        )


@pytest.mark.parametrize("name", sorted(NOTEBOOKS))
def test_committed_notebook_has_no_outputs(name):
    nb = nbformat.read(FOLDER / f"{name}.ipynb", as_version=4)
    nbformat.validate(nb)
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [], (
                f"{name}.ipynb cell {cell.id} has outputs: clear them (jupytext --sync notebooks/{name}.py)"
            )
            assert cell.execution_count is None, f"{name}.ipynb cell {cell.id} has an execution count"


@pytest.mark.parametrize("name", sorted(NOTEBOOKS))
def test_committed_notebook_matches_its_script(name):
    # Cells, not bytes: another jupytext or nbformat release may write the same notebook differently.
    committed = nbformat.read(FOLDER / f"{name}.ipynb", as_version=4)
    script = jupytext.read(FOLDER / f"{name}.py")
    assert [(c.cell_type, c.source) for c in committed.cells] == [(c.cell_type, c.source) for c in script.cells], (
        f"notebooks/{name}.ipynb differs from notebooks/{name}.py: edit the script and run jupytext --sync notebooks/{name}.py"
    )
    assert committed.metadata["kernelspec"] == script.metadata["kernelspec"]


def _kernel_manager(folder: Path) -> KernelManager:
    """A kernel manager whose only kernel spec runs ipykernel on this interpreter."""
    spec = folder / KERNEL
    spec.mkdir(parents=True)
    argv = [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"]
    (spec / "kernel.json").write_text(json.dumps({"argv": argv, "display_name": "skyjo tests", "language": "python"}))
    km = KernelManager(kernel_name=KERNEL, kernel_spec_manager=KernelSpecManager(kernel_dirs=[str(folder)]))
    assert km.kernel_spec.argv[0] == sys.executable
    return km


@pytest.mark.slow
@pytest.mark.timeout(600)
@pytest.mark.parametrize("name", sorted(NOTEBOOKS))
def test_notebook_runs_at_small_budget(name, tmp_path, monkeypatch):
    figures, needs = NOTEBOOKS[name]
    for module in needs:
        pytest.importorskip(module)
    monkeypatch.setenv("SKYJO_NOTEBOOK_BUDGET", "small")
    monkeypatch.delenv("MPLBACKEND", raising=False)  # the kernel's inline backend draws the PNGs
    work = tmp_path / "work"
    work.mkdir()
    nb = nbformat.read(FOLDER / f"{name}.ipynb", as_version=4)
    km = _kernel_manager(tmp_path / "kernels")
    client = nbclient.NotebookClient(
        nb,
        km=km,
        timeout=300,
        resources={"metadata": {"path": str(work)}},  # the kernel's working folder
    )
    started = time.perf_counter()
    try:
        client.execute()  # raises CellExecutionError, naming the cell, if any cell fails
    finally:
        if km.has_kernel:  # nbclient leaves a kernel manager it was given running
            km.shutdown_kernel(now=True)
    seconds = time.perf_counter() - started

    outputs = [o for cell in nb.cells if cell.cell_type == "code" for o in cell.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    pngs = [o for o in outputs if o.output_type in ("display_data", "execute_result") and "image/png" in o.data]
    assert len(pngs) >= figures, f"{name}: {len(pngs)} figures drawn, expected at least {figures}"
    text = "".join(o.get("text", "") for o in outputs if o.output_type == "stream")
    assert "budget 'small'" in text, f"{name} did not report the small budget: {text[:300]}"
    if name == "training":  # the run's files went into the kernel's working folder
        assert (work / "runs" / "notebook-ppo" / "eval.jsonl").is_file()
        assert (work / "runs" / "notebook-ppo" / "agent.npz").is_file()
    print(f"{name}: {seconds:.1f} s, {len(pngs)} figures")
