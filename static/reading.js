/* The story page's reading tools: read aloud, and keeping the screen on. Loaded by that
   page only (after app.js, whose helpers it shares); the page works without it. */
(function () {
  "use strict";
  var stored = window.bedtime.stored;
  var store = window.bedtime.store;
  var scrollBehavior = window.bedtime.scrollBehavior;
  var root = document.querySelector("[data-story-text][lang]") || document.documentElement;

  // Read aloud with the browser's own voice: slow and soft, one paragraph at a time (long
  // utterances stall in some browsers), the paragraph being read lit and kept in view.
  // Shown only once the browser lists a voice for the story's language (some list theirs
  // late: voiceschanged); with none, a short note says so. While reading, the controls are
  // one bar pinned to the foot of the screen (the page padded so the story's end clears
  // it). Notes that are not the story ([data-not-story]) are never read. The sleep timer
  // reads the story again until its time is up, each paragraph softer in the last minute.
  var VOICE_KEY = "voice";
  var VOLUME = 0.8;
  var FADE_S = 60;
  var QUIETEST = 0.15;  // of VOLUME, for the last paragraph before the timer stops
  var AGAIN_PAUSE_MS = 2500;  // between the end of the story and its beginning again
  var NO_VOICE_GRACE_MS = 1500;  // a browser that lists its voices late, before the note

  function readAloud(box) {
    if (!("speechSynthesis" in window) || typeof SpeechSynthesisUtterance !== "function") {
      var none = document.querySelector("[data-no-voice]");
      if (none) none.hidden = false;
      return;
    }
    var synth = window.speechSynthesis;
    var buttons = {};
    var voiceChoice = box.querySelector("select[data-voice]");
    var sleepChoice = box.querySelector("select[data-sleep]");
    var bar = box.querySelector("[data-read-bar]");
    var progress = box.querySelector("[data-read-progress]");
    var noVoice = document.querySelector("[data-no-voice]");
    var html = document.documentElement;
    var run = 0;
    var voices = [];
    var deadline = 0;  // of the sleep timer, while reading (0: at the end of the story)
    box.querySelectorAll("button[data-speak]").forEach(function (b) {
      buttons[b.getAttribute("data-speak")] = b;
    });

    function show(state) {
      buttons.start.hidden = state !== "idle";
      buttons.pause.hidden = state !== "speaking";
      buttons.resume.hidden = state !== "paused";
      bar.hidden = state === "idle";
      html.classList.toggle("is-reading-aloud", state !== "idle");
      html.style.setProperty("--read-bar-height", (bar.hidden ? 0 : bar.offsetHeight) + "px");
    }

    function barHeight() {
      return bar.hidden ? 0 : bar.offsetHeight;
    }

    function sleepDeadline() {
      var minutes = Number(sleepChoice.value) || 0;
      return minutes ? Date.now() + minutes * 60000 : 0;
    }

    // The voices for the page's language (any voice if none is), the remembered one chosen.
    function listVoices() {
      var lang = (root.lang || "en").toLowerCase().split("-")[0];
      var fitting = synth.getVoices().filter(function (v) {
        return (v.lang || "").toLowerCase().replace("_", "-").split("-")[0] === lang;
      });
      if (noVoice) noVoice.hidden = fitting.length > 0 || noVoice.hidden;
      if (!fitting.length) return;
      voices = fitting;
      var wanted = voiceChoice.value || stored(VOICE_KEY);
      var local = voices.filter(function (v) { return v.localService; })[0] || voices[0];
      voiceChoice.textContent = "";
      voices.forEach(function (v) { voiceChoice.add(new Option(v.name, v.voiceURI)); });
      var known = voices.some(function (v) { return v.voiceURI === wanted; });
      voiceChoice.value = known ? wanted : local.voiceURI;
      box.hidden = false;
    }

    function chosenVoice() {
      return voices.filter(function (v) { return v.voiceURI === voiceChoice.value; })[0] || null;
    }

    function light(paragraph) {
      document.querySelectorAll(".is-reading").forEach(function (el) {
        el.classList.remove("is-reading");
      });
      if (!paragraph) return;
      paragraph.classList.add("is-reading");
      var rect = paragraph.getBoundingClientRect();
      if (rect.top < 0 || rect.bottom > window.innerHeight - barHeight()) {
        paragraph.scrollIntoView({ block: "center", behavior: scrollBehavior() });
      }
    }

    function start() {
      run += 1;
      var mine = run;
      synth.cancel();
      var story = document.querySelector("[data-story-text]");
      var article = story.closest("article") || document;
      var parts = [article.querySelector("h1")]
        .concat(Array.prototype.slice.call(story.querySelectorAll("p:not([data-not-story])")))
        .filter(function (el) { return el && el.textContent.trim(); });
      deadline = sleepDeadline();
      var next = 0;
      progress.max = parts.length;
      progress.value = 0;

      function finish() {
        if (mine !== run) return;
        run += 1;
        light(null);
        show("idle");
      }

      function volume() {
        if (!deadline) return VOLUME;
        var leftS = (deadline - Date.now()) / 1000;
        return VOLUME * Math.min(Math.max(leftS / FADE_S, QUIETEST), 1);
      }

      function speakNext() {
        if (mine !== run) return;
        if (deadline && Date.now() >= deadline) return finish();
        if (next >= parts.length) {
          if (!deadline) return finish();
          next = 0;  // the timer is still running: from the top again, after a breath
          light(null);
          window.setTimeout(speakNext, AGAIN_PAUSE_MS);
          return;
        }
        var paragraph = parts[next];
        next += 1;
        progress.value = next;
        var utterance = new SpeechSynthesisUtterance(paragraph.textContent.trim());
        utterance.rate = 0.8;
        utterance.pitch = 0.95;
        utterance.volume = volume();
        utterance.lang = root.lang || "en";
        var voice = chosenVoice();
        if (voice) utterance.voice = voice;
        utterance.addEventListener("start", function () { if (mine === run) light(paragraph); });
        utterance.addEventListener("end", speakNext);
        utterance.addEventListener("error", finish);
        synth.speak(utterance);
      }

      show("speaking");
      speakNext();
    }

    box.addEventListener("click", function (event) {
      var button = event.target.closest("button[data-speak]");
      if (!button) return;
      var action = button.getAttribute("data-speak");
      if (action === "start") start();
      if (action === "pause") { synth.pause(); show("paused"); }
      if (action === "resume") { synth.resume(); show("speaking"); }
      if (action === "stop") { run += 1; synth.cancel(); light(null); show("idle"); }
    });
    voiceChoice.addEventListener("change", function () { store(VOICE_KEY, voiceChoice.value); });
    // A timer chosen while reading counts from now.
    sleepChoice.addEventListener("change", function () { deadline = sleepDeadline(); });
    window.addEventListener("resize", function () { if (!bar.hidden) show(buttons.pause.hidden ? "paused" : "speaking"); });
    window.addEventListener("pagehide", function () { run += 1; synth.cancel(); });
    synth.addEventListener("voiceschanged", listVoices);
    show("idle");
    listVoices();
    // No voice for the story's language, even after the browser had time to list its own.
    window.setTimeout(function () {
      if (noVoice && !voices.length) noVoice.hidden = false;
    }, NO_VOICE_GRACE_MS);
  }

  document.querySelectorAll("[data-read-aloud]").forEach(readAloud);

  // While a story is open the screen stays on (a parent reading slowly), unless turned off
  // (remembered). The browser lets go when the page is hidden; it is taken again on return,
  // and let go for good after 30 minutes (the toggle takes it for another 30).
  var KEEP_ON_KEY = "keep_screen_on";
  var KEEP_ON_MS = 30 * 60 * 1000;

  function keepScreenOn(button) {
    if (!("wakeLock" in navigator)) return;
    var lock = null;
    var until = 0;
    var timer = 0;

    function show() {
      button.setAttribute("aria-pressed", String(lock !== null));
    }

    function take() {
      if (lock || Date.now() >= until || document.visibilityState !== "visible") return;
      navigator.wakeLock.request("screen").then(function (taken) {
        if (Date.now() >= until) { taken.release(); return; }
        lock = taken;
        taken.addEventListener("release", function () {
          if (lock === taken) lock = null;
          show();
        });
        show();
      }, show);
    }

    function letGo() {
      until = 0;
      window.clearTimeout(timer);
      if (lock) lock.release();
      lock = null;
      show();
    }

    function keepOn() {
      until = Date.now() + KEEP_ON_MS;
      window.clearTimeout(timer);
      timer = window.setTimeout(letGo, KEEP_ON_MS);
      take();
    }

    button.addEventListener("click", function () {
      var on = button.getAttribute("aria-pressed") !== "true";
      store(KEEP_ON_KEY, on ? "on" : "off");
      if (on) keepOn(); else letGo();
    });
    document.addEventListener("visibilitychange", take);
    button.hidden = false;
    if (stored(KEEP_ON_KEY) !== "off") keepOn(); else show();
  }

  document.querySelectorAll("[data-wake-lock]").forEach(keepScreenOn);
})();
