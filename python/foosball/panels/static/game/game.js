// The game panel's page: topics in over one WebSocket, actions out with the panel token.
// Plain script, no build step. window.panelStats is for people and tests: the latency from
// a ball state's capture time to the frame that drew it (latencies) and to its arrival in
// the page (arrivals), in ms, and what was drawn.
"use strict";

const VISION = [  // name, label, min, max, step
  ["hue_low", "hue low", 0, 179, 1], ["hue_high", "hue high", 0, 179, 1],
  ["sat_low", "sat low", 0, 255, 1], ["sat_high", "sat high", 0, 255, 1],
  ["val_low", "value low", 0, 255, 1], ["val_high", "value high", 0, 255, 1],
  ["min_area", "min area px", 0, 5000, 10], ["max_area", "max area px", 0, 20000, 10],
  ["min_density", "min density", 0, 1, 0.01],
  ["max_eccentricity", "max eccentr.", 0, 1, 0.01],
];
const LATENCY_SAMPLES = 20000;

const topics = {};  // the newest data of every topic
const stats = window.panelStats = {
  latencies: [], arrivals: [], drawn: 0, frames: 0, lastBall: null, ballPx: null, replies: [],
  previews: 0, connected: false,
};
let dirty = true;
let socket = null;
let nextId = 1;
let background = null;  // the static field, drawn once per size
let view = null;  // table -> canvas transform

const $ = (id) => document.getElementById(id);

// -- the link ------------------------------------------------------------------------------
function connect() {
  const scheme = location.protocol === "https:" ? "wss:" : "ws:";
  socket = new WebSocket(`${scheme}//${location.host}/ws`);
  socket.onopen = () => { stats.connected = true; $("link").textContent = "connected"; };
  socket.onclose = () => {
    stats.connected = false;
    $("link").textContent = "disconnected; retrying";
    $("state").textContent = "NO LINK";
    $("state").className = "badge";
    setTimeout(connect, 1000);
  };
  socket.onerror = () => {};  // onclose follows and retries
  socket.onmessage = (event) => {
    const frame = JSON.parse(event.data);
    if (frame.reply) { onReply(frame.reply); return; }
    const changed = frame.topics || {};
    Object.assign(topics, changed);
    if ("table" in changed) { background = null; }
    if (changed.ball && stats.arrivals.length < LATENCY_SAMPLES) {
      stats.arrivals.push(performance.timeOrigin + performance.now() - changed.ball.t_ms);
    }
    if ("game" in changed) { showGame(changed.game); }
    if ("vision" in changed) { showVision(changed.vision); }
    if ("preview" in changed && changed.preview) { showPreview(changed.preview); }
    if ("calibration" in changed) { showCalibration(changed.calibration); }
    if ("updates" in changed) { showUpdates(changed.updates.lines); }
    if ("replay" in changed && window.showReplay) { window.showReplay(changed.replay); }
    if ("calibrating" in changed && window.showCalibrating) {
      window.showCalibrating(changed.calibrating, topics.table);
    }
    dirty = true;
  };
}

function token() { return localStorage.getItem("panelToken") || ""; }

window.panelSend = (action, args) => send(action, args);  // for calibrate.js

function send(action, args) {
  if (!socket || socket.readyState !== WebSocket.OPEN) {
    notice(`${action}: not connected`);
    return;
  }
  socket.send(JSON.stringify({ action, args: args || {}, token: token(), id: nextId++ }));
}

function onReply(reply) {
  stats.replies.push(reply);
  if (!reply.accepted) { notice(`${reply.action || "action"} refused: ${reply.reason}`); }
}

// A board's OTA update under way: one line each, hidden when there is none.
function showUpdates(lines) {
  const line = $("updates");
  line.textContent = lines.join(" \u00b7 ");
  line.hidden = lines.length === 0;
}

function notice(text) { $("notice").textContent = text; }

const VIEW_ONLY = "view only: no panel token (set it on the Access tab)";

// The controls a token unlocks: disabled without one, each saying why when pointed at.
function showAccess() {
  const viewOnly = !token();
  $("token-state").textContent = viewOnly ? "no token: view only" : "a token is set";
  $("view-only").hidden = !viewOnly;
  for (const control of document.querySelectorAll(".needs-token, #sliders input")) {
    control.title = viewOnly ? VIEW_ONLY : "";
  }
  for (const control of document.querySelectorAll("#sliders input, #preview-on, #learn")) {
    control.disabled = viewOnly;
  }
  if (topics.game) { showGame(topics.game); }
}

// -- the game ------------------------------------------------------------------------------
function clockText(seconds) {
  const m = Math.floor(seconds / 60);
  const s = seconds - 60 * m;
  return `${String(m).padStart(2, "0")}:${s.toFixed(1).padStart(4, "0")}`;
}

