// The skill chooser of an agent that names skills (an A2A Agent Card): an example prompt fills the
// composer and chooses its skill, and the file picker takes what the chosen skill takes.
(function () {
  "use strict";
  var select = document.querySelector("[data-skill-select]");
  var input = document.getElementById("attachment");
  var textarea = document.getElementById("message");
  if (!select) return;
  var general = input ? input.getAttribute("accept") : null;
  // Disabled by the page (no permission to upload): no skill enables it.
  if (input && input.disabled) input = null;
  var limits = document.querySelector("[data-upload-limits]");
  var generalText = limits ? limits.textContent : "";
  var label = document.querySelector("label[for=attachment]");

  function follow() {
    if (!input) return;
    var option = select.options[select.selectedIndex];
    var modes = option && option.dataset.inputModes;
    if (modes === undefined) {
      if (general === null) input.removeAttribute("accept"); else input.setAttribute("accept", general);
      input.disabled = false;
      if (label) label.removeAttribute("aria-disabled");
      if (limits) limits.textContent = generalText;
      return;
    }
    var files = modes.split(",").filter(Boolean);
    input.disabled = files.length === 0;
    input.setAttribute("accept", files.join(","));
    if (label) { if (input.disabled) label.setAttribute("aria-disabled", "true"); else label.removeAttribute("aria-disabled"); }
    if (limits) limits.textContent = files.length ? files.join(", ") : "This skill takes no files.";
  }
  select.addEventListener("change", follow);
  follow(); // a choice made while this script was on its way
  document.querySelectorAll("[data-skill-prompt]").forEach(function (button) {
    button.addEventListener("click", function () {
      select.value = button.dataset.skill || "";
      follow();
      if (textarea) { textarea.value = button.dataset.skillPrompt; textarea.focus(); }
    });
  });
})();
