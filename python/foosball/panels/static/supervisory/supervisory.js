// The supervisory page: renders the topics of the SupervisoryView that the panel server
// pushes over its WebSocket, and sends the operator's halt / restart actions, with the panel
// token, over the same socket. Plain ES2017 for the kiosk's WPE WebKit; no libraries.
// A page opened as .../#token=abcd-... starts with the token filled in (and the address
// loses it).
"use strict";

const AXES = 8;
const $ = (id) => document.getElementById(id);

function fixed(value, digits) {
  return value === null || value === undefined ? "–" : value.toFixed(digits);
}

function clock(ms) {
  const d = new Date(ms);
  const two = (n) => String(n).padStart(2, "0");
  return `${two(d.getHours())}:${two(d.getMinutes())}:${two(d.getSeconds())}`;
}

function cell(row, className) {
  const td = document.createElement("td");
  if (className) td.className = className;
  row.appendChild(td);
  return td;
}

// One row per axis, made once; updates only change text and data attributes.
function buildRows() {
  const body = $("axis-rows");
  for (let axis = 0; axis < AXES; axis += 1) {
    const tr = document.createElement("tr");
    tr.id = `axis-${axis}`;
    cell(tr, "num").textContent = String(axis);
    cell(tr, "label").textContent = "–";
    cell(tr, "state").appendChild(document.createElement("span")).textContent = "–";
    for (const name of ["pos-rad", "pos-m", "speed", "current"]) cell(tr, `num ${name}`);
    cell(tr, "fault");
    const drive = cell(tr, "drive");
    for (const command of ["halt", "release"]) {
      const button = document.createElement("button");
      button.type = "button";
      button.className = `drive-${command}`;
      button.dataset.command = command;
      button.textContent = command;
      button.title = `${command} drive ${axis}`;
      button.addEventListener("click", () => act("drive", { axis, command }));
      drive.appendChild(button);
    }
    body.appendChild(tr);
  }
}

function renderAxes(v) {
  const rows = new Map(v.axes.map((a) => [a.axis, a]));
  $("axis-rows").classList.toggle("stale", v.stale);
  $("motors-stale").hidden = !(v.stale && v.axes.length);
  for (let axis = 0; axis < AXES; axis += 1) {
    const tr = $(`axis-${axis}`);
    const a = rows.get(axis);
    const cells = tr.children;
    const state = cells[2].firstChild;
    cells[1].textContent = a ? a.label : "–";
    state.textContent = a ? a.state : "–";
    state.dataset.state = a ? a.state : "";
    cells[3].textContent = a ? fixed(a.position_rad, 3) : "–";
    cells[4].textContent = a ? fixed(a.position_m, 4) : "–";
    cells[5].textContent = !a ? "–" : a.velocity_m_s === null
      ? `${fixed(a.velocity_rad_s, 1)} rad/s` : `${fixed(a.velocity_m_s, 3)} m/s`;
    cells[6].textContent = a ? fixed(a.current_a, 2) : "–";
    cells[7].textContent = a ? a.fault : "";
    cells[7].title = a ? a.fault : "";
    for (const button of cells[8].querySelectorAll("button")) {
      button.disabled = !v.drive_control;
      button.title = `${button.dataset.command} drive ${axis}` +
        (v.drive_control ? "" : " (not in this release)");
    }
  }
}

function level(element, value) {
  element.dataset.level = value;
}

function renderLink(v) {
  const l = v.link;
  const badge = $("link-badge");
  $("link-stale").hidden = !(v.stale && l);
  if (!l) {
    badge.textContent = "no data";
    level(badge, "unknown");
    return;
  }
  badge.textContent = v.stale ? "old" : l.healthy ? "healthy" : "degraded";
  level(badge, v.stale ? "busy" : l.healthy ? "ok" : "bad");
  const set = (id, text, good) => {
    $(id).textContent = text;
    level($(id), good === undefined ? "" : good ? "ok" : "bad");
  };
  set("link-up", l.link_up ? "up" : "DOWN", l.link_up);
  set("link-slaves", `${l.slaves} / ${l.expected_slaves}`, l.slaves === l.expected_slaves);
  set("link-al", l.al_state, l.al_code === 0x08);
  set("link-wkc", `${l.working_counter} / ${l.expected_working_counter}`,
      l.working_counter === l.expected_working_counter);
  set("link-bad", `${l.bad_working_counters} (${l.bad_working_counters_window} in ` +
      `${Math.round(l.window_s)} s)`, l.bad_working_counters_window === 0);
  set("link-cycle", `${fixed(l.cycle_ms, 2)} ms`);
  set("link-jitter", `${fixed(l.jitter_p99_us, 0)} µs`);
  set("link-jitter-max", `${fixed(l.jitter_p99_max_us, 0)} µs`);
  // Which slave a working-counter loss comes from, as the motor driver read it, and what
  // each drive that faulted said of it (its CoE emergency).
  const out = $("link-slaves-out");
  out.textContent = "";
  for (const line of l.slave_lines) {
    const li = document.createElement("li");
    li.textContent = line;
    li.title = line;
    out.appendChild(li);
  }
  out.hidden = l.slave_lines.length === 0;
}

