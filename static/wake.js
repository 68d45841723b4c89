/* The screen kept on: one wake lock for the page, held while anything on it needs the
   screen (a story being written on a card, a story read aloud, the story page's "Keep the
   screen on") and let go once nothing does. The browser lets go when the page is hidden;
   it is taken again on return while still needed. A device without a wake lock is left
   alone. Loaded after app.js and before reading.js, which asks for it while reading. */
(function () {
  "use strict";
  var stored = window.bedtime.stored;
  var store = window.bedtime.store;
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
  window.bedtime.screen = { need: need };

  // A story being written on a card (waiting or being written: the card still polls).
  // After settling: htmx keeps a replaced card's old class until then.
  function watchWriting() {
    need("writing", document.querySelector(
      ".job-card.status-pending[hx-trigger], .job-card.status-running[hx-trigger]") !== null);
  }

  watchWriting();
  document.addEventListener("htmx:afterSettle", watchWriting);

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
