"""Pictures of one game of a [`SkyjoEngine`][]: a text table and an RGB image.

Both show what `viewer` may see (RULES.md, last section): every grid with face-down cards as
`##` and removed columns (R13) as `--`, the discard pile's top card, the draw pile's size, the
card in hand (a card drawn from the draw pile only to its drawer, R10; `viewer=None` is a
spectator who sees public information only), totals and last round scores, the seat to act and
the phase. The image is drawn with numpy alone: cards are coloured by value band as in the
published game (-2..-1 dark blue, 0 light blue, 1..4 green, 5..8 yellow, 9..12 red).
[`public_table()`][public_table] gives the same filtered view as data (the browser page is drawn from it);
[`round_end()`][round_end] and [`render_round_end()`][render_round_end] show a round as it was scored, every card turned
up.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import gymnasium
import numpy as np

from skyjo_env.cards import COLS, ROWS, SLOTS
from skyjo_env.engine import SkyjoEngine
from skyjo_env.phases import DRAWN, OVER, PHASE_NAMES, TAKEN
from skyjo_env.rules import Rules

_PHASE_HELP = {
    "setup": "turn two cards face up",
    "choose": "draw a card or take the discard",
    "drawn": "replace a card, or discard it and flip one",
    "taken": "replace a card with the taken one",
    "over": "game over",
}


@dataclass
class Table:
    """Everything a picture shows, already filtered to what the viewer may see (JSON-ready via `asdict`)."""

    num_players: int
    cards: list[list[int | None]]  # per seat, per slot: value if face up, None if face down
    removed: list[list[bool]]
    totals: list[int]
    round_scores: list[int]
    round_index: int
    phase: str
    current: int
    ender: int | None
    final_turns: int
    discard_top: int | None
    draw_size: int
    held: int | None  # the card in hand, if the viewer may see it
    held_from: str | None  # "draw pile" or "discard pile" while a card is in hand
    winners: list[int]


def public_table(engine: SkyjoEngine, game: int, viewer: int | None) -> Table:
    """What seat `viewer` (`None`: a spectator) may see of game `game` (RULES.md, last section)."""
    P = engine.num_players
    if not 0 <= game < engine.batch_size:
        raise ValueError(f"game {game} is out of range; games are 0..{engine.batch_size - 1}")
    if viewer is not None and not 0 <= viewer < P:
        raise ValueError(f"viewer {viewer} is not a seat; use None (spectator) or 0..{P - 1}")
    phase = int(engine.phase[game])
    current = int(engine.current[game])
    up = [int(x) for x in engine.face_up[game]]
    gone = [int(x) for x in engine.removed[game]]
    values = engine.values[game].tolist()
    cards = [[values[p][k] if up[p] >> k & 1 else None for k in range(SLOTS)] for p in range(P)]
    removed = [[bool(gone[p] >> k & 1) for k in range(SLOTS)] for p in range(P)]
    n_discard = int(engine.discard_size[game])
    holding = phase in (DRAWN, TAKEN)
    visible = phase == TAKEN or (phase == DRAWN and viewer == current)
    totals = [int(t) for t in engine.totals[game]]
    return Table(
        num_players=P,
        cards=cards,
        removed=removed,
        totals=totals,
        round_scores=[int(s) for s in engine.round_scores[game]],
        round_index=int(engine.round_index[game]),
        phase=PHASE_NAMES[phase],
        current=current,
        ender=int(engine.ender[game]) if engine.ender[game] >= 0 else None,
        final_turns=int(engine.final_turns[game]),
        discard_top=int(engine.discard_pile[game, n_discard - 1]) if n_discard else None,
        draw_size=int(engine.draw_size[game]),
        held=int(engine.held[game]) if holding and visible else None,
        held_from=("draw pile" if phase == DRAWN else "discard pile") if holding else None,
        winners=[p for p in range(P) if totals[p] == min(totals)] if phase == OVER else [],
    )


@dataclass
class RoundEnd:
    """A round as it was scored: every card turned up (R16), public to everyone (JSON-ready via `asdict`)."""

    round: int  #: the round's number, from 1
    cards: list[list[int | None]]  #: per seat, per slot: the card (removed columns' too: see `removed`)
    removed: list[list[bool]]
    scores: list[int]  #: round scores after R17
    ender: int  #: the seat that ended the round (R15)
    doubled_from: int | None  #: the ender's score before R17 doubled it, or `None`
    totals: list[int]  #: game totals after the round (R18)


def round_end(state: dict[str, Any], action: int) -> RoundEnd:
    """The round that `action` ends, played from `state` (a dict of
    [`export_game()`][skyjo_env.engine.SkyjoEngine.export_game] taken just before it).

    The engine deals the next round in the step that scores one, so the action is replayed in a
    one-round copy of the game, which stops with every card face up.
    """
    engine = SkyjoEngine.of_game(state, Rules.from_dict({**state["rules"], "episode": "round"}))
    if not engine.step(np.array([action])).round_over[0]:
        raise ValueError(f"action {action} does not end the round in this state")
    table = public_table(engine, 0, None)
    ender = table.ender if table.ender is not None else table.current
    kept = sum(
        card for card, gone in zip(table.cards[ender], table.removed[ender]) if not gone and card is not None
    )  # R16
    score = table.round_scores[ender]
    return RoundEnd(
        round=table.round_index,
        cards=table.cards,
        removed=table.removed,
        scores=table.round_scores,
        ender=ender,
        doubled_from=kept if score != kept else None,
        totals=table.totals,
    )


# ---------------------------------------------------------------------------------------- text
def rendered(
    mode: str | None, engine: SkyjoEngine, game: int = 0, viewer: int | None = None
) -> str | np.ndarray | None:
    """What an environment's `render()` returns in render `mode`: the image (`"rgb_array"`), the
    text (`"ansi"`), or `None` after printing the text (`"human"`); `None` with Gymnasium's
    warning where no mode was set."""
    if mode is None:
        gymnasium.logger.warn("You are calling render method without specifying any render mode.")
        return None
    if mode == "rgb_array":
        return render_rgb(engine, game, viewer)
    text = render_text(engine, game, viewer)
    if mode == "ansi":
        return text
    print(text)
    return None


def render_text(engine: SkyjoEngine, game: int = 0, viewer: int | None = None) -> str:
    """A text table of game `game` as seen by seat `viewer` (`None`: a spectator)."""
    t = public_table(engine, game, viewer)
    lines = [_status(t)]
    held = "none" if t.held_from is None else f"{'??' if t.held is None else t.held} (from the {t.held_from})"
    top = "empty" if t.discard_top is None else t.discard_top
    lines.append(f"draw pile: {t.draw_size} cards   discard: {top}   in hand: {held}")
    lines.append("")
    blocks = [
        [
            _seat_title(t, p),
            f"total {t.totals[p]}, last round {t.round_scores[p]}",
            *_grid_rows(t.cards[p], t.removed[p]),
        ]
        for p in range(t.num_players)
    ]
    lines += _side_by_side(blocks)
    return "\n".join(lines).rstrip() + "\n"


def render_round_end(r: RoundEnd, viewer: int | None = None) -> str:
    """A text picture of a scored round: every grid turned up, the scores, any doubling (R17), the totals."""
    blocks = []
    for p, cards in enumerate(r.cards):
        name = f"player_{p}" + (" (you)" if p == viewer else "") + (" (ended)" if p == r.ender else "")
        score = (
            f"{r.doubled_from} doubled to {r.scores[p]}"
            if p == r.ender and r.doubled_from is not None
            else str(r.scores[p])
        )
        blocks.append([name, f"round score {score}", *_grid_rows(cards, r.removed[p])])
    lines = [f"Round {r.round} is over: every card is turned up (R16)", ""]
    lines += _side_by_side(blocks)
    if r.doubled_from is not None:
        lines.append(
            f"player_{r.ender} ended the round without the strictly lowest score: {r.doubled_from} is doubled to "
            f"{r.scores[r.ender]} (R17)"
        )
    lines.append("totals: " + ", ".join(f"player_{p} {total}" for p, total in enumerate(r.totals)))
    return "\n".join(lines).rstrip() + "\n"


def _grid_rows(cards: list[int | None], removed: list[bool]) -> list[str]:
    """A grid as three text rows: cards, `##` face down, `--` removed (R13)."""
    return [" ".join(_card(cards[k], removed[k]) for k in range(row * COLS, (row + 1) * COLS)) for row in range(ROWS)]


def _card(card: int | None, removed: bool) -> str:
    if removed:
        return "--"
    return "##" if card is None else f"{card:>2}"


def _side_by_side(blocks: list[list[str]], per_row: int = 4) -> list[str]:
    """Text blocks (one per seat) laid out `per_row` abreast, each column as wide as its widest line."""
    lines = []
    for first in range(0, len(blocks), per_row):
        group = blocks[first : first + per_row]
        widths = [max(len(line) for line in block) + 3 for block in group]
        for i in range(max(len(block) for block in group)):
            lines.append(
                "".join((block[i] if i < len(block) else "").ljust(w) for block, w in zip(group, widths)).rstrip()
            )
        lines.append("")
    return lines


def _status(t: Table) -> str:
    if t.phase == "over":
        names = ", ".join(f"player_{p}" for p in t.winners)
        return f"Skyjo - game over after {t.round_index} round(s); lowest total wins: {names}"
    status = f"Skyjo - round {t.round_index + 1} - player_{t.current} to act: {t.phase} ({_PHASE_HELP[t.phase]})"
    if t.ender is not None:
        status += f" - player_{t.ender} ended the round, {t.final_turns} final turn(s) left"
    return status


def _seat_title(t: Table, p: int) -> str:
    marks = (" <" if p == t.current and t.phase != "over" else "") + (" (ended)" if p == t.ender else "")
    marks += " (wins)" if p in t.winners else ""
    return f"player_{p}{marks}"


# ---------------------------------------------------------------------------------------- image
CARD_W, CARD_H, GAP = 40, 56, 6
_PANEL_W = COLS * CARD_W + (COLS - 1) * GAP + 2 * 10
_PANEL_H = 34 + ROWS * CARD_H + (ROWS - 1) * GAP + 10
_HEADER_H = 120
_MARGIN = 12

_FELT = (22, 84, 52)
_PANEL = (30, 104, 66)
_ACTIVE = (250, 214, 70)
_TEXT = (240, 240, 232)
_DIM = (150, 190, 160)
_BACK = (58, 66, 110)
_BACK_MARK = (92, 102, 160)
_EDGE = (20, 20, 24)


def card_colour(value: int) -> tuple[int, int, int]:
    """The face colour of a card of `value`, by the published game's value bands."""
    if value < 0:
        return (70, 74, 170)  # -2, -1: dark blue
    if value == 0:
        return (120, 200, 235)  # 0: light blue
    if value <= 4:
        return (110, 190, 90)  # 1..4: green
    if value <= 8:
        return (245, 215, 70)  # 5..8: yellow
    return (225, 75, 60)  # 9..12: red


