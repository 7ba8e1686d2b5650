// The replay bar: shown only when the page is served by `foosball replay` (its "replay"
// topic), hidden on the board. Pause, seek and speed go back as "replay" actions through
// game.js's send(); the field, the rods and the game line are game.js's as always.
"use strict";

const replayBar = {
  built: false, dragging: false,
  clock(seconds) { return clockText(Math.max(0, seconds)); },
  build(replay) {
    const bar = $("replay");
    const speed = $("replay-speed");
    speed.replaceChildren(...replay.speeds.map((value) => {
      const option = document.createElement("option");
      option.value = value;
      option.textContent = `${value}x`;
      return option;
    }));
    $("replay-toggle").addEventListener("click", () => {
      send("replay", { command: $("replay-toggle").dataset.paused === "1" ? "play" : "pause" });
    });
    const seek = $("replay-seek");
    seek.addEventListener("input", () => {
      replayBar.dragging = true;
      $("replay-time").textContent = replayBar.clock(Number(seek.value));
    });
    seek.addEventListener("change", () => {
      replayBar.dragging = false;
      send("replay", { command: "seek", to: Number(seek.value) });
    });
    speed.addEventListener("change", () => {
      send("replay", { command: "speed", speed: Number(speed.value) });
    });
    bar.hidden = false;
    replayBar.built = true;
  },
};

window.showReplay = (replay) => {
  if (!replayBar.built) { replayBar.build(replay); }
  const seek = $("replay-seek");
  seek.max = replay.duration_s;
  if (!replayBar.dragging) {
    seek.value = replay.t_s;
    $("replay-time").textContent =
      `${replayBar.clock(replay.t_s)} / ${replayBar.clock(replay.duration_s)}`;
  }
  const toggle = $("replay-toggle");
  toggle.dataset.paused = replay.paused ? "1" : "0";
  toggle.textContent = replay.paused ? "Play" : "Pause";
  $("replay-speed").value = replay.speed;
  $("replay-file").textContent = `${replay.source}: ${replay.file}` +
    (replay.warnings.length ? ` (${replay.warnings.length} warning(s): ${replay.warnings[0]})` : "");
};
