// The theme switch: the system's theme unless the person chose one, remembered in this browser.
(function () {
  "use strict";
  var root = document.documentElement, dark = window.matchMedia("(prefers-color-scheme: dark)");
  function isDark() { return root.dataset.theme ? root.dataset.theme === "dark" : dark.matches; }
  function show() {
    document.querySelectorAll("[data-theme-switch]").forEach(function (b) { b.setAttribute("aria-pressed", String(isDark())); });
  }
  document.addEventListener("click", function (event) {
    if (!event.target.closest("[data-theme-switch]")) return;
    root.dataset.theme = isDark() ? "light" : "dark";
    try { localStorage.setItem("theme", root.dataset.theme); } catch (e) { /* private mode: this page only */ }
    show();
  });
  dark.addEventListener("change", show);
  show();
})();
