// msgbatch console: keeps what a person types in a page's form (in this tab only), so that a
// session that ends while they type loses nothing: after signing in again they are back on the
// page and the text is back in the form. Also warns five minutes before an idle session ends.
(function () {
  "use strict";
  var KEY = "msgbatch-draft";
  var saved = null;
  try {
    saved = JSON.parse(window.sessionStorage.getItem(KEY) || "null");
  } catch (e) {
    saved = null;
  }
  // A draft of another page: the person saved it or went elsewhere; it is not theirs to restore.
  if (saved && saved.path !== window.location.pathname) {
    window.sessionStorage.removeItem(KEY);
    saved = null;
  }

  var warning = document.getElementById("session-ending");
  if (warning) {
    var after = parseInt(warning.getAttribute("data-after-seconds"), 10);
    if (after > 0) {
      window.setTimeout(function () { warning.hidden = false; }, after * 1000);
    }
  }

  var box = document.querySelector("main form textarea");
  var form = box ? box.form : null;
  if (!form) {
    return;
  }
  function kept(field) {
    return field.name && field.name !== "csrf" && field.type !== "file" && field.type !== "hidden" &&
      field.type !== "password" && field.type !== "submit";
  }
  if (saved && saved.fields) {
    var restored = false;
    Array.prototype.forEach.call(form.elements, function (field) {
      if (kept(field) && Object.prototype.hasOwnProperty.call(saved.fields, field.name) &&
          field.value !== saved.fields[field.name]) {
        field.value = saved.fields[field.name];
        field.dispatchEvent(new Event("input", { bubbles: true }));
        restored = true;
      }
    });
    var notice = document.getElementById("draft-restored");
    if (restored && notice) {
      notice.hidden = false;
    }
  }
  function save() {
    var fields = {};
    Array.prototype.forEach.call(form.elements, function (field) {
      if (kept(field)) {
        fields[field.name] = field.value;
      }
    });
    try {
      window.sessionStorage.setItem(KEY, JSON.stringify({ path: window.location.pathname, fields: fields }));
    } catch (e) {
      // A full or refused storage: the form still works, only without the copy.
    }
  }
  form.addEventListener("input", save);
  form.addEventListener("change", save);
})();
