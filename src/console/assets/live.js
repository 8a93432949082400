// The live page without a reload: the figures from the run's Server-Sent Events. The page works
// without it (it then reloads itself every second).
(function () {
  "use strict";
  var root = document.getElementById("live");
  if (!root || !root.dataset.events || !window.EventSource) return;
  var fields = {};
  document.querySelectorAll("[data-live]").forEach(function (node) { fields[node.dataset.live] = node; });
  function set(name, value) { if (fields[name]) fields[name].textContent = value == null ? "–" : String(value); }
  function rows(node, items, cells) {
    if (!node) return;
    node.replaceChildren();
    items.forEach(function (item) {
      var tr = document.createElement(node.tagName === "UL" ? "li" : "tr");
      cells(item).forEach(function (text, index) {
        if (node.tagName === "UL") { tr.textContent = text; return; }
        var td = document.createElement("td");
        if (index > 0) td.className = "n";
        td.textContent = String(text);
        tr.appendChild(td);
      });
      node.appendChild(tr);
    });
  }
  var source = new EventSource(root.dataset.events);
  source.addEventListener("view", function (message) {
    var view = JSON.parse(message.data);
    ["sent", "accepted", "not_accepted", "uncertain", "in_flight", "pending", "rate", "pace", "time_left", "spend", "waiting"].forEach(function (name) { set(name, view[name]); });
    set("phase", view.phase);
    if (fields.phase) fields.phase.className = "state " + view.phase;
    rows(fields.lanes, view.lanes, function (l) { return [l.lane, l.valid, l.sent, l.uncertain, l.sending, l.pending]; });
    rows(fields.errors, view.errors, function (e) { return [e]; });
    if (view.finished) { source.close(); set("phase", "finished"); }
  });
})();
