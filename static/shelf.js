/* The shelf on this device: the service worker (reading offline), a calm note when the
   connection drops, the offline page's list of saved stories, and printing a story.
   Every page works without this file; no inline script anywhere (a strict CSP applies). */
(function () {
  "use strict";
  var STORIES_CACHES = "bedtime-stories-";  // the service worker's (static/sw.js)
  var TITLE_SUFFIX = " · Bedtime Stories";

  // The service worker lives at /sw.js so that it covers the whole site. Browsers offer it
  // only on HTTPS (or on this computer, http://localhost); elsewhere the site works as ever.
  if ("serviceWorker" in navigator) {
    navigator.serviceWorker.register("/sw.js").catch(function () {
      // Not available here (a private window, plain HTTP on the network): nothing to do.
    });
  }

  // A page that needs the network says so, calmly, while there is none. A story page does
  // not: it reads the same offline. The offline page says it already.
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
    note.textContent = "You’re offline. New stories need the internet; " +
      "the stories you’ve opened on this device can still be read.";
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
  var theme = /(?:^|;\s*)theme=(dark|light|night)/.exec(document.cookie);
  if (theme) document.documentElement.setAttribute("data-theme", theme[1]);
  var list = offline.querySelector("[data-saved-stories]");
  var none = offline.querySelector("[data-saved-none]");
  if (!list || !window.caches) {
    if (none) none.hidden = false;
    return;
  }

  function titleOf(html) {
    var title = new DOMParser().parseFromString(html, "text/html").title || "A story";
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
