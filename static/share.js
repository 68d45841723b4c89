// A story's share menu (templates/_shares.html). A link made here is kept on this device
// (localStorage, by its share id: the server keeps only the token's hash, so it cannot
// show a link again), and opening the menu again offers that same link while the server
// still lists it (GET /stories/{id}/shares), instead of "Make a link": one link per story
// and device, not one more each time. A link stopped or expired is forgotten here the next
// time. "Send…" hands a link to the system's share sheet (Messages, WhatsApp) where the
// device has one; "Copy the link" puts it on the clipboard otherwise.
(function () {
  "use strict";
  var KEPT_KEY = "share_links";  // {"<share id>": {"story": "<story id>", "url": "..."}}
  var WORDS = {};  // the page's words (data-words, as app.js reads them)
  try { WORDS = JSON.parse(document.documentElement.getAttribute("data-words") || "{}"); }
  catch (e) { WORDS = {}; }
  function gettext(text) { return WORDS[text] || text; }

  function kept() {
    try { return JSON.parse(window.localStorage.getItem(KEPT_KEY)) || {}; }
    catch (error) { return {}; }
  }
  function keep(links) {
    try { window.localStorage.setItem(KEPT_KEY, JSON.stringify(links)); }
    catch (error) { /* private mode: each tap of "Make a link" makes one, as without scripts */ }
  }

  // A link just made (the menu's answer, or the page's without htmx): kept for next time.
  function keepNew(menu) {
    var block = menu.querySelector("[data-share-new]");
    var field = menu.querySelector("[data-share-url]");
    var id = block && block.getAttribute("data-share-id");
    if (!id || !field || !field.value) return;
    var links = kept();
    links[id] = { story: menu.getAttribute("data-share-story"), url: field.value };
    keep(links);
  }

  // The newest link this device made for the story that the server still lists; the rest
  // of this story's kept links (stopped, expired) are forgotten.
  function stillOpen(menu) {
    var story = menu.getAttribute("data-share-story");
    var links = kept();
    var ids = Object.keys(links).filter(function (id) { return links[id].story === story; });
    if (!ids.length) return Promise.resolve(null);
    return fetch("/stories/" + story + "/shares", {
      headers: { Accept: "application/json" }, credentials: "same-origin"
    }).then(function (answer) {
      if (!answer.ok) throw new Error(String(answer.status));
      return answer.json();
    }).then(function (body) {
      var listed = {};
      body.shares.forEach(function (share) { listed[String(share.share_id)] = true; });
      var fresh = kept();
      ids.forEach(function (id) { if (!listed[id]) delete fresh[id]; });
      keep(fresh);
      var open = ids.filter(function (id) { return listed[id]; })
        .sort(function (a, b) { return Number(b) - Number(a); });
      return open.length ? { id: open[0], url: links[open[0]].url } : null;
    });
  }

  function show(menu, link) {
    var block = menu.querySelector("[data-share-new]");
    var field = menu.querySelector("[data-share-url]");
    var make = menu.querySelector("[data-share-make]");
    if (!block || !field) return;
    field.value = link.url;
    block.setAttribute("data-share-id", link.id);
    block.hidden = false;
    if (make) make.hidden = true;
  }

  function offer(menu) {
    if (!menu.open || menu.hasAttribute("data-share-checking")) return;
    var block = menu.querySelector("[data-share-new]");
    if (block && !block.hidden) return;  // a link is on show already
    menu.setAttribute("data-share-checking", "");
    stillOpen(menu).then(function (link) {
      if (link) show(menu, link);
    }).catch(function () { /* no answer: "Make a link" stays, as without scripts */ })
      .then(function () { menu.removeAttribute("data-share-checking"); });
  }

  function wire(menu) {
    if (menu.hasAttribute("data-share-wired")) return;
    menu.setAttribute("data-share-wired", "");
    keepNew(menu);
    var field = menu.querySelector("[data-share-url]");
    var send = menu.querySelector("[data-share-send]");
    var copy = menu.querySelector("[data-share-copy]");
    var copied = menu.querySelector("[data-share-copied]");
    var title = document.getElementById("story-title");
    if (field && navigator.share && send) {
      send.hidden = false;
      send.addEventListener("click", function () {
        navigator.share({ title: title ? title.textContent : gettext("A bedtime story"), url: field.value })
          .catch(function () { /* closed without sending: nothing to do */ });
      });
    }
    if (field && navigator.clipboard && copy) {
      copy.hidden = false;
      copy.addEventListener("click", function () {
        navigator.clipboard.writeText(field.value).then(function () {
          if (copied) copied.hidden = false;
        }, function () { field.select(); });
      });
    }
    menu.addEventListener("toggle", function () { offer(menu); });
    offer(menu);
  }

  function wireAll() { document.querySelectorAll("[data-share-menu]").forEach(wire); }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", wireAll);
  else wireAll();
  document.addEventListener("htmx:load", wireAll);
})();
