"""Tournament reports: a printed table, JSON, CSV and Markdown files, and a plot of round scores; and
the check that an output folder can take them, made before any game (a tournament's, a training run's),
with the claim that keeps two commands from writing one folder at once."""

from __future__ import annotations

import contextlib
import csv
import importlib.util
import io
import json
import os
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np

from skyjo_env.evaluation.tournament import AgentResult, TournamentResult
from skyjo_env.files import write_file, write_files
from skyjo_env.rules import Rules

#: Columns of the CSV file and of [`table_rows()`][table_rows], in order.
CSV_FIELDS = (
    "name", "seats", "wins", "win_rate", "win_ci_low", "win_ci_high", "rounds", "mean_round_score",
    "round_score_ci_low", "round_score_ci_high", "mean_game_total", "mean_rounds",
    "rating_mu", "rating_sigma", "rating_ordinal",
)  # fmt: skip


def title(result: TournamentResult) -> str:
    """One line naming what was played."""
    played = result.games + result.unfinished
    games = (
        f"{played:,} games"
        if not result.unfinished
        else (
            f"{played:,} games ({result.games:,} finished; {result.unfinished:,} abandoned after too many actions, "
            "left out of the figures)"
        )
    )
    return f"{games}, {result.players} players, seed {result.seed}, rules {rules_text(result.rules)}, {result.seconds:.1f} s"


def table_rows(result: TournamentResult) -> list[list[str]]:
    """Header and one formatted row per agent, best rating first."""
    header = ["agent", "seats", "win rate", "95% CI", "round score", "95% CI", "game total", "rounds/game",
              "rating μ ± σ"]  # fmt: skip
    rows = [header]
    for a in sorted(result.agents, key=lambda a: -a.rating_mu):
        rows.append([
            a.name,
            str(a.seats),
            *figure_cells(a),
            f"{a.mean_game_total:.1f}",
            f"{a.mean_rounds:.2f}",
            f"{a.rating_mu:.1f} ± {a.rating_sigma:.2f}",
        ])  # fmt: skip
    return rows


def figure_cells(agent: AgentResult) -> list[str]:
    """Win rate, its 95% CI, mean round score and its 95% CI, formatted for a table row."""
    return [
        f"{agent.win_rate:.3f}",
        f"{agent.win_ci[0]:.4f}–{agent.win_ci[1]:.4f}",
        f"{agent.mean_round_score:.2f}",
        f"{agent.round_score_ci[0]:.2f}–{agent.round_score_ci[1]:.2f}",
    ]


def caption(result: TournamentResult) -> str:
    """What the columns mean."""
    return (
        "per seat taken; win rate with a Wilson 95% CI (R20: tied lowest totals all win); "
        f"mean round score after R17 doubling; rating: {result.rating_model} over every game's ranking"
    )


def text_table(result: TournamentResult) -> str:
    """The results as an aligned plain-text table with its title and caption (no terminal needed)."""
    return text_rows(table_rows(result), title(result), caption(result))


