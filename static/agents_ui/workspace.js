// Workspace behaviour that needs the browser: checking files before they are sent, keeping the
// composer in step with the run, and counting down approval expiry. Everything else is htmx.
(function () {
  "use strict";
  var composer = document.querySelector("[data-composer]");
  var errors = document.getElementById("composer-errors");
  var stopButton = document.querySelector("[data-control=stop]");

  function showError(text) {
    if (!errors) return;
    errors.textContent = "";
    var p = document.createElement("p");
    p.className = "alert alert-error small";
    p.textContent = text;
    errors.appendChild(p);
  }

  function sizeLabel(bytes) {
    var units = ["bytes", "KB", "MB", "GB"], i = 0;
    while (bytes >= 1024 && i < units.length - 1) { bytes /= 1024; i += 1; }
    var shown = i && bytes % 1 ? bytes.toFixed(bytes < 10 ? 1 : 0) : Math.round(bytes);
    return shown + " " + units[i];
  }

  function accepts(file, accept) {
    if (!accept) return true;
    return accept.split(",").some(function (pattern) {
      pattern = pattern.trim();
      if (!pattern) return false;
      if (pattern.slice(-2) === "/*") return file.type.indexOf(pattern.slice(0, -1)) === 0;
      if (pattern.charAt(0) === ".") return file.name.toLowerCase().slice(-pattern.length) === pattern.toLowerCase();
      return file.type === pattern;
    });
  }

  // Refuse what the agent refuses before anything is sent; the typed message stays as it is.
  var input = document.getElementById("attachment");
  var fileList = document.querySelector("[data-file-list]");
  if (input) {
    input.addEventListener("change", function () {
      var max = parseInt(input.dataset.maxBytes || "0", 10);
      var accept = input.getAttribute("accept") || "";
      var names = [];
      for (var i = 0; i < input.files.length; i++) {
        var file = input.files[i];
        var problem = file.size === 0 ? "is empty"
          : (max && file.size > max) ? "is " + sizeLabel(file.size) + ", over this agent's limit of " + sizeLabel(max)
          : !accepts(file, accept) ? "is not a type this agent accepts (" + accept + ")" : "";
        if (problem) {
          showError("\u201c" + file.name + "\u201d " + problem + ".");
          input.value = "";
          if (fileList) fileList.textContent = "";
          return;
        }
        names.push(file.name + " (" + sizeLabel(file.size) + ")");
      }
      if (errors) errors.textContent = "";
      if (fileList) fileList.textContent = names.length ? "Attached: " + names.join(", ") : "";
    });
  }

  if (composer) {
    var textarea = composer.querySelector("textarea");
    textarea.addEventListener("keydown", function (event) {
      if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
        event.preventDefault();
        htmx.trigger(composer, "submit");
      }
    });
    // Clear the composer only once the message is safely sent (an error keeps everything typed).
    composer.addEventListener("htmx:afterRequest", function (event) {
      if (event.detail.elt !== composer) return;
      var xhr = event.detail.xhr;
      if (event.detail.successful && !xhr.getResponseHeader("HX-Retarget")) {
        textarea.value = "";
        if (input) input.value = "";
        if (fileList) fileList.textContent = "";
      } else if (event.detail.successful) {
        // Refused by the server: keep the words, drop the files (they would be refused again).
        if (input) input.value = "";
        if (fileList) fileList.textContent = "";
      } else if (!event.detail.successful) {
        showError("The message could not be sent (" + (xhr.status || "no connection") + "). It is still here: try again.");
      }
    });
    var chooser = composer.querySelector("[data-profile-chooser]");
    if (chooser) {
      chooser.addEventListener("change", function () {
        var url = new URL(window.location.href);
        url.searchParams.set("profile", chooser.value);
        window.location.assign(url.toString());
      });
    }
  }

  // The stop button works while a run streams.
  function refreshStop() {
    if (!stopButton) return;
    stopButton.disabled = !document.querySelector(".run-stream:not([data-closed])");
  }
  document.body.addEventListener("htmx:sseClose", function (event) {
    var stream = event.target.closest(".run-stream");
    if (stream) stream.setAttribute("data-closed", "");
    refreshStop();
  });
  document.body.addEventListener("htmx:load", refreshStop);

  // Editing an interrupt's arguments means approving with those arguments.
  document.body.addEventListener("input", function (event) {
    var box = event.target;
    if (!box.name || box.name.indexOf("edited-") !== 0) return;
    var choice = box.closest("fieldset").querySelector("input[type=radio][value=edit]");
    if (choice) choice.checked = true;
  });

  // Approval expiry: a live countdown, and no deciding after it.
  function tick() {
    var now = Date.now();
    document.querySelectorAll("[data-expires-at]").forEach(function (el) {
      var left = Math.round((Date.parse(el.dataset.expiresAt) - now) / 1000);
      if (isNaN(left)) return;
      var form = el.closest("form");
      if (left <= 0) {
        el.textContent = "now: this request has expired";
        if (form) form.querySelectorAll("button, input, textarea").forEach(function (c) { c.disabled = true; });
      } else {
        var m = Math.floor(left / 60), s = left % 60;
        el.textContent = "in " + (m ? m + " min " : "") + s + " s";
      }
    });
  }
  tick();
  setInterval(tick, 1000);

  // Keep the newest words in view while the person is reading at the bottom.
  var transcript = document.getElementById("transcript");
  document.body.addEventListener("htmx:sseMessage", function () {
    var nearBottom = window.innerHeight + window.scrollY >= document.body.scrollHeight - 240;
    if (nearBottom && transcript) window.scrollTo(0, document.body.scrollHeight);
  });
})();
