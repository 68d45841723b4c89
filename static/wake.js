/* The screen kept on: one wake lock for the page, held while anything on it needs the
   screen (a story being written on a card, a story on screen for 30 minutes, a story read
   aloud, the story page's "Keep the screen on") and let go once nothing does. The browser
   lets go when the page is hidden; it is taken again on return while still needed. A device
   without a wake lock is left alone. Loaded after app.js (where there is one: a shared page
   has none) and before reading.js, which asks for it while reading. */
(function () {
  "use strict";
  var bedtime = window.bedtime = window.bedtime || {};
  var stored = bedtime.stored || function () { return null; };
  var store = bedtime.store || function () {};
  var supported = "wakeLock" in navigator;
  var needs = {};  // reason -> whether it needs the screen on now
  var lock = null;
  var asking = false;
  var watchers = [];  // called whenever the lock is taken or let go

  function needed() {
    return Object.keys(needs).some(function (reason) { return needs[reason]; });
  }

  function changed() {
    watchers.forEach(function (watcher) { watcher(); });
  }

  function take() {
    if (lock || asking || !needed() || document.visibilityState !== "visible") return;
    asking = true;
    navigator.wakeLock.request("screen").then(function (taken) {
      asking = false;
      if (!needed()) {  // let go of while it was asked for
        taken.release();
        return;
      }
      lock = taken;
      taken.addEventListener("release", function () {
        if (lock === taken) lock = null;
        changed();
      });
      changed();
    }, function () {
      asking = false;
      changed();
    });
  }

  function need(reason, on) {
    if (!supported) return;
    needs[reason] = Boolean(on);
    if (needed()) {
      take();
    } else if (lock) {
      var held = lock;
      lock = null;
      held.release();
      changed();
    }
  }

  if (supported) document.addEventListener("visibilitychange", take);
  bedtime.screen = { need: need };

  // A story on screen (a card's words, written or so far; the job page's): kept on for
  // SHOWN_MS from when it came, or from the page's return into view, while the parent
  // reads it; let go when the page is hidden. The story page has its own toggle below.
  var SHOWN_MS = 30 * 60 * 1000;
  var shownTimer = 0;
  var shown = false;  // the 30 minutes are running

  function storyOnScreen() {
    return document.querySelector("[data-wake-lock]") === null &&
      document.querySelector(".job-card .job-draft") !== null;
  }

  function watchStory(afresh) {
    if (document.visibilityState !== "visible" || !storyOnScreen()) {
      shown = false;
      window.clearTimeout(shownTimer);
      need("story", false);
    } else if (afresh || !shown) {
      shown = true;
      window.clearTimeout(shownTimer);
      shownTimer = window.setTimeout(function () { need("story", false); }, SHOWN_MS);
      need("story", true);
    }
  }

  // A story being written on a card (waiting or being written: the card still polls).
  // After settling: htmx keeps a replaced card's old class until then. Once written, its
  // 30 minutes on screen start.
  var writing = false;
  function watchWriting() {
    var now = document.querySelector(
      ".job-card.status-pending[hx-trigger], .job-card.status-running[hx-trigger]") !== null;
    watchStory(writing && !now);
    writing = now;
    need("writing", now);
  }

  watchWriting();
  document.addEventListener("htmx:afterSettle", watchWriting);
  document.addEventListener("visibilitychange", function () {
    watchStory(document.visibilityState === "visible");
  });

  // The story page's toggle: on unless turned off (remembered), and let go after 30 minutes
  // (a tap takes it for another 30). Pressed while it is on and the lock is held.
  var KEEP_ON_KEY = "keep_screen_on";
  var KEEP_ON_MS = 30 * 60 * 1000;

  function keepScreenOn(button) {
    if (!supported) return;
    var on = false;
    var timer = 0;

    function show() {
      button.setAttribute("aria-pressed", String(on && lock !== null));
    }

    function turn(value) {
      on = value;
      window.clearTimeout(timer);
      if (on) timer = window.setTimeout(function () { turn(false); }, KEEP_ON_MS);
      need("asked", on);
      show();
    }

    watchers.push(show);
    button.addEventListener("click", function () {
      var value = button.getAttribute("aria-pressed") !== "true";
      store(KEEP_ON_KEY, value ? "on" : "off");
      turn(value);
    });
    button.hidden = false;
    turn(stored(KEEP_ON_KEY) !== "off");
  }

  document.querySelectorAll("[data-wake-lock]").forEach(keepScreenOn);
})();