def text_rows(rows: list[list[str]], title: str, caption: str) -> str:
    """A header and rows as an aligned plain-text table, the first column left-aligned and the
    others right, between its title and its caption."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = [
        "  ".join(cell.ljust(w) if i == 0 else cell.rjust(w) for i, (cell, w) in enumerate(zip(row, widths)))
        for row in rows
    ]
    rule = "-" * len(lines[0])
    return "\n".join([title, rule, lines[0], rule, *lines[1:], rule, caption])


def print_table(result: TournamentResult) -> None:
    """Print [`text_table()`][text_table]."""
    print(text_table(result))


def markdown_table(result: TournamentResult) -> str:
    """The results as a Markdown table."""
    return markdown_rows(table_rows(result))


def markdown_rows(rows: list[list[str]]) -> str:
    """A header and rows as a Markdown table, aligned as [`text_rows()`][text_rows] aligns them."""
    header, *body = rows
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(["---"] + ["---:"] * (len(header) - 1)) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in body]
    return "\n".join(lines)


def json_text(result: TournamentResult) -> str:
    """Every figure (no raw round scores) as JSON text."""
    return json.dumps(result.to_dict(), indent=2) + "\n"


def csv_text(result: TournamentResult) -> str:
    """One CSV row per agent with the [`CSV_FIELDS`][], under their header."""
    text = io.StringIO(newline="")
    writer = csv.DictWriter(text, fieldnames=CSV_FIELDS, extrasaction="ignore")
    writer.writeheader()
    for a in result.agents:
        writer.writerow(a.to_dict())
    return text.getvalue()


def write_json(result: TournamentResult, path: str | Path) -> Path:
    """Write [`json_text()`][json_text] to `path`, whole or not at all."""
    return write_file(path, json_text(result))


def write_csv(result: TournamentResult, path: str | Path) -> Path:
    """Write [`csv_text()`][csv_text] to `path`, whole or not at all."""
    return write_file(path, csv_text(result))


def round_scores_png(result: TournamentResult) -> bytes:
    """One histogram of round scores per agent, stacked on a shared axis, as PNG (needs matplotlib)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    agents = result.agents
    scores = np.concatenate([a.round_scores for a in agents])
    low, high = np.percentile(scores, [0.1, 99.9])
    bins = np.arange(np.floor(low) - 0.5, np.ceil(high) + 1.5, max(1, int(np.ceil((high - low) / 80))))
    fig, axes = plt.subplots(len(agents), 1, sharex=True, figsize=(9, 1.9 * len(agents) + 1.2), squeeze=False)
    for ax, a, colour in zip(axes[:, 0], agents, plt.rcParams["axes.prop_cycle"].by_key()["color"] * 8):
        ax.hist(np.clip(a.round_scores, bins[0], bins[-1]), bins=bins, color=colour, alpha=0.85)
        ax.axvline(a.mean_round_score, color="black", linestyle="--", linewidth=1)
        ax.text(0.99, 0.9, f"{a.name}\nmean {a.mean_round_score:.1f}, {a.rounds} rounds",
                transform=ax.transAxes, ha="right", va="top", fontsize=10,
                bbox={"facecolor": "white", "alpha": 0.8, "edgecolor": "none"})  # fmt: skip
        ax.set_ylabel("rounds")
        ax.grid(axis="x", alpha=0.3)
    axes[-1, 0].set_xlabel("round score (after R17 doubling; dashed: mean; clipped to the 0.1-99.9 percentiles)")
    fig.suptitle(f"Round scores: {result.games} games, {result.players} players")
    fig.tight_layout()
    image = io.BytesIO()
    fig.savefig(image, format="png", dpi=110)
    plt.close(fig)
    return image.getvalue()


def plot_round_scores(result: TournamentResult, path: str | Path) -> Path:
    """Save [`round_scores_png()`][round_scores_png] to `path`, whole or not at all (needs matplotlib)."""
    return write_file(path, round_scores_png(result))


def check_output_folder(path: str | Path, flag: str = "--out") -> None:
    """`ValueError` naming `flag` unless a folder at `path` exists or can be made, and can be
    written: nothing on the way is a file, and the nearest folder that exists is writable. Writes
    nothing, so that a command can check its output folder before it does any work."""
    out = Path(path)
    if out.exists() and not out.is_dir():
        raise ValueError(f"{flag} {out} is a file, not a folder")
    if out.is_symlink() and not out.exists():
        raise ValueError(f"{flag} {out} is a symbolic link to {os.readlink(out)}, which does not exist")
    nearest = out.absolute()
    while not os.path.lexists(nearest) and nearest != nearest.parent:
        nearest = nearest.parent
    if not nearest.is_dir():
        raise ValueError(f"{flag} {out}: {nearest} is a file, not a folder, so no folder can be made in it")
    if not os.access(nearest, os.W_OK | os.X_OK):
        where = "it" if nearest == out.absolute() else f"{nearest}, where it would be made,"
        raise ValueError(f"{flag} {out}: {where} is not writable; choose another {flag}")


