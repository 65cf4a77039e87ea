// Keeps the status page current without a reload: fetch the changing part every few seconds and swap it
// in, keeping open server cards open. A 401 means the login ended: reload to show the login form.
(function () {
  const live = document.getElementById("live");
  const state = document.getElementById("live-state");
  if (!live) return;
  const every = Number(live.dataset.pollMs) || 2000;
  const query = live.dataset.query ? "?" + live.dataset.query : "";

  async function refresh() {
    try {
      const response = await fetch("/status/live" + query, {credentials: "same-origin", cache: "no-store"});
      if (response.status === 401) { location.reload(); return; }
      if (!response.ok) throw new Error("HTTP " + response.status);
      const html = await response.text();
      const open = new Set([...live.querySelectorAll("details[open]")].map((d) => d.dataset.key));
      live.innerHTML = html;
      live.querySelectorAll("details").forEach((d) => { if (open.has(d.dataset.key)) d.open = true; });
      state.textContent = "live";
      state.classList.remove("offline");
    } catch (error) {
      state.textContent = "hub unreachable, retrying";
      state.classList.add("offline");
    }
    setTimeout(refresh, every);
  }
  setTimeout(refresh, every);
})();
