// Any size, readable: a 2^18-element layout loads in under a second and
// recolours in under 100 ms in headless chromium, and a click on it (or on
// tmem_m128(512), which took 4.5 s per click before the canvas) selects in
// under 100 ms. Timed inside the page up to the frame that shows the result,
// median of 7, with the stated slack policy of timing.mjs (the 2-core box is
// shared: the targets relax by the measured CPU slowdown, at most 2x).
// Larger layouts are refused with a clear message; ticks at every row when
// small and at powers of two (8, 16, warps) when large; a minimap for big
// grids.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { env, ARTIFACTS, openPage, settled, hashOf } from './helpers.mjs';
import { probe, timedLoad, timedRecolour, timedClick, judge, median, PROBE_QUIET_MS, MAX_SLACK } from './timing.mjs';

const BIG = { layout: 'S[(4,32,2048):(1@warpid,1@laneid,1@m)]', shape: '128,2048' };
const BIG_GLOBAL = { layout: 'S[(512,512):(512,1)]', shape: '512,512', scope: 'global' };
const TMEM = { layout: 'tmem_m128(512)', shape: '', target: 'sm_100a' };
const RUNS = 7;

test('2^18 elements: load < 1 s, recolour < 100 ms, click < 100 ms (median of 7, slack by measured slowdown)', async () => {
  const page = await openPage(env.base + hashOf({ layout: 'S[(4,8):(8,1)]', shape: '4,8' }));
  const loads = [], loadProbes = [], recolours = [], recolourProbes = [], clicks = [], clickProbes = [], phases = [];
  for (let run = 0; run < RUNS; ++run) {
    // Alternate two big layouts so each load is a real evaluation.
    const values = run % 2 ? BIG : BIG_GLOBAL;
    loadProbes.push(await probe(page));
    loads.push(await timedLoad(page, hashOf(values), values.layout));
    phases.push(await page.evaluate(() => Object.assign({}, window.tilescopeViz.timings)));
    assert.equal(await page.evaluate(() => window.tilescopeViz.doc.size), 1 << 18);
    // The owners came as int32 after the document (api/eval?bin=1), not as
    // megabytes of JSON numbers.
    assert.ok(await page.evaluate(() => window.tilescopeViz.doc.owners instanceof Int32Array));
    for (const mode of run % 2 ? ['row', 'column'] : ['element', 'row']) {
      recolourProbes.push(await probe(page));
      recolours.push(await timedRecolour(page, mode));
    }
    // A click on an element far from the origin selects it (and its owner).
    const cell = 1000 + 37 * run * 1013;
    clickProbes.push(await probe(page));
    clicks.push(await timedClick(page, 'logical', cell));
    assert.deepEqual(await page.evaluate(() => window.tilescopeViz.marks('logical', 'lit')), [cell]);
    // The owner is named (a global tile has no banks: its element offset).
    if (run === 0) assert.match(await page.textContent('#owners'), /^element \(1, 488\) — 1 owner:\nm1000 /);
  }
  const round = (v) => v.map(Math.round);
  const report = {
    policy: { probeQuietMs: PROBE_QUIET_MS, maxSlack: MAX_SLACK, targetsMs: { load: 1000, recolour: 100, click: 100 } },
    load: judge(loads, loadProbes, 1000), recolour: judge(recolours, recolourProbes, 100), click: judge(clicks, clickProbes, 100),
    loadsMs: round(loads), recoloursMs: round(recolours), clicksMs: round(clicks),
    probesMs: { load: round(loadProbes), recolour: round(recolourProbes), click: round(clickProbes) },
    // where a load goes: fetch (server and transfer), model, classes, draw, panels
    medianPhasesMs: Object.fromEntries(['fetch', 'model', 'classes', 'draw', 'panels'].map((k) => [k, Math.round(median(phases.map((p) => p[k])))])),
    loadAverage: os.loadavg(), cpus: os.cpus().length, date: new Date().toISOString() };
  fs.writeFileSync(path.join(ARTIFACTS, 'timings.json'), JSON.stringify(report, null, 2));
  console.log('timings', JSON.stringify(report));
  for (const what of ['load', 'recolour', 'click'])
    assert.ok(report[what].ok, 'median ' + what + ' ' + report[what].medianMs + ' ms, limit ' + report[what].limitMs + ' ms (slowdown ' + report[what].slowdown + ')');
  // Big grids get a minimap; ticks at powers of two, on warp boundaries.
  assert.ok(await page.locator('#physical .minimap').isVisible());
  const ticks = await page.evaluate(() => window.tilescopeViz.views.physical.ticks);
  assert.ok(ticks.rstep >= 2 && (ticks.rstep & (ticks.rstep - 1)) === 0);
  await page.screenshot({ path: path.join(ARTIFACTS, 'big-2^18.png') });
  // SVG export still works at this size: the cells become one embedded bitmap.
  const svg = await page.evaluate(() => window.tilescopeViz.exportSvg());
  assert.ok(svg.startsWith('<svg') && svg.includes('<image') && svg.length < 8e6, 'svg of ' + svg.length + ' bytes');
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('tmem_m128(512) (2.8 s to load, 4.5 s per click before): load < 1 s, a click < 100 ms, same policy', async () => {
  const page = await openPage(env.base + hashOf({ layout: 'S[(4,8):(8,1)]', shape: '4,8' }));
  const loads = [], loadProbes = [], clicks = [], clickProbes = [];
  for (let run = 0; run < 3; ++run) {
    await page.evaluate((h) => { location.hash = h; }, hashOf({ layout: 'S[(4,8):(8,1)]', shape: '4,8' }));
    await settled(page, 'S[(4,8):(8,1)]');
    loadProbes.push(await probe(page));
    loads.push(await timedLoad(page, hashOf(TMEM), TMEM.layout));
    for (const cell of [5, 128 * 511 + 77, 64 * 512 + 300]) {
      clickProbes.push(await probe(page));
      clicks.push(await timedClick(page, 'logical', cell));
      assert.deepEqual(await page.evaluate(() => window.tilescopeViz.marks('logical', 'lit')), [cell]);
    }
  }
  const load = judge(loads, loadProbes, 1000), click = judge(clicks, clickProbes, 100);
  console.log('tmem timings', JSON.stringify({ load, click, loadsMs: loads.map(Math.round), clicksMs: clicks.map(Math.round) }));
  assert.ok(load.ok, 'median load ' + load.medianMs + ' ms, limit ' + load.limitMs);
  assert.ok(click.ok, 'median click ' + click.medianMs + ' ms, limit ' + click.limitMs);
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('above 2^18 owners the page refuses with the limit stated', async () => {
  const page = await openPage(env.base + hashOf({ layout: 'S[(512,513):(513,1)]', shape: '512,513' }));
  const d = page.locator('#diagnostics .diag[data-kind="size"]');
  await d.waitFor();
  assert.match(await d.textContent(), /262656 elements x 1 replicas is more than the 262144 owners the page draws/);
  await page.close();
});

test('small layouts tick every row; zoom and pan move the view and the minimap jumps', async () => {
  const page = await openPage(env.base + hashOf({ layout: 'mma_m16n8k16_a()', shape: '' }));
  const ticks = await page.evaluate(() => window.tilescopeViz.views.logical.ticks);
  assert.equal(ticks.rstep, 1);
  assert.deepEqual(ticks.rows, Array.from({ length: 16 }, (_, i) => i));
  // The register view ticks every lane (odd ones too) and names every register.
  const pticks = await page.evaluate(() => window.tilescopeViz.views.physical.ticks);
  assert.equal(pticks.rstep, 1);
  assert.equal(pticks.cstep, 1);
  assert.deepEqual(pticks.rows, Array.from({ length: 32 }, (_, i) => i));
  // A large grid: zoom in on the logical view, pan by dragging.
  await page.evaluate((h) => { location.hash = h; }, hashOf({ layout: 'wgmma_acc(64, 256)', shape: '' }));
  await settled(page, 'wgmma_acc(64, 256)');
  const box = await page.locator('#logical canvas.grid-canvas').boundingBox();
  await page.mouse.move(box.x + 200, box.y + 100);
  for (let k = 0; k < 5; ++k) await page.mouse.wheel(0, -100);
  const zoomed = await page.evaluate(() => window.tilescopeViz.views.logical.scale);
  assert.ok(zoomed > 2, 'zoomed to ' + zoomed);
  const before = await page.evaluate(() => window.tilescopeViz.views.logical.ox);
  await page.mouse.move(box.x + 300, box.y + 100);
  await page.mouse.down();
  await page.mouse.move(box.x + 150, box.y + 100, { steps: 5 });
  await page.mouse.up();
  const after = await page.evaluate(() => window.tilescopeViz.views.logical.ox);
  assert.ok(after > before + 100, 'panned from ' + before + ' to ' + after);
  const mini = page.locator('#logical .minimap');
  assert.ok(await mini.isVisible());
  const mb = await mini.boundingBox();
  await page.mouse.click(mb.x + mb.width - 3, mb.y + mb.height / 2);
  assert.ok(await page.evaluate(() => window.tilescopeViz.views.logical.ox) > after);
  await page.screenshot({ path: path.join(ARTIFACTS, 'zoomed-wgmma-64x256.png') });
  await page.close();
});
