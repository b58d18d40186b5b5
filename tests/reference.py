"""A deliberately simple reference implementation of RULES.md: one game, plain Python lists and ints.

Written from the rules text, not from the engine, to cross-check it (``test_engine_reference.py``).
It uses the project's action ids (0 draw, 1 take, 2 + k replace slot k, 14 + k flip slot k) and the
engine's reward modes. Every round is dealt from a given deck order (``SkyjoEngine.deal_from``'s
convention); the one random event it cannot know, an R12 reshuffle, is delegated to ``shuffle``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

from skyjo_env import Rules

DRAW = 0
TAKE = 1
REPLACE = 2  # REPLACE + k: swap the card in hand with slot k
FLIP = 14  # FLIP + k: turn slot k face up
COLUMNS = [(c, c + 4, c + 8) for c in range(4)]  # R3: slot = row * 4 + column


@dataclass
class Outcome:
    """What one action led to (the engine's StepResult for one game)."""

    rewards: list[float]
    round_over: bool
    game_over: bool
    round_scores: list[int]
    totals: list[int]
    winners: list[bool]


class ReferenceGame:
    """One game of Skyjo.

    Args:
        rules: the rule options.
        decks: one 150-card deck order per round: cards 0..11 to seat 0, the next 12 to seat 1, ...,
            the next card starts the discard pile, the rest is the draw pile, the first of them on top.
        reward: ``"result"``, ``"score"``, ``"lead"`` or ``"none"``, as in the engine.
        shuffle: given the cards to reshuffle (R12), returns them as the new draw pile, bottom first.
    """

    def __init__(
        self, rules: Rules, decks: list[list[int]], reward: str, shuffle: Callable[[list[int]], list[int]]
    ) -> None:
        self.rules = rules
        self.players = rules.num_players
        self.decks = decks
        self.reward = reward
        self.shuffle = shuffle
        self.round_index = 0
        self.round_scores = [0] * self.players
        self.totals = [0] * self.players
        self.starter = 0
        self.steps = 0
        self.reshuffles = 0
        self.deal()

    # ------------------------------------------------------------------ a round
    def deal(self) -> None:
        """R3, R4: deal this round's deck order; everything face down."""
        deck = list(self.decks[self.round_index])
        P = self.players
        self.values = [deck[12 * p : 12 * p + 12] for p in range(P)]
        self.face_up = [[False] * 12 for _ in range(P)]
        self.removed = [[False] * 12 for _ in range(P)]
        self.discard_pile = [deck[12 * P]]
        self.draw_pile = list(reversed(deck[12 * P + 1 :]))  # kept bottom first: the top is the last card
        self.held: int | None = None
        self.phase = "setup"
        self.current = 0
        self.ender: int | None = None
        self.final_turns = 0

    def face_down(self, player: int) -> list[int]:
        """Slots of ``player`` whose card is still face down (removed cards were face up)."""
        return [k for k in range(12) if not self.face_up[player][k]]

    def legal_actions(self) -> set[int]:
        """R5, R8..R10, R12."""
        me = self.current
        if self.phase == "setup":
            return {FLIP + k for k in self.face_down(me)}
        if self.phase == "choose":
            can_draw = len(self.draw_pile) > 0 or len(self.discard_pile) > 1
            return {TAKE} | ({DRAW} if can_draw else set())
        swaps = {REPLACE + k for k in range(12) if not self.removed[me][k]}
        if self.phase == "drawn":
            return swaps | {FLIP + k for k in self.face_down(me)}
        if self.phase == "taken":
            return swaps
        return set()

    def step(self, action: int) -> Outcome:
        """Apply one legal action."""
        assert action in self.legal_actions(), f"illegal action {action}"
        self.steps += 1
        me = self.current
        if self.phase == "setup":  # R5
            self.face_up[me][action - FLIP] = True
            if 12 - len(self.face_down(me)) == 2:
                self.current += 1
                if self.current == self.players:
                    if self.round_index == 0:
                        self.starter = self.first_round_starter()
                    self.current = self.starter
                    self.phase = "choose"
            return self.nothing()
        if self.phase == "choose":  # R8
            if action == DRAW:
                if not self.draw_pile:  # R12
                    top = self.discard_pile.pop()
                    self.draw_pile = self.shuffle(self.discard_pile)
                    self.discard_pile = [top]
                    self.reshuffles += 1
                self.held = self.draw_pile.pop()
                self.phase = "drawn"
            else:
                self.held = self.discard_pile.pop()
                self.phase = "taken"
            return self.nothing()
        if action >= FLIP:  # R10: discard the drawn card, turn up a face-down card
            self.discard_pile.append(self.held)
            self.face_up[me][action - FLIP] = True
        else:  # R9, R10: swap
            slot = action - REPLACE
            self.discard_pile.append(self.values[me][slot])
            self.values[me][slot] = self.held
            self.face_up[me][slot] = True
        self.held = None
        if self.rules.column_rule:  # R13
            self.remove_columns(me)
        return self.end_turn()

    def remove_columns(self, player: int) -> None:
        """R13: columns of three equal face-up cards leave the grid for the discard pile."""
        for column in COLUMNS:
            cards = [self.values[player][k] for k in column]
            up = all(self.face_up[player][k] for k in column)
            gone = any(self.removed[player][k] for k in column)
            if up and not gone and cards[0] == cards[1] == cards[2]:
                for k in column:
                    self.removed[player][k] = True
                self.discard_pile.extend(cards)

    def end_turn(self) -> Outcome:
        """R11, R15: next player clockwise; the round ends after everybody else's last turn."""
        me = self.current
        if self.ender is None and not self.face_down(me):
            self.ender = me
            self.final_turns = self.players - 1
        elif self.ender is not None:
            self.final_turns -= 1
        if self.ender is not None and self.final_turns == 0:
            return self.end_round()
        self.current = (me + 1) % self.players
        self.phase = "choose"
        return self.nothing()

    def end_round(self) -> Outcome:
        """R14, R16..R20 and the reward modes."""
        P = self.players
        self.discards_before_reveal = len(self.discard_pile)
        for p in range(P):
            self.face_up[p] = [True] * 12
            if self.rules.column_rule and self.rules.column_rule_at_final_reveal:
                self.remove_columns(p)
        scores = [sum(v for v, gone in zip(self.values[p], self.removed[p]) if not gone) for p in range(P)]
        e = self.ender
        if scores[e] > 0 and any(scores[p] <= scores[e] for p in range(P) if p != e):
            scores[e] *= 2  # R17
        before = self.totals
        self.totals = [t + s for t, s in zip(self.totals, scores)]  # R18
        self.round_scores = scores
        rewards = [0.0] * P
        if self.reward == "score":
            rewards = [(sum(scores) - s) / (P - 1) - s for s in scores]
        elif self.reward == "lead":
            rewards = [self.lead(self.totals, p) - self.lead(before, p) for p in range(P)]
        game_over = self.rules.episode == "round" or max(self.totals) >= self.rules.end_score  # R19
        winners = [False] * P
        if game_over:
            winners = [t == min(self.totals) for t in self.totals]  # R20
            n = sum(winners)
            if self.reward == "result" and n < P:
                rewards = [1 / n if w else -1 / (P - n) for w in winners]
            self.phase = "over"
            self.round_index += 1  # round_index counts completed rounds: all of them, once over
        else:
            self.next_round(scores)
        return Outcome(rewards, True, game_over, list(scores), list(self.totals), winners)

    @staticmethod
    def lead(totals: list[int], p: int) -> int:
        """The lowest opponent total minus seat ``p``'s own (the ``"lead"`` reward's potential)."""
        return min(t for q, t in enumerate(totals) if q != p) - totals[p]

    def next_round(self, scores: list[int]) -> None:
        """R7 and R19: pick the next starter and deal the next round."""
        if self.rules.next_starter == "round_ender":
            self.starter = self.ender
        else:
            clockwise = [(self.starter + i) % self.players for i in range(self.players)]
            self.starter = next(p for p in clockwise if scores[p] == min(scores))
        self.round_index += 1
        self.deal()

    def first_round_starter(self) -> int:
        """R6: highest sum of the revealed cards, then the highest single card, then the lowest seat."""

        def strength(p: int) -> tuple[int, int, int]:
            shown = [v for v, up in zip(self.values[p], self.face_up[p]) if up]
            return (sum(shown), max(shown), -p)

        return max(range(self.players), key=strength)

    def nothing(self) -> Outcome:
        """The outcome of an action that does not end a round."""
        P = self.players
        return Outcome([0.0] * P, False, False, [0] * P, list(self.totals), [False] * P)

    # ------------------------------------------------------------------ observation
    def unseen(self) -> list[int]:
        """Public counts of the values -2..12 among the draw pile, face-down cards and a drawn card."""
        cards = list(self.draw_pile)
        for p in range(self.players):
            cards += [self.values[p][k] for k in self.face_down(p)]
        if self.phase == "drawn":
            cards.append(self.held)
        counts = Counter(cards)
        return [counts[v] for v in range(-2, 13)]

    def state(self) -> dict:
        """The state, keyed like ``SkyjoEngine.export_game``, plus ``unseen``."""
        return {
            "values": [list(row) for row in self.values],
            "face_up": [list(row) for row in self.face_up],
            "removed": [list(row) for row in self.removed],
            "draw_pile": list(self.draw_pile),
            "discard_pile": list(self.discard_pile),
            "held": self.held,
            "phase": self.phase,
            "current": self.current,
            "starter": self.starter,
            "ender": self.ender,
            "final_turns": self.final_turns,
            "round_index": self.round_index,
            "round_scores": list(self.round_scores),
            "totals": list(self.totals),
            "steps": self.steps,
            "unseen": self.unseen(),
        }
