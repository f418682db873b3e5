// Timing in the browser for the scale tests, measured inside the page (no
// round trips through the test driver), up to the frame that shows the
// result, with a CPU-contention probe and the slack policy of
// docs/layoutviz.md ("Measured speed"):
//
// - every measurement is preceded by the probe: a fixed integer workload in
//   the same page, whose time on the quiet box is PROBE_QUIET_MS;
// - slowdown = median probe / PROBE_QUIET_MS, clamped to [1, MAX_SLACK];
// - a target holds when the median of the samples is below target x slowdown.
//
// So on a quiet (or faster) machine the targets apply as they are,
// and under load they relax in proportion to how much slower the page's CPU
// measurably is, never by more than MAX_SLACK: a regression past twice the
// target fails however busy the box is.

// The probe's uncontended time on the 2-core dev box: the plateau of its
// fastest runs (5 of 40 at 20 ms, 2026-11-26 08:57 UTC; the other agents'
// builds run under nice, so a probe often gets a core to itself). See
// docs/layoutviz.md, "Measured speed".
export const PROBE_QUIET_MS = 20;
export const MAX_SLACK = 2;

// Runs the probe in the page; returns its wall time in ms.
export function probe(page) {
  return page.evaluate(() => {
    const t0 = performance.now();
    const a = new Int32Array(1 << 18);
    let x = 1;
    for (let k = 0; k < 64; ++k)
      for (let i = 0; i < a.length; ++i) { x = (Math.imul(x, 1103515245) + 12345) | 0; a[i] ^= x; }
    window.__probeSink = a[x & 0xffff];
    return performance.now() - t0;
  });
}

// Each measurement ends at the second animation frame after the change (the
// frame that shows it has then been produced): `frames` below, written out
// in each function because page.evaluate sends a function's source only.

// Loads a view by setting the URL fragment; the time until its evaluation is
// drawn (server, transfer, model, both canvases, panels) and on screen.
export function timedLoad(page, hash, layout) {
  return page.evaluate(([h, want]) => new Promise((resolve, reject) => {
    const frames = () => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
    const timer = setTimeout(() => reject(new Error('no evaluation of ' + want + ' within 30 s')), 30000);
    const t0 = performance.now();
    document.addEventListener('tilescope:doc', function on(e) {
      if (e.detail.request.layout !== want) return;
      document.removeEventListener('tilescope:doc', on);
      clearTimeout(timer);
      frames().then(() => resolve(performance.now() - t0));
    });
    location.hash = h;
  }), [hash, layout]);
}

// Changes "Colour by" the way the select does (its change event); the time
// until the recoloured views are on screen.
export function timedRecolour(page, mode) {
  return page.evaluate((m) => {
    const frames = () => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
    const sel = document.getElementById('color-select');
    const t0 = performance.now();
    sel.value = m;
    sel.dispatchEvent(new Event('change', { bubbles: true }));
    return frames().then(() => performance.now() - t0);
  }, mode);
}

// Clicks a cell with the mouse; the time from the button's release (the
// event that selects) until the selection is on screen.
export async function timedClick(page, view, cell) {
  const [x, y] = await page.evaluate(([v, c]) => window.tilescopeViz.cellCenter(v, c), [view, cell]);
  await page.evaluate(() => {
    const frames = () => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
    window.__clickMs = new Promise((resolve) => {
      window.addEventListener('pointerup', () => {
        const t0 = performance.now();
        frames().then(() => resolve(performance.now() - t0));
      }, { capture: true, once: true });
    });
  });
  await page.mouse.click(x, y);
  return page.evaluate(() => window.__clickMs);
}

export function median(values) {
  const s = [...values].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}

// The policy above: {median, slowdown, limit, ok}.
export function judge(samples, probes, target) {
  const m = median(samples);
  const slowdown = Math.min(MAX_SLACK, Math.max(1, median(probes) / PROBE_QUIET_MS));
  const limit = target * slowdown;
  return { medianMs: Math.round(m * 10) / 10, slowdown: Math.round(slowdown * 100) / 100, limitMs: Math.round(limit), ok: m < limit };
}
