// Loaded by workspace.js when an image the server proxies fails (the agent's site refused it, or it was
// not a raster image): the image gives way to its link and a note, then and for every later failure.
(function () {
  "use strict";
  function failed(img) {
    var note = img.nextElementSibling;
    if (note && note.hasAttribute("data-remote-image-failed")) { img.hidden = true; note.hidden = false; }
  }
  function check(img) { if (img.complete && !img.naturalWidth) failed(img); }
  document.addEventListener("error", function (event) {
    if (event.target.matches && event.target.matches("img[data-remote-image]")) failed(event.target);
  }, true);
  document.querySelectorAll("img[data-remote-image]").forEach(check);
})();
