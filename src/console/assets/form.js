// The composer's live parts, as the server draws them on load: each message's size as it is
// typed (EUC-KR bytes: ASCII 1, every other character 2, as code page 949 counts Hangul and the
// symbols it has; or characters), a column list for each placeholder typed, and the first
// recipient's message filled from the first row the page carries. Every word comes from the form's
// data attributes (the page's language); the check measures every filled message exactly.
"use strict";
(function () {
  var form = document.querySelector("form.composer");
  if (!form) { return; }
  var words = form.dataset;
  function fill(template, values) {
    return template.replace(/\{(\w+)\}/g, function (all, key) { return key in values ? values[key] : all; });
  }
  function eucKr(text) {
    var bytes = 0;
    for (var ch of text) {
      var code = ch.codePointAt(0);
      if (code < 0x80) { bytes += 1; }
      else if (code > 0xffff) { return { bytes: bytes, bad: ch }; }
      else { bytes += 2; }
    }
    return { bytes: bytes, bad: null };
  }
  function sizeText(area) {
    var text = area.value.replace(/\r\n/g, "\n");
    var limit = Number(area.dataset.limit), lms = Number(area.dataset.lms);
    if (area.dataset.measure === "chars") {
      var chars = Array.from(text).length;
      return limit > 0 ? fill(words.sizeCharsLimit, { n: chars, limit: limit }) : fill(words.sizeChars, { n: chars });
    }
    var measured = eucKr(text);
    if (measured.bad) { return fill(words.sizeUnencodable, { c: JSON.stringify(measured.bad) }); }
    if (limit === lms) { return fill(words.sizeBytesLimit, { n: measured.bytes, limit: limit }); }
    var lane = measured.bytes <= limit
      ? fill(words.laneUpTo, { lane: words.classSms, limit: limit })
      : fill(words.laneUpTo, { lane: words.classLms, limit: lms });
    return fill(words.sizeBytesLane, { n: measured.bytes, lane: lane });
  }

  // The first row: column → value (phone numbers masked by the server).
  var first = {};
  document.querySelectorAll("#first-row li").forEach(function (item) {
    first[item.dataset.column] = item.dataset.value;
  });
  var rows = document.getElementById("placeholder-rows");
  var rowTemplate = document.getElementById("placeholder-row");
  var PLACEHOLDER = /#\{([^{}<>\r\n]+)\}|#<([^{}<>\r\n]+)>/g;
  function fieldOf(key) { return key === "이름" || key === "name" ? "name" : "var." + key; }
  function control(field) { return form.querySelector('[data-column][name="' + CSS.escape(field) + '"]'); }
  function idOf(field) { return "f-" + field.replace(/[^\p{L}\p{N}_]/gu, "-"); }

  // A column list for each placeholder the text has that the page did not list yet.
  function listPlaceholders(texts) {
    if (!rows || !rowTemplate) { return; }
    var seen = 0;
    texts.forEach(function (text) {
      for (var match of text.matchAll(PLACEHOLDER)) {
        var key = match[1] || match[2];
        seen += 1;
        var field = fieldOf(key);
        if (control(field)) { continue; }
        var row = rowTemplate.content.firstElementChild.cloneNode(true);
        row.id = idOf(field);
        row.querySelector("code.written").textContent = match[0];
        var input = row.querySelector("[data-column]");
        input.name = field;
        input.addEventListener("change", preview);
        input.addEventListener("input", preview);
        rows.appendChild(row);
      }
    });
    var none = document.getElementById("no-placeholders");
    if (none) { none.hidden = seen > 0; }
  }

  var bubble = document.querySelector(".composer-preview .bubble");
  var size = document.querySelector(".composer-preview .phone-size");
  var unfilled = document.getElementById("preview-unfilled");
  var main = form.querySelector('textarea[name="message.text"]');
  function preview() {
    if (!bubble || !main) { return; }
    var missing = false;
    var text = main.value.replace(/\r\n/g, "\n").replace(PLACEHOLDER, function (written, braces, angles) {
      var input = control(fieldOf(braces || angles));
      var value = input && input.value ? first[input.value] : undefined;
      if (!value) { missing = true; return written; }
      return value;
    });
    bubble.textContent = text;
    if (unfilled) { unfilled.hidden = !missing; }
    var chars = Array.from(text).length, measured = eucKr(text);
    var kind = form.dataset.kind, billed;
    if (kind === "sms" || (kind === "text" && !measured.bad && measured.bytes <= 90)) { billed = words.classSms; }
    else if (kind === "lms" || kind === "text") { billed = words.classLms; }
    else if (kind === "brand") { billed = words.classBrand; }
    else { billed = words.classAlimtalk; }
    if (size) {
      size.textContent = (measured.bad ? fill(words.previewUnencodable, { chars: chars })
        : fill(words.previewSize, { chars: chars, bytes: measured.bytes })) + " · " + words.billedAs + " ";
      var strong = document.createElement("strong");
      strong.textContent = billed;
      size.appendChild(strong);
    }
  }

  var messages = Array.from(document.querySelectorAll("textarea[data-measure]"));
  messages.forEach(function (area) {
    var output = document.querySelector('output[data-for="' + area.name + '"]');
    var update = function () {
      if (output) {
        output.textContent = sizeText(area);
        var over = /^(\d+) \/ (\d+)/.exec(output.textContent);
        output.classList.toggle("over", !!over && Number(over[1]) > Number(over[2]));
      }
      listPlaceholders(messages.map(function (m) { return m.value; }));
      preview();
    };
    area.addEventListener("input", update);
    if (output) { output.textContent = sizeText(area); }
  });
  form.querySelectorAll("[data-column]").forEach(function (input) {
    input.addEventListener("change", preview);
    input.addEventListener("input", preview);
  });

  // The error summary takes the focus; its links move it to their field.
  var summary = document.querySelector(".error-summary");
  if (summary) {
    summary.focus();
    summary.querySelectorAll("a[href^='#']").forEach(function (link) {
      link.addEventListener("click", function (event) {
        var target = document.getElementById(decodeURIComponent(link.getAttribute("href").slice(1)));
        if (!target) { return; }
        var details = target.closest("details");
        if (details) { details.open = true; }
        var focusable = target.matches("input, select, textarea") ? target : target.querySelector("input, select, textarea");
        event.preventDefault();
        target.scrollIntoView({ block: "center" });
        if (focusable) { focusable.focus(); }
      });
    });
  }
})();
