// Catalogue filters: show only the cards that have every selected capability. No page reload.
(function () {
  "use strict";
  var bar = document.querySelector("[data-filter-bar]");
  if (!bar) return;
  function apply() {
    var wanted = Array.prototype.map.call(
      bar.querySelectorAll("[aria-pressed=true]"), function (b) { return b.dataset.filter; });
    var visible = 0;
    document.querySelectorAll("#agent-cards [data-agent]").forEach(function (card) {
      var has = (card.dataset.filters || "").split(" ");
      var match = wanted.every(function (key) { return has.indexOf(key) !== -1; });
      card.hidden = !match;
      if (match) visible += 1;
    });
    bar.querySelector("[data-filter-empty]").hidden = visible !== 0;
  }
  bar.addEventListener("click", function (event) {
    var chip = event.target.closest("[data-filter]");
    if (!chip) return;
    chip.setAttribute("aria-pressed", chip.getAttribute("aria-pressed") === "true" ? "false" : "true");
    apply();
  });
  // A refreshed card arrives unfiltered: filter it again.
  document.body.addEventListener("htmx:afterSwap", apply);
})();
