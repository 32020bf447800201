// Workspace behaviour that needs the browser: the conversation following new words, the composer
// (Enter sends, files checked before they are sent, Send becoming Stop), the details drawer, copy
// buttons, and approval expiry. Everything else is htmx.
(function () {
  "use strict";
  var $ = function (s, r) { return (r || document).querySelector(s); };
  var composer = $("[data-composer]"), errors = $("#composer-errors"), stopButton = $("[data-control=stop]");
  var sendButton = $("[data-send]"), textarea = $("#message"), input = $("#attachment"), fileList = $("[data-file-list]");
  var scroller = $("#conversation"), jump = $("[data-jump-latest]");

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text) e.textContent = text;
    return e;
  }
  function showError(text) {
    if (!errors) return;
    errors.textContent = "";
    errors.appendChild(el("p", "alert alert-error small", text));
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

  // The conversation scrolls on its own and follows new words, unless the person scrolled up to read.
  var following = true;
  function atBottom() { return scroller.scrollHeight - scroller.scrollTop - scroller.clientHeight < 48; }
  // Never smooth: an animation still running when new words land would scroll back up to its old target.
  var lastTop = 0;
  function toLatest() {
    following = true;
    scroller.scrollTop = scroller.scrollHeight;
    lastTop = scroller.scrollTop;
    if (jump) jump.hidden = true;
  }
  if (scroller) {
    // Only the person scrolling up stops the following (new words arriving also move the bottom).
    lastTop = scroller.scrollTop;
    scroller.addEventListener("scroll", function () {
      var top = scroller.scrollTop;
      if (atBottom()) following = true;
      else if (top < lastTop - 2) following = false;
      lastTop = top;
      if (jump && following) jump.hidden = true;
    }, { passive: true });
    new MutationObserver(function () {
      // New words may land before the scroll event of a person who just scrolled up: not back down.
      if (following && scroller.scrollTop < lastTop - 2) following = false;
      if (following) toLatest();
      else if (jump) jump.hidden = false;
      addCopyButtons(scroller);  // adds only to answers that have none: its own changes end here
    }).observe(scroller, { childList: true, subtree: true, characterData: true });
    // Sizes change without a mutation too: the composer growing, a thumbnail or a table laid out.
    if (window.ResizeObserver) {
      var resized = new ResizeObserver(function () {
        if (following && scroller.scrollTop < lastTop - 2) following = false;
        if (following) toLatest();
      });
      resized.observe(scroller);
      if ($("#transcript")) resized.observe($("#transcript"));
    }
    if (jump) jump.addEventListener("click", function () { toLatest(); });
    toLatest();
  }

  // Attachments: chosen, dropped or pasted, each checked against what the agent takes, each removable.
  var files = [];
  function problemWith(file) {
    var max = parseInt(input.dataset.maxBytes || "0", 10), accept = input.getAttribute("accept") || "";
    return file.size === 0 ? "is empty"
      : (max && file.size > max) ? "is " + sizeLabel(file.size) + ", over this agent's limit of " + sizeLabel(max)
      : !accepts(file, accept) ? "is not a type this agent accepts (" + accept + ")" : "";
  }
  function syncFiles() {
    var transfer = new DataTransfer();
    files.forEach(function (f) { transfer.items.add(f); });
    input.files = transfer.files;
    fileList.textContent = "";
    if (!files.length) return;
    fileList.appendChild(el("span", "muted", "Attached: "));
    var list = el("ul", "file-chips");
    files.forEach(function (file, i) {
      var item = el("li", "file-chip");
      if (/^image\//.test(file.type) && file.size < 8e6) {
        var img = el("img", "thumb");
        img.alt = "";
        var reader = new FileReader();
        reader.onload = function () { img.src = reader.result; };
        reader.readAsDataURL(file);
        item.appendChild(img);
      }
      item.appendChild(el("span", "", file.name + " (" + sizeLabel(file.size) + ")"));
      var remove = el("button", "button button-quiet button-small", "\u00d7");
      remove.type = "button";
      remove.setAttribute("aria-label", "Remove " + file.name);
      remove.addEventListener("click", function () { files.splice(i, 1); syncFiles(); textarea.focus(); });
      item.appendChild(remove);
      list.appendChild(item);
    });
    fileList.appendChild(list);
  }
  function addFiles(added) {
    for (var i = 0; i < added.length; i++) {
      var problem = problemWith(added[i]);
      if (problem) {
        // Refuse what the agent refuses before anything is sent; the typed message stays as it is.
        showError("\u201c" + added[i].name + "\u201d " + problem + ".");
        syncFiles();
        return;
      }
    }
    if (errors) errors.textContent = "";
    files = files.concat(Array.prototype.slice.call(added));
    if (!input.multiple) files = files.slice(-1);
    syncFiles();
  }
  function clearFiles() { if (input) { files = []; syncFiles(); } }
  if (input && !input.disabled && fileList) {
    input.addEventListener("change", function () {
      var chosen = Array.prototype.slice.call(input.files);
      addFiles(chosen.filter(function (f) { return files.indexOf(f) < 0; }));
    });
    composer.addEventListener("dragover", function (event) {
      if (event.dataTransfer && Array.prototype.indexOf.call(event.dataTransfer.types, "Files") >= 0) {
        event.preventDefault();
        composer.classList.add("dropping");
      }
    });
    composer.addEventListener("dragleave", function (event) {
      if (!composer.contains(event.relatedTarget)) composer.classList.remove("dropping");
    });
    composer.addEventListener("drop", function (event) {
      composer.classList.remove("dropping");
      if (!event.dataTransfer || !event.dataTransfer.files.length) return;
      event.preventDefault();
      addFiles(event.dataTransfer.files);
    });
    textarea.addEventListener("paste", function (event) {
      var pasted = event.clipboardData && event.clipboardData.files;
      if (!pasted || !pasted.length) return;
      // Images go to the agent's image picker where it has one (recorder.js), not here as well.
      var picker = composer.querySelector("[data-image-picker]:not([disabled])");
      var rest = Array.prototype.filter.call(pasted, function (f) { return !(picker && /^image\//.test(f.type)); });
      if (rest.length) { event.preventDefault(); addFiles(rest); }
    });
  }

  function running() { return !!$(".run-stream:not([data-closed])"); }
  if (composer) {
    // Enter sends, Shift+Enter starts a new line; never while an input method is composing.
    textarea.addEventListener("keydown", function (event) {
      if (event.key !== "Enter" || event.shiftKey || event.isComposing || event.keyCode === 229) return;
      event.preventDefault();
      if (!running() && !(sendButton && sendButton.disabled)) htmx.trigger(composer, "submit");
    });
    // Clear the composer only once the message is safely sent (an error keeps everything typed).
    composer.addEventListener("htmx:afterRequest", function (event) {
      if (event.detail.elt !== composer) return;
      var xhr = event.detail.xhr;
      if (event.detail.successful && !xhr.getResponseHeader("HX-Retarget")) {
        textarea.value = "";
        clearFiles();
        if (scroller) toLatest();
      } else if (event.detail.successful) {
        clearFiles();  // refused by the server: keep the words, drop the files (they would be refused again)
      } else {
        showError("The message could not be sent (" + (xhr.status || "no connection") + "). It is still here: try again.");
      }
    });
    var chooser = $("[data-profile-chooser]");
    if (chooser) {
      chooser.addEventListener("change", function () {
        var url = new URL(window.location.href);
        url.searchParams.set("profile", chooser.value);
        window.location.assign(url.toString());
      });
    }
  }

  // While a run streams, Stop stands where Send was.
  function refreshStop() {
    if (!stopButton) return;
    var live = running();
    stopButton.disabled = !live;
    if (composer) composer.toggleAttribute("data-running", live);
  }
  document.body.addEventListener("htmx:sseClose", function (event) {
    var stream = event.target.closest(".run-stream");
    if (stream) stream.setAttribute("data-closed", "");
    refreshStop();
  });
  document.body.addEventListener("htmx:load", refreshStop);

  // Copy buttons: one for each code block, one for each whole answer.
  function copyButton(label, text) {
    var b = el("button", "button button-quiet button-small copy", label);
    b.type = "button";
    b.addEventListener("click", function () {
      navigator.clipboard.writeText(text()).then(function () {
        b.textContent = "Copied";
        setTimeout(function () { b.textContent = label; }, 1500);
      }, function () { b.textContent = "Copy failed"; });
    });
    return b;
  }
  function addCopyButtons(root) {
    if (!root.querySelectorAll) return;
    root.querySelectorAll(".msg-assistant:not(.msg-streaming) .md pre:not([data-copy])").forEach(function (pre) {
      pre.setAttribute("data-copy", "");
      var code = pre.querySelector("code") || pre;
      pre.appendChild(copyButton("Copy code", function () { return code.textContent; }));
    });
    root.querySelectorAll(".msg-assistant:not(.msg-streaming):not([data-copy])").forEach(function (msg) {
      msg.setAttribute("data-copy", "");
      var text = $(".msg-text", msg);
      if (!text) return;
      var bar = $(".feedback", msg) || msg.appendChild(el("div", "msg-actions"));
      bar.insertBefore(copyButton("Copy", function () {
        var clone = text.cloneNode(true);
        clone.querySelectorAll(".copy").forEach(function (c) { c.remove(); });
        return clone.innerText || clone.textContent;
      }), bar.firstChild);
    });
  }
  addCopyButtons(document);

  // The details drawer on narrow screens, and the explain dialog.
  var workspace = $("[data-workspace]"), toggle = $("[data-drawer-toggle]");
  function drawer(open) {
    if (!workspace) return;
    workspace.toggleAttribute("data-drawer-open", open);
    if (toggle) toggle.setAttribute("aria-expanded", String(open));
    if (open) $("#workspace-side [data-drawer-close]").focus(); else if (toggle) toggle.focus();
  }
  if (toggle) toggle.addEventListener("click", function () { drawer(!workspace.hasAttribute("data-drawer-open")); });
  document.addEventListener("click", function (event) {
    if (event.target.closest("[data-drawer-close]")) drawer(false);
    if (event.target.closest("[data-open-explain]")) $("#explain").showModal();
  });
  document.addEventListener("keydown", function (event) {
    if (event.key === "Escape" && workspace && workspace.hasAttribute("data-drawer-open")) drawer(false);
  });

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
    document.querySelectorAll("[data-expires-at]").forEach(function (e) {
      var left = Math.round((Date.parse(e.dataset.expiresAt) - now) / 1000);
      if (isNaN(left)) return;
      var form = e.closest("form");
      if (left <= 0) {
        e.textContent = "now: this request has expired";
        if (form) form.querySelectorAll("button, input, textarea").forEach(function (c) { c.disabled = true; });
      } else {
        var m = Math.floor(left / 60), s = left % 60;
        e.textContent = "in " + (m ? m + " min " : "") + s + " s";
      }
    });
  }
  // A live run's clock (run status): from the server's count when the element arrived, so the
  // browser's own clock never matters; past the declared bound, the past-bound line shows.
  function clocks() {
    var now = Date.now();
    document.querySelectorAll("[data-elapsed]").forEach(function (e) {
      if (!e.dataset.seen) e.dataset.seen = now;
      var s = Math.floor(parseFloat(e.dataset.elapsed) + (now - e.dataset.seen) / 1000);
      if (isNaN(s)) return;
      e.textContent = (s >= 60 ? Math.floor(s / 60) + " min " : "") + (s % 60) + " s";
      var past = e.closest("[data-progress]").querySelector("[data-past-bound=time]");
      if (past && s > parseFloat(e.dataset.bound)) past.hidden = false;
    });
  }
  tick();
  clocks();
  setInterval(function () { tick(); clocks(); }, 1000);
  refreshStop();
})();
