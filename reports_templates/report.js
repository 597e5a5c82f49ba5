/* Report behaviour: the answers are one JSON block, turned into DOM nodes only when shown.
   Search, filters, an index, pages of answer cards, and choosing a claim to light its quotes in the
   evidence. Trace text is untrusted: it only ever goes in through textContent / attributes, never
   as markup (no HTML string is ever parsed). */
(function () {
  "use strict";
  var PAGE = 25;
  var data = JSON.parse(document.getElementById("report-data").textContent);
  var answers = data.answers, table = data.evidence;
  // search and facets open on a wide screen; on a phone they fold away so the answers come first
  var facetsBox = document.getElementById("facets-box");
  if (facetsBox && window.matchMedia("(min-width: 701px)").matches) { facetsBox.open = true; }
  var byAnchor = {};
  answers.forEach(function (a) {
    // what the JSON leaves out because it follows from the rest: anchors, claim texts, citers, classes
    byAnchor[a.anchor] = a;
    var texts = {}, classes = {};
    a.pieces.forEach(function (p) { if (p[1]) { texts[p[1]] = p[0]; } });
    a.ev.forEach(function (r, k) {
      r.anchor = a.anchor + "e" + k; r.cited = []; r.marks = r.marks || [];
      if (table[r.ref].cls) { classes[table[r.ref].cls] = true; }
    });
    a.classes = Object.keys(classes);
    a.claims.forEach(function (c) {
      if (c.text === undefined) { c.text = texts[c.key]; }
      (c.cites || []).forEach(function (q, k) { q.key = c.key + "q" + k; });
      var quoted = (c.cites || []).concat(c.conflict ? (c.conflict.supports || []).concat(c.conflict.contradicts || []) : []);
      quoted.forEach(function (q) {
        if (q.ev !== null && q.ev !== undefined && a.ev[q.ev].cited.indexOf(c.key) < 0) { a.ev[q.ev].cited.push(c.key); }
      });
    });
  });
  var list = document.getElementById("answer-list");
  var index = document.getElementById("index");
  var indexCount = document.getElementById("index-count");
  var more = document.getElementById("more");
  var status = document.getElementById("filter-status");
  var search = document.getElementById("search");
  var facets = Array.prototype.slice.call(document.querySelectorAll("select.facet"));
  var filters = Array.prototype.slice.call(document.querySelectorAll("button.filter"));
  var state = {tag: "all", tagLabel: "All", text: ""};
  var matching = answers, shown = {}, selected = null;

  function el(tag, cls, text) {
    var node = document.createElement(tag);
    if (cls) { node.className = cls; }
    if (text !== undefined && text !== null) { node.textContent = String(text); }
    return node;
  }
  function add(parent, tag, cls, text) { var node = el(tag, cls, text); parent.appendChild(node); return node; }
  function words(s) { return String(s || "").replace(/_/g, " "); }
  function pct(v) { return v === null || v === undefined ? "n/a" : Math.round(v * 100) + "%"; }

  /* --- filters, search and the index ------------------------------------------------------- */

  function haystack(a) {
    if (a.hay === undefined) {
      var parts = [a.q || "", a.id, a.trace];
      a.pieces.forEach(function (p) { parts.push(p[0]); });
      a.ev.forEach(function (r) { parts.push(table[r.ref].text, table[r.ref].name || ""); });
      a.hay = parts.join("\n").toLowerCase();
    }
    return a.hay;
  }
  function facetValue(a, key) {
    if (key === "verdict") { return null; }
    if (key === "qt") { return a.qt || ""; }
    return a[key];
  }
  function matches(a) {
    if (state.tag !== "all" && a.tags.indexOf(state.tag) < 0) { return false; }
    for (var i = 0; i < facets.length; i++) {
      var key = facets[i].getAttribute("data-facet"), want = facets[i].value;
      if (want === "*") { continue; }
      if (key === "verdict") { if (!a.counts[want]) { return false; } }
      else if (key === "classes") { if (a.classes.indexOf(want) < 0) { return false; } }
      else if (facetValue(a, key) !== want) { return false; }
    }
    var terms = state.text.toLowerCase().split(/\s+/).filter(Boolean);
    var hay = terms.length ? haystack(a) : "";
    return terms.every(function (t) { return hay.indexOf(t) >= 0; });
  }
  function describe() {
    var bits = [];
    if (state.tag !== "all") { bits.push(state.tagLabel.toLowerCase()); }
    facets.forEach(function (f) {
      if (f.value !== "*") { bits.push(f.getAttribute("data-label") + " " + f.options[f.selectedIndex].text); }
    });
    if (state.text.trim()) { bits.push("matching \u201c" + state.text.trim() + "\u201d"); }
    return bits;
  }
  function apply() {
    matching = answers.filter(matches);
    var bits = describe();
    status.textContent = bits.length
      ? "Showing " + matching.length + " of " + answers.length + " answers: " + bits.join(", ") + "."
      : "Showing all " + answers.length + " answers.";
    filters.forEach(function (b) {
      b.setAttribute("aria-pressed", b.getAttribute("data-filter") === state.tag ? "true" : "false");
    });
    buildIndex();
    while (list.firstChild) { list.removeChild(list.firstChild); }
    shown = {}; selected = null;
    showMore();
  }
  function buildIndex() {
    var frag = document.createDocumentFragment();
    matching.forEach(function (a) {
      var li = el("li", "idx " + a.status.replace(/ /g, "-"));
      var link = add(li, "a", null);
      link.href = "#" + a.anchor;
      link.setAttribute("data-answer", a.anchor);
      add(link, "span", "status " + a.status.replace(/ /g, "-"), a.status);
      add(link, "span", "idx-q", a.q || "(no question recorded)");
      var c = a.counts, bad = (c.contradicted || 0) + (c.absent || 0) + (c.unjudged || 0);
      add(link, "span", "idx-n fine", bad ? bad + " to check" : (a.g === null ? "" : pct(a.g)));
      frag.appendChild(li);
    });
    while (index.firstChild) { index.removeChild(index.firstChild); }
    index.appendChild(frag);
    indexCount.textContent = String(matching.length);
  }
  function place(a) {
    if (shown[a.anchor]) { return shown[a.anchor]; }
    var card = renderAnswer(a);
    shown[a.anchor] = card;
    var next = null;
    for (var k = matching.indexOf(a) + 1; k < matching.length && !next; k++) { next = shown[matching[k].anchor] || null; }
    list.insertBefore(card, next);
    return card;
  }
  function showMore(count) {
    var left = count || PAGE;
    for (var k = 0; k < matching.length && left > 0; k++) {
      if (!shown[matching[k].anchor]) { place(matching[k]); left -= 1; }
    }
    var rest = matching.length - Object.keys(shown).length;
    more.hidden = rest <= 0;
    more.textContent = "Show " + Math.min(PAGE, rest) + " more (" + rest + " not shown)";
  }
  function reveal(anchor) {
    var a = byAnchor[anchor.replace(/[ce]\d+.*$/, "")];
    if (!a) { return; }
    if (matching.indexOf(a) < 0) { state.tag = "all"; search.value = state.text = ""; facets.forEach(function (f) { f.value = "*"; }); apply(); }
    place(a);
    var target = document.getElementById(anchor);
    if (target) { openAround(target); target.scrollIntoView({block: "start"}); }
  }
  function openAround(node) {
    for (var n = node; n; n = n.parentElement) { if (n.tagName === "DETAILS") { n.open = true; } }
  }

  /* --- one answer card ---------------------------------------------------------------------- */

  function bar(counts) {
    var ns = "http://www.w3.org/2000/svg", svg = document.createElementNS(ns, "svg");
    svg.setAttribute("class", "bar"); svg.setAttribute("viewBox", "0 0 100 10");
    svg.setAttribute("width", "120"); svg.setAttribute("height", "10"); svg.setAttribute("preserveAspectRatio", "none");
    svg.setAttribute("role", "img");
    var kinds = ["supported", "contradicted", "absent", "unjudged", "screened"], total = 0, x = 0, label = [];
    kinds.forEach(function (k) { total += counts[k] || 0; });
    var track = document.createElementNS(ns, "rect");
    track.setAttribute("class", "track"); track.setAttribute("width", "100"); track.setAttribute("height", "10");
    svg.appendChild(track);
    kinds.forEach(function (k) {
      var n = counts[k] || 0;
      if (!n) { return; }
      var r = document.createElementNS(ns, "rect"), w = 100 * n / total;
      r.setAttribute("class", k); r.setAttribute("x", x.toFixed(3)); r.setAttribute("width", w.toFixed(3)); r.setAttribute("height", "10");
      svg.appendChild(r); x += w; label.push(n + " " + k);
    });
    svg.setAttribute("aria-label", "Claims of this answer by verdict: " + (label.join(", ") || "nothing to show"));
    return svg;
  }
  function link(parent, a, ev, label) {
    if (ev === null || ev === undefined) { return add(parent, "span", null, label); }
    var node = add(parent, "a", null, label || table[a.ev[ev].ref].callout);
    node.href = "#" + a.ev[ev].anchor;
    return node;
  }
  function cites(parent, a, list_) {
    var ul = add(parent, "ul", "cites");
    list_.forEach(function (q) {
      var li = add(ul, "li");
      link(li, a, q.ev, q.label);
      li.appendChild(document.createTextNode(": "));
      add(li, "q", "quote-text", q.quote);
      if (q.found === false) { li.appendChild(document.createTextNode(" ")); add(li, "span", "tag bad", "quote not found in the item"); }
    });
  }
  function claimRow(a, c) {
    var li = el("li", "claim-row " + c.v);
    li.id = c.key;
    var btn = add(li, "button", "claim-btn");
    btn.type = "button"; btn.setAttribute("data-claim", c.key); btn.setAttribute("aria-pressed", "false");
    add(btn, "span", "chip " + c.v, c.v);
    btn.appendChild(document.createTextNode(" "));
    add(btn, "span", "claim-text", c.text);
    if (c.why) { add(li, "p", "rationale", c.why); }
    if (c.ck) { add(li, "p", "note", "Marked common knowledge by the judge (counted apart)."); }
    if (c.unjudged) { add(li, "p", "note warn", "Not decided (" + words(c.unjudged) + "): " + (c.uj || "") + " Fails closed: this answer cannot pass."); }
    if (c.excluded) {
      var p = add(li, "p", "callout",
        (c.only_excluded ? "Rests only on excluded evidence:" : c.v === "contradicted"
          ? "Excluded evidence would have supported it:" : "Also supported by excluded evidence:") + " ");
      c.excluded.forEach(function (x, n) {
        link(p, a, x.ev, x.label).className = "ex-link";
        if (x.reason) { p.appendChild(document.createTextNode(" ")); add(p, "span", "fine", "(" + x.reason + ")"); }
        if (n < c.excluded.length - 1) { p.appendChild(document.createTextNode("; ")); }
      });
    }
    if (c.cites) { cites(li, a, c.cites); }
    if (c.markers) {
      var ul = add(li, "ul", "markers");
      ul.setAttribute("aria-label", "citation markers");
      c.markers.forEach(function (m) {
        var row = add(ul, "li", "marker " + m.outcome.replace(/ /g, "-"));
        add(row, "code", "marker-text", m.marker);
        row.appendChild(document.createTextNode(" cites "));
        if (!m.items.length) { add(row, "span", "fine", "nothing in the evidence"); }
        m.items.forEach(function (it, n) {
          link(row, a, it.ev, it.label);
          if (it.adm === false) { row.appendChild(document.createTextNode(" ")); add(row, "span", "tag bad", "excluded"); }
          if (n < m.items.length - 1) { row.appendChild(document.createTextNode(", ")); }
        });
        if (m.by) { row.appendChild(document.createTextNode(" ")); add(row, "span", "fine", "(by " + m.by + ")"); }
        row.appendChild(document.createTextNode(": "));
        add(row, "span", "tag marker-outcome " + (m.sup ? "ok" : m.sup === false ? "bad" : "warn"), m.outcome);
        if (m.reason) { row.appendChild(document.createTextNode(" ")); add(row, "span", "fine marker-reason", m.reason); }
      });
    }
    if (c.conflict) {
      var box = add(li, "div", "conflict");
      box.setAttribute("role", "group"); box.setAttribute("aria-label", "conflicting admitted sources");
      var head = add(box, "p", "callout conflict-head", "Admitted sources disagree ");
      add(head, "span", "tag " + (c.conflict.res === "flag" ? "warn" : "bad"), "on_conflict: " + words(c.conflict.res));
      head.appendChild(document.createTextNode(" "));
      add(head, "span", "fine", c.conflict.note);
      var sides = add(box, "div", "conflict-sides");
      [["Supports the claim", c.conflict.supports || [], "supports"], ["Contradicts the claim", c.conflict.contradicts || [], "contradicts"]].forEach(function (s) {
        var side = add(sides, "div", "conflict-side " + s[2]);
        add(side, "h5", null, s[0]);
        cites(side, a, s[1]);
      });
    }
    if (c.mis) { add(li, "p", "callout misattributed", "Misattributed: supported by other admitted evidence, but not by the item its marker cites."); }
    (c.errors || []).forEach(function (e) { add(li, "p", "note warn", "Judge error: " + e); });
    return li;
  }
  function evidenceCard(a, r) {
    var item = table[r.ref];
    var state_ = item.adm ? "admitted" : item.adm === false ? "excluded" : "undecided";
    var card = el("div", "ev " + state_);
    card.id = r.anchor;
    var head = add(card, "div", "ev-head");
    add(head, "span", "tag " + (item.adm ? "ok" : item.adm === false ? "bad" : ""), item.adm ? "admitted" : item.adm === false ? "excluded" : "no policy");
    add(head, "span", "kind", item.label);
    if (item.name) { add(head, "strong", "ev-name", item.name); }
    if (item.cls) { add(head, "span", "tag", item.cls); }
    if (item.err) { add(head, "span", "tag bad", "tool error"); }
    if (item.reason) { add(card, "p", "reason", item.reason); }
    if (item.hops.length) {
      var ol = add(card, "ol", "hops");
      ol.setAttribute("aria-label", "hop path");
      item.hops.forEach(function (h) { add(ol, "li", null, h); });
    }
    if (item.url) { add(card, "p", "url fine", item.url); }
    var pre = add(card, "pre", "ev-text"), pos = 0;
    r.marks.forEach(function (m) {
      if (m[0] > pos) { pre.appendChild(document.createTextNode(item.text.slice(pos, m[0]))); }
      var mark = add(pre, "mark", "quote", item.text.slice(m[0], m[1]));
      mark.setAttribute("data-marks", m[2].join(" "));
      pos = m[1];
    });
    if (pos < item.text.length) { pre.appendChild(document.createTextNode(item.text.slice(pos))); }
    if (item.meta.length) {
      var det = add(card, "details", "meta");
      add(det, "summary", null, "metadata");
      var dl = add(det, "dl");
      item.meta.forEach(function (kv) { add(dl, "dt", null, kv[0]); add(dl, "dd", null, kv[1]); });
    }
    add(card, "p", "fine ev-id", r.id + (r.cited.length ? " \u00b7 cited by " + r.cited.length + " claim" + (r.cited.length === 1 ? "" : "s") : ""));
    if (item.shared < 2 || r.cited.length) { return card; }
    // stored once and shared by several answers (a system prompt, an earlier turn), cited by no
    // claim here: one line, opened on demand or when a chosen claim needs it
    var wrap = el("details", "ev-shared");
    var summary = add(wrap, "summary", null);
    add(summary, "span", "kind", item.label);
    var where = item.groups > 1 ? " in " + item.groups + (a.conv ? " conversations" : " traces")
      : a.conv ? " of conversation " + a.conv : " of trace " + a.trace;
    summary.appendChild(document.createTextNode(" \u00b7 " + state_ + " \u00b7 the same text in " + item.shared + " answers" + where));
    wrap.appendChild(card);
    return wrap;
  }
  function renderAnswer(a) {
    var art = el("article", "answer");
    art.id = a.anchor;
    art.setAttribute("data-tags", a.tags.join(" "));
    art.setAttribute("aria-labelledby", a.anchor + "-q");
    var head = add(art, "header", "answer-head");
    var title = add(head, "div", "answer-title");
    add(title, "span", "status " + a.status.replace(/ /g, "-"), a.status);
    add(title, "h3", null, a.q || "(no question recorded)").id = a.anchor + "-q";
    if (a.why) { add(title, "p", "why fine", "Not grounded: " + a.why + "."); }
    var figs = add(head, "div", "answer-figs");
    figs.appendChild(bar(a.counts));
    var parts = [];
    ["supported", "contradicted", "absent", "unjudged", "screened"].forEach(function (k) { if (a.counts[k]) { parts.push(a.counts[k] + " " + k); } });
    add(figs, "span", "fine", (a.g === null ? "" : "groundedness " + pct(a.g) + " \u00b7 ") + (parts.join(" \u00b7 ") || "no claims"));
    var ids = add(art, "p", "ids fine", "answer ");
    add(ids, "code", null, a.id);
    ids.appendChild(document.createTextNode(" \u00b7 trace "));
    add(ids, "code", null, a.trace);
    if (a.conv) { ids.appendChild(document.createTextNode(" \u00b7 conversation ")); add(ids, "code", null, a.conv); }
    if (a.qt) { ids.appendChild(document.createTextNode(" \u00b7 question type " + a.qt)); }
    var body = add(art, "div", "answer-body");
    var attribution = add(body, "div", "attribution");
    add(attribution, "h4", null, "Answer, claim by claim");
    var text = add(attribution, "p", "answer-text");
    a.pieces.forEach(function (p) {
      if (p[2]) {
        var span = add(text, "span", "claim " + p[2], p[0]);
        span.setAttribute("role", "button"); span.tabIndex = 0; span.setAttribute("aria-pressed", "false");
        span.setAttribute("data-claim", p[1]); span.title = p[2] + ": choose to see its evidence";
      } else if (p[3]) {
        var s = add(text, "span", "screened", p[0]);
        s.title = "screened out: " + p[3];
        add(s, "span", "why", words(p[3]));
      } else { text.appendChild(document.createTextNode(p[0])); }
    });
    var problems = a.claims.filter(function (c) { return c.v !== "supported" || c.mis || c.conflict; });
    var fine = a.claims.filter(function (c) { return problems.indexOf(c) < 0; });
    if (problems.length) {
      var ol = add(attribution, "ol", "claims");
      problems.forEach(function (c) { ol.appendChild(claimRow(a, c)); });
    }
    if (fine.length) {
      var det = add(attribution, "details", "supported-claims");
      add(det, "summary", null, fine.length + " supported claim" + (fine.length === 1 ? "" : "s"));
      var ol2 = add(det, "ol", "claims");
      fine.forEach(function (c) { ol2.appendChild(claimRow(a, c)); });
    }
    var screened = a.pieces.filter(function (p) { return p[3]; }).map(function (p) { return [p[0], p[3]]; }).concat(a.screened);
    if (screened.length) {
      var sp = add(attribution, "p", "fine screened-list", "Screened out: ");
      screened.forEach(function (s, n) {
        add(sp, "span", "tag", words(s[1]));
        sp.appendChild(document.createTextNode(" \u201c" + s[0] + "\u201d" + (n < screened.length - 1 ? "; " : "")));
      });
    }
    var evidence = add(body, "div", "evidence");
    var admitted = a.ev.filter(function (r) { return table[r.ref].adm; }).length;
    var h = add(evidence, "h4", null, "Evidence available before the answer ");
    add(h, "span", "fine", "(" + admitted + " admitted of " + a.ev.length + ")");
    if (!a.ev.length) { add(evidence, "p", "fine", "No evidence was available to this answer."); }
    a.ev.forEach(function (r) { evidence.appendChild(evidenceCard(a, r)); });
    return art;
  }

  /* --- choosing a claim --------------------------------------------------------------------- */

  function clearSelection(article) {
    ["is-selected", "quote-hit", "is-cited", "is-excluded-support"].forEach(function (cls) {
      Array.prototype.forEach.call(article.querySelectorAll("." + cls), function (n) { n.classList.remove(cls); });
    });
    Array.prototype.forEach.call(article.querySelectorAll("[data-claim][aria-pressed]"), function (n) {
      n.setAttribute("aria-pressed", "false");
    });
  }
  function select(key) {
    var a = byAnchor[key.replace(/c\d+$/, "")];
    var claim = a && a.claims.filter(function (c) { return c.key === key; })[0];
    var article = a && document.getElementById(a.anchor);
    if (!claim || !article) { return; }
    var already = article.querySelector('[data-claim="' + key + '"][aria-pressed="true"]');
    clearSelection(article);
    if (already) { return; }
    Array.prototype.forEach.call(article.querySelectorAll('[data-claim="' + key + '"]'), function (n) {
      n.classList.add("is-selected"); n.setAttribute("aria-pressed", "true");
    });
    var row = document.getElementById(key);
    if (row) { row.classList.add("is-selected"); openAround(row); }
    var quoted = (claim.cites || []).concat(claim.conflict ? (claim.conflict.supports || []).concat(claim.conflict.contradicts || []) : []);
    var first = null;
    quoted.forEach(function (q) {
      if (q.ev !== null && q.ev !== undefined) {
        var ev = document.getElementById(a.ev[q.ev].anchor);
        if (ev) { ev.classList.add("is-cited"); openAround(ev); }
      }
      if (q.found === false) { return; }
      Array.prototype.forEach.call(article.querySelectorAll("mark.quote"), function (m) {
        if ((m.getAttribute("data-marks") || "").split(" ").indexOf(q.key) >= 0) {
          m.classList.add("quote-hit");
          if (!first) { first = m; }
        }
      });
    });
    (claim.excluded || []).forEach(function (x) {
      var ev = x.ev === null || x.ev === undefined ? null : document.getElementById(a.ev[x.ev].anchor);
      if (ev) { ev.classList.add("is-excluded-support"); openAround(ev); if (!first) { first = ev; } }
    });
    if (first && first.scrollIntoView) { first.scrollIntoView({block: "nearest"}); }
  }

  /* --- wiring ------------------------------------------------------------------------------- */

  list.addEventListener("click", function (ev) {
    var target = ev.target.closest ? ev.target.closest("[data-claim]") : null;
    if (target) { select(target.getAttribute("data-claim")); }
  });
  list.addEventListener("keydown", function (ev) {
    var target = ev.target;
    if (target.tagName !== "BUTTON" && target.hasAttribute("data-claim") && (ev.key === "Enter" || ev.key === " ")) {
      ev.preventDefault(); select(target.getAttribute("data-claim"));
    }
  });
  index.addEventListener("click", function (ev) {
    var target = ev.target.closest ? ev.target.closest("a[data-answer]") : null;
    if (target) { ev.preventDefault(); reveal(target.getAttribute("data-answer")); history.replaceState(null, "", "#" + target.getAttribute("data-answer")); }
  });
  filters.forEach(function (b) {
    b.addEventListener("click", function () {
      state.tag = b.getAttribute("data-filter"); state.tagLabel = b.firstChild.textContent.trim(); apply();
    });
  });
  facets.forEach(function (f) {
    // options from the data, as text: a value is never markup
    var key = f.getAttribute("data-facet"), seen = {};
    if (key === "verdict") { return; }
    answers.forEach(function (a) {
      (key === "classes" ? a.classes : [facetValue(a, key)]).forEach(function (v) { seen[v] = (seen[v] || 0) + 1; });
    });
    Object.keys(seen).sort().forEach(function (v) {
      var option = add(f, "option", null, (v || "(none)") + " (" + seen[v] + ")");
      option.value = v;
    });
  });
  facets.forEach(function (f) { f.addEventListener("change", apply); });
  var timer = null;
  search.addEventListener("input", function () {
    clearTimeout(timer);
    timer = setTimeout(function () { state.text = search.value; apply(); }, 120);
  });
  more.addEventListener("click", function () { showMore(); });
  window.addEventListener("beforeprint", function () { showMore(matching.length); });
  window.addEventListener("hashchange", function () { if (/^#a\d/.test(location.hash)) { reveal(location.hash.slice(1)); } });
  apply();
  if (/^#a\d/.test(location.hash)) { reveal(location.hash.slice(1)); }
})();
