// The live page without a reload: the figures, the progress bar and the server's pictures (the
// answers as a stacked bar, the rate over time) from the run's Server-Sent Events; at the end the
// controls give way to the results link. The page works without it (it then reloads itself every
// second while the run goes on).
(function () {
  "use strict";
  var root = document.getElementById("live");
  if (!root || !root.dataset.events || !window.EventSource) return;
  var fields = {};
  document.querySelectorAll("[data-live]").forEach(function (node) { fields[node.dataset.live] = node; });
  var pictures = {};
  document.querySelectorAll("[data-live-svg]").forEach(function (node) { pictures[node.dataset.liveSvg] = node; });
  var progress = document.querySelector("[data-live-progress]");
  // A count as the server writes it: 1,234.
  function figure(n) { return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ","); }
  function set(name, value) { if (fields[name]) fields[name].textContent = value == null ? "–" : String(value); }
  function rows(node, items, cells) {
    if (!node) return;
    node.replaceChildren();
    items.forEach(function (item) {
      var tr = document.createElement("tr");
      cells(item).forEach(function (text, index) {
        var td = document.createElement("td");
        if (index > 0) td.className = "n";
        td.textContent = String(text);
        tr.appendChild(td);
      });
      node.appendChild(tr);
    });
  }
  function errors(node, items) {
    if (!node) return;
    node.replaceChildren();
    (items.length ? items : [null]).forEach(function (text) {
      var li = document.createElement("li");
      if (text == null) { li.className = "none"; li.textContent = node.dataset.empty || ""; } else { li.textContent = text; }
      node.appendChild(li);
    });
  }
  var source = new EventSource(root.dataset.events);
  source.addEventListener("view", function (message) {
    var view = JSON.parse(message.data);
    ["sent", "accepted", "not_accepted", "uncertain", "in_flight", "pending", "done", "total"].forEach(function (name) {
      set(name, figure(view[name]));
      set(name + "_figure", figure(view[name]));
    });
    ["rate", "pace", "time_left", "spend", "waiting", "paused_why"].forEach(function (name) { set(name, view[name]); });
    var pausedWhy = document.getElementById("live-paused-why");
    if (pausedWhy) pausedWhy.hidden = !view.paused_why;
    // A scheduled start's line shows while the run waits (the first "waiting" may come after the page).
    var waitingLine = document.getElementById("live-waiting");
    if (waitingLine) waitingLine.hidden = !view.waiting;
    set("percent", view.percent + "%");
    set("phase", view.phase_label);
    if (fields.phase) fields.phase.className = "state " + view.phase;
    if (progress) {
      progress.max = view.total > 0 ? view.total : 1;
      progress.value = view.total > 0 ? view.done : (view.finished ? 1 : 0);
      progress.textContent = view.percent + "%";
    }
    // The pictures are the server's own SVG (its words and figures, escaped there).
    if (pictures.stack) pictures.stack.innerHTML = view.stack;
    if (pictures.chart) pictures.chart.innerHTML = view.chart;
    rows(fields.lanes, view.lanes, function (l) {
      return [l.lane.toUpperCase(), figure(l.valid), figure(l.sent), figure(l.uncertain), figure(l.sending), figure(l.pending)];
    });
    errors(fields.errors, view.errors);
    if (view.finished) {
      source.close();
      set("finished", view.finished);
      var controls = document.getElementById("live-controls");
      if (controls) controls.remove();
      var end = document.getElementById("live-end");
      if (end) end.hidden = false;
    }
  });
})();
