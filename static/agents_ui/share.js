// Shared links: "Copy link" puts the link on the clipboard (or selects it where the clipboard is not allowed).
(function () {
  document.addEventListener("click", function (event) {
    var button = event.target.closest("[data-copy-link]");
    if (!button) return;
    var field = document.getElementById(button.getAttribute("data-copy-link"));
    if (!field) return;
    var done = function (text) { button.textContent = text; setTimeout(function () { button.textContent = "Copy link"; }, 1500); };
    field.select();
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(field.value).then(function () { done("Copied"); }, function () { done("Press Ctrl+C"); });
    } else {
      done(document.execCommand && document.execCommand("copy") ? "Copied" : "Press Ctrl+C");
    }
  });
})();
