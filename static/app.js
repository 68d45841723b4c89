/* Small enhancements; every page works without this file. No inline script anywhere,
   so a strict Content-Security-Policy can apply. */
(function () {
  "use strict";
  var root = document.documentElement;
  var YEAR_S = 31536000;
  var SIZES = { min: 1, max: 5 };

  var THEME_COLORS = { light: "#f6efe1", dark: "#16120e", night: "#0c0906" };
  var reducedMotion = window.matchMedia("(prefers-reduced-motion: reduce)");

  // The page's language: the server hands its words for these few sentences in the
  // page itself (data-words, none in English); gettext("...") is what make messages finds.
  var WORDS = {};
  try { WORDS = JSON.parse(root.getAttribute("data-words") || "{}"); } catch (e) { WORDS = {}; }
  function gettext(text, values) {
    var said = WORDS[text] || text;
    return values ? said.replace(/%\((\w+)\)[sd]/g, function (all, name) {
      return String(values[name]);
    }) : said;
  }

  function remember(name, value) {
    document.cookie = name + "=" + value + "; path=/; max-age=" + YEAR_S + "; samesite=lax";
  }

  // Settings only this browser needs (the voice, the chime): localStorage, where allowed.
  function stored(name) {
    try { return window.localStorage.getItem(name); } catch (error) { return null; }
  }

  function store(name, value) {
    try { window.localStorage.setItem(name, value); } catch (error) { /* private mode */ }
  }

  function scrollBehavior() {
    return reducedMotion.matches ? "auto" : "smooth";
  }

  // For the reading tools (wake.js, reading.js), which run after this one.
  window.bedtime = { stored: stored, store: store, scrollBehavior: scrollBehavior };

  // htmx (static/, pinned) comes when the page needs it: at once where something polls
  // (a story being written, a picture being drawn), else at the first tap, key or focus.
  // A page that is only read (an evening's home, the library, a story) fetches and runs
  // none of it. Every form works without it; one sent before htmx is there waits for it
  // (a moment) and is sent then, through htmx; if htmx cannot be had (the server not
  // answering), the form says its tap did not get through, as htmx's own failures do.
  // htmx starts itself only once the document is complete (injected while it is
  // "interactive", it would wait for a DOMContentLoaded that has passed), so it is added
  // from the window's load on.
  var HTMX_SRC = document.currentScript && document.currentScript.getAttribute("data-htmx");
  var HTMX_WAIT_MS = 4000;  // then a form waiting for htmx is sent the plain way
  var htmxAsked = false;
  var htmxWaiting = [];  // called with true once htmx is there, false if it could not come
  function whenLoaded(then) {
    if (document.readyState === "complete") then();
    else window.addEventListener("load", then, { once: true });
  }
  function htmxReady(then) {
    if (window.htmx) { then(true); return; }
    htmxWaiting.push(then);
    if (htmxAsked || !HTMX_SRC) return;
    htmxAsked = true;
    whenLoaded(function () {
      var script = document.createElement("script");
      script.src = HTMX_SRC;
      script.onload = script.onerror = function () {
        if (!window.htmx) {  // asked again at the next tap
          htmxAsked = false;
          script.remove();
        }
        htmxWaiting.splice(0).forEach(function (waiting) { waiting(Boolean(window.htmx)); });
      };
      document.head.appendChild(script);
    });
  }
  function wantHtmx() { htmxReady(function () {}); }
  if (document.querySelector("[hx-trigger*=every], [hx-trigger^=load]")) wantHtmx();
  ["pointerdown", "keydown", "focusin"].forEach(function (type) {
    document.addEventListener(type, wantHtmx, { capture: true, passive: true });
  });
  // A form (or a link) htmx would send, used before htmx is there: held, then sent.
  function heldUntilHtmx(event, elt, send, plain) {
    if (window.htmx || !HTMX_SRC) return;
    event.preventDefault();
    event.stopImmediatePropagation();
    if (elt.hasAttribute("data-held")) return;  // a second tap while it waits: one send
    elt.setAttribute("data-held", "");
    var done = false;
    function once(how) {
      if (done) return;
      done = true;
      elt.removeAttribute("data-held");
      how();
    }
    var slow = window.setTimeout(function () { once(plain); }, HTMX_WAIT_MS);
    htmxReady(function (ready) {
      window.clearTimeout(slow);
      once(ready ? send : function () { requestFailed(elt, false); });
    });
  }
  document.addEventListener("submit", function (event) {
    var form = event.target;
    if (!form.matches || !form.matches("form[hx-post], form[hx-get]")) return;
    var submitter = event.submitter || null;
    heldUntilHtmx(event, form, function () { form.requestSubmit(submitter); },
                  function () { HTMLFormElement.prototype.submit.call(form); });
  }, true);
  document.addEventListener("click", function (event) {
    var link = event.target.closest && event.target.closest("a[hx-get]");
    if (!link || event.button !== 0 || event.ctrlKey || event.metaKey || event.shiftKey) return;
    heldUntilHtmx(event, link, function () { link.click(); },
                  function () { window.location.href = link.href; });
  }, true);
  // A box that searches as it is typed in: what was typed before htmx came is searched.
  // Through its "search" trigger: htmx takes the value it finds as the last one seen, so
  // an "input changed" event for that same value would send nothing.
  document.addEventListener("htmx:load", function (event) {
    var typing = document.activeElement;
    if (event.detail.elt === document.body && typing && typing.matches &&
        typing.matches("input[hx-trigger*=search]") && typing.value) {
      typing.dispatchEvent(new Event("search", { bubbles: true }));
    }
  });

  // The one-tap buttons close with the story form (the day's limit, the month's budget):
  // a form that comes back closed (a refusal, or the fresh form after a story) closes them
  // too, before anyone taps one.
  document.addEventListener("htmx:load", function () {
    if (!document.querySelector("#story-form .form-fields[disabled]")) return;
    document.querySelectorAll(".child-buttons button").forEach(function (button) {
      button.disabled = true;
    });
  });

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
    showPreferences(form);
  });

  // The menu says what is chosen: the theme pressed, the size as "3 of 5", and A− or A+
  // disabled at its end (handing the focus to the other, so the keyboard keeps its place).
  function showPreferences(form) {
    var theme = root.getAttribute("data-theme");
    var size = Number(root.getAttribute("data-text-size")) || 3;
    form.querySelectorAll("button[name=theme]").forEach(function (button) {
      button.setAttribute("aria-pressed", String(button.value === theme));
    });
    var smaller = form.querySelector("button[value=smaller]");
    var larger = form.querySelector("button[value=larger]");
    if (smaller && larger) {
      [[smaller, size <= SIZES.min, larger], [larger, size >= SIZES.max, smaller]].forEach(
        function (end) {
          var had = document.activeElement === end[0];
          end[0].disabled = end[1];
          if (end[1] && had) end[2].focus();
        }
      );
    }
    var now = form.querySelector("[data-text-size-now]");
    if (now) now.textContent = gettext("%(size)s of %(most)s", { size: size, most: SIZES.max });
    var scheme = document.querySelector("meta[name=color-scheme]");
    if (scheme) scheme.content = theme === "light" ? "light" : "dark";
    var color = document.querySelector("meta[name=theme-color]");
    if (color && THEME_COLORS[theme]) color.content = THEME_COLORS[theme];
  }

  // The header's menu closes with Escape (back to its button) or a tap elsewhere.
  document.addEventListener("keydown", function (event) {
    var menu = event.key === "Escape" &&
      document.querySelector("details[data-reading-menu][open], details[data-closes][open]");
    if (!menu) return;
    menu.open = false;
    menu.querySelector("summary").focus();
  });
  document.addEventListener("click", function (event) {
    document.querySelectorAll("details[data-reading-menu][open], details[data-closes][open]")
      .forEach(function (menu) {
        if (!menu.contains(event.target)) menu.open = false;
      });
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

  // Status cards. #jobs is no live region (each poll replaces its card, which would be
  // read out every 3 s): what changed is said once, here. A new card (after "Write the
  // story" or "Try again") comes into view and takes the focus; a story that becomes
  // ready says so in the page's title, and with a soft chime if that is turned on.
  var READY_TITLE = gettext("Your story is ready") + " · " + gettext("Bedtime Stories");
  var pageTitle = document.title;
  var cardStates = new Map();  // card id -> "pending" | "running" | "completed" | "ready" | "failed"
  var announcer = document.createElement("p");
  announcer.className = "visually-hidden";
  announcer.setAttribute("role", "status");
  (document.querySelector("main") || document.body).appendChild(announcer);

  function announce(text) {
    announcer.textContent = "";
    window.setTimeout(function () { announcer.textContent = text; }, 100);
  }

  function cardState(card) {
    var status = (/\bstatus-(\w+)/.exec(card.className) || [])[1] || "";
    var link = card.querySelector("a[href^='/stories/']:not([href^='/stories/jobs/'])");
    return status === "completed" && link ? "ready" : status;
  }

  function sayCard(card, state) {
    if (state === "ready") {
      var title = card.querySelector(".job-title");
      return title ? gettext("Your story is ready: %(title)s", { title: title.textContent.trim() })
        : gettext("Your story is ready.");
    }
    var line = card.querySelector(".job-state");
    return line ? line.textContent.replace(/\s+/g, " ").trim() : "";
  }

  // Room below a new card for it to come to the top of the screen, where its story will
  // grow: its section is made at least that long (min-height: once the story is longer,
  // it adds nothing), so what follows it (the newest stories) waits below the screen and
  // is not pushed down in view as the words come.
  function roomToRead(card) {
    var room = card.closest(".in-progress") || card.closest("main");
    if (!room) return;
    var need = card.getBoundingClientRect().top - room.getBoundingClientRect().top +
      window.innerHeight;
    if (room.offsetHeight < need) room.style.minHeight = Math.ceil(need) + "px";
  }

  // The room is made as the story is asked for (a tap: nothing that moves then counts as
  // the page jumping), so the card, however long its answer takes, comes into space kept
  // for it and pushes nothing down in view.
  // A page left open all evening stays short: as a new story is asked for (the tap: what
  // moves then is its answer), the cards of the stories written before it leave (each is in
  // the library, and among the newest stories when the page is opened again), but never
  // one being read (the focus in it, or read aloud). Stories cut short stay, with Finish.
  function earlierStoriesLeave() {
    document.querySelectorAll("#jobs > .job-card.status-completed:not([hx-trigger])")
      .forEach(function (done) {
        if (done.contains(document.activeElement) ||
            done.querySelector("[data-read-bar]:not([hidden])")) return;
        cardStates.delete(done.id);
        done.remove();
      });
  }

  document.addEventListener("htmx:beforeRequest", function (event) {
    if (event.detail.elt.id !== "story-form") return;
    earlierStoriesLeave();
    var room = document.querySelector(".in-progress");
    if (!room) return;
    room.style.minHeight = "";
    room.classList.add("has-room");
    room.style.minHeight = Math.ceil(room.offsetHeight + window.innerHeight) + "px";
  });
  // Refused, or not sent: no card came, and the room goes (after a swap: htmx says "after
  // the request" once its answer is on the page).
  document.addEventListener("htmx:afterRequest", function (event) {
    var room = document.querySelector(".in-progress.has-room");
    if (!room || event.detail.elt.id !== "story-form" || room.querySelector(".job-card")) return;
    room.classList.remove("has-room");
    room.style.minHeight = "";
  });

  // The home page's reading tools (wake.js, then reading.js) load once a card that needs
  // them is there (a story being written, or shown whole): an evening's home of short
  // lines does without them, and its first visit is lighter.
  var readingToolsLoaded = false;
  function readingTools() {
    var jobs = document.querySelector("[data-reading-tools]");
    if (readingToolsLoaded || !jobs || !jobs.querySelector(".job-card:not(.job-compact)")) {
      return;
    }
    readingToolsLoaded = true;
    jobs.getAttribute("data-reading-tools").split(" ").forEach(function (src) {
      var script = document.createElement("script");
      script.src = src;
      script.async = false;  // in order: reading.js asks wake.js for the screen
      document.head.appendChild(script);
    });
  }
  readingTools();
  document.addEventListener("htmx:load", readingTools);

  function cardArrived(card, state) {
    document.title = pageTitle;
    card.setAttribute("tabindex", "-1");
    card.focus({ preventScroll: true });
    roomToRead(card);
    // To the top (its story grows below it), unless it is already near there.
    var rect = card.getBoundingClientRect();
    if (rect.top < 0 || rect.top > window.innerHeight / 4) {
      card.scrollIntoView({ block: "start", behavior: scrollBehavior() });
    }
    announce(gettext("Story requested.") + " " + sayCard(card, state));
  }

  function storyReady() {
    document.title = READY_TITLE;
    chime();
  }

  // A card that finishes a story cut short took the place of that story's card, its words
  // where they were: it says so, and leaves the page (and the reader) where they are.
  function cardContinued(card, state) {
    document.title = pageTitle;
    card.setAttribute("tabindex", "-1");
    card.focus({ preventScroll: true });
    announce(gettext("Finishing the story.") + " " + sayCard(card, state));
  }

  function watchCards(initial) {
    document.querySelectorAll(".job-card[id]").forEach(function (card) {
      var state = cardState(card);
      var before = cardStates.get(card.id);
      cardStates.set(card.id, state);
      if (initial || before === state) return;
      var continues = card.getAttribute("data-continues");
      if (before === undefined && continues && cardStates.has(continues) &&
          !document.getElementById(continues)) {
        cardStates.delete(continues);
        cardContinued(card, state);
      } else if (before === undefined) cardArrived(card, state);
      else announce(sayCard(card, state));
      if (state === "ready") storyReady();
    });
  }

  // One element per id: a card swapped in (a stop, a finish, a try again tapped on a card
  // left on the screen from before) whose job's card is on the page already takes its place,
  // where the reader is, and the other goes.
  function oneCardPerJob(card) {
    document.querySelectorAll(".job-card[id]").forEach(function (other) {
      if (other !== card && other.id === card.id) other.remove();
    });
  }

  // A tap that spans a poll's swap is lost: the browser drops a click whose pressed element
  // was moved meanwhile (hx-preserve moves "Stop…" into the new card), so Stop… or "Yes,
  // stop it" did nothing about one tap in thirty. While a press on a card is under way, its
  // poll's answer is not swapped in; the next poll brings the news. A tap takes well under
  // PRESS_MS; a finger resting on the card for longer holds nothing up.
  var PRESS_MS = 1000;
  var pressed = null;  // {card, at}: the card a press began on, and when
  document.addEventListener("pointerdown", function (event) {
    var card = event.target.closest && event.target.closest(".job-card");
    pressed = card ? { card: card, at: Date.now() } : null;
  }, true);
  ["pointerup", "pointercancel"].forEach(function (name) {
    document.addEventListener(name, function () { pressed = null; }, true);
  });
  document.addEventListener("htmx:beforeSwap", function (event) {
    if (pressed && event.detail.target === pressed.card && Date.now() - pressed.at < PRESS_MS &&
        event.detail.requestConfig.verb === "get") event.detail.shouldSwap = false;
  });

  // A card's own buttons (stop, finish, try again) replace it: the page is kept at least as
  // tall as it was, so a shorter card cannot pull the page up under the reader.
  document.addEventListener("htmx:beforeSwap", function (event) {
    var target = event.detail.target;
    var main = target && target.closest && target.matches(".job-card") && target.closest("main");
    if (!main || event.detail.requestConfig.verb !== "post") return;
    main.style.minHeight = Math.ceil(Math.max(main.offsetHeight,
                                              parseFloat(main.style.minHeight) || 0)) + "px";
  });

  // The card in view stays where it is when another one above it changes: two stories
  // written at once, the earlier one still growing (and getting its picture) above the
  // one being read. The page has no scroll anchoring (style.css), so the scroll is moved
  // by what the swap added above, in the same turn, before anything is painted. The card
  // in view: the last one that begins above the screen's upper third (the one read
  // there), else the first one on the screen.
  function cardInView() {
    var line = window.innerHeight / 3;
    var chosen = null;
    document.querySelectorAll(".job-card[id]").forEach(function (card) {
      var rect = card.getBoundingClientRect();
      if (rect.bottom <= 0 || rect.top >= window.innerHeight) return;
      if (chosen === null || rect.top <= line) chosen = card;
    });
    return chosen;
  }

  var keptInView = null;  // {id, top}: the card to hold still through the swap under way
  var heldAt = null;  // {id, top}: where it was held last, to the fraction of a pixel
  // Whatever the swap: its own card's (whose top only what is above it can move), or one
  // above, or a part of the page above swapped out of band with it.
  document.addEventListener("htmx:beforeSwap", function (event) {
    keptInView = null;
    var card = cardInView();
    if (!event.detail.shouldSwap || !card) return;
    var top = card.getBoundingClientRect().top;
    // Where it was held, unless the reader has scrolled since: a scroll is whole pixels,
    // and the rounding of one hold is not carried into the next.
    if (heldAt && heldAt.id === card.id && Math.abs(heldAt.top - top) < 1) top = heldAt.top;
    keptInView = { id: card.id, top: top };
  });
  document.addEventListener("htmx:afterSwap", function () {
    var kept = keptInView;
    keptInView = null;
    var card = kept && document.getElementById(kept.id);
    if (!card) return;
    var moved = card.getBoundingClientRect().top - kept.top;
    if (Math.abs(moved) < 0.5) return;
    // The room kept below the cards (roomToRead) may hold the page's height as a card
    // above grows: it grows by what the scroll needs, and a pixel more: scrollHeight is
    // rounded, and a page's end a fraction short of it stopped the scroll up to a pixel
    // early (the card moved by that much).
    var room = card.closest(".in-progress") || card.closest("main");
    var short = window.scrollY + moved + window.innerHeight -
      document.documentElement.scrollHeight;
    if (room && short > -1) {
      room.style.minHeight = Math.ceil(room.offsetHeight + short + 1) + "px";
    }
    window.scrollBy({ top: moved, behavior: "instant" });
    heldAt = kept;
  });

  watchCards(true);
  // After settling: htmx keeps a replaced card's old class until then.
  document.addEventListener("htmx:afterSettle", function (event) {
    var swapped = event.target;
    if (swapped && swapped.matches && swapped.matches(".job-card[id]")) oneCardPerJob(swapped);
    watchCards(false);
  });

  // The chime: two soft notes made with Web Audio (no sound file), off unless turned on
  // here. A browser lets a page make sound only after a tap, so the first tap wakes it.
  var CHIME_KEY = "chime";
  var audio = null;

  function chimeOn() {
    return stored(CHIME_KEY) === "on" && typeof window.AudioContext === "function";
  }

  function wakeAudio() {
    if (!chimeOn()) return;
    if (!audio) audio = new window.AudioContext();
    if (audio.state === "suspended") audio.resume().catch(function () {});
  }

  function chime() {
    if (!chimeOn() || !audio) return;
    var play = function () {
      var at = audio.currentTime + 0.05;
      [659.25, 987.77].forEach(function (frequency, i) {  // E5, then B5
        var note = audio.createOscillator();
        var gain = audio.createGain();
        var start = at + i * 0.35;
        note.type = "sine";
        note.frequency.value = frequency;
        gain.gain.setValueAtTime(0.0001, start);
        gain.gain.exponentialRampToValueAtTime(0.12, start + 0.03);
        gain.gain.exponentialRampToValueAtTime(0.0001, start + 1.6);
        note.connect(gain);
        gain.connect(audio.destination);
        note.start(start);
        note.stop(start + 1.7);
      });
    };
    if (audio.state === "running") play();
    else audio.resume().then(play, function () {});
  }

  document.addEventListener("click", wakeAudio, true);
  document.addEventListener("keydown", wakeAudio, true);

  document.querySelectorAll("[data-chime-setting]").forEach(function (setting) {
    if (typeof window.AudioContext !== "function") return;
    var box = setting.querySelector("input[data-chime]");
    box.checked = chimeOn();
    box.addEventListener("change", function () {
      store(CHIME_KEY, box.checked ? "on" : "off");
      if (!box.checked) return;
      wakeAudio();
      chime();  // so a parent hears how soft it is
    });
    setting.hidden = false;
  });

  // The progress bar between polls. The server's figure (words written against words
  // expected) arrives every 3 s; in between the bar moves on at the expected pace, for
  // about one poll, and by the clock since the start, never more than LEAD_PERCENT ahead
  // of the words. It never moves backwards (a replaced card starts where the old one
  // was) and stops short of 100 until the story is there. Still for reduced motion.
  // A parent reads a moving bar as "words are coming", so it moves by the clock only
  // while they do: it stands where it is from the first poll that fails (the card says
  // so, data-connection-lost), while the server says its writer went away (data-still),
  // and once the story has not grown for STALL_S (a storyteller gone quiet, the thinking
  // before the first words), and moves on when new words come.
  var LEAD_PERCENT = 10;
  var ONWARD_S = 4;
  var STALL_S = 7;  // two polls without a new word
  var RUNNING_MAX = 99;
  var TICK_MS = 250;
  var barsShown = new Map();  // card id -> the furthest its bar has been shown
  var barsSeen = new WeakMap();  // bar -> {value: the server's, at: when it arrived}
  var wordsGrew = new Map();  // card id -> {length: of its words, at: when they last grew}
  var clockSkewS = null;  // the server's clock less this one, from an answer's Date header

  // Whether the card's words grew within STALL_S (its text as the last answer had it).
  function wordsComing(card, key) {
    var draft = card && card.querySelector(".job-draft");
    var length = draft ? draft.textContent.trim().length : 0;
    var last = wordsGrew.get(key);
    if (!last || length > last.length) {
      last = { length: length, at: length > 0 ? Date.now() : -Infinity };
      wordsGrew.set(key, last);
    }
    return Date.now() - last.at < STALL_S * 1000;
  }

  function moveBars() {
    document.querySelectorAll("progress[data-started-at][data-expected-s]").forEach(function (bar) {
      if (bar.closest("[data-connection-lost]")) return;  // frozen until the server answers
      var seen = barsSeen.get(bar);
      if (!seen) {
        seen = { value: Number(bar.value) || 0, at: Date.now() };
        barsSeen.set(bar, seen);
      }
      var card = bar.closest("[id]");
      var key = card ? card.id : "";
      var value = seen.value;
      if (!reducedMotion.matches && !bar.hasAttribute("data-still") && wordsComing(card, key)) {
        var pace = 100 / Math.max(Number(bar.getAttribute("data-expected-s")) || 0, 1);
        var onward = seen.value + pace * Math.min((Date.now() - seen.at) / 1000, ONWARD_S);
        var byClock = 0;
        if (clockSkewS !== null) {
          var startedS = Number(bar.getAttribute("data-started-at")) || 0;
          byClock = Math.min(pace * (Date.now() / 1000 + clockSkewS - startedS),
                             seen.value + LEAD_PERCENT);
        }
        value = Math.max(value, Math.min(Math.max(onward, byClock), RUNNING_MAX));
      }
      value = Math.max(value, barsShown.get(key) || 0);
      barsShown.set(key, value);
      bar.value = Math.round(value * 10) / 10;
    });
  }

  moveBars();
  document.addEventListener("htmx:afterSwap", moveBars);  // before the new bar is painted
  document.addEventListener("htmx:afterRequest", function (event) {
    var xhr = event.detail.xhr;
    var date = xhr && xhr.status && Date.parse(xhr.getResponseHeader("Date") || "");
    if (date) clockSkewS = (date - Date.now()) / 1000 + 0.5;  // Date has whole seconds
  });
  window.setInterval(function () { if (!reducedMotion.matches) moveBars(); }, TICK_MS);

  // htmx answers that are not meant for the page. An error answer is swapped in only where
  // the server addressed it (HX-Retarget: the story form's 422/429/503 with their messages).
  // Any other (a PaaS router's "Application error" page during a restart, the app's own 503
  // page during a database blip) leaves the element as it was: a status card keeps polling,
  // saying so, slower after a few failures; a form says its tap did not get through.
  var FAILURES_BEFORE_BACKOFF = 3;
  var BACKOFF = 5 / 3;  // times the card's own pace: every 3 s becomes every 5 s
  var POLL_TIMEOUT_MS = 10000;  // a poll nobody answers counts as failed
  var failedPolls = new WeakMap();

  // "every 3s" -> "every 5s": the pace the server gave the card, a little slower.
  function slower(trigger) {
    var seconds = parseFloat(trigger.replace(/^every\s+/, "")) || 3;
    return "every " + Math.round(seconds * BACKOFF * 10) / 10 + "s";
  }

  function polls(elt) {
    return /^every\s/.test((elt.getAttribute && elt.getAttribute("hx-trigger")) || "");
  }

  // Why a request failed, in a parent's words: this device has no network (the browser
  // knows), or it has and the server did not answer (refused, timed out, an error page).
  function offline() { return navigator.onLine === false; }

  document.addEventListener("htmx:beforeSwap", function (event) {
    var xhr = event.detail.xhr;
    if (xhr.status < 400 || xhr.getResponseHeader("HX-Retarget")) return;
    event.detail.shouldSwap = false;
    event.detail.isError = true;  // htmx:responseError follows
  });

  document.addEventListener("htmx:configRequest", function (event) {
    if (polls(event.detail.elt) && !event.detail.timeout) event.detail.timeout = POLL_TIMEOUT_MS;
  });

  // A poll that failed: the card stays as it is and says so at once, in a note floating
  // over the page's foot (offline, or the server not answering: "Reconnecting…"), never in
  // the flow above the words, which stay where they are read; its bar stops and dims (the
  // card's "time to get cosy" is no longer news). After a few failures it polls a little
  // less often, and at once when the device is back online, so the server's first answer
  // (the story going on, or interrupted by a restart) is on the card within one poll. That
  // answer replaces the card with the server's own (every 3 s again, no note, the bar
  // moving), so nothing here has to undo it.
  function pollFailed(card) {
    var count = (failedPolls.get(card) || 0) + 1;
    failedPolls.set(card, count);
    card.setAttribute("data-connection-lost", "");
    var note = card.querySelector("[data-reconnecting]");
    if (!note) {
      note = document.createElement("p");
      note.className = "notice connection-lost";
      note.setAttribute("role", "status");
      note.setAttribute("data-reconnecting", "");
      card.appendChild(note);
    }
    var text = offline()
      ? gettext("You’re offline: this story can’t be followed until the connection is back. Reconnecting…")
      : gettext("The server isn’t answering just now, so this story can’t be followed. Reconnecting…");
    // Written once the live region is in the page (so that it is announced), and again
    // only when it says something new.
    if (note.getAttribute("data-says") !== text) {
      note.setAttribute("data-says", text);
      window.setTimeout(function () { note.textContent = text; }, count === 1 ? 100 : 0);
    }
    if (count >= FAILURES_BEFORE_BACKOFF && !card.hasAttribute("data-backed-off")) {
      card.setAttribute("data-backed-off", "");
      card.setAttribute("hx-trigger", slower(card.getAttribute("hx-trigger")));
      htmx.process(card);  // its attributes changed: htmx restarts the polling at the new pace
    }
  }

  window.addEventListener("online", function () {
    document.querySelectorAll(".job-card[data-connection-lost][hx-get]").forEach(function (card) {
      htmx.ajax("GET", card.getAttribute("hx-get"), { source: card, target: card,
                                                      swap: "outerHTML" });
    });
  });

  // Any other request that failed ("Try again", the favourite star, the story form when
  // the answer is not the app's): the control stays, with a short sentence in its form.
  function requestFailed(elt, answered) {
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
    note.textContent = offline()
      ? gettext("You’re offline, so that didn’t get through. Please try again once the connection is back.")
      : (answered ? gettext("That didn’t get through. Please try again in a moment.") :
        gettext("The server isn’t answering just now, so that didn’t get through. Please try again in a moment."));
  }

  ["htmx:responseError", "htmx:sendError", "htmx:timeout"].forEach(function (name) {
    document.addEventListener(name, function (event) {
      var elt = event.detail.elt;
      if (polls(elt)) pollFailed(elt);
      else requestFailed(elt, name === "htmx:responseError");
    });
  });

  document.addEventListener("htmx:beforeRequest", function (event) {
    var form = event.detail.elt.closest && event.detail.elt.closest("form");
    var note = form && form.querySelector("[data-request-failed]");
    if (note) note.remove();
  });

  // A refusal the server sent (the form's or a card's sentence, or a field it refused) is
  // brought into view where need be and takes the focus: on a phone it is often off
  // screen above the button that was tapped. On a page's load too (a form sent without
  // htmx, a one-tap story: the page comes back with it). Nothing moves when in view.
  function showRefusal(root) {
    if (!root || !root.querySelector) return;
    var note = root.querySelector(".notice[role=alert]") ||
      root.querySelector("[aria-invalid=true]");
    if (!note) return;
    if (!note.matches("input, textarea, select")) note.setAttribute("tabindex", "-1");
    note.focus({ preventScroll: true });
    var rect = note.getBoundingClientRect();
    if (rect.top < 0 || rect.bottom > window.innerHeight) {
      note.scrollIntoView({ block: "center", behavior: scrollBehavior() });
    }
  }

  // The page's own on load; then what htmx swaps in (not the whole page again once htmx
  // comes: that would take the focus from wherever the reader has put it since).
  showRefusal(document.body);
  document.addEventListener("htmx:load", function (event) {
    if (event.detail.elt !== document.body) showRefusal(event.detail.elt);
  });

  // The idea's counter: how many characters of the most that fit, kept as it is typed or
  // pasted (nothing is cut); past the most, the form refuses to send and says why, as the
  // server would. Counted as the server counts: the idea trimmed, in characters.
  function characters(text) { return Array.from(text.trim()).length; }

  function countIdea(box) {
    var form = box.closest("form");
    var counter = form && form.querySelector("[data-char-count]");
    var most = Number(box.getAttribute("data-max-chars")) || 0;
    if (!counter || !most) return;
    var used = characters(box.value);
    var over = used - most;
    counter.classList.toggle("over", over > 0);
    counter.textContent = over > 0
      ? gettext("%(used)s of %(most)s characters: please make it %(over)s shorter.",
                { used: used, most: most, over: over })
      : gettext("%(used)s of %(most)s characters", { used: used, most: most });
    box.setCustomValidity(over > 0
      ? gettext("That idea is %(used)d characters long, and a story's idea can be %(most)d at most. Please make it %(over)d shorter.",
                { used: used, most: most, over: over })
      : "");
  }

  // A field the server refused says so until it is changed: then its message goes (the
  // counter, or the server at the next tap, says what is wrong with it now).
  function clearRefusal(field) {
    if (field.getAttribute("aria-invalid") !== "true") return;
    var message = document.getElementById(field.id + "-error");
    if (message) message.remove();
    field.removeAttribute("aria-invalid");
    var rest = (field.getAttribute("aria-describedby") || "").split(" ").filter(function (id) {
      return id && id !== field.id + "-error";
    });
    field.setAttribute("aria-describedby", rest.join(" "));
    var box = field.closest(".has-error");
    if (box) box.classList.remove("has-error");
  }

  document.addEventListener("input", function (event) {
    if (event.target.matches && event.target.matches("textarea[data-max-chars]")) {
      countIdea(event.target);
    }
    if (event.target.id && event.target.closest && event.target.closest(".story-form")) {
      clearRefusal(event.target);
    }
  });
  document.addEventListener("htmx:load", function (event) {
    var elt = event.detail.elt;
    var boxes = elt.querySelectorAll ? elt.querySelectorAll("textarea[data-max-chars]") : [];
    boxes.forEach(countIdea);
  });
  document.querySelectorAll("textarea[data-max-chars]").forEach(countIdea);

  // Who the story is for: choosing a child brings their usual language and length, and a
  // sequel's first prompt follows the language chosen while nobody has changed it.
  document.addEventListener("change", function (event) {
    var input = event.target;
    var form = input.closest && input.closest("form.story-form");
    if (!form) return;
    if (input.name === "for") {
      var language = input.getAttribute("data-language");
      var length = input.getAttribute("data-length");
      if (language && form.elements.language) {
        form.elements.language.value = language;
        nextPromptIn(form, language);
      }
      if (length) chooseLength(form, length);
    } else if (input.name === "language") {
      nextPromptIn(form, input.value);
    }
  });

  // A length the month's budget has no room for is closed: the longest that fits instead
  // (the lengths that fit are the shorter ones), as the server chooses when it renders it.
  function chooseLength(form, wanted) {
    var open = Array.prototype.filter.call(form.querySelectorAll("input[name=length]"),
                                           function (radio) { return !radio.disabled; });
    var radio = open.filter(function (r) { return r.value === wanted; })[0] || open[open.length - 1];
    if (radio) radio.checked = true;
  }

  function nextPromptIn(form, language) {
    var box = form.elements.prompt;
    var wanted = box && box.getAttribute("data-next-prompt-" + language);
    if (!wanted) return;
    var untouched = Array.prototype.some.call(box.attributes, function (attribute) {
      return attribute.name.indexOf("data-next-prompt-") === 0 && attribute.value === box.value;
    });
    if (untouched) {
      box.value = wanted;
      countIdea(box);
    }
  }

  // Closed means closed (app/web/spend.py): a page opened before the month's budget, the
  // day's stories or the storyteller closed keeps no live control that would spend. Every
  // few card polls, while the page is shown and has one (form[data-spends]), it asks; each
  // control named is disabled, with the reason in a note floating over the page's foot
  // (nothing moves for it; a tap puts it away), and opened again only by this, only if
  // this closed it. A control the page came with closed says why where it is (the server
  // renders it so): the note says only what this closed. The server refuses whatever slips
  // through anyway (429).
  var ROOM_POLL_MS = (Number(root.getAttribute("data-room-poll")) || 15) * 1000;
  var closedFor = {};  // "stories", "pictures", "narration": why; "lengths": {fit, why}
  var roomNoteSaid = "";

  function closeSpending(form) {
    var why = closedFor[form.getAttribute("data-spends")];
    var closedHere = false;
    form.querySelectorAll("fieldset.form-fields, button[type=submit]").forEach(function (c) {
      if (why && !c.disabled) {
        c.disabled = true;
        c.setAttribute("data-closed-here", "");
        if (c.tagName === "BUTTON") c.setAttribute("aria-describedby", "closed-note");
      } else if (!why && c.hasAttribute("data-closed-here")) {
        c.disabled = false;
        c.removeAttribute("data-closed-here");
        if (c.tagName === "BUTTON") c.removeAttribute("aria-describedby");
      }
      closedHere = closedHere || c.hasAttribute("data-closed-here");
    });
    return closedHere ? why : null;
  }

  // The story form's lengths the month's budget no longer has room for, closed the same way;
  // the one chosen, if closed, gives way to the longest that fits.
  function closeLengths(form) {
    var lengths = closedFor.lengths;
    var closedHere = false;
    form.querySelectorAll("input[name=length]").forEach(function (radio) {
      var shut = Boolean(lengths) && lengths.fit.indexOf(radio.value) < 0;
      if (shut && !radio.disabled) {
        radio.disabled = true;
        radio.setAttribute("data-closed-here", "");
      } else if (!shut && radio.hasAttribute("data-closed-here")) {
        radio.disabled = false;
        radio.removeAttribute("data-closed-here");
      }
      closedHere = closedHere || radio.hasAttribute("data-closed-here");
    });
    var chosen = form.querySelector("input[name=length]:checked");
    if (chosen && chosen.disabled) chooseLength(form, chosen.value);
    return closedHere ? lengths.why : null;
  }

  function showClosed() {
    var reasons = [];
    function say(why) { if (why && reasons.indexOf(why) < 0) reasons.push(why); }
    document.querySelectorAll("form[data-spends]").forEach(function (form) {
      say(closeSpending(form));
      say(closeLengths(form));
    });
    var note = document.getElementById("closed-note");
    var said = reasons.join(" ");
    if (!said) {
      if (note) note.remove();
    } else if (said !== roomNoteSaid || !note) {
      if (!note) {
        note = document.createElement("p");
        note.id = "closed-note";
        note.className = "notice closed-note";
        note.setAttribute("role", "status");
        note.addEventListener("click", function () { note.hidden = true; });
        document.body.appendChild(note);
      }
      note.hidden = false;
      note.textContent = said;
    }
    roomNoteSaid = said;
  }

  function askRoom() {
    if (document.visibilityState === "hidden" || navigator.onLine === false) return;
    if (!document.querySelector("form[data-spends]") || !window.fetch) return;
    var listen = document.querySelector("form[data-spends=narration][data-story]");
    var url = "/closed" + (listen ? "?story=" + listen.getAttribute("data-story") : "");
    fetch(url, { credentials: "same-origin", cache: "no-store" }).then(function (answer) {
      return answer.ok ? answer.json() : null;
    }).then(function (room) {
      if (!room) return;  // an error page, a restart: the next poll asks again
      closedFor = room;
      showClosed();
    }).catch(function () { /* offline: the next poll asks again */ });
  }

  window.setInterval(askRoom, ROOM_POLL_MS);
  document.addEventListener("visibilitychange", askRoom);  // a tablet woken for tonight
  // A card or frame swapped in brings live buttons: closed again as they come.
  document.addEventListener("htmx:load", showClosed);
  // A refusal (429) answered one control: the others learn it at once.
  document.addEventListener("htmx:afterRequest", function (event) {
    var form = event.detail.elt && event.detail.elt.closest && event.detail.elt.closest("form[data-spends]");
    if (form && event.detail.xhr && event.detail.xhr.status === 429) askRoom();
  });

  // "Show password" on the sign-in page: the box shows what is typed while it is ticked.
  document.querySelectorAll("[data-show-password]").forEach(function (toggle) {
    var box = toggle.closest("form").querySelector("input[name=password]");
    var tick = toggle.querySelector("input[type=checkbox]");
    if (!box || !tick) return;
    tick.addEventListener("change", function () {
      box.type = tick.checked ? "text" : "password";
    });
    toggle.hidden = false;
  });
  // A list's thumbnails (templates/_thumb.html) are fetched as their rows come into view,
  // or just before: on a phone, home's newest stories are below the first screen.
  var THUMB_MARGIN = "0px 0px 200px 0px";
  var thumbsSeen = "IntersectionObserver" in window && new IntersectionObserver(
    function (entries, observer) {
      entries.forEach(function (entry) {
        if (!entry.isIntersecting) return;
        observer.unobserve(entry.target);
        showThumb(entry.target);
      });
    }, { rootMargin: THUMB_MARGIN });
  function showThumb(img) { img.src = img.getAttribute("data-src"); img.removeAttribute("data-src"); }
  function watchThumbs(scope) {
    scope.querySelectorAll("img.thumb[data-src]").forEach(function (img) {
      if (thumbsSeen) thumbsSeen.observe(img); else showThumb(img);
    });
  }
  watchThumbs(document);
  document.addEventListener("htmx:load", function (event) { watchThumbs(event.detail.elt); });
})();
