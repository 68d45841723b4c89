/* The shelf on this device: the service worker (reading offline), a calm note when the
   connection drops, the offline page's list of saved stories, and printing a story.
   Every page works without this file; no inline script anywhere (a strict CSP applies). */
(function () {
  "use strict";
  var STORIES_CACHES = "bedtime-stories-";  // the service worker's (static/sw.js)
  var root = document.documentElement;
  // The page's words for these sentences (data-words, as app.js reads them).
  var WORDS = {};
  try { WORDS = JSON.parse(root.getAttribute("data-words") || "{}"); } catch (e) { WORDS = {}; }
  function gettext(text) { return WORDS[text] || text; }
  var TITLE_SUFFIX = " · " + gettext("Bedtime Stories");

  // The theme shown. "Automatic" (the default) is Night from half an hour before the
  // household's bedtime (set on the Children page) until morning in its time zone, or on a
  // device that prefers dark; otherwise Dark. The server decides it for the page it
  // renders; this decides it again from the device's clock (and each minute, so Night
  // comes on with the page open) because a page from the offline cache was rendered at
  // another hour, the offline page by no server at all, and only the device knows what it
  // prefers. The choice is the cookie (the server's and app.js's); the bedtime, morning
  // and zone come with every rendered page (saved ones too) and are kept for the rest.
  var THEMES = /^(auto|dark|light|night)$/;
  var HOURS_KEY = "night_hours";
  var NIGHT_BEFORE_BEDTIME_MIN = 30;  // app/web/preferences.py's NIGHT_BEFORE_BEDTIME
  var DEFAULT_BEDTIME = "18:30";
  var DEFAULT_MORNING = "07:00";
  var THEME_COLORS = { light: "#f6efe1", dark: "#16120e", night: "#0c0906" };
  var prefersDark = window.matchMedia("(prefers-color-scheme: dark)");

  function cookie(name) {
    var found = new RegExp("(?:^|;\\s*)" + name + "=([^;]*)").exec(document.cookie);
    return found ? found[1] : null;
  }

  function minutesOf(text) {  // "18:30" -> 1110; null for anything else
    var found = /^([01]\d|2[0-3]):([0-5]\d)$/.exec(text || "");
    return found ? Number(found[1]) * 60 + Number(found[2]) : null;
  }

  function nightHours() {
    var kept = null;
    try { kept = JSON.parse(window.localStorage.getItem(HOURS_KEY)); } catch (error) { /* none */ }
    var tz = root.getAttribute("data-tz");
    if (tz && minutesOf(root.getAttribute("data-bedtime")) !== null) {
      kept = { tz: tz, bedtime: root.getAttribute("data-bedtime"),
               until: root.getAttribute("data-night-until") };
      try { window.localStorage.setItem(HOURS_KEY, JSON.stringify(kept)); } catch (error) { /* private */ }
    }
    kept = kept || {};
    var bedtime = minutesOf(kept.bedtime);
    var until = minutesOf(kept.until);
    return { tz: kept.tz,
             from: (bedtime === null ? minutesOf(DEFAULT_BEDTIME) : bedtime) - NIGHT_BEFORE_BEDTIME_MIN,
             until: until === null ? minutesOf(DEFAULT_MORNING) : until };
  }

  function minuteIn(tz) {  // minutes since midnight in the household's zone
    var now = new Date();
    try {
      var parts = {};
      new Intl.DateTimeFormat("en-GB", { hour: "numeric", minute: "numeric", hourCycle: "h23",
                                         timeZone: tz }).formatToParts(now)
        .forEach(function (part) { parts[part.type] = part.value; });
      return Number(parts.hour) * 60 + Number(parts.minute);
    } catch (error) {  // an unknown zone: the device's own
      return now.getHours() * 60 + now.getMinutes();
    }
  }

  function choice() {
    var chosen = cookie("theme");
    return chosen && THEMES.test(chosen) ? chosen : "auto";
  }

  // What "auto" showed when the server rendered the page, and between which of its turns
  // (to Night, or back; Unix seconds) that holds: while the device's clock is between them,
  // no clock of the household's is worked out here (a phone's first time-zone lookup costs
  // a tenth of a second, on every page's load).
  var RENDERED_AUTO = root.getAttribute("data-auto-theme");
  var AUTO_FROM_MS = Number(root.getAttribute("data-auto-from")) * 1000 || 0;
  var AUTO_UNTIL_MS = Number(root.getAttribute("data-auto-until")) * 1000 || 0;

  function themeNow() {
    var chosen = choice();
    if (chosen !== "auto") return chosen;
    var hours = nightHours();
    if (prefersDark.matches) return "night";
    var now = Date.now();
    if (THEMES.test(RENDERED_AUTO) && now >= AUTO_FROM_MS && now < AUTO_UNTIL_MS) {
      return RENDERED_AUTO;
    }
    var minute = minuteIn(hours.tz);
    return minute >= hours.from || minute < hours.until ? "night" : "dark";
  }

  function showTheme() {
    var theme = themeNow();
    if (root.getAttribute("data-theme") !== theme) root.setAttribute("data-theme", theme);
    root.setAttribute("data-theme-choice", choice());
    var scheme = document.querySelector("meta[name=color-scheme]");
    if (scheme) scheme.content = theme === "light" ? "light" : "dark";
    var color = document.querySelector("meta[name=theme-color]");
    if (color) color.content = THEME_COLORS[theme];
    document.querySelectorAll("form[data-preferences] button[name=theme]").forEach(function (b) {
      b.setAttribute("aria-pressed", String(b.value === choice()));
    });
  }

  showTheme();
  window.setInterval(showTheme, 60000);
  if (prefersDark.addEventListener) prefersDark.addEventListener("change", showTheme);
  // app.js applies a tapped theme as it is ("auto" too) and marks it by the theme shown:
  // shown and marked here again once it has (its listener runs after this one).
  if (window.MutationObserver) {
    new MutationObserver(function () {
      if (root.getAttribute("data-theme") === "auto") showTheme();
    }).observe(root, { attributes: true, attributeFilter: ["data-theme"] });
  }
  document.addEventListener("submit", function (event) {
    if (event.target.matches("form[data-preferences]")) window.setTimeout(showTheme, 0);
  });
  // The service worker lives at /sw.js so that it covers the whole site. Browsers offer it
  // only on HTTPS (or on this computer, http://localhost); elsewhere the site works as ever.
  if ("serviceWorker" in navigator) {
    navigator.serviceWorker.register("/sw.js").catch(function () {
      // Not available here (a private window, plain HTTP on the network): nothing to do.
    });
  }

  // A page that needs the network says so, calmly, while there is none, in a note floating
  // over the page's foot (style.css): never above the words, which stay where they are
  // read. A story page does not: it reads the same offline. The offline page says it already.
  var needsNetwork = !document.body.classList.contains("page-story") &&
    !document.querySelector("[data-offline-page]");
  var note = null;

  function showConnection() {
    if (!needsNetwork) return;
    if (navigator.onLine) {
      if (note) note.hidden = true;
      return;
    }
    if (!note) {
      note = document.createElement("p");
      note.className = "offline-note";
      note.setAttribute("role", "status");
      var main = document.querySelector("main");
      if (!main) return;
      main.insertBefore(note, main.firstChild);
    }
    note.hidden = false;
    note.textContent = gettext("You’re offline. New stories need the internet; the stories you’ve opened on this device can still be read.");
  }

  window.addEventListener("online", showConnection);
  window.addEventListener("offline", showConnection);
  showConnection();

  // Signing out forgets the stories kept on this device.
  document.addEventListener("submit", function (event) {
    if (event.target.matches && event.target.matches("form[action='/logout']") && window.caches) {
      caches.keys().then(function (names) {
        names.filter(function (name) { return name.indexOf(STORIES_CACHES) === 0; })
          .forEach(function (name) { caches.delete(name); });
      });
    }
  });

  // Print a story (the print styles leave only the story).
  document.querySelectorAll("button[data-print]").forEach(function (button) {
    button.hidden = false;
    button.addEventListener("click", function () { window.print(); });
  });

  // The offline page: the reader's theme, and the stories this device can open.
  var offline = document.querySelector("[data-offline-page]");
  if (!offline) return;

  // Why the page could not come, told apart: this device has no network, or it has one
  // and the server did not answer (restarting, say). Followed as the device's changes.
  var heading = offline.querySelector("[data-offline-heading]");
  var why = offline.querySelector("[data-offline-why]");
  function sayWhy() {
    if (!heading || !why) return;
    var noNetwork = navigator.onLine === false;
    heading.textContent = noNetwork ? gettext("You’re offline") : gettext("The server isn’t answering");
    why.textContent = noNetwork
      ? gettext("There’s no connection just now, so new stories can’t be written. The stories you’ve opened on this device are still here to read.")
      : gettext("This device is online, but the storyteller’s server didn’t answer just now (it may be restarting). The stories you’ve opened on this device are still here to read.");
  }
  window.addEventListener("online", sayWhy);
  window.addEventListener("offline", sayWhy);
  sayWhy();
  var list = offline.querySelector("[data-saved-stories]");
  var none = offline.querySelector("[data-saved-none]");
  if (!list || !window.caches) {
    if (none) none.hidden = false;
    return;
  }

  function titleOf(html) {
    var title = new DOMParser().parseFromString(html, "text/html").title || gettext("A story");
    return title.slice(-TITLE_SUFFIX.length) === TITLE_SUFFIX
      ? title.slice(0, -TITLE_SUFFIX.length) : title;
  }

  function savedIn(cache) {
    return cache.keys().then(function (requests) {
      return Promise.all(requests.map(function (request) {
        return cache.match(request).then(function (response) {
          return response.text();
        }).then(function (html) {
          return { path: new URL(request.url).pathname, title: titleOf(html) };
        });
      }));
    });
  }

  caches.keys().then(function (names) {
    return Promise.all(names.filter(function (name) {
      return name.indexOf(STORIES_CACHES) === 0;
    }).map(function (name) { return caches.open(name).then(savedIn); }));
  }).then(function (lists) {
    var stories = [].concat.apply([], lists);
    stories.sort(function (a, b) {  // the newest story first: its number is the largest
      return Number(b.path.split("/").pop()) - Number(a.path.split("/").pop());
    });
    stories.forEach(function (story) {
      var item = document.createElement("li");
      var link = document.createElement("a");
      link.href = story.path;
      var title = document.createElement("span");
      title.className = "story-list-title";
      title.textContent = story.title;
      link.appendChild(title);
      item.appendChild(link);
      list.appendChild(item);
    });
    if (none) none.hidden = stories.length > 0;
  }).catch(function () {
    if (none) none.hidden = false;
  });
})();
