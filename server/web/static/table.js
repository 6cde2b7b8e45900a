// A table page (/table/ID) and the TV page (/tv): one game followed live over the spectator's feed.
"use strict";

const state = { info: null, view: null, moves: [], chat: [], clock: null, clockAt: 0, lastMove: null, feed: null };
const tvMode = location.pathname === "/tv";
const TV_PAUSE_MS = 3000;  // how long the TV shows a finished game before it switches

function tableIdFromPath() {
  const match = location.pathname.match(/^\/table\/(\d+)$/);
  return match ? Number(match[1]) : null;
}

function render() {
  const { info, view } = state;
  if (!info || !view) return;
  const game = info.game;
  setText("title", `${tvMode ? "Parlour TV: " : ""}${TITLES[game] || game} · table ${info.id}`);
  document.title = `${tvMode ? "TV · " : ""}${TITLES[game] || game} · table ${info.id} · Parlour`;
  const board = document.getElementById("board");
  board.replaceChildren(drawBoard(view, state.lastMove));
  for (const seat of [0, 1]) {
    setText(`name-${seat}`, `${seatName(game, seat)}: ${playerText(info, seat)}`);
    document.getElementById(`player-${seat}`).classList.toggle("to-move", view.to_move === seat);
  }
  const outcome = view.outcome || info.outcome;
  setText("result", outcomeText(game, outcome));
  const status = info.status === "waiting" ? "Waiting for a second player" : info.status === "over" ? "Game over" : `Ply ${view.ply}, ${view.to_move === null ? "" : seatName(game, view.to_move) + " to move"}`;
  setText("table-status", status);
  const moves = document.getElementById("moves");
  moves.replaceChildren(...state.moves.map((move, i) => el("span", { class: i === state.moves.length - 1 ? "last" : null, "data-ply": i + 1 }, `${i + 1}. ${move}`)));
  moves.scrollTop = moves.scrollHeight;
  renderChat();
  renderClocks();
}

function renderChat() {
  const chat = document.getElementById("chat");
  chat.replaceChildren(...state.chat.map((line) => el("div", {}, el("b", {}, line.name + ": "), line.text)));
  chat.scrollTop = chat.scrollHeight;
}

function renderClocks() {
  const clock = state.clock;
  for (const seat of [0, 1]) {
    const node = document.getElementById(`clock-${seat}`);
    if (!clock) { node.textContent = ""; node.hidden = true; continue; }
    node.hidden = false;
    let left = clock.remaining_ms[seat];
    if (clock.running === seat) left -= performance.now() - state.clockAt;
    node.textContent = clockText(left);
    node.dataset.ms = String(Math.max(0, Math.round(left)));
    node.classList.toggle("running", clock.running === seat);
  }
}

function setClock(clock) {
  state.clock = clock || null;
  state.clockAt = performance.now();
}

function onEvent(message) {
  switch (message.type) {
    case "table_joined":
      state.info = message.table;
      state.view = message.view;
      state.moves = message.moves;
      state.chat = message.chat || [];
      state.lastMove = message.moves.length ? message.moves[message.moves.length - 1] : null;
      setClock(message.table.clock);
      break;
    case "game_started":
      state.info.seats = message.seats;
      state.info.status = "playing";
      state.view = message.view;
      break;
    case "moved":
      state.view = message.view;
      state.moves = state.moves.slice(0, message.ply - 1).concat([message.move]);
      state.lastMove = message.move;
      if (message.clock) setClock(message.clock);
      if (message.view.outcome) { state.info.status = "over"; state.info.outcome = message.view.outcome; stopClock(); }
      break;
    case "taken_back":
      state.view = message.view;
      state.moves = message.moves;
      state.lastMove = message.moves.length ? message.moves[message.moves.length - 1] : null;
      if (message.clock) setClock(message.clock);
      break;
    case "game_over":
      state.info.status = "over";
      state.info.outcome = message.outcome;
      if (message.view) state.view = message.view;
      state.view = Object.assign({}, state.view, { outcome: message.outcome, to_move: null });
      stopClock();
      if (tvMode) setTimeout(tune, TV_PAUSE_MS);
      break;
    case "chat":
      state.chat.push({ name: message.name, text: message.text });
      state.chat = state.chat.slice(-100);
      break;
    case "rematch_started":
      follow(message.table.id);
      return;
    case "player_away":
    case "player_back":
      break;
    case "error":  // no such table: say so, and stop asking
      if (state.feed) state.feed.close();
      setText("table-status", message.message);
      return;
    default:
      return;
  }
  render();
}

function stopClock() {
  if (state.clock) setClock(Object.assign({}, state.clock, { remaining_ms: currentRemaining(), running: null }));
}

function currentRemaining() {
  const clock = state.clock;
  return [0, 1].map((seat) => clock.remaining_ms[seat] - (clock.running === seat ? performance.now() - state.clockAt : 0));
}

function watch(tableId) {
  if (state.feed) state.feed.close();
  Object.assign(state, { info: null, view: null, moves: [], chat: [], clock: null, lastMove: null });
  state.feed = openFeed(`/ws/table/${tableId}`, onEvent, (feedState) => setText("feed-state", feedState));
}

function follow(tableId) {
  if (tvMode) watch(tableId);
  else location.assign(`/table/${tableId}`);
}

let tuned = null;

async function tune() {
  const response = await fetch("/api/tv");
  const { table } = await response.json();
  if (table === null) {
    setText("table-status", "No game is being played right now; this page shows the next one.");
    setTimeout(tune, 3000);
    return;
  }
  if (table !== tuned || (state.info && state.info.status === "over")) {
    tuned = table;
    watch(table);
  }
}

document.addEventListener("DOMContentLoaded", () => {
  if (tvMode) {
    setText("title", "Parlour TV: waiting for a game");
    document.title = "TV · Parlour";
    tune();
  } else watch(tableIdFromPath());
  setInterval(renderClocks, 200);
});
