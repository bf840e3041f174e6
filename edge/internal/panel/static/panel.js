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
})();
