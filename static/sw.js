/* The service worker: keeps the app shell, and every story page the family has opened, on
   this device, so a story read before opens with the Wi-Fi off. Plain JavaScript, no
   library. Served as /sw.js (so its scope is the whole site) by app/web/offline.py, which
   fills in VERSION (a hash of the static files: a deploy that changes them installs a new
   worker, which drops the old shell), SHELL (the static files to keep) and WORDS (its one
   sentence in the household's language: a new language is a new worker, which keeps the
   offline page, /offline, in that language).

   What it keeps, and how:
   - the shell (/static/...): cached at install, answered from the cache, whatever the
     ?v= of the asking page (the pages' fingerprinted URLs, an older deploy's, or none);
   - story pages (/stories/123): from the network whenever it answers (and kept, fresh,
     for later); from the cache when it does not; a story deleted meanwhile (404) is
     forgotten (and its picture with it). Kept across deploys, so yesterday's story stays
     readable;
   - a story's picture (/stories/123/picture?v=...), whole or small: as a story page, so
     a story kept offline keeps its picture;
   - a story's narration (/stories/123/narration?v=...): kept whole the first time it is
     played (fetched once without a Range, as the cache keeps no partial answer), then
     every request for it, Range included (a player asks for bytes, and seeks by them), is
     answered from that copy, with the network or without;
   - any other page (home, library, a job): always the network; with none, the calm
     offline page, which lists the stories this device can still open.
   Never kept: anything but a GET (the story form, favourites, deletes), htmx requests
   (job cards and their polls, searches), job pages, downloads, the login. */
"use strict";

var VERSION = "__VERSION__";
var SHELL = ["__SHELL__"];
var WORDS = {"__WORDS__": 0};
function gettext(text) { return WORDS[text] || text; }
var SHELL_CACHE = "bedtime-shell-" + VERSION;
var STORIES_CACHE = "bedtime-stories-v1";
var OFFLINE_PAGE = "/offline";
// The shell is kept under this deploy's fingerprinted URLs (/static/style.css?v=3f2a1b9c0d);
// a page from an earlier deploy asks with another ?v=: it gets the kept copy. ignoreVary: the server's Vary: Accept-Encoding must not make
// a kept file miss.
var SHELL_MATCH = { cacheName: SHELL_CACHE, ignoreSearch: true, ignoreVary: true };
var STORY_PAGE = /^\/stories\/\d+$/;
var STORY_PICTURE = /^\/stories\/\d+\/picture$/;
var STORY_NARRATION = /^\/stories\/\d+\/narration$/;
var RANGE = /^bytes=(\d*)-(\d*)$/;

self.addEventListener("install", function (event) {
  event.waitUntil(
    caches.open(SHELL_CACHE)
      .then(function (cache) { return cache.addAll(SHELL.concat([OFFLINE_PAGE])); })
      .then(function () { return self.skipWaiting(); })
  );
});

self.addEventListener("activate", function (event) {
  event.waitUntil(
    caches.keys()
      .then(function (names) {
        return Promise.all(names.filter(function (name) {
          return name.indexOf("bedtime-shell-") === 0 && name !== SHELL_CACHE;
        }).map(function (name) { return caches.delete(name); }));
      })
      .then(function () { return self.clients.claim(); })
  );
});

function offlinePage() {
  return caches.match(OFFLINE_PAGE, SHELL_MATCH).then(function (page) {
    return page || new Response(
      gettext("You are offline. Please try again when the connection is back."), {
      status: 503, headers: { "Content-Type": "text/plain; charset=utf-8" }
    });
  });
}

function fromShell(request) {
  return caches.match(request, SHELL_MATCH).then(function (kept) {
    return kept || fetch(request);
  });
}