def check_no_earlier(folder: str | Path, files: Sequence[str], what: str, overwrite: bool, flag: str = "--out") -> None:
    """`ValueError` naming `flag` if `folder` holds any of `files` (a symbolic link counts, even one
    to nothing), the files of an earlier `what`, unless `overwrite` allows replacing them. Check
    inside [`claimed_folder()`][claimed_folder], before any work."""
    found = [name for name in files if os.path.lexists(Path(folder) / name)]
    if found and not overwrite:
        raise ValueError(
            f"{flag} {folder} already holds {what} ({', '.join(found)}); replace it with --overwrite "
            f"or choose another {flag}"
        )


@contextlib.contextmanager
def claimed_folder(path: str | Path, flag: str = "--out") -> Iterator[Path]:
    """Hold the output folder `path` for the block: made if missing (after
    [`check_output_folder()`][check_output_folder]), then locked (`flock` on the folder itself, which
    the system releases when the process ends, however it ends), so that a second command given the
    same folder while this one works gets a `ValueError` naming `flag` instead of writing over it.
    Check the folder's contents inside the block: a command that held it may have just finished. If
    the block raises, a folder made here that is still empty is removed again. Where the system or
    its file system has no `flock` (Windows, some network file systems) the folder is made but not
    locked."""
    check_output_folder(path, flag)
    out = Path(path)
    made = [folder for folder in (out, *out.parents) if not os.path.lexists(folder)]
    out.mkdir(parents=True, exist_ok=True)
    try:
        with _lock(out, flag):
            yield out
    except BaseException:
        for folder in made:  # innermost first; stops at the first that holds something
            try:
                folder.rmdir()
            except OSError:
                break
        raise


@contextlib.contextmanager
def _lock(folder: Path, flag: str) -> Iterator[None]:
    try:
        import fcntl
    except ImportError:  # no flock here: unlocked
        yield
        return
    fd = os.open(folder, os.O_RDONLY)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise ValueError(
                f"{flag} {folder} is in use: another command (a run, a tournament or a benchmark) is writing "
                f"there now; wait for it to end or choose another {flag}"
            ) from None
        except OSError:  # a file system without locks (some network ones): unlocked
            pass
        yield
    finally:
        os.close(fd)  # releases the lock


#: The files [`save()`][save] writes (the plot where matplotlib is installed).
FILES = ("tournament.json", "tournament.csv", "tournament.md", "round_scores.png")


def save(result: TournamentResult, out_dir: str | Path) -> dict[str, Path]:
    """Write `tournament.json`, `tournament.csv`, `tournament.md` and, where matplotlib is
    installed (the `plot` extra), `round_scores.png` into `out_dir`, all whole or none new
    ([`write_files()`][skyjo_env.files.write_files]: an `OSError` such as a full disk leaves the folder as it was).
    Without matplotlib, an earlier tournament's plot there is removed (a link is removed, not what
    it points to): the folder's files describe one tournament."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    contents: dict[str, str | bytes] = {
        "json": json_text(result),
        "csv": csv_text(result),
        "markdown": f"{title(result)}\n\n{markdown_table(result)}\n",
    }
    names = dict(zip(("json", "csv", "markdown", "plot"), FILES, strict=True))
    plotting = importlib.util.find_spec("matplotlib") is not None
    if plotting:
        contents["plot"] = round_scores_png(result)
    paths = dict(zip(contents, write_files({out / names[k]: data for k, data in contents.items()}), strict=True))
    if not plotting:
        (out / names["plot"]).unlink(missing_ok=True)
    return paths


def rules_text(rules: Rules) -> str:
    """The options of `rules` that differ from the defaults (`k=v, ...`), or `default`."""
    default = Rules(num_players=rules.num_players)
    changed = {k: v for k, v in rules.to_dict().items() if getattr(default, k) != v}
    return ", ".join(f"{k}={v}" for k, v in changed.items()) or "default"
