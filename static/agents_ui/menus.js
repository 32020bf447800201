// A header menu (details.ws-menu) closes on a click elsewhere or on Escape, as menus do. Loaded with
// the first press of one (its data-script).
(function () {
  function close(except) {
    document.querySelectorAll("details.ws-menu[open]").forEach(function (menu) { if (menu !== except) menu.open = false; });
  }
  document.addEventListener("click", function (event) { close(event.target.closest("details.ws-menu")); });
  document.addEventListener("keydown", function (event) { if (event.key === "Escape") close(null); });
})();
