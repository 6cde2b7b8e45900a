// The six games' boards as SVG, drawn from the spectator's view the server sends (PROTOCOL.md section 9).
// Every square or point carries data-square (its name in the game's notation); a piece carries data-piece.
"use strict";

const CELL = 44;
const EDGE = 26;
const LETTERS = "abcdefghijklmnopqrstuvwxyz";

// The squares a move names ("d3", "a4-f4", "d2-d3xa1"), or Nimble's square numbers ("4-2").
function movedSquares(game, move) {
  if (!move || move === "pass") return [];
  if (game === "nimble") return move.split("-");
  return move.match(/[a-z]+\d+/g) || [];
}

function frame(width, height, ply) {
  return svg("svg", { viewBox: `0 0 ${width} ${height}`, role: "img", "data-ply": ply, class: "board" });
}

function label(x, y, text) {
  return svg("text", { x, y, "text-anchor": "middle", "dominant-baseline": "middle", "font-size": 13, fill: "#444" }, text);
}

// A rectangular board: rows drawn top first; rowNumber(r) gives the number shown and used in notation for drawn row r.
function grid(rows, cols, ply, rowNumber, squareFill, piece, marked) {
  const root = frame(cols * CELL + 2 * EDGE, rows * CELL + 2 * EDGE, ply);
  for (let c = 0; c < cols; c++) {
    root.append(label(EDGE + c * CELL + CELL / 2, EDGE / 2, LETTERS[c]));
    root.append(label(EDGE + c * CELL + CELL / 2, rows * CELL + EDGE * 1.5, LETTERS[c]));
  }
  for (let r = 0; r < rows; r++) {
    root.append(label(EDGE / 2, EDGE + r * CELL + CELL / 2, String(rowNumber(r))));
    root.append(label(cols * CELL + EDGE * 1.5, EDGE + r * CELL + CELL / 2, String(rowNumber(r))));
  }
  for (let r = 0; r < rows; r++) {
    for (let c = 0; c < cols; c++) {
      const name = LETTERS[c] + rowNumber(r);
      const x = EDGE + c * CELL, y = EDGE + r * CELL;
      const last = marked.includes(name);
      const group = svg("g", { "data-square": name, class: last ? "last" : null });
      group.append(svg("rect", { x, y, width: CELL, height: CELL, fill: squareFill(r, c), stroke: "#333", "stroke-width": 1 }));
      const drawn = piece(r, c, x + CELL / 2, y + CELL / 2);
      if (drawn) group.append(drawn);
      if (last) group.append(svg("rect", { x: x + 2, y: y + 2, width: CELL - 4, height: CELL - 4, fill: "none", stroke: "#e8262a", "stroke-width": 3, class: "last-move" }));
      root.append(group);
    }
  }
  return root;
}

function disc(x, y, colour, piece) {
  const stroke = colour === "#fff" ? "#222" : "#000";
  return svg("circle", { cx: x, cy: y, r: CELL * 0.4, fill: colour, stroke, "stroke-width": 1.5, "data-piece": piece });
}

function drawOthello(view, marked) {
  const rows = view.board;
  return grid(view.size, view.size, view.ply, (r) => r + 1, () => "#2e7d32", (r, c, x, y) => {
    const cell = rows[r][c];
    if (cell === "X") return disc(x, y, "#111", "black");
    if (cell === "O") return disc(x, y, "#fff", "white");
    return null;
  }, marked);
}

function drawMingMang(view, marked) {
  const rows = view.board;
  return grid(view.size, view.size, view.ply, (r) => r + 1, () => "#e9c98f", (r, c, x, y) => {
    const cell = rows[r][c];
    if (cell === "x") return disc(x, y, "#fff", "white");
    if (cell === "o") return disc(x, y, "#111", "black");
    return null;
  }, marked);
}

function drawHexapawn(view, marked) {
  const size = view.size;
  // Row 1 (White's home) is the view's first row and is drawn at the bottom.
  return grid(size, size, view.ply, (r) => size - r, (r, c) => ((r + c) % 2 ? "#b58863" : "#f0d9b5"), (r, c, x, y) => {
    const cell = view.board[size - 1 - r][c];
    if (cell === 1) return disc(x, y, "#fff", "white");
    if (cell === 2) return disc(x, y, "#111", "black");
    return null;
  }, marked);
}

