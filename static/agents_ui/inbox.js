// The inbox's browser notifications, loaded only on the inbox and where the person turned them on
// in this browser (the inbox_notify cookie). When the header's count (#inbox-link, polled by htmx)
// names something newer than this tab has seen while the tab is hidden, a notification says so.
(function () {
  "use strict";
  var KEY = "inbox-newest-seen";
  var supported = "Notification" in window;

  function remember(value) {
    try { sessionStorage.setItem(KEY, value); } catch (e) { /* private mode: no memory, no notice */ }
  }
  function seen() {
    try { return sessionStorage.getItem(KEY) || ""; } catch (e) { return ""; }
  }
  function link() { return document.getElementById("inbox-link"); }

  function showState() {
    var button = document.querySelector("[data-notify-allow]");
    var state = document.querySelector("[data-notify-state]");
    if (!button || !state) return;
    if (!supported) {
      state.textContent = "This browser cannot show notifications.";
      state.hidden = false;
      return;
    }
    var on = Notification.permission === "granted" && document.cookie.indexOf("inbox_notify=1") !== -1;
    button.hidden = on || Notification.permission === "denied";
    state.hidden = !on && Notification.permission !== "denied";
    state.textContent = on ? "Notifications are on in this browser: a new request tells you when this tab is hidden."
      : "Notifications are blocked for this site in the browser's settings.";
  }

  function allow() {
    Notification.requestPermission().then(function (answer) {
      if (answer === "granted") {
        document.cookie = "inbox_notify=1; path=/; max-age=31536000; SameSite=Lax";
      }
      showState();
    });
  }

  function check() {
    var el = link();
    if (!el) return;
    var newest = el.getAttribute("data-inbox-newest") || "";
    var count = parseInt(el.getAttribute("data-inbox-count") || "0", 10);
    var before = seen();
    remember(newest || "-");  // "-" sorts before any time: nothing waited
    if (!newest || !before || newest <= before || !document.hidden) return;
    if (!supported || Notification.permission !== "granted") return;
    var notice = new Notification("Agents UI: something waits on you", {
      body: count === 1 ? "1 request waits in your inbox." : count + " requests wait in your inbox.",
      tag: "agents-ui-inbox",
    });
    notice.onclick = function () { window.focus(); window.location.href = el.getAttribute("href"); };
  }

  document.addEventListener("DOMContentLoaded", function () {
    var el = link();
    if (el && !seen()) remember(el.getAttribute("data-inbox-newest") || "-");
    var button = document.querySelector("[data-notify-allow]");
    if (button) button.addEventListener("click", allow);
    showState();
  });
  // The count is swapped in whole (its poll, or out of band): htmx announces the new element.
  document.addEventListener("htmx:load", function (event) {
    if (event.target && event.target.id === "inbox-link") check();
  });
})();
