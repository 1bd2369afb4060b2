// cairn's web page: small improvements on pages that work without script.
"use strict";
document.addEventListener("DOMContentLoaded", function () {
  // Permalinks: a click copies the page's address; the link still works.
  document.querySelectorAll("a[data-copy]").forEach(function (a) {
    a.addEventListener("click", function (ev) {
      if (!navigator.clipboard || ev.metaKey || ev.ctrlKey || ev.shiftKey) return;
      ev.preventDefault();
      navigator.clipboard.writeText(a.href).then(function () {
        a.textContent = "Permalink copied";
        setTimeout(function () { a.textContent = "Permalink"; }, 2000);
      }, function () { window.location.href = a.href; });
    });
  });
  // Filters apply as soon as a choice changes.
  document.querySelectorAll("select[data-autosubmit]").forEach(function (s) {
    s.addEventListener("change", function () { if (s.form) s.form.requestSubmit(); });
  });
  // "Select all" boxes in bulk forms.
  document.querySelectorAll("input[data-checkall]").forEach(function (box) {
    box.addEventListener("change", function () {
      var name = box.getAttribute("data-checkall");
      box.form.querySelectorAll("input[type=checkbox][name='" + name + "']").forEach(function (c) { c.checked = box.checked; });
    });
  });
  // "/" focuses the search box.
  document.addEventListener("keydown", function (ev) {
    if (ev.key !== "/" || ev.target.closest("input, textarea, select")) return;
    var q = document.querySelector("input[name=q]");
    if (q) { ev.preventDefault(); q.focus(); q.select(); }
  });
});