function drawTactego(view, marked) {
  const colours = ["#c62828", "#1565c0"];
  return grid(view.rows, view.cols, view.ply, (r) => r + 1, () => "#d7e4c0", (r, c, x, y) => {
    const cell = view.board[r][c];
    if (cell === null) return null;
    const [owner, rank] = cell;
    const group = svg("g", { "data-piece": `${owner}:${rank}` });
    group.append(svg("rect", { x: x - CELL * 0.4, y: y - CELL * 0.4, width: CELL * 0.8, height: CELL * 0.8, rx: 5, fill: colours[owner] }));
    group.append(svg("text", { x, y, "text-anchor": "middle", "dominant-baseline": "central", "font-size": 18, "font-weight": "bold", fill: "#fff", class: "rank" }, rank));
    return group;
  }, marked);
}

function drawNimble(view, marked) {
  const squares = view.board.length;
  const width = Math.max(squares, 1) * CELL + 2 * EDGE;
  const root = frame(width, CELL * 2 + 2 * EDGE, view.ply);
  view.board.forEach((pawns, i) => {
    const name = String(i + 1);
    const x = EDGE + i * CELL, y = EDGE;
    const last = marked.includes(name);
    const group = svg("g", { "data-square": name, class: last ? "last" : null });
    group.append(svg("rect", { x, y, width: CELL, height: CELL, fill: "#f0e6cc", stroke: last ? "#e8262a" : "#333", "stroke-width": last ? 3 : 1 }));
    if (pawns > 0) {
      group.append(svg("circle", { cx: x + CELL / 2, cy: y + CELL / 2, r: CELL * 0.32, fill: "#6d4c41", "data-piece": pawns }));
      group.append(svg("text", { x: x + CELL / 2, y: y + CELL / 2, "text-anchor": "middle", "dominant-baseline": "central", "font-size": 15, fill: "#fff" }, String(pawns)));
    }
    root.append(group);
    root.append(label(x + CELL / 2, y + CELL + EDGE / 2, name));
  });
  return root;
}

const MORRIS_LINES = [
  ["a7", "g7"], ["a1", "g1"], ["a7", "a1"], ["g7", "g1"],
  ["b6", "f6"], ["b2", "f2"], ["b6", "b2"], ["f6", "f2"],
  ["c5", "e5"], ["c3", "e3"], ["c5", "c3"], ["e5", "e3"],
  ["d7", "d5"], ["d3", "d1"], ["a4", "c4"], ["e4", "g4"],
];

function drawMorris(view, marked) {
  const step = 60, edge = 34;
  const size = 6 * step + 2 * edge;
  const at = (point) => [edge + LETTERS.indexOf(point[0]) * step, edge + (7 - Number(point.slice(1))) * step];
  const root = frame(size, size, view.ply);
  root.append(svg("rect", { x: 0, y: 0, width: size, height: size, fill: "#e9c98f" }));
  for (const [from, to] of MORRIS_LINES) {
    const [x1, y1] = at(from), [x2, y2] = at(to);
    root.append(svg("line", { x1, y1, x2, y2, stroke: "#3e2723", "stroke-width": 3 }));
  }
  for (let i = 0; i < 7; i++) {
    root.append(label(edge + i * step, size - edge / 3, LETTERS[i]));
    root.append(label(edge / 3, edge + i * step, String(7 - i)));
  }
  for (const [point, owner] of Object.entries(view.board)) {
    const [x, y] = at(point);
    const last = marked.includes(point);
    const group = svg("g", { "data-square": point, class: last ? "last" : null });
    group.append(svg("circle", { cx: x, cy: y, r: 7, fill: "#3e2723" }));
    if (owner === 0) group.append(svg("circle", { cx: x, cy: y, r: 20, fill: "#fafafa", stroke: "#222", "stroke-width": 2, "data-piece": "0" }));
    if (owner === 1) group.append(svg("circle", { cx: x, cy: y, r: 20, fill: "#212121", stroke: "#000", "stroke-width": 2, "data-piece": "1" }));
    if (last) group.append(svg("circle", { cx: x, cy: y, r: 24, fill: "none", stroke: "#e8262a", "stroke-width": 3, class: "last-move" }));
    root.append(group);
  }
  return root;
}

const DRAWERS = {
  othello: drawOthello, mingmang: drawMingMang, hexapawn: drawHexapawn,
  tactego: drawTactego, nimble: drawNimble, morris: drawMorris,
};

// The board of `view` (a spectator's view) with the squares of `lastMove` marked, as an <svg> element.
function drawBoard(view, lastMove) {
  const draw = DRAWERS[view.game];
  if (!draw) return el("p", {}, "This game cannot be drawn here: " + view.game);
  const move = lastMove !== undefined ? lastMove : view.last_move;
  return draw(view, movedSquares(view.game, move));
}