def render_rgb(engine: SkyjoEngine, game: int = 0, viewer: int | None = None) -> np.ndarray:
    """An `(H, W, 3)` uint8 image of game `game` as seen by seat `viewer` (`None`: a spectator)."""
    t = public_table(engine, game, viewer)
    per_row = min(t.num_players, 4)
    rows = -(-t.num_players // 4)
    width = 2 * _MARGIN + per_row * _PANEL_W + (per_row - 1) * _MARGIN
    width = max(width, 2 * _MARGIN + 3 * (CARD_W + 28) + 260)
    height = _HEADER_H + rows * _PANEL_H + rows * _MARGIN + _MARGIN
    img = np.empty((height, width, 3), dtype=np.uint8)
    img[:] = _FELT

    # Header: status line, then the draw pile, the discard pile and the card in hand.
    title = _status(t).replace("Skyjo - ", "").upper()
    _text(img, _MARGIN, _MARGIN, _fit(title, (width - 2 * _MARGIN) // 6), _TEXT, scale=1)
    x, y = _MARGIN, _MARGIN + 22
    _pile(img, x, y, None, f"DRAW {t.draw_size}", face_down=t.draw_size > 0)
    x += CARD_W + 40
    _pile(img, x, y, t.discard_top, "DISCARD", face_down=False)
    x += CARD_W + 40
    if t.held_from is not None:
        label = "DRAWN" if t.held_from == "draw pile" else "TAKEN"
        _pile(img, x, y, t.held, f"{label} P{t.current}", face_down=t.held is None)

    for p in range(t.num_players):
        px = _MARGIN + (p % 4) * (_PANEL_W + _MARGIN)
        py = _HEADER_H + (p // 4) * (_PANEL_H + _MARGIN)
        _panel(img, t, p, px, py)
    return img


def _panel(img: np.ndarray, t: Table, p: int, x: int, y: int) -> None:
    active = p == t.current and t.phase != "over"
    if active or p in t.winners:
        _rect(img, x - 3, y - 3, _PANEL_W + 6, _PANEL_H + 6, _ACTIVE)
    _rect(img, x, y, _PANEL_W, _PANEL_H, _PANEL)
    name = f"P{p}" + (" END" if p == t.ender else "") + (" WIN" if p in t.winners else "")
    _text(img, x + 8, y + 6, name, _ACTIVE if active else _TEXT, scale=2)
    _text(img, x + _PANEL_W - 8 - 6 * len(f"TOTAL {t.totals[p]}"), y + 6, f"TOTAL {t.totals[p]}", _TEXT, scale=1)
    last = f"LAST {t.round_scores[p]}"
    _text(img, x + _PANEL_W - 8 - 6 * len(last), y + 17, last, _DIM, scale=1)
    for k in range(SLOTS):
        cx = x + 10 + (k % COLS) * (CARD_W + GAP)
        cy = y + 34 + (k // COLS) * (CARD_H + GAP)
        if t.removed[p][k]:
            _outline(img, cx, cy, CARD_W, CARD_H, _DIM)
        else:
            _card_image(img, cx, cy, t.cards[p][k])


def _pile(img: np.ndarray, x: int, y: int, value: int | None, label: str, *, face_down: bool) -> None:
    if face_down:
        _card_image(img, x, y, None)
    elif value is None:
        _outline(img, x, y, CARD_W, CARD_H, _DIM)
    else:
        _card_image(img, x, y, value)
    _text(img, x + CARD_W // 2 - 3 * len(label), y + CARD_H + 6, label, _TEXT, scale=1)


def _card_image(img: np.ndarray, x: int, y: int, value: int | None) -> None:
    """A card with a dark edge: face up with its value, or its back (`value=None`)."""
    _rect(img, x, y, CARD_W, CARD_H, _EDGE)
    if value is None:
        _rect(img, x + 2, y + 2, CARD_W - 4, CARD_H - 4, _BACK)
        for i in range(4, CARD_H - 4, 8):  # diagonal stripes
            for j in range(4, CARD_W - 4, 8):
                _rect(img, x + j, y + i, 3, 3, _BACK_MARK)
        return
    face = card_colour(value)
    _rect(img, x + 2, y + 2, CARD_W - 4, CARD_H - 4, face)
    ink = (255, 255, 255) if value < 0 else (20, 20, 20)
    label = str(value)
    _text(img, x + CARD_W // 2 - 6 * len(label) + 1, y + CARD_H // 2 - 7, label, ink, scale=2)


def _rect(img: np.ndarray, x: int, y: int, w: int, h: int, colour: tuple[int, int, int]) -> None:
    img[max(y, 0) : y + h, max(x, 0) : x + w] = colour


def _outline(img: np.ndarray, x: int, y: int, w: int, h: int, colour: tuple[int, int, int]) -> None:
    for i in range(0, w, 6):  # dashed frame of an empty place
        _rect(img, x + i, y, 3, 2, colour)
        _rect(img, x + i, y + h - 2, 3, 2, colour)
    for i in range(0, h, 6):
        _rect(img, x, y + i, 2, 3, colour)
        _rect(img, x + w - 2, y + i, 2, 3, colour)


def _fit(text: str, chars: int) -> str:
    return text if len(text) <= chars else text[: chars - 2] + ".."


def _text(img: np.ndarray, x: int, y: int, text: str, colour: tuple[int, int, int], *, scale: int) -> None:
    """Draw `text` with the 5x7 font below, its top-left corner at (x, y), each pixel scale x scale."""
    for i, char in enumerate(text):
        glyph = _GLYPHS.get(char, _GLYPHS["?"])
        ys, xs = np.nonzero(glyph)
        for dy in range(scale):
            for dx in range(scale):
                yy = y + ys * scale + dy
                xx = x + (i * 6 + xs) * scale + dx
                ok = (yy >= 0) & (yy < img.shape[0]) & (xx >= 0) & (xx < img.shape[1])
                img[yy[ok], xx[ok]] = colour


_FONT = {
    "0": "01110 10001 10011 10101 11001 10001 01110",
    "1": "00100 01100 00100 00100 00100 00100 01110",
    "2": "01110 10001 00001 00010 00100 01000 11111",
    "3": "11110 00001 00001 01110 00001 00001 11110",
    "4": "00010 00110 01010 10010 11111 00010 00010",
    "5": "11111 10000 11110 00001 00001 10001 01110",
    "6": "00110 01000 10000 11110 10001 10001 01110",
    "7": "11111 00001 00010 00100 01000 01000 01000",
    "8": "01110 10001 10001 01110 10001 10001 01110",
    "9": "01110 10001 10001 01111 00001 00010 01100",
    "A": "01110 10001 10001 11111 10001 10001 10001",
    "B": "11110 10001 10001 11110 10001 10001 11110",
    "C": "01110 10001 10000 10000 10000 10001 01110",
    "D": "11110 10001 10001 10001 10001 10001 11110",
    "E": "11111 10000 10000 11110 10000 10000 11111",
    "F": "11111 10000 10000 11110 10000 10000 10000",
    "G": "01110 10001 10000 10111 10001 10001 01111",
    "H": "10001 10001 10001 11111 10001 10001 10001",
    "I": "01110 00100 00100 00100 00100 00100 01110",
    "J": "00111 00010 00010 00010 00010 10010 01100",
    "K": "10001 10010 10100 11000 10100 10010 10001",
    "L": "10000 10000 10000 10000 10000 10000 11111",
    "M": "10001 11011 10101 10101 10001 10001 10001",
    "N": "10001 10001 11001 10101 10011 10001 10001",
    "O": "01110 10001 10001 10001 10001 10001 01110",
    "P": "11110 10001 10001 11110 10000 10000 10000",
    "Q": "01110 10001 10001 10001 10101 10010 01101",
    "R": "11110 10001 10001 11110 10100 10010 10001",
    "S": "01111 10000 10000 01110 00001 00001 11110",
    "T": "11111 00100 00100 00100 00100 00100 00100",
    "U": "10001 10001 10001 10001 10001 10001 01110",
    "V": "10001 10001 10001 10001 10001 01010 00100",
    "W": "10001 10001 10001 10101 10101 10101 01010",
    "X": "10001 10001 01010 00100 01010 10001 10001",
    "Y": "10001 10001 01010 00100 00100 00100 00100",
    "Z": "11111 00001 00010 00100 01000 10000 11111",
    "-": "00000 00000 00000 11111 00000 00000 00000",
    "_": "00000 00000 00000 00000 00000 00000 11111",
    ":": "00000 01100 01100 00000 01100 01100 00000",
    ".": "00000 00000 00000 00000 00000 01100 01100",
    ",": "00000 00000 00000 00000 01100 00100 01000",
    ";": "00000 01100 01100 00000 01100 00100 01000",
    "(": "00010 00100 01000 01000 01000 00100 00010",
    ")": "01000 00100 00010 00010 00010 00100 01000",
    "?": "01110 10001 00001 00010 00100 00000 00100",
    "#": "01010 01010 11111 01010 11111 01010 01010",
    "/": "00001 00010 00010 00100 01000 01000 10000",
    " ": "00000 00000 00000 00000 00000 00000 00000",
}
_GLYPHS = {c: np.array([[b == "1" for b in row] for row in rows.split()]) for c, rows in _FONT.items()}
