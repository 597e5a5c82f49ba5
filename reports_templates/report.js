/* Report behaviour: filter answers by verdict; choose a claim to highlight its quotes in the evidence.
   Reads only the JSON block and data-* attributes; never inserts markup (trace text stays text). */
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("report-data").textContent);
  var answers = Array.prototype.slice.call(document.querySelectorAll("article.answer"));
  var filters = Array.prototype.slice.call(document.querySelectorAll("button.filter"));
  var status = document.getElementById("filter-status");

  function applyFilter(key, label) {
    var shown = 0;
    answers.forEach(function (a) {
      var tags = (a.getAttribute("data-tags") || "").split(" ");
      var visible = key === "all" || tags.indexOf(key) >= 0;
      a.hidden = !visible;
      if (visible) { shown += 1; }
    });
    filters.forEach(function (b) {
      b.setAttribute("aria-pressed", b.getAttribute("data-filter") === key ? "true" : "false");
    });
    status.textContent = key === "all"
      ? "Showing all " + answers.length + " answers."
      : "Showing " + shown + " of " + answers.length + " answers: " + label.toLowerCase() + ".";
  }
  filters.forEach(function (b) {
    b.addEventListener("click", function () {
      applyFilter(b.getAttribute("data-filter"), b.firstChild.textContent.trim());
    });
  });

  function clearSelection(article) {
    ["is-selected", "quote-hit", "is-cited", "is-excluded-support"].forEach(function (cls) {
      Array.prototype.forEach.call(article.querySelectorAll("." + cls), function (el) { el.classList.remove(cls); });
    });
    Array.prototype.forEach.call(article.querySelectorAll("[data-claim][aria-pressed]"), function (el) {
      el.setAttribute("aria-pressed", "false");
    });
  }

  function select(key) {
    var claim = data.claims[key];
    if (!claim) { return; }
    var article = document.getElementById(claim.answer);
    var already = article.querySelector('[data-claim="' + key + '"][aria-pressed="true"]');
    clearSelection(article);
    if (already) { return; }
    Array.prototype.forEach.call(article.querySelectorAll('[data-claim="' + key + '"]'), function (el) {
      el.classList.add("is-selected");
      el.setAttribute("aria-pressed", "true");
    });
    var row = document.getElementById(key);
    if (row) { row.classList.add("is-selected"); }
    var first = null;
    claim.quotes.forEach(function (q) {
      Array.prototype.forEach.call(article.querySelectorAll("mark.quote"), function (m) {
        if ((m.getAttribute("data-marks") || "").split(" ").indexOf(q) >= 0) {
          m.classList.add("quote-hit");
          if (!first) { first = m; }
        }
      });
    });
    claim.evidence.forEach(function (id) {
      var ev = document.getElementById(id);
      if (ev) { ev.classList.add("is-cited"); }
    });
    claim.excluded.forEach(function (id) {
      var ev = document.getElementById(id);
      if (ev) { ev.classList.add("is-excluded-support"); if (!first) { first = ev; } }
    });
    if (first && first.scrollIntoView) { first.scrollIntoView({block: "nearest"}); }
  }

  Array.prototype.forEach.call(document.querySelectorAll("[data-claim]"), function (el) {
    el.addEventListener("click", function () { select(el.getAttribute("data-claim")); });
    if (el.tagName !== "BUTTON") {
      el.addEventListener("keydown", function (ev) {
        if (ev.key === "Enter" || ev.key === " ") { ev.preventDefault(); select(el.getAttribute("data-claim")); }
      });
    }
  });
})();
