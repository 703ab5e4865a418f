// The console's only script, and only a convenience: every page works without it.
// A pending event's page reloads itself until the event ends, so support sees
// the new attempt and the outcome of a replay without pressing anything. It
// waits while someone is typing, so a half-written reason is never lost.

const main = document.querySelector("main[data-refresh-seconds]");
const seconds = Number(main?.getAttribute("data-refresh-seconds"));

function busy() {
  const active = document.activeElement;
  if (active?.matches("input, textarea, select")) return true;
  return [...document.querySelectorAll("textarea")].some((field) => field.value !== "");
}

function refresh() {
  if (busy()) setTimeout(refresh, seconds * 1000);
  else window.location.reload();
}

if (seconds > 0) setTimeout(refresh, seconds * 1000);
