/**
 * The one script of the UI, served at `/ui/live.js`: a page whose `<main>` has `data-live="MS"` fetches
 * itself again every MS milliseconds and swaps in the new `<main>`, until the new one has no
 * `data-live` (the build or operation finished). It waits while a field of `<main>` has the focus,
 * so a filter being typed is not wiped. Pages stay server-rendered; without the script they are
 * simply static. Plain JavaScript, no dependencies.
 */
export const LIVE_REFRESH_SCRIPT = `'use strict';
(function () {
  function schedule(main) {
    var ms = Number(main.getAttribute('data-live'));
    if (!(ms > 0)) return;
    setTimeout(function () { refresh(); }, ms);
  }
  function typing(main) {
    var el = document.activeElement;
    return !!el && main.contains(el) && /^(INPUT|SELECT|TEXTAREA)$/.test(el.tagName);
  }
  function refresh() {
    var current = document.querySelector('main');
    // Someone is filling in a form of the page: leave it alone until they are done.
    if (current && typing(current)) { schedule(current); return; }
    fetch(location.href, { credentials: 'same-origin' })
      .then(function (r) { return r.ok ? r.text() : Promise.reject(new Error(String(r.status))); })
      .then(function (text) {
        var next = new DOMParser().parseFromString(text, 'text/html').querySelector('main');
        var main = document.querySelector('main');
        if (!next || !main) return;
        main.replaceWith(next);
        document.documentElement.setAttribute('data-refreshed', String(Number(document.documentElement.getAttribute('data-refreshed') || 0) + 1));
        schedule(next);
      })
      .catch(function () { var main = document.querySelector('main'); if (main) setTimeout(refresh, 2000); });
  }
  var main = document.querySelector('main');
  if (main) schedule(main);
})();
`;
