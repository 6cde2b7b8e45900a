// The archive (/archive): finished games; and one game's replay (/archive/ID), stepped through ply by ply.
"use strict";

let offset = 0;

async function listGames() {
  const response = await fetch(`/api/archive?offset=${offset}`);
  const page = await response.json();
  const body = document.querySelector("#games tbody");
  body.replaceChildren(...page.games.map((game) => el("tr", { "data-game": game.id },
    el("td", {}, el("a", { href: `/archive/${game.id}` }, `${TITLES[game.game] || game.game} #${game.id}`)),
    el("td", {}, game.players.map((name) => name === null ? "?" : name).join(" vs ")),
    el("td", {}, outcomeText(game.game, game.result)),
    el("td", {}, String(game.plies)),
    el("td", {}, game.finished || ""),
    el("td", {}, el("a", { href: `/archive/${game.id}.txt`, download: `parlour-${game.id}.txt` }, "record")))));
  setText("empty", page.games.length ? "" : "No finished games here.");
  document.getElementById("older").disabled = page.games.length < page.page;
  document.getElementById("newer").disabled = offset === 0;
}

const replay = { game: null, ply: 0 };

function showPly(ply) {
  const game = replay.game;
  replay.ply = Math.max(0, Math.min(ply, game.moves.length));
  const view = game.views[replay.ply];
  document.getElementById("board").replaceChildren(drawBoard(view, replay.ply ? game.moves[replay.ply - 1] : null));
  setText("ply", String(replay.ply));
  const moves = document.getElementById("moves");
  moves.replaceChildren(...game.moves.map((move, i) => {
    const span = el("span", { class: i === replay.ply - 1 ? "last" : null, "data-ply": i + 1 }, `${i + 1}. ${move}`);
    span.addEventListener("click", () => showPly(i + 1));
    return span;
  }));
}

async function loadReplay(id) {
  const response = await fetch(`/api/archive/${id}`);
  if (!response.ok) {
    setText("title", await response.text());
    return;
  }
  const game = replay.game = await response.json();
  setText("title", `${TITLES[game.game] || game.game} · game ${game.id}`);
  document.getElementById("players").replaceChildren(...[0, 1].map((seat) => el("div", { class: "player" }, `${seatName(game.game, seat)}: ${game.players[seat] || "?"}`)));
  setText("result", outcomeText(game.game, game.result));
  setText("plies", String(game.moves.length));
  const download = document.getElementById("download");
  download.href = `/archive/${game.id}.txt`;
  download.setAttribute("download", `parlour-${game.id}.txt`);
  if (game.game === "othello") {
    const ggf = document.getElementById("download-ggf");
    ggf.href = `/archive/${game.id}.ggf`;
    ggf.setAttribute("download", `parlour-${game.id}.ggf`);
    document.getElementById("ggf-slot").hidden = false;
  }
  showPly(0);
}

document.addEventListener("DOMContentLoaded", () => {
  const match = location.pathname.match(/^\/archive\/(\d+)$/);
  if (match) {
    loadReplay(Number(match[1]));
    document.getElementById("first").addEventListener("click", () => showPly(0));
    document.getElementById("back").addEventListener("click", () => showPly(replay.ply - 1));
    document.getElementById("forward").addEventListener("click", () => showPly(replay.ply + 1));
    document.getElementById("last").addEventListener("click", () => showPly(Infinity));
    document.addEventListener("keydown", (event) => {
      if (event.key === "ArrowLeft") showPly(replay.ply - 1);
      if (event.key === "ArrowRight") showPly(replay.ply + 1);
    });
  } else {
    document.getElementById("older").addEventListener("click", () => { offset += 50; listGames(); });
    document.getElementById("newer").addEventListener("click", () => { offset = Math.max(0, offset - 50); listGames(); });
    listGames();
  }
});
