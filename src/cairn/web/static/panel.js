// Niceties only: every page works without this file.
// A search hit links to #L<line>; a line inside a paragraph has no element of its own, so the
// block whose data-lines span holds it is marked and scrolled to instead.
(function () {
  "use strict";
  function showLine() {
    var m = /^#L(\d+)$/.exec(window.location.hash);
    if (!m || document.getElementById("L" + m[1])) return;
    var line = parseInt(m[1], 10);
    var blocks = document.querySelectorAll("[data-lines]");
    for (var i = blocks.length - 1; i >= 0; i--) {
      var span = blocks[i].getAttribute("data-lines").split("-");
      if (line >= parseInt(span[0], 10) && line <= parseInt(span[1], 10)) {
        blocks[i].classList.add("target");
        blocks[i].scrollIntoView({ block: "center" });
        return;
      }
    }
  }
  document.addEventListener("DOMContentLoaded", showLine);
  window.addEventListener("hashchange", showLine);
})();
