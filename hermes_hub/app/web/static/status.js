// Keeps the status page current without a reload. The hub's event bus says when something the viewer sees
// changed (/status/stream, server-sent events): the changing part is then fetched and swapped in, keeping
// open server cards open. It is also fetched every few seconds while that stream is down, and now and then
// while it is up (counts that are not events). A 401 means the login ended: reload to show the login form.
(function () {
  const live = document.getElementById("live");
  const state = document.getElementById("live-state");
  if (!live) return;
  const every = Number(live.dataset.pollMs) || 2000;
  const fallback = Number(live.dataset.fallbackMs) || 15000;
  const query = live.dataset.query ? "?" + live.dataset.query : "";
  let streaming = false, timer = null, busy = false, again = false;

  function schedule(ms) {
    clearTimeout(timer);
    timer = setTimeout(refresh, ms);
  }

  async function refresh() {
    if (busy) { again = true; return; }  // one fetch at a time; a change meanwhile fetches once more after it
    busy = true;
    try {
      const response = await fetch("/status/live" + query, {credentials: "same-origin", cache: "no-store"});
      if (response.status === 401) { location.reload(); return; }
      if (!response.ok) throw new Error("HTTP " + response.status);
      const html = await response.text();
      const open = new Set([...live.querySelectorAll("details[open]")].map((d) => d.dataset.key));
      // The filter form sits beside the calls table, inside the part that is swapped: keep the person's own
      // form (what they are typing, where the caret is) in place of the fresh copy.
      const form = document.getElementById("filters");
      const typing = form && form.contains(document.activeElement) ? document.activeElement : null;
      const caret = typing && typing.selectionStart != null ? [typing.selectionStart, typing.selectionEnd] : null;
      live.innerHTML = html;
      const fresh = document.getElementById("filters");
      if (form && fresh) {
        const names = fresh.querySelector("datalist");  // the tool names that exist now
        fresh.replaceWith(form);
        if (names) form.querySelector("datalist").replaceWith(names);
      }
      if (typing) { typing.focus(); if (caret) typing.setSelectionRange(caret[0], caret[1]); }
      live.querySelectorAll("details").forEach((d) => { if (open.has(d.dataset.key)) d.open = true; });
      state.textContent = streaming ? "live" : "live (polling)";
      state.classList.remove("offline");
    } catch (error) {
      state.textContent = "hub unreachable, retrying";
      state.classList.add("offline");
    } finally {
      busy = false;
    }
    if (again) { again = false; schedule(100); } else { schedule(streaming ? fallback : every); }
  }

  if (window.EventSource) {
    const changes = new EventSource("/status/stream");
    changes.onopen = () => { streaming = true; live.dataset.streaming = "1"; };
    changes.onmessage = () => schedule(150);  // a burst of changes is one fetch
    changes.onerror = () => { streaming = false; delete live.dataset.streaming; schedule(every); };
  }
  schedule(every);
})();
