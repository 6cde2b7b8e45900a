// The lobby page (/): every table, kept up to date by the lobby's feed.
"use strict";

const tables = new Map();

function clockCell(info) {
  return info.time_control || "untimed";
}

function row(info) {
  const players = `${playerText(info, 0)} vs ${playerText(info, 1)}`;
  const status = info.status === "over" ? outcomeText(info.game, info.outcome) || "over" : info.status;
  return el("tr", { "data-table": info.id },
    el("td", {}, el("a", { href: `/table/${info.id}` }, `#${info.id}`)),
    el("td", {}, TITLES[info.game] || info.game),
    el("td", {}, optionsText(info.options)),
    el("td", {}, players),
    el("td", {}, clockCell(info)),
    el("td", { class: "table-status" }, status + (info.status === "playing" ? ` (ply ${info.ply})` : "")),
    el("td", {}, String(info.spectators)));
}

function renderLobby() {
  const body = document.querySelector("#tables tbody");
  const ids = [...tables.keys()].sort((a, b) => a - b);
  body.replaceChildren(...ids.map((id) => row(tables.get(id))));
  document.getElementById("empty").hidden = ids.length > 0;
}

function onLobbyEvent(message) {
  if (message.type === "tables") {
    tables.clear();
    for (const info of message.tables) tables.set(info.id, info);
  } else if (message.type === "table_updated") {
    tables.set(message.table.id, message.table);
  } else if (message.type === "table_closed") {
    tables.delete(message.table);
  } else {
    return;
  }
  renderLobby();
}

document.addEventListener("DOMContentLoaded", () => {
  openFeed("/ws/lobby", onLobbyEvent, (feedState) => setText("feed-state", feedState));
});
