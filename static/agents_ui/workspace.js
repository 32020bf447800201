// The workspace in the browser: following new words, the composer (Enter sends, files checked,
// Send becoming Stop), streams that reconnect, copy buttons. Other scripts come on first use.
(function () {
  "use strict";
  var $ = function (s, r) { return (r || document).querySelector(s); }, on = function (t, e, f, o) { if (t) t.addEventListener(e, f, o); };
  var each = function (s, f, r) { (r || document).querySelectorAll(s).forEach(f); }, list = function (a) { return Array.prototype.slice.call(a); };
  var composer = $("[data-composer]"), errors = $("#composer-errors"), stopButton = $("[data-control=stop]");
  var sendButton = $("[data-send]"), textarea = $("#message"), input = $("#attachment"), fileList = $("[data-file-list]");
  var scroller = $("#conversation"), jump = $("[data-jump-latest]"), me = document.currentScript || {}, nonce = me.nonce;

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    e.className = cls || "";
    if (text) e.textContent = text;
    return e;
  }
  function showError(text) {
    if (errors) errors.replaceChildren(el("p", "alert alert-error small", text));
  }
  function size(bytes) {
    var units = ["bytes", "KB", "MB", "GB"], i = 0;
    while (bytes >= 1024 && i < 3) { bytes /= 1024; i += 1; }
    return (i && bytes % 1 ? bytes.toFixed(bytes < 10 ? 1 : 0) : Math.round(bytes)) + " " + units[i];
  }
  function accepts(file, accept) {
    return !accept || accept.split(",").some(function (p) {
      p = p.trim();
      return p.slice(-2) === "/*" ? file.type.indexOf(p.slice(0, -1)) === 0
        : p.charAt(0) === "." ? file.name.toLowerCase().slice(-p.length) === p.toLowerCase() : !!p && file.type === p;
    });
  }
  function put(field, files) {
    var all = new DataTransfer();
    files.forEach(function (f) { all.items.add(f); });
    field.files = all.files;
  }

  // The conversation follows new words unless the person scrolled up. Never smooth: an animation
  // still running when new words land would scroll back to its old target.
  var following = true, lastTop = 0;
  function toLatest() {
    following = true;
    scroller.scrollTop = scroller.scrollHeight;
    lastTop = scroller.scrollTop;
    if (jump) jump.hidden = true;
  }
  // Words may land before the scroll event of a person who scrolled up: not back down.
  function follow() {
    if (following && scroller.scrollTop < lastTop - 2) following = false;
    if (following) toLatest();
    return following;
  }
  if (scroller) {
    // Only scrolling up stops the following (new words move the bottom too).
    lastTop = scroller.scrollTop;
    on(scroller, "scroll", function () {
      var top = scroller.scrollTop;
      if (scroller.scrollHeight - top - scroller.clientHeight < 48) following = true;
      else if (top < lastTop - 2) following = false;
      lastTop = top;
      if (jump && following) jump.hidden = true;
    }, { passive: true });
    new MutationObserver(function () {
      if (!follow() && jump) jump.hidden = false;
      addCopyButtons(scroller);  // adds only to answers that have none: its own changes end here
      needClocks();  // the first expiry or clock that arrives brings clocks.js
    }).observe(scroller, { childList: true, subtree: true, characterData: true, attributeFilter: ["class"] });  // htmx settles a class after its swap
    // Sizes change without a mutation too (the composer growing, an image laid out).
    if (window.ResizeObserver) {
      var resized = new ResizeObserver(follow);
      resized.observe(scroller);
      if ($("#transcript")) resized.observe($("#transcript"));
    }
    on(jump, "click", toLatest);
    toLatest();
  }

  // Files chosen, dropped or pasted: checked against what the agent takes, each removable.
  var files = [];
  function syncFiles() {
    put(input, files);
    fileList.textContent = "";
    if (!files.length) return;
    var chips = el("ul", "file-chips");
    files.forEach(function (file, i) {
      var item = chips.appendChild(el("li", "file-chip"));
      if (/^image\//.test(file.type) && file.size < 8e6) {
        var img = item.appendChild(el("img", "thumb")), reader = new FileReader();
        img.alt = "";
        reader.onload = function () { img.src = reader.result; };
        reader.readAsDataURL(file);
      }
      item.appendChild(el("span", "", file.name + " (" + size(file.size) + ")"));
      var remove = item.appendChild(el("button", "button button-quiet button-small", "\u00d7"));
      remove.type = "button";
      remove.setAttribute("aria-label", "Remove " + file.name);
      on(remove, "click", function () { files.splice(i, 1); syncFiles(); textarea.focus(); });
    });
    fileList.append(el("span", "muted", "Attached: "), chips);
  }
  function addFiles(added) {
    var max = +(input.dataset.maxBytes || 0), accept = input.getAttribute("accept") || "";
    for (var i = 0; i < added.length; i++) {
      var f = added[i], problem = f.size === 0 ? "is empty"
        : max && f.size > max ? "is " + size(f.size) + ", over this agent's limit of " + size(max)
        : !accepts(f, accept) ? "is not a type this agent accepts (" + accept + ")" : "";
      // Refuse what the agent refuses before anything is sent; the typed message stays as it is.
      if (problem) { showError("\u201c" + f.name + "\u201d " + problem + "."); return syncFiles(); }
    }
    if (errors) errors.textContent = "";
    files = files.concat(list(added));
    if (!input.multiple) files = files.slice(-1);
    syncFiles();
  }
  var attaching = input && !input.disabled && fileList;
  if (attaching) {
    on(input, "change", function () { addFiles(list(input.files).filter(function (f) { return files.indexOf(f) < 0; })); });
    on(composer, "dragover", function (event) {
      if (event.dataTransfer && list(event.dataTransfer.types).indexOf("Files") >= 0) {
        event.preventDefault();
        composer.classList.add("dropping");
      }
    });
    on(composer, "dragleave", function (event) {
      if (!composer.contains(event.relatedTarget)) composer.classList.remove("dropping");
    });
    on(composer, "drop", function (event) {
      composer.classList.remove("dropping");
      if (!event.dataTransfer || !event.dataTransfer.files.length) return;
      event.preventDefault();
      addFiles(event.dataTransfer.files);
    });
  }

  // A pasted image goes to the agent's image picker where it has one.
  var picker = $("[data-image-picker]:not([disabled])"), imageStatus = $("[data-image-status]");
  function showImages() {
    if (imageStatus) imageStatus.textContent = picker.files.length ? "Image attached: " + list(picker.files).map(function (f) {
      return f.name + " (" + size(f.size) + ")";
    }).join(", ") : "or paste one into the message";
  }
  on(picker, "change", showImages);
  on(composer && textarea, "paste", function (event) {
    var pasted = list((event.clipboardData && event.clipboardData.files) || []), kept = picker ? list(picker.files) : [];
    var images = pasted.filter(function (f) { return picker && /^image\//.test(f.type); });
    var rest = pasted.filter(function (f) { return images.indexOf(f) < 0; });
    if (images.length) {
      var max = +(picker.dataset.maxBytes || 0);
      images.forEach(function (f) {
        if (max && f.size > max) return;
        var name = f.name && f.name !== "image.png" ? f.name : "pasted-image-" + (kept.length + 1) + "." + (f.type.split("/")[1] || "png");
        kept.push(new File([f], name, { type: f.type }));
      });
      put(picker, kept);
      showImages();
    }
    if (rest.length && attaching) addFiles(rest);
    if (images.length || (rest.length && attaching)) event.preventDefault();
  });

  // A control's script (data-script) comes with its first use, then takes over that press.
  var recorder = $("[data-recorder]"), scripts = {};
  if (recorder && !(window.MediaRecorder && navigator.mediaDevices)) {
    $("[data-record]", recorder).disabled = true;
    $("[data-record-status]", recorder).textContent = "This browser cannot record audio.";
  }
  function load(src, press) {
    var l = scripts[src] = scripts[src] || {};
    if (l.done) return;
    if (press) l.press = press;
    if (l.s) return;
    l.s = el("script");
    l.s.nonce = nonce;
    l.s.src = src;
    l.s.onload = function () { l.done = 1; if (l.press) l.press.click(); };
    document.head.appendChild(l.s);
  }
  function onDemand(event) {
    var box = event.target.closest && event.target.closest("[data-script]"), src = box && box.dataset.script;
    if (src) load(src, event.type === "click" && event.target.closest("button"));
  }
  // A press or a choice may come with no focus first.
  ["focusin", "click", "change"].forEach(function (type) { on(document, type, onDemand); });

  function running() { return !!$(".run-stream:not([data-closed])"); }
  if (composer) {
    // Enter sends, Shift+Enter starts a new line; never while an input method is composing.
    on(textarea, "keydown", function (event) {
      if (event.key !== "Enter" || event.shiftKey || event.isComposing || event.keyCode === 229) return;
      event.preventDefault();
      if (!running() && !(sendButton && sendButton.disabled)) htmx.trigger(composer, "submit");
    });
    // Cleared once sent (an error keeps all); refused (a retarget), the words stay, the files go.
    on(composer, "htmx:afterRequest", function (event) {
      if (event.detail.elt !== composer) return;
      var xhr = event.detail.xhr;
      if (!event.detail.successful) return showError("The message could not be sent (" + (xhr.status || "no connection") + "). It is still here: try again.");
      if (!xhr.getResponseHeader("HX-Retarget")) {
        textarea.value = "";
        if (scroller) toLatest();
        if (picker) { picker.value = ""; showImages(); }
      }
      if (attaching) { files = []; syncFiles(); }
    });
    var chooser = $("[data-profile-chooser]");
    on(chooser, "change", function () {
      var url = new URL(location.href);
      url.searchParams.set("profile", chooser.value);
      location.assign(url);
    });
  }

  // While a run streams, Stop stands where Send was.
  function refreshStop() {
    if (!stopButton) return;
    var live = running();
    stopButton.disabled = !live;
    if (composer) composer.toggleAttribute("data-running", live);
  }
  on(document.body, "htmx:sseClose", function (event) {
    var stream = event.target.closest(".run-stream");
    if (stream) stream.setAttribute("data-closed", "");
    reconnecting(event, "");
    refreshStop();
  });
  on(document.body, "htmx:load", refreshStop);

  // A cut stream comes back by itself: htmx's new connection passes the last frame's id as the
  // cursor. Meanwhile the run says it is reconnecting, never that it failed.
  var RECONNECTING = "Reconnecting… The answer goes on meanwhile, and shows here once the connection is back.";
  var cursors = {}, create = window.htmx && htmx.createEventSource;
  if (window.htmx) htmx.createEventSource = function (url) {
    var at = cursors[url];
    return create(at ? url + (url.indexOf("?") < 0 ? "?" : "&") + "cursor=" + encodeURIComponent(at) : url);
  };
  function reconnecting(event, text) {
    var stream = event.target.closest && event.target.closest(".run-stream"), note = stream && $("[data-reconnecting]", stream);
    if (note && note.textContent !== text) note.textContent = text;
  }
  on(document.body, "htmx:sseMessage", function (event) {
    var stream = event.target.closest(".run-stream"), id = event.detail && event.detail.lastEventId;
    if (stream && id) cursors[stream.getAttribute("sse-connect")] = id;
    reconnecting(event, "");
  });
  on(document.body, "htmx:sseError", function (event) { if (!event.target.closest("[data-closed]")) reconnecting(event, RECONNECTING); });
  on(document.body, "htmx:sseOpen", function (event) { reconnecting(event, ""); });

  // Copy buttons: one for each code block, one for each whole answer.
  function copyButton(label, text) {
    var b = el("button", "button button-quiet button-small copy", label);
    b.type = "button";
    on(b, "click", function () {
      navigator.clipboard.writeText(text()).then(function () {
        b.textContent = "Copied";
        setTimeout(function () { b.textContent = label; }, 1500);
      }, function () { b.textContent = "Copy failed"; });
    });
    return b;
  }
  function addCopyButtons(root) {
    var done = ".msg-assistant:not(.msg-streaming)";
    each(done + " .md pre:not([data-copy])", function (pre) {
      pre.setAttribute("data-copy", "");
      var code = $("code", pre) || pre;
      pre.appendChild(copyButton("Copy code", function () { return code.textContent; }));
    }, root);
    // Looked for, not marked: a swap may replace the bar that held the button.
    each(done, function (msg) {
      var text = $(".msg-text", msg);
      if (!text || $(".feedback > .copy, .msg-actions > .copy", msg)) return;
      var bar = $(".feedback", msg) || msg.appendChild(el("div", "msg-actions"));
      bar.prepend(copyButton("Copy", function () {
        var clone = text.cloneNode(true);
        each(".copy", function (c) { c.remove(); }, clone);
        return clone.innerText || clone.textContent;
      }));
    }, root);
  }
  addCopyButtons(document);

  // The details drawer on narrow screens (drawer.js comes with its toggle's first press).
  on(document, "click", function (event) {
    if (event.target.closest("[data-open-explain]")) $("#explain").showModal();
  });

  // Editing an interrupt's arguments means approving with those arguments.
  on(document.body, "input", function (event) {
    var box = event.target;
    if (!box.name || box.name.indexOf("edited-") !== 0) return;
    var choice = box.closest("fieldset").querySelector("input[type=radio][value=edit]");
    if (choice) choice.checked = true;
  });

  // Countdowns and run clocks: clocks.js (data-clocks) comes with the first one the page shows.
  function needClocks() { if (me.dataset && me.dataset.clocks && $("[data-expires-at], [data-elapsed]")) load(me.dataset.clocks); }
  needClocks();
  refreshStop();

  // An image the server could not fetch: images.js (this script's data-script) shows its link.
  function broken(img) { if (img.matches && img.matches("img[data-remote-image]") && img.complete && !img.naturalWidth) onDemand({ target: me }); }
  on(document, "error", function (event) { broken(event.target); }, true);
  each("img[data-remote-image]", broken);
})();