function storyPage(event, url) {
  var key = url.origin + url.pathname;  // one copy per story, whatever the query string
  return fetch(event.request).then(function (response) {
    var type = response.headers.get("Content-Type") || "";
    var cacheControl = response.headers.get("Cache-Control") || "";
    if (response.ok && !response.redirected && type.indexOf("text/html") === 0 &&
        cacheControl.indexOf("no-store") === -1) {
      var copy = response.clone();
      event.waitUntil(caches.open(STORIES_CACHE).then(function (cache) {
        return cache.put(key, copy);
      }));
    } else if (response.status === 404) {
      event.waitUntil(caches.open(STORIES_CACHE).then(function (cache) {
        return cache.keys().then(function (kept) {
          return Promise.all(kept.filter(function (request) {
            return request.url === key || request.url.indexOf(key + "/picture") === 0 ||
              request.url.indexOf(key + "/narration") === 0;
          }).map(function (request) { return cache.delete(request); }));
        });
      }));
    }
    return response;
  }).catch(function () {
    return caches.open(STORIES_CACHE)
      .then(function (cache) { return cache.match(key, { ignoreVary: true }); })
      .then(function (kept) { return kept || offlinePage(); });
  });
}

function storyPicture(event, request) {
  return fetch(request).then(function (response) {
    if (response.ok) {
      var copy = response.clone();
      event.waitUntil(caches.open(STORIES_CACHE).then(function (cache) {
        return cache.put(request.url, copy);
      }));
    }
    return response;
  }).catch(function () {
    return caches.open(STORIES_CACHE).then(function (cache) {
      return cache.match(request.url, { ignoreVary: true });
    }).then(function (kept) { return kept || Response.error(); });
  });
}

// The part of a whole audio file a Range asks for (206), all of it with no Range (200), or
// 416 for a range past its end: as the app itself answers (app/web/narrations.py).
function ranged(whole, range) {
  return whole.blob().then(function (blob) {
    var headers = { "Content-Type": whole.headers.get("Content-Type") || "audio/mpeg",
                    "Accept-Ranges": "bytes" };
    var etag = whole.headers.get("ETag");
    if (etag) headers.ETag = etag;
    var found = range && RANGE.exec(range.trim());
    if (!found || (!found[1] && !found[2])) {
      headers["Content-Length"] = String(blob.size);
      return new Response(blob, { status: 200, headers: headers });
    }
    var first, last;
    if (!found[1]) {
      first = Math.max(blob.size - Number(found[2]), 0);
      last = blob.size - 1;
    } else {
      first = Number(found[1]);
      last = found[2] ? Math.min(Number(found[2]), blob.size - 1) : blob.size - 1;
    }
    if (first >= blob.size || last < first) {
      headers["Content-Range"] = "bytes */" + blob.size;
      return new Response(null, { status: 416, headers: headers });
    }
    headers["Content-Range"] = "bytes " + first + "-" + last + "/" + blob.size;
    headers["Content-Length"] = String(last - first + 1);
    return new Response(blob.slice(first, last + 1), { status: 206, headers: headers });
  });
}

function storyNarration(event, request) {
  var range = request.headers.get("Range");
  return caches.open(STORIES_CACHE).then(function (cache) {
    return cache.match(request.url, { ignoreVary: true }).then(function (kept) {
      if (kept) return ranged(kept, range);
      return fetch(request.url, { credentials: "same-origin" }).then(function (whole) {
        if (whole.status !== 200) return whole;
        return cache.put(request.url, whole.clone()).then(function () {
          return ranged(whole, range);
        });
      });
    });
  }).catch(function () { return Response.error(); });
}

self.addEventListener("fetch", function (event) {
  var request = event.request;
  if (request.method !== "GET") return;
  var url = new URL(request.url);
  if (url.origin !== self.location.origin) return;
  if (request.headers.get("HX-Request")) return;
  if (url.pathname.indexOf("/static/") === 0) {
    event.respondWith(fromShell(request));
    return;
  }
  if (STORY_PICTURE.test(url.pathname)) {
    event.respondWith(storyPicture(event, request));
    return;
  }
  if (STORY_NARRATION.test(url.pathname) && url.search) {
    event.respondWith(storyNarration(event, request));
    return;
  }
  if (request.mode !== "navigate") return;
  if (STORY_PAGE.test(url.pathname)) {
    event.respondWith(storyPage(event, url));
    return;
  }
  event.respondWith(fetch(request).catch(offlinePage));
});
