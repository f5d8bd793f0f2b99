// Copy buttons beside copyable text (a heartbeat's ping URL and crontab line). Without scripts the
// buttons stay hidden and the text stays selectable. Loaded as a file: the Content-Security-Policy
// allows no inline script.
"use strict";
function uptimyCopy(root) {
  root.querySelectorAll("button[data-copies]").forEach(function (button) {
    var source = document.getElementById(button.dataset.copies);
    if (!source || button.dataset.ready || !navigator.clipboard) return;
    button.dataset.ready = "1";
    button.hidden = false;
    button.setAttribute("aria-controls", source.id);
    button.addEventListener("click", function () {
      var said = document.querySelector(".copied");
      navigator.clipboard.writeText(source.textContent).then(
        function () { if (said) said.textContent = "Copied."; },
        function () { if (said) said.textContent = "Couldn't copy: select the text and copy it."; }
      );
    });
  });
}
document.addEventListener("DOMContentLoaded", function () { uptimyCopy(document); });
document.addEventListener("htmx:load", function (event) { uptimyCopy(event.target); });
