// Show/Hide buttons beside secret fields (input[type=password]). Without scripts the buttons stay
// hidden and the field stays masked. Loaded as a file: the Content-Security-Policy allows no inline script.
"use strict";
function uptimyReveal(root) {
  root.querySelectorAll("button[data-reveals]").forEach(function (button) {
    var field = document.getElementById(button.dataset.reveals);
    if (!field || button.dataset.ready) return;
    button.dataset.ready = "1";
    button.hidden = false;
    button.addEventListener("click", function () {
      var showing = field.type === "text";
      field.type = showing ? "password" : "text";
      button.textContent = showing ? "Show" : "Hide";
      button.setAttribute("aria-pressed", showing ? "false" : "true");
    });
  });
}
document.addEventListener("DOMContentLoaded", function () { uptimyReveal(document); });
document.addEventListener("htmx:load", function (event) { uptimyReveal(event.target); });
