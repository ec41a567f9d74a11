(function () {
  "use strict";
  var bar = document.querySelector(".filters");
  if (!bar) { return; }
  var items = Array.prototype.slice.call(document.querySelectorAll("[data-level][data-area]"));
  var sections = Array.prototype.slice.call(document.querySelectorAll("[data-section]"));
  var shown = bar.querySelector(".shown");
  var empty = document.querySelector(".empty-filter");
  function chosen(kind) {
    var pressed = bar.querySelectorAll('[data-filter="' + kind + '"] button[aria-pressed="true"]');
    return Array.prototype.map.call(pressed, function (b) { return b.getAttribute("data-value"); });
  }
  function apply() {
    var levels = chosen("level"), areas = chosen("area"), count = 0;
    items.forEach(function (el) {
      var ok = (levels.length === 0 || levels.indexOf(el.getAttribute("data-level")) >= 0) &&
               (areas.length === 0 || areas.indexOf(el.getAttribute("data-area")) >= 0);
      el.hidden = !ok;
      if (ok) { count += 1; }
    });
    sections.forEach(function (sec) {
      sec.hidden = !sec.querySelector("[data-level]:not([hidden])");
    });
    shown.textContent = shown.getAttribute("data-template")
      .replace("{shown}", String(count)).replace("{total}", String(items.length));
    empty.hidden = count > 0;
  }
  bar.addEventListener("click", function (event) {
    var button = event.target.closest("button");
    if (!button) { return; }
    if (button.classList.contains("reset")) {
      bar.querySelectorAll("button[aria-pressed]").forEach(function (b) {
        b.setAttribute("aria-pressed", "false");
      });
    } else if (button.hasAttribute("aria-pressed")) {
      var on = button.getAttribute("aria-pressed") === "true";
      button.setAttribute("aria-pressed", on ? "false" : "true");
    }
    apply();
  });
  bar.hidden = false;
  apply();
})();
