// The person's page of the live table: draws it from above, sends keyboard and mouse.
// Everything is in the human's own frame (the server mirrors it): x towards the robot's
// goal (right), y up. Messages are one-key JSON objects, see foosball/sim/browser_player.py.
"use strict";

const ROLES = ["goalkeeper", "defence", "midfield", "attack"];
const MARGIN = 0.04; // m of frame around the field
const canvas = document.getElementById("table");
const ctx = canvas.getContext("2d");
let layout = null; // the table, sent once per connection
let state = null; // the newest world state (about 30 Hz)
let socket = null;
let active = 0;
const held = { up: false, down: false };
let lastPoint = null;

// --- the link --------------------------------------------------------------------------
function connect() {
  const scheme = location.protocol === "https:" ? "wss:" : "ws:";
  socket = new WebSocket(`${scheme}//${location.host}/ws`);
  socket.onopen = () => { setLink("PLAYING", true); send({ rod: active }); };
  socket.onclose = () => { setLink("NO LINK", false); setTimeout(connect, 1000); };
  socket.onmessage = (event) => {
    const message = JSON.parse(event.data);
    if (message.layout) { layout = message.layout; resize(); }
    if (message.state) { state = message.state; requestAnimationFrame(draw); }
  };
}

function setLink(text, up) {
  const badge = document.getElementById("link");
  badge.textContent = text;
  badge.classList.toggle("up", up);
}

function send(message) {
  if (socket && socket.readyState === WebSocket.OPEN) socket.send(JSON.stringify(message));
}

// --- input -----------------------------------------------------------------------------
function choose(rod) {
  active = (rod + ROLES.length) % ROLES.length;
  document.getElementById("active").textContent = ROLES[active];
  send({ rod: active });
  sendMove();
  draw();
}

function sendMove() {
  send({ move: (held.up ? 1 : 0) - (held.down ? 1 : 0) });
}

const UP = new Set(["ArrowUp", "KeyW"]);
const DOWN = new Set(["ArrowDown", "KeyS"]);

document.addEventListener("keydown", (event) => {
  if (event.ctrlKey || event.altKey || event.metaKey) return; // the browser's shortcuts
  const code = event.code;
  if (event.repeat) { // a held key: the rod already moves until it is let go
    if (code === "Tab" || code === "Space" || code.startsWith("Arrow")) event.preventDefault();
    return;
  }
  if (/^Digit[1-4]$/.test(code)) choose(Number(code.slice(5)) - 1);
  else if (code === "Tab") choose(active + (event.shiftKey ? -1 : 1));
  else if (code === "ArrowLeft") choose(active - 1);
  else if (code === "ArrowRight") choose(active + 1);
  else if (UP.has(code)) { if (!held.up) { held.up = true; sendMove(); } }
  else if (DOWN.has(code)) { if (!held.down) { held.down = true; sendMove(); } }
  else if (code === "Space") send({ kick: true });
  else if (code === "ShiftLeft" || code === "ShiftRight") send({ lift: true });
  else return;
  event.preventDefault();
});

document.addEventListener("keyup", (event) => {
  const code = event.code;
  if (UP.has(code)) { held.up = false; sendMove(); }
  else if (DOWN.has(code)) { held.down = false; sendMove(); }
  else if (code === "ShiftLeft" || code === "ShiftRight") send({ lift: false });
});

window.addEventListener("blur", () => { // keys let go while the page cannot see them
  held.up = held.down = false;
  sendMove();
  send({ lift: false });
});

canvas.addEventListener("mousemove", (event) => {
  if (!layout) return;
  const y = toTable(event.offsetY * canvas.height / canvas.clientHeight);
  if (lastPoint === null || Math.abs(y - lastPoint) > 0.001) {
    lastPoint = y;
    send({ point: Math.round(y * 10000) / 10000 });
  }
});
canvas.addEventListener("mousedown", (event) => {
  canvas.focus();
  if (event.button === 0) send({ kick: true });
  else if (event.button === 2) send({ lift: true });
  event.preventDefault();
});
canvas.addEventListener("mouseup", (event) => { if (event.button === 2) send({ lift: false }); });
canvas.addEventListener("contextmenu", (event) => event.preventDefault());
canvas.addEventListener("wheel", (event) => {
  choose(active + (event.deltaY > 0 ? 1 : -1));
  event.preventDefault();
}, { passive: false });