function renderSafety(v) {
  const badge = $("safety");
  badge.textContent = v.faulted ? "FAULT" : "no fault";
  level(badge, v.faulted ? "bad" : "ok");
  let text = "";
  if (v.faulted) {
    const present = v.causes.length ? `${v.causes.length} cause(s) present`
      : "causes gone: restart to leave FAULT";
    text = `${v.fault_text || "fault"} · ${present}`;
  }
  $("fault-text").textContent = text;
  $("fault-text").title = v.causes.join("\n");
}

function renderList(id, items, empty, fill) {
  const list = $(id);
  list.textContent = "";
  if (!items.length) {
    const li = document.createElement("li");
    li.className = "empty";
    li.textContent = empty;
    list.appendChild(li);
  }
  for (const item of items) {
    const li = document.createElement("li");
    fill(li, item);
    li.title = li.textContent;
    list.appendChild(li);
  }
}

// A board's OTA update under way: one line each, hidden when there is none.
function renderUpdates(lines) {
  const line = $("updates");
  line.textContent = lines.join(" \u00b7 ");
  line.hidden = lines.length === 0;
}

// Each frame carries only the topics that changed (axes, link, safety, log).
function render(topics) {
  if (topics.safety) renderSafety(topics.safety);
  if (topics.axes) renderAxes(topics.axes);
  if (topics.link) renderLink(topics.link);
  if (topics.updates) renderUpdates(topics.updates.lines);
  if (topics.log) {
    renderList("alarms", topics.log.alarms, "no alarms", (li, a) => {
      li.textContent = `${clock(a.at_ms)} ${a.text}`;
      li.dataset.active = String(a.active);
    });
    renderList("actions", topics.log.actions, "no actions", (li, a) => {
      li.textContent = `${clock(a.at_ms)} ${a.who}: ${a.what} – ${a.result}`;
      li.dataset.ok = String(a.ok);
    });
  }
}

function showResult(text, ok) {
  const result = $("result");
  result.textContent = text;
  level(result, ok ? "ok" : "bad");
}

// --- the shared panel server (foosball.panels.server): one WebSocket both ways ----------

let socket = null;
let nextId = 1;
const asked = new Map(); // action id -> what the operator pressed

function connect() {
  const scheme = location.protocol === "https:" ? "wss:" : "ws:";
  const ws = new WebSocket(`${scheme}//${location.host}/ws`);
  const connection = $("connection");
  ws.onopen = () => {
    socket = ws;
    connection.textContent = "live";
    level(connection, "ok");
  };
  ws.onmessage = (event) => {
    const data = JSON.parse(event.data);
    if (data.topics) render(data.topics);
    if (data.reply) answered(data.reply);
  };
  ws.onclose = () => {
    socket = null;
    connection.textContent = "reconnecting";
    level(connection, "bad");
    setTimeout(connect, 1000);
  };
}

function answered(reply) {
  const what = asked.get(reply.id) || reply.action || "action";
  asked.delete(reply.id);
  if (reply.accepted) showResult(`${what}: accepted`, true);
  else showResult(`${what} refused: ${reply.reason}`, false);
}

function act(action, args) {
  const what = action === "drive" ? `drive ${args.axis} ${args.command}`
    : action.replace("_", " ");
  if (!socket) {
    showResult(`${what}: not connected to the panel`, false);
    return;
  }
  const id = nextId;
  nextId += 1;
  asked.set(id, what);
  socket.send(JSON.stringify({ action, token: $("token").value, args: args || {}, id }));
  showResult(`${what}: sent…`, true);
}

buildRows();
const fromUrl = /(?:^#|&)token=([^&]*)/.exec(location.hash);
if (fromUrl) {
  $("token").value = decodeURIComponent(fromUrl[1]);
  // Read once, then out of the address bar (and the history), as the game panel does: a
  // token left there is shown to whoever looks at the screen and kept in every bookmark.
  history.replaceState(null, "", location.pathname + location.search);
}
$("halt-all").addEventListener("click", () => act("halt_all"));
$("restart-all").addEventListener("click", () => act("restart_all"));
$("controls").addEventListener("submit", (event) => event.preventDefault());
connect();
