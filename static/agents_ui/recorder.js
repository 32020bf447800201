// The audio recorder and pasted images of the composer: a recording (or a pasted image) becomes a
// file of the form, sent like any attachment and checked by the server the same way.
(function () {
  "use strict";

  function put(input, files) {
    var all = new DataTransfer();
    for (var i = 0; i < files.length; i++) all.items.add(files[i]);
    input.files = all.files;
  }

  function kilobytes(size) {
    return size < 1024 * 1024 ? Math.max(1, Math.round(size / 1024)) + " KB" : (size / 1048576).toFixed(1) + " MB";
  }

  var composer = document.querySelector("[data-composer]");
  if (!composer) return;

  // A pasted image is attached through the image picker (same limits, same field).
  var picker = composer.querySelector("[data-image-picker]");
  var imageStatus = composer.querySelector("[data-image-status]");
  var textarea = composer.querySelector("textarea");
  function showImages() {
    if (!imageStatus || !picker) return;
    var names = [];
    for (var i = 0; i < picker.files.length; i++) names.push(picker.files[i].name + " (" + kilobytes(picker.files[i].size) + ")");
    imageStatus.textContent = names.length ? "Image attached: " + names.join(", ") : "or paste one into the message";
  }
  if (picker && textarea && !picker.disabled) {
    picker.addEventListener("change", showImages);
    textarea.addEventListener("paste", function (event) {
      var items = (event.clipboardData && event.clipboardData.files) || [];
      var images = [];
      for (var i = 0; i < items.length; i++) if (items[i].type.indexOf("image/") === 0) images.push(items[i]);
      if (!images.length) return;
      event.preventDefault();
      var max = parseInt(picker.dataset.maxBytes || "0", 10);
      var kept = Array.prototype.slice.call(picker.files);
      images.forEach(function (file, n) {
        if (max && file.size > max) return;
        var name = file.name && file.name !== "image.png" ? file.name : "pasted-image-" + (kept.length + n + 1) + "." + (file.type.split("/")[1] || "png");
        kept.push(new File([file], name, { type: file.type }));
      });
      put(picker, kept);
      showImages();
    });
  }

  var box = composer.querySelector("[data-recorder]");
  var recorder = null;
  var chunks = [];
  function recorderPart(name) { return box.querySelector("[data-" + name + "]"); }
  function clearRecording() {
    if (!box) return;
    var playback = recorderPart("record-playback");
    if (playback.src) URL.revokeObjectURL(playback.src);
    playback.removeAttribute("src");
    playback.hidden = true;
    recorderPart("record-discard").hidden = true;
    recorderPart("recording").value = "";
    recorderPart("record").hidden = false;
    recorderPart("record-status").textContent = "a voice note";
  }
  if (box && window.MediaRecorder && navigator.mediaDevices) {
    var start = recorderPart("record"), stop = recorderPart("record-stop"), status = recorderPart("record-status");
    var types = (box.dataset.mimeTypes || "").split(",").filter(Boolean);
    var max = parseInt(box.dataset.maxBytes || "0", 10);
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
          var file = new File([blob], "voice-note." + (mime.split("/")[1] || "webm"), { type: mime });
          put(recorderPart("recording"), [file]);
          var playback = recorderPart("record-playback");
          playback.src = URL.createObjectURL(blob);
          playback.hidden = false;
          recorderPart("record-discard").hidden = false;
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
    recorderPart("record-discard").addEventListener("click", function () { clearRecording(); start.focus(); });
  } else if (box) {
    recorderPart("record").disabled = true;
    recorderPart("record-status").textContent = "This browser cannot record audio.";
  }

  // Once a message is sent (not refused: a refusal retargets), its recording and images go with it.
  composer.addEventListener("htmx:afterRequest", function (event) {
    if (event.detail.elt !== composer || !event.detail.successful) return;
    if (event.detail.xhr.getResponseHeader("HX-Retarget")) return;
    clearRecording();
    if (picker) { picker.value = ""; showImages(); }
  });
})();
