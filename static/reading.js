/* Read aloud with the browser's own voice: on the story page, on a card once its story
   is written (cards arrive by htmx: bound as they load), and on a shared story's page.
   Loaded after app.js and wake.js, whose helpers it shares; a shared page has no app.js (it
   holds nothing of the household), so it reads without it: no voice remembered, the screen
   kept on by wake.js while it reads. The pages work without this file. */
(function () {
  "use strict";
  var bedtime = window.bedtime || {};
  var stored = bedtime.stored || function () { return null; };
  var store = bedtime.store || function () {};
  var scrollBehavior = bedtime.scrollBehavior || function () {  // as app.js's
    return window.matchMedia("(prefers-reduced-motion: reduce)").matches ? "auto" : "smooth";
  };
  var screen = bedtime.screen || { need: function () {} };
  var speech = "speechSynthesis" in window && typeof SpeechSynthesisUtterance === "function";
  var synth = speech ? window.speechSynthesis : null;
  var html = document.documentElement;

  // Slow and soft, one paragraph at a time (long utterances stall in some browsers), the
  // paragraph being read lit and kept in view. While reading, the controls are one bar
  // pinned to the foot of the screen (the page padded so the story's end clears it), and the
  // screen is kept on. The voices are those for the story's language; with none (some list
  // theirs late: voiceschanged), the bar says so and how to add one. Notes that are not the
  // story ([data-not-story]) are never read. The sleep timer reads the story again until
  // its time is up, each paragraph softer in the last minute. One reader at a time.
  var VOICE_KEY = "voice";
  var VOLUME = 0.8;
  var FADE_S = 60;
  var QUIETEST = 0.15;  // of VOLUME, for the last paragraph before the timer stops
  var AGAIN_PAUSE_MS = 2500;  // between the end of the story and its beginning again
  var readers = [];  // one a read-aloud box on the page
  var reading = null;  // the reader whose bar is shown, if any

  function readAloud(box) {
    var article = box.closest("article") || document;
    var story = article.querySelector("[data-story-text]");
    if (!story || readers.some(function (r) { return r.box === box; })) return;
    var lang = story.lang || "en";
    var buttons = {};
    var voiceChoice = box.querySelector("select[data-voice]");
    var sleepChoice = box.querySelector("select[data-sleep]");
    var bar = box.querySelector("[data-read-bar]");
    var progress = box.querySelector("[data-read-progress]");
    var noVoice = box.querySelector("[data-no-voice]");
    var run = 0;
    var voices = [];
    var deadline = 0;  // of the sleep timer, while reading (0: at the end of the story)
    var me = { box: box, stop: stop, refresh: refresh, listVoices: listVoices };
    box.querySelectorAll("button[data-speak]").forEach(function (b) {
      buttons[b.getAttribute("data-speak")] = b;
    });

    function show(state) {
      buttons.start.hidden = state === "speaking" || state === "paused";
      buttons.pause.hidden = state !== "speaking";
      buttons.resume.hidden = state !== "paused";
      bar.hidden = state === "idle";
      bar.classList.toggle("is-no-voice", state === "no-voice");
      noVoice.hidden = state !== "no-voice";
      if (state !== "idle") reading = me;
      if (reading !== me) return;  // another reader has the page
      if (state === "idle") reading = null;
      html.classList.toggle("is-reading-aloud", state !== "idle");
      refresh();
      screen.need("reading", state === "speaking" || state === "paused");
    }

    function refresh() {
      html.style.setProperty("--read-bar-height", barHeight() + "px");
    }

    function barHeight() {
      return bar.hidden ? 0 : bar.offsetHeight;
    }

    function sleepDeadline() {
      var minutes = Number(sleepChoice.value) || 0;
      return minutes ? Date.now() + minutes * 60000 : 0;
    }

    // The voices for the story's language, the remembered one chosen.
    function listVoices() {
      var wanted = lang.toLowerCase().split("-")[0];
      var fitting = synth.getVoices().filter(function (v) {
        return (v.lang || "").toLowerCase().replace("_", "-").split("-")[0] === wanted;
      });
      if (!fitting.length) return;
      voices = fitting;
      var chosen = voiceChoice.value || stored(VOICE_KEY);
      var local = voices.filter(function (v) { return v.localService; })[0] || voices[0];
      voiceChoice.textContent = "";
      voices.forEach(function (v) { voiceChoice.add(new Option(v.name, v.voiceURI)); });
      var known = voices.some(function (v) { return v.voiceURI === chosen; });
      voiceChoice.value = known ? chosen : local.voiceURI;
      if (!noVoice.hidden) show("idle");  // a voice after all
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

    function stop() {
      run += 1;
      if (synth) synth.cancel();
      light(null);
      show("idle");
    }

    function start() {
      run += 1;
      var mine = run;
      synth.cancel();
      // The title (a page's heading, or the card's first line), then the story.
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
        if (!box.isConnected || (deadline && Date.now() >= deadline)) return finish();
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
        utterance.lang = lang;
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
      if (action === "start") {
        if (reading && reading !== me) reading.stop();
        if (voices.length) {
          start();
        } else {  // said in the bar, the button kept in view above it
          show("no-voice");
          buttons.start.scrollIntoView({ block: "nearest", behavior: scrollBehavior() });
        }
      }
      if (action === "pause") { synth.pause(); show("paused"); }
      if (action === "resume") { synth.resume(); show("speaking"); }
      if (action === "stop") stop();
    });
    // The how-to opened or closed: the page's padding follows the bar's height.
    noVoice.addEventListener("toggle", refresh, true);
    voiceChoice.addEventListener("change", function () { store(VOICE_KEY, voiceChoice.value); });
    // A timer chosen while reading counts from now.
    sleepChoice.addEventListener("change", function () { deadline = sleepDeadline(); });
    readers.push(me);
    show("idle");
    if (synth) listVoices();
    box.hidden = false;
  }

  function bindWithin(elt) {
    if (!elt.querySelectorAll) return;
    if (elt.matches("[data-read-aloud]")) readAloud(elt);
    elt.querySelectorAll("[data-read-aloud]").forEach(readAloud);
  }

  bindWithin(document.documentElement);
  document.addEventListener("htmx:load", function (event) { bindWithin(event.detail.elt); });
  window.addEventListener("resize", function () { if (reading) reading.refresh(); });
  window.addEventListener("pagehide", function () { if (reading) reading.stop(); });
  if (synth) {
    synth.addEventListener("voiceschanged", function () {
      readers = readers.filter(function (r) { return r.box.isConnected; });
      readers.forEach(function (r) { r.listVoices(); });
    });
  }
})();
