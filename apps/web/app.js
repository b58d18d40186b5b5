// Skyjo in the browser: a thin client of skyjo serve's JSON API (apps/serve.py).
// The server sends only what the person's seat may see; this page draws it and sends moves.
"use strict";

const DRAW = 0, TAKE = 1, REPLACE = 2, FLIP = 14; // action ids (skyjo_env/actions.py)
const $ = (id) => document.getElementById(id);

const page = {
  options: null,   // GET /api/options
  view: null,      // the game as the server shows it
  mode: "keep",    // with a drawn card in hand: "keep" (replace a card) or "flip" (discard it, flip one)
  busy: false,     // a request is on its way
  paused: false,
  timer: null,
  closedRound: null, // the round whose summary the person closed
};

async function api(method, path, body) {
  const init = { method, headers: {} };
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const response = await fetch(path, init);
  const data = await response.json();
  // A refused move may carry the game's view now (it had moved on: another tab, say).
  if (!response.ok) throw Object.assign(new Error(data.error), { view: data.view });
  return data;
}

// ------------------------------------------------------------------------------ new game form
async function init() {
  page.options = await api("GET", "api/options");
  const players = $("players");
  for (let p = 2; p <= 8; p++) players.add(new Option(String(p), String(p)));
  for (const name of page.options.choices.next_starter) $("next_starter").add(new Option(name.replace("_", " "), name));
  for (const name of page.options.choices.episode) $("episode").add(new Option(name, name));
  players.addEventListener("change", seatChoices);
  $("spectate").addEventListener("change", seatChoices);
  $("seat").addEventListener("change", agentChoices);
  $("setup-form").addEventListener("submit", (event) => { event.preventDefault(); start(); });
  $("new-game").addEventListener("click", () => { stopAgents(); location.hash = ""; showSetup(); });
  $("discard-drawn").addEventListener("click", () => { page.mode = "flip"; render(); });
  $("keep-drawn").addEventListener("click", () => { page.mode = "keep"; render(); });
  $("draw-pile").addEventListener("click", () => move(DRAW));
  $("discard-pile").addEventListener("click", () => move(TAKE));
  $("pause").addEventListener("click", () => { page.paused = !page.paused; render(); });
  $("show-hints").addEventListener("change", renderHints);
  $("close-round-end").addEventListener("click", () => { page.closedRound = page.view.last_round.round; render(); });
  document.addEventListener("visibilitychange", () => { if (!document.hidden) refresh(); });
  seatChoices();
  const resumed = location.hash.match(/^#game=([0-9a-f]+)$/);
  if (resumed) {
    try { show(await api("GET", `api/games/${resumed[1]}`)); }
    catch (error) { $("setup-error").textContent = `cannot resume the game: ${error.message}`; }
  }
}

function seatChoices() {
  const count = Number($("players").value);
  const seat = $("seat");
  const keep = Math.min(Number(seat.value) || 0, count - 1);
  seat.replaceChildren(...Array.from({ length: count }, (_, p) => new Option(`seat ${p}`, String(p))));
  seat.value = String(keep);
  $("seat-choice").hidden = $("spectate").checked;
  agentChoices();
}

function agentChoices() {
  const count = Number($("players").value);
  const fitting = Object.keys(page.options.agents).filter((name) => page.options.agents[name].includes(count));
  const seats = $("agent-seats");
  seats.replaceChildren();
  for (let p = 0; p < count; p++) {
    if (!$("spectate").checked && p === Number($("seat").value)) continue;
    const select = document.createElement("select");
    select.className = "agent";
    select.dataset.seat = String(p);
    for (const name of fitting) select.add(new Option(name, name));
    select.value = page.options.default_agents[String(count)];
    const label = document.createElement("label");
    label.append(`Seat ${p} `, select);
    seats.append(label);
  }
}

async function start() {
  const count = Number($("players").value);
  const seats = Array(count).fill(null);
  for (const select of document.querySelectorAll("#agent-seats select")) seats[Number(select.dataset.seat)] = select.value;
  const rules = {
    column_rule: $("column_rule").checked,
    column_rule_at_final_reveal: $("column_rule_at_final_reveal").checked,
    next_starter: $("next_starter").value,
    episode: $("episode").value,
  };
  const endScore = $("end_score");
  if (endScore.validity.badInput) {
    $("setup-error").textContent = "The end score must be a whole number (or empty for the default).";
    return;
  }
  if (endScore.value !== "") rules.end_score = Number(endScore.value); // empty: the rules' default
  try {
    const view = await api("POST", "api/games", { seats, rules });
    $("setup-error").textContent = "";
    $("log").replaceChildren();
    location.hash = `game=${view.id}`;
    show(view);
  } catch (error) {
    $("setup-error").textContent = error.message;
  }
}

function showSetup() {
  page.view = null;
  $("game").hidden = true;
  $("setup").hidden = false;
}

// ------------------------------------------------------------------------------ playing
// Moves name the step of the view they were made from: the server refuses them if the game has moved on.
async function move(action) {
  await send(() => api("POST", `api/games/${page.view.id}/moves`, { action, step: page.view.step }));
}

async function advance() {
  page.timer = null;
  await send(() => api("POST", `api/games/${page.view.id}/advance`, { step: page.view.step }));
}

// The game as it is now (the tab was away: another tab may have played on).
async function refresh() {
  if (page.view === null || page.busy) return;
  await send(() => api("GET", `api/games/${page.view.id}`), false);
}

async function send(request, log = true) {
  if (page.busy) return;
  page.busy = true;
  try {
    const view = await request();
    if (log) logMove(view);
    $("message").textContent = "";
    show(view);
  } catch (error) {
    if (error.view) {
      $("message").textContent = "The game had moved on (in another tab?): here it is as it stands now.";
      show(error.view);
    } else {
      $("message").textContent = error.message;
    }
  } finally {
    page.busy = false;
  }
}

function show(view) {
  if (page.view?.id !== view.id) page.closedRound = null;
  page.view = view;
  if (view.table.phase !== "drawn") page.mode = "keep";
  $("setup").hidden = true;
  $("game").hidden = false;
  render();
}

function stopAgents() {
  clearTimeout(page.timer);
  page.timer = null;
}

// Agents move one at a time, at the chosen speed, while it is an agent's turn.
function scheduleAgents() {
  stopAgents();
  const { table, seats } = page.view;
  if (table.phase === "over" || seats[table.current] === null || page.paused) return;
  page.timer = setTimeout(advance, Number($("speed").value));
}

// ------------------------------------------------------------------------------ drawing
function seatName(p) {
  const who = page.view.seats[p];
  return who === null ? `You (seat ${p})` : `Seat ${p} · ${who}`;
}

function band(value) {
  if (value < 0) return "band-neg";
  if (value === 0) return "band-zero";
  if (value <= 4) return "band-low";
  if (value <= 8) return "band-mid";
  return "band-high";
}

// Shows a card on element `el`: a value face up, null face down, or `gone` for a removed slot.
function paintCard(el, value, gone = false) {
  el.className = "card " + (gone ? "gone" : value === null ? "back" : band(value));
  el.textContent = gone || value === null ? "" : String(value);
}

function cardButton(value, gone, action, legal) {
  const button = document.createElement("button");
  button.type = "button";
  paintCard(button, value, gone);
  const clickable = legal.has(action);
  button.disabled = !clickable;
  if (clickable) {
    button.classList.add("legal");
    button.dataset.action = String(action);
    button.addEventListener("click", () => move(action));
  }
  return button;
}

function render() {
  const { table, seats, you } = page.view;
  const legal = new Set(page.view.legal.map((m) => m.action));
  $("status").textContent = statusLine();
  $("status").className = table.phase === "over" ? "over" : "";
  $("pause").textContent = page.paused ? "Resume" : "Pause";
  $("pause").hidden = table.phase === "over";
  const download = $("download");
  download.hidden = !page.view.snapshot_ready;
  download.href = `api/games/${page.view.id}/snapshot`;

  const last = lastMove();
  const drawPile = $("draw-pile");
  drawPile.className = "card " + (table.draw_size > 0 ? "back" : "empty");
  setLegal(drawPile, DRAW, legal);
  $("draw-count").textContent = `draw pile: ${table.draw_size}`;
  const discard = $("discard-pile");
  if (table.discard_top === null) { discard.className = "card empty"; discard.textContent = ""; }
  else paintCard(discard, table.discard_top);
  setLegal(discard, TAKE, legal);

  $("hand").hidden = table.held_from === null;
  if (table.held_from !== null) {
    paintCard($("held"), table.held);
    $("held").classList.toggle("last-move", last.verb === "draw" || last.verb === "take");
    const who = table.current === you ? "You" : `Seat ${table.current}`;
    $("held-from").textContent = table.held_from === "draw pile"
      ? `${who} drew it from the draw pile` : `${who} took it from the discard pile`;
  }
  const choosing = table.phase === "drawn" && legal.size > 0;
  $("hand-choice").hidden = !choosing;
  $("discard-drawn").hidden = page.mode === "flip";
  $("keep-drawn").hidden = page.mode === "keep";
  $("hand-hint").textContent = page.mode === "flip"
    ? "Click one of your face-down cards to turn it up." : "Click one of your cards to put the drawn card there.";

  const grids = $("grids");
  grids.replaceChildren();
  const slotAction = table.phase === "setup" || page.mode === "flip" ? FLIP : REPLACE; // + slot
  for (let p = 0; p < table.num_players; p++) {
    const panel = seatPanel(p, table.totals[p], table.round_index > 0 ? `last round ${table.round_scores[p]}` : null);
    if (p === table.current && table.phase !== "over") panel.classList.add("to-act");
    if (table.winners.includes(p)) panel.classList.add("winner");
    const grid = document.createElement("div");
    grid.className = "grid";
    for (let k = 0; k < 12; k++) {
      const action = p === you ? slotAction + k : -1; // only the person's own cards take moves
      const card = cardButton(table.cards[p][k], table.removed[p][k], action, legal);
      card.classList.toggle("last-move", p === last.seat && k === last.slot);
      grid.append(card);
    }
    panel.append(grid);
    grids.append(panel);
  }
  renderRoundEnd();
  renderHints();
  scheduleAgents();
}

// Hints: when the toggle is on and the person is to move, the expectimax agent's value of each legal
// move (computed by the server from the person's view alone), best first.
async function renderHints() {
  const list = $("hints");
  const wanted = $("show-hints").checked && page.view.legal.length > 0 && page.view.table.phase !== "setup";
  list.hidden = !wanted;
  if (!wanted) { list.replaceChildren(); return; }
  const view = page.view;
  let answer;
  try { answer = await api("GET", `api/games/${view.id}/hints`); }
  catch (error) { list.replaceChildren(Object.assign(document.createElement("li"), { textContent: `no hints: ${error.message}` })); return; }
  if (page.view !== view) return; // the game moved on meanwhile
  list.replaceChildren(...answer.hints.map((hint) => {
    const item = document.createElement("li");
    item.dataset.action = String(hint.action);
    item.textContent = `${hint.name}: ${hint.value >= 0 ? "+" : ""}${hint.value.toFixed(3)}`;
    return item;
  }));
}

// The last move, to highlight: its verb, and its seat and slot if it turned a card of this round up.
function lastMove() {
  const move = page.view.last_move;
  if (move === null) return { verb: null, seat: null, slot: null };
  const [verb, slot] = move.name.split(" ");
  const { cards, removed } = page.view.table;
  const k = Number(slot);
  const onTable = slot !== undefined && (cards[move.seat][k] !== null || removed[move.seat][k]); // not a new round's
  return { verb, seat: onTable ? move.seat : null, slot: onTable ? k : null };
}

function setLegal(button, action, legal) {
  button.disabled = !legal.has(action);
  button.classList.toggle("legal", legal.has(action));
  if (legal.has(action)) button.dataset.action = String(action);
  else delete button.dataset.action;
}

function seatPanel(p, total, detail) {
  const panel = document.createElement("div");
  panel.className = "seat";
  panel.dataset.seat = String(p);
  const title = document.createElement("h4");
  title.textContent = seatName(p) + (p === page.view.table.ender ? " · ended the round" : "");
  const score = document.createElement("div");
  score.className = "score";
  score.textContent = detail === null ? `total ${total}` : `total ${total} · ${detail}`;
  panel.append(title, score);
  return panel;
}

const PHASE_HELP = {
  setup: "turn two cards face up",
  choose: "draw a card or take the top discard",
  drawn: "replace a card with it, or discard it and flip a card",
  taken: "replace a card with it",
};

function statusLine() {
  const { table, seats } = page.view;
  if (table.phase === "over") {
    const names = table.winners.map((p) => seats[p] === null ? "you" : `seat ${p} (${seats[p]})`);
    return `Game over after ${table.round_index} round(s). Lowest total wins (R20): ${names.join(", ")}`;
  }
  const who = seats[table.current] === null ? "Your turn" : `${seatName(table.current)} to play`;
  let line = `Round ${table.round_index + 1} · ${who}: ${PHASE_HELP[table.phase]}`;
  if (table.ender !== null) line += ` · seat ${table.ender} ended the round, ${table.final_turns} final turn(s) left`;
  return line;
}

// The last round's summary, over the table until the person closes it or the next round's play begins.
function renderRoundEnd() {
  const box = $("round-end");
  const last = page.view.last_round;
  const { phase, round_index } = page.view.table;
  box.hidden = last === null || last.round === page.closedRound ||
    (round_index === last.round && phase !== "setup" && phase !== "over");
  if (box.hidden) return;
  const title = document.createElement("h3");
  title.textContent = `Round ${last.round} over: ${seatName(last.ender)} ended it`;
  const lines = [title];
  const doubling = document.createElement("p");
  if (last.doubled) {
    doubling.className = "doubled";
    doubling.textContent = `${seatName(last.doubled.seat)} did not have the strictly lowest score: ` +
      `doubled from ${last.doubled.from} to ${last.doubled.to} (R17).`;
  } else {
    doubling.textContent = "No score was doubled (R17).";
  }
  lines.push(doubling);
  const grids = document.createElement("div");
  grids.className = "reveal-grids small";
  last.cards.forEach((cards, p) => {
    const panel = seatPanel(p, last.totals[p], `round ${last.scores[p]}`);
    panel.querySelector("h4").textContent = seatName(p) + (p === last.ender ? " · ended it" : "");
    const grid = document.createElement("div");
    grid.className = "grid";
    cards.forEach((value, k) => {
      const card = document.createElement("div");
      paintCard(card, value, last.removed[p][k]);
      grid.append(card);
    });
    panel.append(grid);
    grids.append(panel);
  });
  lines.push(grids);
  $("round-end-body").replaceChildren(...lines);
}

// Each move's words: for "You", then for a seat.
const MOVE_WORDS = {
  draw: ["draw from the draw pile", "draws from the draw pile"],
  take: ["take the top discard", "takes the top discard"],
  replace: ["replace slot", "replaces slot"],
  flip: ["flip slot", "flips slot"],
};

function logMove(view) {
  const last = view.last_move;
  if (last === null) return;
  const [verb, slot] = last.name.split(" ");
  const item = document.createElement("li");
  const yours = view.seats[last.seat] === null;
  const who = yours ? "You" : `Seat ${last.seat} (${view.seats[last.seat]})`;
  item.textContent = `${who} ${MOVE_WORDS[verb][yours ? 0 : 1]}${slot === undefined ? "" : " " + slot}`;
  $("log").prepend(item);
}

init().catch((error) => { $("setup-error").textContent = `cannot reach the server: ${error.message}`; });
