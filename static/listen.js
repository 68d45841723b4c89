/* Listen: the story read aloud by the app's narrator, played with the app's own calm
   controls (the story page's [data-listen-frame], app/web/narrations.py). Nothing plays until
   Listen is tapped (no autoplay). An <audio> element plays on with the screen locked; the lock
   screen shows the story's title and picture and offers play, pause and back 15 s (Media
   Session). The sleep timer fades the voice out over its last FADE_S seconds, then pauses.
   The bar is pinned to the screen's foot, out of the flow: the story never moves for it.
   Frames that arrive by htmx (the note that polls while the parts are read) are bound as
   they load.
   Without this file the page keeps its Listen button, inert, and the story to read. */
(function () {
  "use strict";
  var VOLUME = 1;
  var BACK_S = 15;
  var FADE_S = 30;
  var TICK_MS = 250;
  var html = document.documentElement;

  function bind(frame) {
    var audio = frame.querySelector("audio[data-listen-audio]");
    if (!audio || frame.hasAttribute("data-listen-bound")) return;
    frame.setAttribute("data-listen-bound", "");
    var bar = frame.querySelector("[data-listen-bar]");
    var progress = frame.querySelector("[data-listen-progress]");
    var sleep = frame.querySelector("select[data-listen-sleep]");
    var buttons = {};
    frame.querySelectorAll("button[data-listen]").forEach(function (b) {
      buttons[b.getAttribute("data-listen")] = b;
    });
    var deadline = 0;  // of the sleep timer (0: none, it ends with the story)
    var ticking = 0;

    function show(state) {
      bar.setAttribute("data-state", state);
      bar.hidden = state === "idle";
      buttons.start.hidden = state !== "idle";
      buttons.play.hidden = state !== "paused";
      buttons.pause.hidden = state !== "playing";
      html.classList.toggle("is-reading-aloud", state !== "idle");
      if ("mediaSession" in navigator) {
        navigator.mediaSession.playbackState = state === "playing" ? "playing" : "paused";
      }
    }

    function metadata() {
      if (!("mediaSession" in navigator) || typeof MediaMetadata !== "function") return;
      var artwork = audio.getAttribute("data-artwork");
      navigator.mediaSession.metadata = new MediaMetadata({
        title: audio.getAttribute("data-title") || document.title,
        artist: document.title,
        artwork: artwork ? [{ src: new URL(artwork, location.href).href }] : []
      });
      navigator.mediaSession.setActionHandler("play", play);
      navigator.mediaSession.setActionHandler("pause", pause);
      navigator.mediaSession.setActionHandler("seekbackward", back);
      navigator.mediaSession.setActionHandler("stop", close);
    }

    function play() {
      audio.volume = VOLUME;
      var playing = audio.play();
      if (playing && playing.catch) playing.catch(function () { show("paused"); });
      show("playing");
      tick();
    }

    function pause() {
      audio.pause();
      show("paused");
    }

    function back() {
      audio.currentTime = Math.max(0, audio.currentTime - BACK_S);
    }

    function close() {
      audio.pause();
      audio.volume = VOLUME;
      deadline = 0;
      sleep.value = "0";
      show("idle");
    }

    function setTimer() {
      var minutes = Number(sleep.value) || 0;
      deadline = minutes ? Date.now() + minutes * 60000 : 0;
      audio.volume = VOLUME;
      tick();
    }

    // The sleep timer, against the clock (not the audio's time: a paused story still
    // falls asleep on time): softer and softer in its last FADE_S seconds, then paused.
    function tick() {
      if (ticking) return;
      ticking = window.setInterval(function () {
        if (!deadline) {
          window.clearInterval(ticking);
          ticking = 0;
          return;
        }
        var left = deadline - Date.now();
        if (left <= 0) {
          deadline = 0;
          sleep.value = "0";
          audio.pause();
          audio.volume = VOLUME;
          show("paused");
          bar.setAttribute("data-slept", "");
          return;
        }
        audio.volume = VOLUME * Math.min(1, left / (FADE_S * 1000));
      }, TICK_MS);
    }

    buttons.start.addEventListener("click", function () {
      metadata();
      play();
    });
    buttons.play.addEventListener("click", play);
    buttons.pause.addEventListener("click", pause);
    buttons.back.addEventListener("click", back);
    buttons.stop.addEventListener("click", close);
    sleep.addEventListener("change", setTimer);
    audio.addEventListener("timeupdate", function () {
      if (audio.duration > 0 && isFinite(audio.duration)) {
        progress.value = audio.currentTime / audio.duration;
      }
    });
    audio.addEventListener("ended", function () { show("paused"); });
    audio.addEventListener("pause", function () {
      if (bar.getAttribute("data-state") === "playing") show("paused");
    });
  }

  function bindAll(root) {
    (root.querySelectorAll ? root : document).querySelectorAll("[data-listen-frame]")
      .forEach(bind);
    if (root.matches && root.matches("[data-listen-frame]")) bind(root);
  }

  document.addEventListener("DOMContentLoaded", function () { bindAll(document); });
  document.addEventListener("htmx:load", function (event) { bindAll(event.target); });
})();