function fillList(element, items) {
  element.replaceChildren(...items.map((text) => {
    const li = document.createElement("li");
    li.textContent = text;
    return li;
  }));
}

function showGame(game) {
  $("state").textContent = game.state;
  $("state").className = `badge ${game.state}`;
  $("score-robot").textContent = game.score.robot;
  $("score-human").textContent = game.score.human;
  $("clock").textContent = clockText(game.clock_s);
  $("drives").textContent = game.drives_text || game.drives;
  $("drives").classList.toggle("warn", game.drives !== "READY");
  // Without a token every control would only be refused: drawn disabled, and said why.
  const viewOnly = !token();
  for (const name of ["start", "pause", "stop", "restart"]) {
    $(name).disabled = viewOnly || !game.allowed[name];
  }
  for (const team of ["robot", "human"]) {
    $(`score-${team}-up`).disabled = viewOnly || game.match === "idle";
    $(`score-${team}-down`).disabled = viewOnly || game.match === "idle" ||
      game.score[team] === 0;
  }
  $("fault").hidden = !game.faulted;
  $("fault-text").textContent = game.fault_text;
  fillList($("causes"), game.causes.length ? game.causes : ["every cause is gone"]);
  fillList($("alarms"), game.alarms);
  fillList($("log"), game.log.map((e) => `${e.when.slice(11, 19)} ${e.who} ${e.action}: ${e.result}`));
  if (game.notice) { notice(game.notice); }
  showUncertainGoal(game.uncertain);
}

// A goal the camera could not decide (the ball vanished near a goal, no serve followed in
// time): the operator counts it or dismisses it in one press.
function showUncertainGoal(uncertain) {
  $("uncertain-goal").hidden = !uncertain;
  if (uncertain) { $("uncertain-text").textContent = uncertain.text; }
}

// -- vision --------------------------------------------------------------------------------
function buildSliders() {
  const box = $("sliders");
  for (const [name, label, min, max, step] of VISION) {
    const row = document.createElement("label");
    row.className = "slider";
    const input = document.createElement("input");
    Object.assign(input, { type: "range", min, max, step, id: `v-${name}` });
    const value = document.createElement("span");
    value.id = `v-${name}-value`;
    row.append(label, input, value);
    box.append(row);
    input.addEventListener("input", () => { value.textContent = input.value; });
    input.addEventListener("change", () => {
      send("vision", { [name]: Number(input.value) });
    });
  }
  $("preview-on").addEventListener("change", (event) => {
    send("preview", { on: event.target.checked });
  });
  $("learn").addEventListener("click", () => send("learn"));
}

function showVision(vision) {
  for (const [name] of VISION) {
    const input = $(`v-${name}`);
    if (document.activeElement !== input) { input.value = vision.config[name]; }
    $(`v-${name}-value`).textContent = vision.config[name];
  }
  if (document.activeElement !== $("preview-on")) { $("preview-on").checked = vision.config.preview; }
  $("vision-sent").textContent = vision.sent || "never (the tracker's own values are not reported)";
  showLearning(vision.learning);
}

// The tracker's answer to "learn from the ball": the band it now uses, or why none.
function showLearning(learning) {
  const line = $("learn-state");
  if (!learning) { return; }
  let text = `request ${learning.request}: ${learning.state}`;
  if (learning.band) {
    const b = learning.band;
    text += ` (hue ${b.hue_low}-${b.hue_high}, sat ${b.sat_low}-${b.sat_high}, ` +
      `value ${b.val_low}-${b.val_high}; ${(100 * learning.ball_share).toFixed(1)} % of ` +
      `the ball, ${(100 * learning.table_share).toFixed(2)} % of the rest)`;
  }
  line.textContent = learning.text ? `${text}: ${learning.text}` : text;
  line.className = `small learn-${learning.state}`;
}

function showPreview(preview) {
  const canvas = $("preview");
  canvas.width = preview.width;
  canvas.height = preview.height;
  const context = canvas.getContext("2d");
  const image = context.createImageData(preview.width, preview.height);
  const bits = atob(preview.bits);
  let set = 0;
  for (let i = 0; i < preview.width * preview.height; i++) {
    const on = (bits.charCodeAt(i >> 3) >> (7 - (i & 7))) & 1;  // numpy packbits: MSB first
    set += on;
    const v = on ? 255 : 0;
    image.data.set([v, v * 0.6, 0, 255], 4 * i);
  }
  context.putImageData(image, 0, 0);
  stats.previews += 1;
  stats.preview = { frame: preview.frame, set };
}

