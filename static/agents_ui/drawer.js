// The details drawer on narrow screens. workspace.js loads it at the first press of the drawer's toggle,
// then presses it again.
(function () {
  "use strict";
  var workspace = document.querySelector("[data-workspace]"), toggle = document.querySelector("[data-drawer-toggle]");
  if (!workspace || !toggle) return;
  function drawer(open) {
    workspace.toggleAttribute("data-drawer-open", open);
    toggle.setAttribute("aria-expanded", String(open));
    (open ? document.querySelector("#workspace-side [data-drawer-close]") : toggle).focus();
  }
  toggle.addEventListener("click", function () { drawer(!workspace.hasAttribute("data-drawer-open")); });
  document.addEventListener("click", function (event) {
    if (event.target.closest("[data-drawer-close]")) drawer(false);
  });
  document.addEventListener("keydown", function (event) {
    if (event.key === "Escape" && workspace.hasAttribute("data-drawer-open")) drawer(false);
  });
})();
