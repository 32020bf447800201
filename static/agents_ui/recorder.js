// The audio recorder of the composer, loaded by workspace.js at the first press of Record: a
// recording becomes a file of the form, sent like any attachment and checked by the server the same way.
(function () {
  "use strict";
  var composer = document.querySelector("[data-composer]"), box = composer && composer.querySelector("[data-recorder]");
  if (!box || box.dataset.ready) return;
  box.dataset.ready = "1";
  function part(name) { return box.querySelector("[data-" + name + "]"); }
  function kilobytes(size) {
    return size < 1048576 ? Math.max(1, Math.round(size / 1024)) + " KB" : (size / 1048576).toFixed(1) + " MB";
  }
  var start = part("record"), stop = part("record-stop"), status = part("record-status"), playback = part("record-playback");
  var discard = part("record-discard"), field = part("recording"), recorder = null, chunks = [];
  var types = (box.dataset.mimeTypes || "").split(",").filter(Boolean), max = parseInt(box.dataset.maxBytes || "0", 10);
  function clear() {
    if (playback.src) URL.revokeObjectURL(playback.src);
    playback.removeAttribute("src");
    playback.hidden = discard.hidden = true;
    field.value = "";
    start.hidden = false;
    status.textContent = "a voice note";
  }
  start.addEventListener("click", function () {
    navigator.mediaDevices.getUserMedia({ audio: true }).then(function (stream) {
      var type = types.filter(function (t) { return MediaRecorder.isTypeSupported(t); })[0] || "";
      recorder = new MediaRecorder(stream, type ? { mimeType: type } : {});
      chunks = [];
      recorder.addEventListener("dataavailable", function (event) { if (event.data.size) chunks.push(event.data); });
      recorder.addEventListener("stop", function () {
        stream.getTracks().forEach(function (track) { track.stop(); });
        var mime = (recorder.mimeType || type || "audio/webm").split(";")[0];
        var blob = new Blob(chunks, { type: mime });
        stop.hidden = true;
        start.hidden = false;
        if (!blob.size) { status.textContent = "Nothing was recorded."; return; }
        if (max && blob.size > max) { status.textContent = "The recording is " + kilobytes(blob.size) + ", over this agent's limit: record a shorter one."; return; }
        var all = new DataTransfer();
        all.items.add(new File([blob], "voice-note." + (mime.split("/")[1] || "webm"), { type: mime }));
        field.files = all.files;
        playback.src = URL.createObjectURL(blob);
        playback.hidden = discard.hidden = false;
        start.textContent = "Record again";
        status.textContent = "Voice note ready (" + kilobytes(blob.size) + "): listen back, then send.";
      });
      recorder.start();
      start.hidden = true;
      stop.hidden = false;
      stop.focus();
      status.textContent = "Recording…";
    }, function () {
      status.textContent = "The microphone is not available: allow it in the browser to record.";
    });
  });
  stop.addEventListener("click", function () { if (recorder && recorder.state !== "inactive") recorder.stop(); });
  discard.addEventListener("click", function () { clear(); start.focus(); });

  // Once a message is sent (not refused: a refusal retargets), its recording goes with it.
  composer.addEventListener("htmx:afterRequest", function (event) {
    if (event.detail.elt !== composer || !event.detail.successful) return;
    if (!event.detail.xhr.getResponseHeader("HX-Retarget")) clear();
  });
})();
