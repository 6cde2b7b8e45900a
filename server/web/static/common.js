// Parlour's web face: helpers shared by every page (no library, no build step).
"use strict";

const SVG_NS = "http://www.w3.org/2000/svg";

const SEATS = {
  othello: ["Black", "White"], nimble: ["Player 1", "Player 2"], mingmang: ["White", "Black"],
  morris: ["Player 1", "Player 2"], tactego: ["Red", "Blue"], hexapawn: ["White", "Black"],
};

const TITLES = {
  othello: "Othello", nimble: "Nimble", mingmang: "Ming Mang", morris: "Nine Men's Morris", tactego: "Tactego", hexapawn: "Hexapawn",
};

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value !== null && value !== undefined) node.setAttribute(key, value);
  }
  for (const child of children) {
    if (child !== null && child !== undefined) node.append(child);
  }
  return node;
}

function svg(tag, attrs, ...children) {
  const node = document.createElementNS(SVG_NS, tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value !== null && value !== undefined) node.setAttribute(key, String(value));
  }
  for (const child of children) {
    if (child !== null && child !== undefined) node.append(child);
  }
  return node;
}

function seatName(game, seat) {
  return (SEATS[game] || ["Seat 0", "Seat 1"])[seat];
}

function clockText(ms) {
  const total = Math.max(0, Math.ceil(ms / 1000));
  const hours = Math.floor(total / 3600), minutes = Math.floor((total % 3600) / 60), seconds = total % 60;
  const mm = hours ? String(minutes).padStart(2, "0") : String(minutes);
  return (hours ? hours + ":" : "") + mm + ":" + String(seconds).padStart(2, "0");
}

function outcomeText(game, outcome) {
  if (!outcome) return "";
  if (outcome.aborted) return "Aborted: " + outcome.reason;
  const score = outcome.score ? " (" + outcome.score.join("–") + ")" : "";
  if (outcome.winner === null || outcome.winner === undefined) return "Draw: " + outcome.reason + score;
  return seatName(game, outcome.winner) + " wins: " + outcome.reason + score;
}

function playerText(info, seat) {
  const name = info.seats[seat];
  if (name === null) return "(free)";
  const rating = info.ratings && info.ratings[seat];
  if (Array.isArray(rating)) return name + " (" + rating[0] + (rating[1] ? "?" : "") + ")";
  return name;
}

function optionsText(options) {
  return Object.entries(options || {})
    .filter(([, value]) => value !== null && value !== undefined)
    .map(([key, value]) => key + " " + (typeof value === "object" ? JSON.stringify(value) : value))
    .join(", ");
}

// A live feed: a WebSocket to this server, each message a JSON array of events; reconnects after a pause.
function openFeed(path, onEvent, onState) {
  let closedByUs = false;
  let socket = null;
  function connect() {
    const scheme = location.protocol === "https:" ? "wss:" : "ws:";
    socket = new WebSocket(scheme + "//" + location.host + path);
    socket.onopen = () => onState && onState("live");
    socket.onmessage = (event) => {
      for (const message of JSON.parse(event.data)) onEvent(message);
    };
    socket.onclose = () => {
      onState && onState("disconnected");
      if (!closedByUs) setTimeout(connect, 3000);
    };
  }
  connect();
  return { close() { closedByUs = true; if (socket) socket.close(); } };
}

function setText(id, text) {
  const node = document.getElementById(id);
  if (node) node.textContent = text;
}
