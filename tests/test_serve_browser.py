"""``skyjo serve`` in a real browser: headless Chromium, driven by Selenium, clicks through whole games.

Needs Debian's ``chromium`` and ``chromium-driver`` (``apt-get install chromium chromium-driver``);
where they are missing the tests skip, saying so.
"""

from __future__ import annotations

import contextlib
import json
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from selenium import webdriver
from selenium.common.exceptions import StaleElementReferenceException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.support.ui import Select, WebDriverWait
from web_server import serving

from skyjo_env.actions import DRAW, FLIP

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
CHROMIUM_FLAGS = (
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync", "--window-size=1280,1100",
)  # fmt: skip
GAME_SECONDS = 50


@pytest.fixture
def server(tmp_path: Path) -> Iterator[str]:
    """The app on a free loopback port; yields its address."""
    with serving(tmp_path / "games") as address:
        yield address


@pytest.fixture
def browser(tmp_path: Path) -> Iterator[WebDriver]:
    """Headless Chromium with a fresh profile, through Debian's chromedriver."""
    missing = [str(path) for path in (CHROMIUM, CHROMEDRIVER) if not path.exists()]
    if missing:
        pytest.skip(f"no browser to drive: {', '.join(missing)} not found (apt-get install chromium chromium-driver)")
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in CHROMIUM_FLAGS + (f"--user-data-dir={tmp_path / 'profile'}",):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=options)
    yield driver
    driver.quit()


def new_game(browser: WebDriver, address: str, *, players: int, spectate: bool, end_score: int | None) -> None:
    """Fill in the new-game form (default agents; ``end_score`` None: left empty) and start at the fastest speed."""
    browser.get(address)
    WebDriverWait(browser, 10).until(lambda d: d.find_elements(By.CSS_SELECTOR, "#agent-seats select"))
    Select(browser.find_element(By.ID, "players")).select_by_value(str(players))
    if spectate:
        browser.find_element(By.ID, "spectate").click()
    score = browser.find_element(By.ID, "end_score")
    score.clear()
    if end_score is not None:
        score.send_keys(str(end_score))
    browser.find_element(By.ID, "start").click()
    WebDriverWait(browser, 10).until(lambda d: d.find_element(By.ID, "game").is_displayed())
    Select(browser.find_element(By.ID, "speed")).select_by_visible_text("fastest")


def my_move(browser: WebDriver) -> None:
    """The person's fixed strategy, by clicks: always draw, then discard the drawn card and flip a card."""
    if browser.find_element(By.ID, "discard-drawn").is_displayed():
        browser.find_element(By.ID, "discard-drawn").click()
    legal = {
        int(b.get_attribute("data-action")): b
        for b in browser.find_elements(By.CSS_SELECTOR, "button.legal[data-action]")
    }
    flips = [a for a in legal if a >= FLIP]
    choice = DRAW if DRAW in legal else min(flips) if flips else min(legal, default=None)
    if choice is not None:
        legal[choice].click()


def game_over(browser: WebDriver) -> bool:
    return "over" in browser.find_element(By.ID, "status").get_attribute("class")


def fetch_json(url: str) -> dict:
    with urllib.request.urlopen(url, timeout=10) as response:
        return json.load(response)


