// Loaded by workspace.js when the page first shows an approval's expiry or a live run's clock: both
// count each second, and a request that arrives counts down at once.
(function () {
  "use strict";
  function each(s, f, r) { (r || document).querySelectorAll(s).forEach(f); }
  function duration(s) { return (s >= 60 ? Math.floor(s / 60) + " min " : "") + (s % 60) + " s"; }
  // Approval expiry: a live countdown, and no deciding after it.
  function tick() {
    each("[data-expires-at]", function (e) {
      var left = Math.round((Date.parse(e.dataset.expiresAt) - Date.now()) / 1000), form = e.closest("form");
      if (isNaN(left)) return;
      var text = left > 0 ? "in " + duration(left) : "now: this request has expired";
      if (e.textContent !== text) e.textContent = text;  // unchanged text is no mutation to observe again
      if (left <= 0 && form) each("button, input, textarea", function (c) { c.disabled = true; }, form);
    });
  }
  // A live run's clock counts from the server's figure (the browser's clock never matters);
  // past the declared bound, the past-bound line shows.
  function clocks() {
    var now = Date.now();
    each("[data-elapsed]", function (e) {
      if (!e.dataset.seen) e.dataset.seen = now;
      var s = Math.floor(parseFloat(e.dataset.elapsed) + (now - e.dataset.seen) / 1000);
      if (isNaN(s)) return;
      e.textContent = duration(s);
      var past = e.closest("[data-progress]").querySelector("[data-past-bound=time]");
      if (past && s > parseFloat(e.dataset.bound)) past.hidden = false;
    });
  }
  tick();
  clocks();
  setInterval(function () { tick(); clocks(); }, 1000);
  var scroller = document.getElementById("conversation");
  if (scroller) new MutationObserver(tick).observe(scroller, { childList: true, subtree: true });
})();
