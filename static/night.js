/* A shared story's page (templates/shared.html) is Night from the household's Night (half
   an hour before its bedtime) until morning by the reader's own clock, as well as whenever
   the reader's device prefers dark (the stylesheet's). Not deferred: it decides before the
   page is painted, so no white flash at night. */
(function () {
  "use strict";
  var root = document.documentElement;

  function minutesOf(text) {
    var found = /^(\d\d):(\d\d)$/.exec(text || "");
    return found ? Number(found[1]) * 60 + Number(found[2]) : null;
  }

  var from = minutesOf(root.getAttribute("data-night-from"));
  var until = minutesOf(root.getAttribute("data-night-until"));
  if (from === null || until === null) return;
  var now = new Date();
  var minute = now.getHours() * 60 + now.getMinutes();
  if (minute >= from || minute < until) root.setAttribute("data-theme", "night");
})();
