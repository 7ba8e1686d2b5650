// The game panel's Camera tab: the guided calibration (foosball.agents.game_panel.calibration),
// which the ball tracker on the vision board runs on its own frames (CameraCalibration).
// Look: the tracker's frame with the markers found (outlined by the tracker, with their ids)
// and the missing ones with why. Calibrate: each marker's residual in table mm over the field
// (its arrow, exaggerated; the circle is the limit), the verdict with the calibration's reason.
// window.panelCalib is for tests: the last data shown.
"use strict";

(() => {
  const $ = (id) => document.getElementById(id);
  const state = window.panelCalib = { data: null, table: null, drawn: 0 };
  const ARROW_PX_PER_MM = 3;  // a residual drawn 3 px per mm (the field's scale would hide it)

  function showView(on) {
    $("calib-view").hidden = !on;
    if (on) { draw(); }
  }

  function row(cells, header) {
    const tr = document.createElement("tr");
    for (const text of cells) {
      const cell = document.createElement(header ? "th" : "td");
      cell.textContent = text;
      tr.appendChild(cell);
    }
    return tr;
  }

  window.showCalibrating = (data, table) => {
    state.data = data;
    state.table = table || state.table;
    const verdictShown = data.result && data.frame && data.text === data.result.text;
    $("calib-text").textContent = (verdictShown ? `request ${data.result.request}: found ` +
      `${data.frame.found.length} markers` : data.text) || "";
    $("look").disabled = $("calibrate").disabled = !data.available || !!data.asked ||
      !localStorage.getItem("panelToken");
    const frame = data.frame;
    const missing = $("calib-missing");
    missing.replaceChildren();
    if (frame) {
      if (frame.jpeg) {
        $("calib-frame").src = `data:image/jpeg;base64,${frame.jpeg}`;
      }
      $("calib-frame-note").textContent = `${frame.width}x${frame.height} at ${frame.at}: ` +
        `found ${frame.found.join(", ") || "none"}` +
        (frame.stray.length ? `; not in the layout: ${frame.stray.join(", ")}` : "");
      for (const m of frame.missing) {
        const li = document.createElement("li");
        li.textContent = `marker ${m.id} missing: ${m.why}`;
        missing.appendChild(li);
      }
    } else {
      $("calib-frame").removeAttribute("src");
    }
    const result = data.result;
    const verdict = $("calib-verdict");
    const markers = $("calib-markers");
    markers.replaceChildren();
    if (result) {
      verdict.className = `calib-verdict ${result.accepted ? "accepted" : "refused"}`;
      verdict.textContent = result.accepted ? `ACCEPTED: ${result.text}`
        : `${result.refused ? "REFUSED" : "NOT CALIBRATED"}: ${result.text}`;
      markers.appendChild(row(["marker", "off mm", "x mm", "y mm"], true));
      for (const m of result.markers) {
        const tr = row([m.id, "mm" in m ? m.mm.toFixed(1) : "not checked",
                        "dx_mm" in m ? m.dx_mm.toFixed(1) : "", "dy_mm" in m ? m.dy_mm.toFixed(1) : ""]);
        tr.className = `${m.over ? "over" : ""} ${m.blamed ? "blamed" : ""}`;
        tr.dataset.marker = m.id;
        markers.appendChild(tr);
      }
      const sum = result.summary;
      $("calib-file").textContent = result.accepted ? `reprojection ${sum.reprojection_rms_px.toFixed(2)} ` +
        `px rms (limit ${result.limit_px} px), table ${sum.table_rms_mm.toFixed(1)} mm rms, focal ` +
        `${sum.focal_px} px` : "nothing saved (the tracker keeps its calibration)";
    } else {
      verdict.className = "calib-verdict";
      verdict.textContent = "";
      $("calib-file").textContent = "accepted: the tracker saves it where it reads its " +
        "calibration (the old one kept as .prev) and uses it at once";
    }
    draw();
  };

  // The field to scale with the layout's markers around it; each marker's residual as an
  // arrow from where the layout says it is towards where the other markers put it.
  function draw() {
    const canvas = $("calib-field");
    const table = state.table;
    if (!canvas || $("calib-view").hidden || !table) { return; }
    const width = canvas.clientWidth, height = canvas.clientHeight;
    if (width < 10 || height < 10) { return; }
    canvas.width = width;
    canvas.height = height;
    const c = canvas.getContext("2d");
    c.fillStyle = "#14181c";
    c.fillRect(0, 0, width, height);
    const result = state.data && state.data.result;
    const markers = result ? result.markers : [];
    let halfX = table.length / 2, halfY = table.width / 2;
    for (const m of markers) {
      halfX = Math.max(halfX, Math.abs(m.x) + 0.04);
      halfY = Math.max(halfY, Math.abs(m.y) + 0.04);
    }
    const limitPx = (result ? result.limit_mm : 10) * ARROW_PX_PER_MM;
    const scale = Math.min((width - 2 * limitPx - 90) / (2 * halfX),
                           (height - 2 * limitPx - 44) / (2 * halfY));
    const cx = width / 2, cy = (height + 14) / 2;
    const px = (x) => cx + x * scale, py = (y) => cy - y * scale;
    c.fillStyle = "#2e5e33";
    c.fillRect(px(-table.length / 2), py(table.width / 2), table.length * scale,
               table.width * scale);
    c.strokeStyle = "#cfd8dc";
    c.lineWidth = 1;
    c.strokeRect(px(-table.length / 2), py(table.width / 2), table.length * scale,
                 table.width * scale);
    c.beginPath();
    c.moveTo(px(0), py(table.width / 2));
    c.lineTo(px(0), py(-table.width / 2));
    c.stroke();
    c.font = "11px system-ui, sans-serif";
    c.fillStyle = "#bbb";
    if (!result) {
      c.fillText("press Calibrate: each marker's residual in mm appears here", 8, 11);
      return;
    }
    const limit = result.limit_mm;
    const without = markers.find((m) => "without" in m);
    c.fillText(`residual: arrow ${ARROW_PX_PER_MM} px/mm, circle the ${limit} mm limit` +
               (without ? `; the others checked without ${without.without}` : ""), 8, 11);
    for (const m of markers) {
      const x = px(m.x), y = py(m.y);
      const checked = "mm" in m;
      const colour = !checked ? "#9e9e9e" : m.over ? "#ef5350" : "#81c784";
      c.strokeStyle = colour;
      c.fillStyle = colour;
      c.lineWidth = m.blamed ? 3 : 1.5;
      c.beginPath();
      c.arc(x, y, limit * ARROW_PX_PER_MM, 0, 2 * Math.PI);
      c.stroke();
      c.fillRect(x - 2, y - 2, 4, 4);
      if (checked) {
        const ex = x + m.dx_mm * ARROW_PX_PER_MM, ey = y - m.dy_mm * ARROW_PX_PER_MM;
        c.beginPath();
        c.moveTo(x, y);
        c.lineTo(ex, ey);
        c.stroke();
        const a = Math.atan2(ey - y, ex - x);
        if (m.mm > 0.5) {
          c.beginPath();
          c.moveTo(ex, ey);
          c.lineTo(ex - 7 * Math.cos(a - 0.4), ey - 7 * Math.sin(a - 0.4));
          c.lineTo(ex - 7 * Math.cos(a + 0.4), ey - 7 * Math.sin(a + 0.4));
          c.closePath();
          c.fill();
        }
      }
      const label = `${m.id}: ${checked ? `${m.mm.toFixed(1)} mm` : "not checked"}` +
        (m.blamed ? " REFUSED" : "");
      // beside the marker, away from the field's middle
      const w = c.measureText(label).width;
      const middle = Math.abs(m.x) < table.length / 4;
      const lx = middle ? x - w / 2 : m.x > 0 ? x + limitPx + 3 : x - limitPx - 3 - w;
      const ly = !middle ? y + 4 : m.y > 0 ? y - limitPx - 3 : y + limitPx + 12;
      c.font = m.blamed ? "bold 12px system-ui, sans-serif" : "11px system-ui, sans-serif";
      c.fillText(label, Math.min(Math.max(lx, 2), width - w - 2), ly);
    }
    state.drawn += 1;
  }

  $("look").addEventListener("click", () => window.panelSend("look"));
  $("calibrate").addEventListener("click", () => window.panelSend("calibrate"));
  for (const tab of document.querySelectorAll(".tab")) {
    tab.addEventListener("click", () => showView(tab.dataset.tab === "calib-tab"));
  }
  window.addEventListener("resize", draw);
})();
