// A story's new share link (templates/_shares.html): "Send…" hands it to the system's share
// sheet (Messages, WhatsApp) where the device has one; "Copy the link" puts it on the
// clipboard otherwise. Both stay hidden where neither can work; the link is shown anyway.
(function () {
  "use strict";
  var WORDS = {};  // the page's words (data-words, as app.js reads them)
  try { WORDS = JSON.parse(document.documentElement.getAttribute("data-words") || "{}"); }
  catch (e) { WORDS = {}; }
  function gettext(text) { return WORDS[text] || text; }

  function wire(root) {
    const field = root.querySelector("[data-share-url]");
    if (!field) return;
    const send = root.querySelector("[data-share-send]");
    const copy = root.querySelector("[data-share-copy]");
    const copied = root.querySelector("[data-share-copied]");
    const title = document.getElementById("story-title");
    if (navigator.share && send) {
      send.hidden = false;
      send.addEventListener("click", function () {
        navigator.share({ title: title ? title.textContent : gettext("A bedtime story"), url: field.value })
          .catch(function () { /* closed without sending: nothing to do */ });
      });
    }
    if (navigator.clipboard && copy) {
      copy.hidden = false;
      copy.addEventListener("click", function () {
        navigator.clipboard.writeText(field.value).then(function () {
          if (copied) copied.hidden = false;
        }, function () { field.select(); });
      });
    }
  }

  document.addEventListener("DOMContentLoaded", function () { wire(document); });
  document.addEventListener("htmx:afterSwap", function (event) { wire(event.target.parentNode || document); });
})();