// --- drawing ---------------------------------------------------------------------------
let scale = 500; // px per metre

function resize() {
  const room = Math.min(window.innerWidth - 40, 1000);
  scale = room / (layout.length + 2 * MARGIN);
  canvas.width = Math.round(room);
  canvas.height = Math.round((layout.width + 2 * MARGIN) * scale);
  draw();
}
window.addEventListener("resize", () => { if (layout) resize(); });

const HUMAN_COLOUR = "#ef5350", ROBOT_COLOUR = "#64b5f6";  // as the game panel draws them
const px = (x) => (x + layout.length / 2 + MARGIN) * scale;
const py = (y) => (layout.width / 2 - y + MARGIN) * scale;
const toTable = (pixelY) => layout.width / 2 + MARGIN - pixelY / scale;

function draw() {
  if (!layout) return;
  const L = layout.length, W = layout.width, G = layout.goal_width;
  ctx.clearRect(0, 0, canvas.width, canvas.height);
  ctx.fillStyle = "#388e3c";
  ctx.fillRect(px(-L / 2), py(W / 2), L * scale, W * scale);
  ctx.strokeStyle = "rgba(255,255,255,0.5)";
  ctx.lineWidth = 2;
  ctx.strokeRect(px(-L / 2), py(W / 2), L * scale, W * scale);
  ctx.beginPath();
  ctx.moveTo(px(0), py(W / 2));
  ctx.lineTo(px(0), py(-W / 2));
  ctx.stroke();
  // One colour per side on every page (the game panel's): the human red, the robot blue.
  // This page is in the human's frame: the human's goal on the left, the robot's right.
  for (const [x, colour] of [[-L / 2, HUMAN_COLOUR], [L / 2, ROBOT_COLOUR]]) { // the goals
    ctx.fillStyle = colour;
    ctx.fillRect(px(x) - (x < 0 ? 10 : 0), py(G / 2), 10, G * scale);
  }
  const mine = layout.mine;
  layout.rods.forEach((rod, i) => {
    const t = state ? state.translations[i] : 0;
    const r = state ? state.rotations[i] : 0;
    const isActive = mine[active] === i;
    ctx.strokeStyle = isActive ? "#ffd54f" : "#b0bec5";
    ctx.lineWidth = isActive ? 4 : 2;
    ctx.beginPath();
    ctx.moveTo(px(rod.x), py(W / 2));
    ctx.lineTo(px(rod.x), py(-W / 2));
    ctx.stroke();
    const foot = layout.foot_reach * Math.sin(r); // feet seen from above
    for (let k = 0; k < rod.men; k++) {
      const y = t + (k - (rod.men - 1) / 2) * rod.spacing;
      ctx.fillStyle = rod.team === "human" ? HUMAN_COLOUR : ROBOT_COLOUR;
      ctx.fillRect(px(rod.x) - 6, py(y) - 9, 12, 18);
      ctx.strokeStyle = ctx.fillStyle;
      ctx.lineWidth = 6;
      ctx.beginPath();
      ctx.moveTo(px(rod.x), py(y));
      ctx.lineTo(px(rod.x + foot), py(y));
      ctx.stroke();
    }
  });
  if (state && state.ball) {
    ctx.fillStyle = "#fafafa";
    ctx.beginPath();
    ctx.arc(px(state.ball[0]), py(state.ball[1]), Math.max(3, layout.ball_radius * scale),
      0, 2 * Math.PI);
    ctx.fill();
  }
  if (state) {
    document.getElementById("score-human").textContent = state.score.human;
    document.getElementById("score-robot").textContent = state.score.robot;
  }
}

choose(0);
connect();
