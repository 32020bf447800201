// The skill chooser of an agent that names skills (an A2A Agent Card): an example prompt fills the
// composer and chooses its skill, and the file picker takes what the chosen skill takes.
(function () {
  "use strict";
  var select = document.querySelector("[data-skill-select]");
  var input = document.getElementById("attachment");
  var textarea = document.getElementById("message");
  if (!select) return;
  var general = input ? input.getAttribute("accept") : null;
  var TEXT = { "text": true, "text/plain": true };

  function follow() {
    if (!input) return;
    var option = select.options[select.selectedIndex];
    var modes = option && option.dataset.inputModes;
    if (modes === undefined) {
      if (general === null) input.removeAttribute("accept"); else input.setAttribute("accept", general);
      input.disabled = false;
      return;
    }
    var files = modes.split(",").filter(function (m) { return m && !TEXT[m.toLowerCase()]; });
    input.disabled = files.length === 0;
    input.setAttribute("accept", files.join(","));
  }
  select.addEventListener("change", follow);
  document.querySelectorAll("[data-skill-prompt]").forEach(function (button) {
    button.addEventListener("click", function () {
      select.value = button.dataset.skill || "";
      follow();
      if (textarea) { textarea.value = button.dataset.skillPrompt; textarea.focus(); }
    });
  });
})();