def test_a_person_plays_a_whole_game_against_the_shipped_agent(server: str, browser: WebDriver, tmp_path: Path) -> None:
    new_game(browser, server, players=2, spectate=False, end_score=10)  # a low end score (R19): a short game
    game_id = browser.execute_script("return location.hash").removeprefix("#game=")
    assert fetch_json(f"{server}api/games/{game_id}")["seats"] == [None, "ppo-2p"]  # the default for 2 seats
    assert not browser.find_element(By.ID, "download").is_displayed()  # a human game's snapshot waits for the end
    saw_my_drawn_card = False
    deadline = time.monotonic() + GAME_SECONDS
    while not game_over(browser):
        assert time.monotonic() < deadline, "the game did not end in time"
        try:
            held = browser.find_element(By.ID, "held-from")
            if held.is_displayed() and held.text == "You drew it from the draw pile":
                saw_my_drawn_card |= (
                    browser.find_element(By.ID, "held").text.lstrip("-").isdigit()
                )  # R10: the drawer sees it
            my_move(browser)
        except StaleElementReferenceException:  # the page redrew itself under the click
            pass
        time.sleep(0.03)
    assert saw_my_drawn_card
    assert browser.find_element(By.ID, "message").text == ""  # no move was refused
    mine = [
        item.text.split()[1] for item in browser.find_elements(By.CSS_SELECTOR, "#log li") if item.text[:4] == "You "
    ]
    assert "draw" in mine and "flip" in mine and set(mine) <= {"draw", "take", "replace", "flip"}  # "You draw"
    browser.save_screenshot(str(tmp_path / "serve.png"))
    assert (tmp_path / "serve.png").read_bytes().startswith(b"\x89PNG")

    view = fetch_json(f"{server}api/games/{game_id}")
    winners = view["table"]["winners"]
    assert winners and view["table"]["phase"] == "over"
    status = browser.find_element(By.ID, "status").text
    assert "Game over" in status and "(R20)" in status
    assert ("you" in status) == (0 in winners) and ("seat 1 (ppo-2p)" in status) == (1 in winners)
    assert [
        int(p.get_attribute("data-seat")) for p in browser.find_elements(By.CSS_SELECTOR, "#grids .seat.winner")
    ] == winners
    # The last round's summary: every card of both grids face up (R16), the round scores, the ender.
    summary = browser.find_element(By.ID, "round-end")
    last = view["last_round"]
    assert f"Round {last['round']} over" in summary.text and ("doubled from" in summary.text) == (
        last["doubled"] is not None
    )
    cards = summary.find_elements(By.CSS_SELECTOR, ".card")
    assert len(cards) == 24 and not summary.find_elements(By.CSS_SELECTOR, ".card.back")
    for p, score in enumerate(last["scores"]):
        assert f"round {score}" in summary.find_elements(By.CSS_SELECTOR, ".seat")[p].text
    # Over, the game can be downloaded as the engine's snapshot.
    download = browser.find_element(By.ID, "download")
    assert download.is_displayed()
    snapshot = fetch_json(download.get_attribute("href"))
    assert snapshot["format"] == "skyjo-env/game" and snapshot["phase"] == "over"


def test_agents_play_each_other_while_a_spectator_watches(server: str, browser: WebDriver) -> None:
    new_game(browser, server, players=3, spectate=True, end_score=1)
    assert browser.find_element(By.ID, "download").is_displayed()  # a spectator game: at any time
    assert not browser.find_elements(By.CSS_SELECTOR, "button.legal")  # nothing for the spectator to click
    WebDriverWait(browser, GAME_SECONDS).until(game_over)
    game_id = browser.execute_script("return location.hash").removeprefix("#game=")
    view = fetch_json(f"{server}api/games/{game_id}")
    assert view["seats"] == ["ppo-3p"] * 3  # the shipped 3-player agent by default
    snapshot = fetch_json(browser.find_element(By.ID, "download").get_attribute("href"))
    assert len(browser.find_elements(By.CSS_SELECTOR, "#log li")) == snapshot["steps"]  # every move shown, one by one


