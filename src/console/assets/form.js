// The edit page's live size of a message as it is typed: EUC-KR bytes (ASCII 1, every other
// character 2, as code page 949 counts Hangul and the symbols it has) or characters. Written as
// the server writes it on the page; the check measures every filled message exactly.
"use strict";
(function () {
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
      return limit > 0 ? chars + " / " + limit + " characters" : chars + " characters";
    }
    var measured = eucKr(text);
    if (measured.bad) { return "character " + JSON.stringify(measured.bad) + " cannot be encoded in EUC-KR"; }
    if (limit === lms) { return measured.bytes + " / " + limit + " bytes EUC-KR"; }
    return measured.bytes + " bytes EUC-KR: " + (measured.bytes <= limit ? "SMS (up to " + limit + ")" : "LMS (up to " + lms + ")");
  }
  document.querySelectorAll("textarea[data-measure]").forEach(function (area) {
    var output = document.querySelector('output[data-for="' + area.name + '"]');
    if (!output) { return; }
    var update = function () {
      output.textContent = sizeText(area);
      var over = /^(\d+) \/ (\d+)/.exec(output.textContent);
      output.classList.toggle("over", !!over && Number(over[1]) > Number(over[2]));
    };
    area.addEventListener("input", update);
    update();
  });
})();