// What to warn about (not reported, no date, error above the limit) is the core's call.
function showCalibration(calibration) {
  const line = $("calibration");
  if (calibration.reported) {
    const made = document.createElement("span");
    made.className = "nowrap";  // a date broken at its hyphens is hard to read
    made.textContent = `made ${calibration.made || "at an unknown time"}`;
    line.replaceChildren(`Calibration: rms ${calibration.rms_px.toFixed(2)} px ` +
      `(max ${calibration.max_px.toFixed(2)} px), `, made);
    $("calibration-details").textContent = `${calibration.image}, ${calibration.markers} ` +
      `markers, ${calibration.table_rms_mm.toFixed(1)} mm rms on the table`;
  } else {
    line.textContent = "Calibration: not reported";
    $("calibration-details").textContent = "";
  }
  line.classList.toggle("warn", calibration.warnings.length > 0);
  fillList($("calibration-warnings"), calibration.warnings.map((text) => `\u26a0 ${text}`));
}

// -- the field -----------------------------------------------------------------------------
function layout(canvas, table) {
  const ratio = window.devicePixelRatio || 1;
  const width = canvas.clientWidth, height = canvas.clientHeight;
  canvas.width = Math.round(width * ratio);
  canvas.height = Math.round(height * ratio);
  const goalDepth = 0.04, margin = 10;
  const scale = Math.min((width - 2 * margin) / (table.length + 2 * goalDepth),
                         (height - 2 * margin) / table.width);
  return { ratio, scale, cx: width / 2, cy: height / 2, width, height, goalDepth };
}

const px = (x) => view.cx + x * view.scale;  // table x (towards the human's goal) -> right
const py = (y) => view.cy - y * view.scale;  // table y -> up

function drawBackground(table) {
  const canvas = document.createElement("canvas");
  canvas.width = Math.round(view.width * view.ratio);
  canvas.height = Math.round(view.height * view.ratio);
  const c = canvas.getContext("2d");
  c.scale(view.ratio, view.ratio);
  const halfL = table.length / 2, halfW = table.width / 2, halfG = table.goal_width / 2;
  c.fillStyle = "#2e6b34";
  c.fillRect(px(-halfL), py(halfW), table.length * view.scale, table.width * view.scale);
  for (const side of [-1, 1]) {  // the robot's goal on the left, the human's on the right
    const x0 = side < 0 ? px(-halfL - view.goalDepth) : px(halfL);
    c.fillStyle = side < 0 ? "#1e3a52" : "#4a2626";
    c.fillRect(x0, py(halfG), view.goalDepth * view.scale, table.goal_width * view.scale);
  }
  c.strokeStyle = "rgba(255,255,255,0.8)";
  c.lineWidth = 2;
  c.strokeRect(px(-halfL), py(halfW), table.length * view.scale, table.width * view.scale);
  c.beginPath();
  c.moveTo(px(0), py(halfW)); c.lineTo(px(0), py(-halfW));
  c.moveTo(px(0.1), py(0)); c.arc(px(0), py(0), 0.1 * view.scale, 0, 2 * Math.PI);
  c.stroke();
  c.strokeStyle = "rgba(200,200,200,0.35)";
  c.lineWidth = 2;
  for (const rod of table.rods) {
    c.beginPath(); c.moveTo(px(rod.x), py(halfW)); c.lineTo(px(rod.x), py(-halfW)); c.stroke();
  }
  return canvas;
}

function drawRods(c, table, rods) {
  const footW = 0.0226 * view.scale, body = 0.018 * view.scale;
  // The legend says what is drawn: the human's rods are measured when the tracker
  // measures them (HumanRods), centred otherwise.
  const humanMeasured = table.rods.some((rod, i) => rod.team === "human" && rods && rods[i]
    && rods[i].measured);
  const legend = humanMeasured ? "human rods (measured by the camera)"
    : "human rods (not measured: centred)";
  if ($("legend-human").textContent !== `\u25a0 ${legend}`) {
    $("legend-human").textContent = `\u25a0 ${legend}`;
  }
  table.rods.forEach((rod, i) => {
    const live = rods && rods[i] ? rods[i] : { translation: 0, rotation: 0, measured: false };
    const colour = rod.team === "robot" ? "100,181,246" : "239,154,154";
    c.globalAlpha = live.measured ? 1 : 0.45;
    const centre = (rod.men - 1) / 2;
    const reach = table.foot_reach * Math.sin(live.rotation) * view.scale;
    for (let m = 0; m < rod.men; m++) {
      const y = py(live.translation + (m - centre) * rod.spacing);
      c.fillStyle = `rgb(${colour})`;
      c.fillRect(px(rod.x) - body / 2, y - footW / 2, body, footW);
      if (Math.abs(reach) > 1) {  // the foot swung out, seen from above
        c.strokeStyle = `rgb(${colour})`;
        c.lineWidth = 3;
        c.beginPath(); c.moveTo(px(rod.x), y); c.lineTo(px(rod.x) + reach, y); c.stroke();
      }
    }
  });
  c.globalAlpha = 1;
}

