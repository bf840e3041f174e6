// The panel keeps no page in htmx's history cache (sessionStorage): a page may show a secret
// once (a rotated credential, an invitation link), and after Sign out, Back must not show it
// again (docs/panel.md). htmx is configured with historyCacheSize 0, which drops the cache at
// every navigation; this drops a cache left by an older panel too, on every page and swap.
(function () {
  function forget() {
    try {
      sessionStorage.removeItem("htmx-history-cache");
    } catch (e) {
      // sessionStorage refused (a private mode): there is no cache either.
    }
  }
  forget();
  document.addEventListener("htmx:afterSettle", forget);
  // The multi-property calendar's "select every property shown" box ticks the rows' boxes
  // too (without JavaScript the server reads it as every row shown).
  document.addEventListener("change", function (e) {
    var box = e.target;
    if (!box || box.id !== "select-all" || !box.form) {
      return;
    }
    var rows = box.form.querySelectorAll('input[type=checkbox][name="property"]');
    for (var i = 0; i < rows.length; i++) {
      rows[i].checked = box.checked;
    }
  });
  // The channel connection form shows the credentials of the adapter chosen only (without
  // JavaScript both are shown, and the server sends the chosen adapter's).
  function credentials() {
    var sel = document.querySelector('#connection-form [name="connection[adapter]"]');
    if (!sel) {
      return;
    }
    var sets = document.querySelectorAll("#connection-form fieldset[data-adapter]");
    for (var i = 0; i < sets.length; i++) {
      sets[i].hidden = sets[i].getAttribute("data-adapter") !== sel.value;
    }
  }
  credentials();
  document.addEventListener("htmx:afterSettle", credentials);
  document.addEventListener("change", function (e) {
    if (e.target && e.target.name === "connection[adapter]") {
      credentials();
    }
  });
})();
