/* Small enhancements; every page works without this file. No inline script anywhere,
   so a strict Content-Security-Policy can apply. */
(function () {
  "use strict";
  var root = document.documentElement;
  var YEAR_S = 31536000;
  var SIZES = { min: 1, max: 5 };

  function remember(name, value) {
    document.cookie = name + "=" + value + "; path=/; max-age=" + YEAR_S + "; samesite=lax";
  }

  // Theme and text size: applied at once and kept in the cookies the server reads too
  // (without JavaScript, the same buttons post the form and the server sets them).
  document.addEventListener("submit", function (event) {
    var form = event.target;
    var button = event.submitter;
    if (!form.matches("form[data-preferences]") || !button) return;
    event.preventDefault();
    if (button.name === "theme") {
      root.setAttribute("data-theme", button.value);
      remember("theme", button.value);
    } else if (button.name === "text_size") {
      var size = Number(root.getAttribute("data-text-size")) || 3;
      size = Math.min(Math.max(size + (button.value === "larger" ? 1 : -1), SIZES.min), SIZES.max);
      root.setAttribute("data-text-size", String(size));
      remember("text_size", size);
    }
  });

  // An idea chip fills the prompt in place (without JavaScript it reloads the form filled).
  document.addEventListener("click", function (event) {
    var chip = event.target.closest("a[data-idea]");
    var form = chip && chip.closest("form");
    if (!form || !form.elements.prompt) return;
    event.preventDefault();
    form.elements.prompt.value = chip.getAttribute("data-idea");
    form.elements.prompt.focus();
  });

  // Read aloud with the browser's own voice: slow and soft, paragraph by paragraph
  // (long utterances stall in some browsers). Hidden where speech synthesis is missing.
  function readAloud(box) {
    if (!("speechSynthesis" in window) || typeof SpeechSynthesisUtterance !== "function") return;
    var synth = window.speechSynthesis;
    var buttons = {};
    var run = 0;
    box.querySelectorAll("button[data-speak]").forEach(function (b) {
      buttons[b.getAttribute("data-speak")] = b;
    });

    function show(state) {
      buttons.start.hidden = state !== "idle";
      buttons.pause.hidden = state !== "speaking";
      buttons.resume.hidden = state !== "paused";
      buttons.stop.hidden = state === "idle";
    }

    function voice() {
      var lang = (root.lang || "en").toLowerCase();
      var voices = synth.getVoices().filter(function (v) {
        return v.lang.toLowerCase().indexOf(lang) === 0;
      });
      return voices.filter(function (v) { return v.localService; })[0] || voices[0] || null;
    }

    function start() {
      run += 1;
      var mine = run;
      synth.cancel();
      var parts = [document.querySelector(".story-head h1")]
        .concat(Array.prototype.slice.call(document.querySelectorAll("[data-story-text] p")))
        .map(function (el) { return el ? el.textContent.trim() : ""; })
        .filter(Boolean);
      var chosen = voice();
      parts.forEach(function (text, i) {
        var utterance = new SpeechSynthesisUtterance(text);
        utterance.rate = 0.8;
        utterance.pitch = 0.95;
        utterance.volume = 0.8;
        utterance.lang = root.lang || "en";
        if (chosen) utterance.voice = chosen;
        function finish() { if (mine === run) show("idle"); }
        if (i === parts.length - 1) utterance.addEventListener("end", finish);
        utterance.addEventListener("error", finish);
        synth.speak(utterance);
      });
      show("speaking");
    }

    box.addEventListener("click", function (event) {
      var button = event.target.closest("button[data-speak]");
      if (!button) return;
      var action = button.getAttribute("data-speak");
      if (action === "start") start();
      if (action === "pause") { synth.pause(); show("paused"); }
      if (action === "resume") { synth.resume(); show("speaking"); }
      if (action === "stop") { run += 1; synth.cancel(); show("idle"); }
    });
    window.addEventListener("pagehide", function () { synth.cancel(); });
    show("idle");
    box.hidden = false;
  }

  document.querySelectorAll("[data-read-aloud]").forEach(readAloud);

  // htmx answers that are not meant for the page. An error answer is swapped in only where
  // the server addressed it (HX-Retarget: the story form's 422/429/503 with their messages).
  // Any other (a PaaS router's "Application error" page during a restart, the app's own 503
  // page during a database blip) leaves the element as it was: a status card keeps polling,
  // slower after a few failures and saying so; a form says its tap did not get through.
  var FAILURES_BEFORE_BACKOFF = 3;
  var BACKOFF_TRIGGER = "every 10s";
  var POLL_TIMEOUT_MS = 10000;  // a poll nobody answers counts as failed
  var failedPolls = new WeakMap();

  function polls(elt) {
    return /^every\s/.test((elt.getAttribute && elt.getAttribute("hx-trigger")) || "");
  }

  document.addEventListener("htmx:beforeSwap", function (event) {
    var xhr = event.detail.xhr;
    if (xhr.status < 400 || xhr.getResponseHeader("HX-Retarget")) return;
    event.detail.shouldSwap = false;
    event.detail.isError = true;  // htmx:responseError follows
  });

  document.addEventListener("htmx:configRequest", function (event) {
    if (polls(event.detail.elt) && !event.detail.timeout) event.detail.timeout = POLL_TIMEOUT_MS;
  });

  // A poll that failed: the card stays as it is. After a few failures in a row it polls
  // less often and shows a note; the next good answer replaces the card with the server's
  // own (every 3 s again, no note), so nothing here has to undo it.
  function pollFailed(card) {
    var count = (failedPolls.get(card) || 0) + 1;
    failedPolls.set(card, count);
    if (count < FAILURES_BEFORE_BACKOFF || card.getAttribute("hx-trigger") === BACKOFF_TRIGGER) {
      return;
    }
    card.setAttribute("hx-trigger", BACKOFF_TRIGGER);
    htmx.process(card);  // its attributes changed: htmx restarts the polling at the new pace
    var note = document.createElement("p");
    note.className = "job-hint";
    note.setAttribute("role", "status");
    note.setAttribute("data-reconnecting", "");
    card.appendChild(note);
    // Written once the live region is in the page, so that it is announced.
    window.setTimeout(function () { note.textContent = "Reconnecting…"; }, 100);
  }

  // Any other request that failed ("Try again", the favourite star, the story form when
  // the answer is not the app's): the control stays, with a short sentence in its form.
  function requestFailed(elt) {
    var form = elt.closest && elt.closest("form");
    if (!form) return;
    var note = form.querySelector("[data-request-failed]");
    if (!note) {
      note = document.createElement("p");
      note.className = "notice";
      note.setAttribute("role", "alert");
      note.setAttribute("data-request-failed", "");
      form.appendChild(note);
    }
    note.textContent = "That didn’t get through. Please try again in a moment.";
  }

  ["htmx:responseError", "htmx:sendError", "htmx:timeout"].forEach(function (name) {
    document.addEventListener(name, function (event) {
      var elt = event.detail.elt;
      if (polls(elt)) pollFailed(elt); else requestFailed(elt);
    });
  });

  document.addEventListener("htmx:beforeRequest", function (event) {
    var form = event.detail.elt.closest && event.detail.elt.closest("form");
    var note = form && form.querySelector("[data-request-failed]");
    if (note) note.remove();
  });
})();