function drawBall(c, table, ball) {
  if (!ball) { $("ball-note").textContent = "no ball state yet"; return; }
  if (ball.status === "LOST") { $("ball-note").textContent = "ball lost"; return; }
  $("ball-note").textContent = `ball ${ball.x.toFixed(3)}, ${ball.y.toFixed(3)} m  ` +
    `${Math.hypot(ball.vx, ball.vy).toFixed(2)} m/s`;
  if (ball.path.length > 1) {
    c.strokeStyle = "rgba(255,235,59,0.8)";
    c.setLineDash([6, 4]);
    c.lineWidth = 1.5;
    c.beginPath();
    ball.path.forEach(([x, y], i) => (i ? c.lineTo(px(x), py(y)) : c.moveTo(px(x), py(y))));
    c.stroke();
    c.setLineDash([]);
  }
  const trail = ball.trail;
  for (let i = 1; i < trail.length; i++) {
    c.strokeStyle = `rgba(255,152,0,${(i / trail.length) * 0.7})`;
    c.lineWidth = 3;
    c.beginPath();
    c.moveTo(px(trail[i - 1][0]), py(trail[i - 1][1]));
    c.lineTo(px(trail[i][0]), py(trail[i][1]));
    c.stroke();
  }
  const r = Math.max(3, (table.ball_diameter / 2) * view.scale);
  c.beginPath();
  c.arc(px(ball.x), py(ball.y), r, 0, 2 * Math.PI);
  if (ball.status === "PREDICTED") {
    c.strokeStyle = "#ff9800"; c.lineWidth = 2; c.stroke();
  } else {
    c.fillStyle = "#ff9800"; c.fill();
  }
  stats.ballPx = { x: px(ball.x), y: py(ball.y), ratio: view.ratio };
}

function draw() {
  requestAnimationFrame(draw);
  const table = topics.table;
  const canvas = $("field");
  if (!table) { return; }
  if (!view || canvas.clientWidth !== view.width || canvas.clientHeight !== view.height) {
    view = layout(canvas, table);
    background = null;
  }
  if (!dirty && background) { return; }
  if (!background) { background = drawBackground(table); }
  dirty = false;
  const c = canvas.getContext("2d");
  c.setTransform(1, 0, 0, 1, 0, 0);
  // The background is transparent beyond the field and the goals: without clearing, a
  // ball drawn past the end wall stayed there as a ghost.
  c.clearRect(0, 0, canvas.width, canvas.height);
  c.drawImage(background, 0, 0);
  c.setTransform(view.ratio, 0, 0, view.ratio, 0, 0);
  drawRods(c, table, topics.rods);
  const ball = topics.ball;
  drawBall(c, table, ball);
  stats.frames += 1;
  if (ball && ball !== stats.lastBall) {
    stats.lastBall = ball;
    stats.drawn += 1;
    if (stats.latencies.length < LATENCY_SAMPLES) {
      stats.latencies.push(performance.timeOrigin + performance.now() - ball.t_ms);
    }
  }
}

// -- start ---------------------------------------------------------------------------------
function init() {
  const match = location.hash.match(/token=([^&]+)/);
  if (match) {
    localStorage.setItem("panelToken", decodeURIComponent(match[1]));
    history.replaceState(null, "", location.pathname);
  }
  $("token-form").addEventListener("submit", (event) => {
    event.preventDefault();
    localStorage.setItem("panelToken", $("token").value.trim());
    $("token").value = "";
    showAccess();
  });
  window.addEventListener("storage", showAccess);  // another tab set or removed it
  for (const name of ["start", "pause", "stop", "restart"]) {
    $(name).addEventListener("click", () => send(name));
  }
  for (const team of ["robot", "human"]) {
    $(`score-${team}-up`).addEventListener("click", () => send("score", { team, change: 1 }));
    $(`score-${team}-down`).addEventListener("click", () => send("score", { team, change: -1 }));
  }
  $("goal-count").addEventListener("click", () => send("goal", { count: true }));
  $("goal-dismiss").addEventListener("click", () => send("goal", { count: false }));
  for (const tab of document.querySelectorAll(".tab")) {
    tab.addEventListener("click", () => {
      for (const other of document.querySelectorAll(".tab")) {
        other.classList.toggle("active", other === tab);
        $(other.dataset.tab).hidden = other !== tab;
      }
    });
  }
  buildSliders();
  showAccess();
  connect();
  requestAnimationFrame(draw);
}

init();