def post_json(url: str, body: dict) -> dict:
    request = urllib.request.Request(url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.load(response)


def rect(browser: WebDriver, selector: str) -> dict:
    return browser.execute_script(f"return document.querySelector({selector!r}).getBoundingClientRect().toJSON()")


def test_an_empty_end_score_is_the_rules_default(server: str, browser: WebDriver) -> None:
    new_game(browser, server, players=2, spectate=True, end_score=None)
    game_id = browser.execute_script("return location.hash").removeprefix("#game=")
    assert fetch_json(f"{server}api/games/{game_id}")["rules"]["end_score"] == 100  # R19's default, not 0


def test_a_second_tab_the_last_move_and_the_round_summary(server: str, browser: WebDriver) -> None:
    """At 1400x900: the last move is highlighted, a tab left behind by another catches up at its next click, no
    "last round" before a round has ended, and the round's summary floats beside the person's grid, closable,
    until the next round's play begins."""
    browser.set_window_size(1400, 900)
    view = post_json(f"{server}api/games", {"seats": [None, "counting"], "rules": {"end_score": 1000}, "seed": 2})
    game = f"{server}api/games/{view['id']}"
    browser.get(f"{server}#game={view['id']}")
    mine = "#grids .seat[data-seat='0']"
    WebDriverWait(browser, 10).until(lambda d: d.find_elements(By.CSS_SELECTOR, f"{mine} button.legal"))
    assert "last round" not in browser.find_element(By.ID, "grids").text  # round 1: no round has ended
    browser.find_element(By.CSS_SELECTOR, f"{mine} button[data-action='{FLIP + 4}']").click()
    WebDriverWait(browser, 10).until(lambda d: d.find_elements(By.CSS_SELECTOR, f"{mine} .card.last-move"))
    highlighted = browser.find_elements(By.CSS_SELECTOR, ".card.last-move")
    assert len(highlighted) == 1 and highlighted[0] == browser.find_elements(By.CSS_SELECTOR, f"{mine} .card")[4]
    browser.find_element(By.ID, "pause").click()  # the agent waits: this test moves it

    # Another tab makes the person's second setup flip; this tab still offers it, and catches up when clicked.
    view = post_json(f"{game}/moves", {"action": FLIP + 5, "step": fetch_json(game)["step"]})
    browser.find_element(By.CSS_SELECTOR, f"{mine} button[data-action='{FLIP + 6}']").click()
    WebDriverWait(browser, 10).until(lambda d: "moved on" in d.find_element(By.ID, "message").text)
    assert not browser.find_elements(By.CSS_SELECTOR, "button.legal")  # the agent's turn now, as the server says
    assert fetch_json(game) == view

    while view["last_round"] is None:  # the rest of round 1, elsewhere
        if view["legal"]:
            legal = [m["action"] for m in view["legal"]]
            view = post_json(f"{game}/moves", {"action": DRAW if DRAW in legal else max(legal), "step": view["step"]})
        else:
            view = post_json(f"{game}/advance", {"step": view["step"]})
    browser.refresh()  # the same game, loaded anew
    box = browser.find_element(By.ID, "round-end")
    WebDriverWait(browser, 10).until(lambda d: box.is_displayed())
    assert "Round 1 over" in box.text and "last round" in browser.find_element(By.ID, "grids").text
    height, grid, summary = (
        browser.execute_script("return innerHeight"),
        rect(browser, mine),
        rect(browser, "#round-end"),
    )
    assert height <= 900 and grid["bottom"] <= height  # the person's grid is in view ...
    assert grid["right"] <= summary["left"] or grid["bottom"] <= summary["top"]  # ... and not under the summary
    browser.find_element(By.ID, "close-round-end").click()
    assert not box.is_displayed()
    browser.refresh()
    box = browser.find_element(By.ID, "round-end")
    WebDriverWait(browser, 10).until(lambda d: box.is_displayed())
    Select(browser.find_element(By.ID, "speed")).select_by_visible_text("fastest")
    deadline = time.monotonic() + GAME_SECONDS
    while fetch_json(game)["table"]["phase"] == "setup":  # round 2's setup, by clicks and the page's agent
        assert time.monotonic() < deadline, "round 2's setup did not end in time"
        with contextlib.suppress(StaleElementReferenceException):
            my_move(browser)
        time.sleep(0.05)
    WebDriverWait(browser, 10).until(lambda d: not box.is_displayed())  # the next round's play began
