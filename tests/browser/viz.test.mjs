// The layout visualizer in a real browser: Debian's chromium driven by
// playwright-core. Starts `tilescope viz --serve --port 0`, then loads
// presets, clicks, edits and reads the page the way a user would. A
// screenshot and an exported SVG are kept under $ARTIFACTS.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';

const TILESCOPE = process.env.TILESCOPE;
const ARTIFACTS = process.env.ARTIFACTS || path.join(os.tmpdir(), 'tilescope-browser-artifacts');
assert.ok(TILESCOPE && fs.existsSync(TILESCOPE), 'set TILESCOPE to the tilescope binary');
fs.mkdirSync(ARTIFACTS, { recursive: true });

let server, base, context, profile;

before(async () => {
  server = spawn(TILESCOPE, ['viz', '--serve', '--port', '0'], { stdio: ['ignore', 'pipe', 'inherit'] });
  base = await new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error('server did not start: ' + out)), 15000);
    server.stdout.on('data', (chunk) => {
      out += chunk;
      const m = out.match(/serving on (http:\/\/127\.0\.0\.1:\d+\/)/);
      if (m) { clearTimeout(timer); resolve(m[1]); }
    });
    server.on('exit', (code) => reject(new Error('server exited with ' + code + ': ' + out)));
  });
  profile = fs.mkdtempSync(path.join(os.tmpdir(), 'tilescope-chromium-'));
  context = await chromium.launchPersistentContext(profile, {
    executablePath: '/usr/bin/chromium',
    headless: true,
    viewport: { width: 1500, height: 950 },
    acceptDownloads: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic'],
  });
});

after(async () => {
  if (context) await context.close();
  if (server) server.kill();
  if (profile) fs.rmSync(profile, { recursive: true, force: true });
});

// A fresh page; fails the test on any script error.
async function openPage(url) {
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  page.errors = errors;
  await page.goto(url);
  await settled(page);
  return page;
}
// Waits until the page shows the evaluation of its current state.
async function settled(page, layout) {
  await page.waitForFunction((want) => {
    const v = window.tilescopeViz;
    return v && v.doc && !document.body.dataset.evaluating && (!want || v.doc.request.layout === want);
  }, layout, { timeout: 15000 });
}
async function loadPreset(page, layoutText) {
  const value = await page.$eval('#preset-select', (sel, want) => {
    const opt = [...sel.options].find((o) => o.textContent.startsWith(want + ' '));
    return opt ? opt.value : null;
  }, layoutText);
  assert.ok(value !== null, 'preset ' + layoutText + ' is in the menu');
  await page.selectOption('#preset-select', value);
  await settled(page, layoutText);
}
async function setLayout(page, text, shape) {
  if (shape !== undefined) await page.fill('#shape-input', shape);
  await page.fill('#layout-input', text);
  await settled(page, text);
}
const litFlats = (page) => page.$$eval('#logical .cell.lit', (els) => els.map((e) => +e.dataset.flat).sort((a, b) => a - b));
const litSlots = (page) => page.$$eval('#physical .cell.lit', (els) => els.map((e) => e.dataset.slot));

test('mma.sync A preset: clicking element (3, 5) lists and lights its one owner', async () => {
  const page = await openPage(base);
  await loadPreset(page, 'mma_m16n8k16_a()');
  assert.equal(await page.locator('#logical .cell').count(), 256);
  // PTX ISA: row 3 -> groupID 3; column 5 -> threadID_in_group 2, a1 => lane 14, register 1.
  await page.click('#logical [data-flat="53"]');
  const owners = await page.textContent('#owners');
  assert.match(owners, /element \(3, 5\)/);
  assert.match(owners, /laneid 14, m 1/);
  assert.deepEqual(await litFlats(page), [53]);
  const slots = await litSlots(page);
  assert.equal(slots.length, 1);
  // The lit physical cell is labelled with the same logical coordinate.
  const label = await page.$eval('#physical .cell.lit', (el) => el.nextElementSibling.textContent);
  assert.equal(label, '3,5');
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('clicking a physical slot lights its logical element; a thread lights all of its own', async () => {
  const page = await openPage(base);
  await loadPreset(page, 'mma_m16n8k16_c()');
  // C fragment: lane 5 (groupID 1, tig 1), register 2 holds row 9, column 2.
  const slot = await page.evaluate(() => {
    const v = window.tilescopeViz;
    return [...document.querySelectorAll('#physical [data-slot]')].map((e) => e.dataset.slot)
      .find((key) => { const [r, c] = key.split(',').map(Number); return r === 5 && c === 2; });
  });
  await page.click(`#physical [data-slot="${slot}"]`);
  assert.deepEqual(await litFlats(page), [9 * 8 + 2]);
  assert.match(await page.textContent('#owners'), /slot laneid 5, m 2 holds:\s*element \(9, 2\)/);
  // Select lane 5: its four accumulators (1,2) (1,3) (9,2) (9,3).
  await page.fill('#owner-query', 'laneid 5');
  await page.press('#owner-query', 'Enter');
  assert.deepEqual(await litFlats(page), [10, 11, 74, 75]);
  assert.match(await page.textContent('#owners'), /laneid 5 holds 4 elements/);
  // The selection lives in the URL: a reload shows the same thing.
  assert.match(page.url(), /sel=o%3Alaneid(%20|\+)5/);
  await page.reload();
  await settled(page);
  assert.deepEqual(await litFlats(page), [10, 11, 74, 75]);
  await page.close();
});

test('an illegal edit shows the violation inline with its witness lit', async () => {
  const page = await openPage(base + '#layout=S%5B(4%2C8)%3A(1%40warpid%2C1%40laneid)%5D&shape=4%2C8&threads=128&dtype=f32');
  await settled(page, 'S[(4,8):(1@warpid,1@laneid)]');
  assert.ok(await page.locator('#legal-ok').isVisible());
  // Every lane of a warp on lane 0: elements (0, 0) and (0, 1) collide.
  await setLayout(page, 'S[(4,8):(1@warpid,0@laneid)]');
  const alias = page.locator('#diagnostics .diag[data-kind="alias"]');
  await alias.waitFor();
  assert.match(await alias.textContent(), /\(0, 0\) and \(0, 1\)/);
  assert.equal(await page.locator('#legal-ok').count(), 0);
  const witness = await page.$$eval('#logical .cell.witness', (els) => els.map((e) => +e.dataset.flat));
  assert.deepEqual(witness.sort((a, b) => a - b), [0, 1]);
  // Lanes past 31 are out of bounds.
  await setLayout(page, 'S[(2,64):(1@warpid,1@laneid)]', '2,64');
  await page.locator('#diagnostics .diag[data-kind="bounds"]').waitFor();
  assert.match(await page.textContent('#diagnostics'), /laneid/);
  // A parse error points at its column with a caret.
  await setLayout(page, 'S[(4,8):(1@warpid,1@lane)]', '4,8');
  const parse = page.locator('#diagnostics .diag[data-kind="parse"]');
  await parse.waitFor();
  assert.match(await parse.textContent(), /<layout>:1:\d+: unknown axis 'lane'/);
  assert.match(await parse.locator('pre').textContent(), /\n\s+\^$/);
  // A shape the layout does not admit.
  await setLayout(page, 'S[(4,8):(1@warpid,1@laneid)]', '4,9');
  await page.locator('#diagnostics .diag[data-kind="shape"]').waitFor();
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('bank conflicts: a column read of a 32x64 bf16 tile', async () => {
  const page = await openPage(base);
  await loadPreset(page, 'swizzle(128B, bf16, S[(32,64):(64,1)])');
  const wavefronts = () => page.$eval('#bank-wavefronts', (el) => +el.dataset.wavefronts);
  // 128B swizzle: column 0 of rows r and r + 8 share a bank: 4 wavefronts.
  assert.equal(await wavefronts(), 4);
  assert.match(await page.textContent('#bank-detail'), /banks 0, 4, 8, 12, 16, 20, 24, 28/);
  assert.equal(await page.locator('#physical .bankcol.conflict').count(), 8);
  // Row-major without swizzle: all 32 in bank 0.
  await setLayout(page, 'S[(32,64):(64,1)]');
  assert.equal(await wavefronts(), 32);
  // A row read is conflict-free either way (32 threads, 16 words).
  await page.selectOption('#access-mode', 'row');
  assert.equal(await wavefronts(), 1);
  // Padding each row by two elements spreads the column over all banks.
  await page.selectOption('#access-mode', 'column');
  await loadPreset(page, 'S[(32,64):(66,1)]');
  assert.equal(await wavefronts(), 1);
  await page.close();
});

test('export SVG and keep a screenshot as artifacts', async () => {
  const page = await openPage(base + '#layout=wgmma_acc(64%2C%2064)&shape=&sel=e%3A1043');
  await settled(page, 'wgmma_acc(64, 64)');
  // Element (16, 19): warp 1 of the warpgroup (rows 16..31), groupID 0, column block 2,
  // threadID_in_group 1 => lane 1, register 4 * 2 + 1 = 9.
  assert.match(await page.textContent('#owners'), /element \(16, 19\)/);
  assert.match(await page.textContent('#owners'), /wid_in_wg 1, laneid 1, m 9/);
  // Select a whole warp: warp 1 of the warpgroup holds rows 16..31, all 64 columns.
  await page.fill('#owner-query', 'wid_in_wg 1');
  await page.press('#owner-query', 'Enter');
  const warp = await litFlats(page);
  assert.equal(warp.length, 16 * 64);
  assert.equal(warp[0], 16 * 64);
  assert.equal(warp[warp.length - 1], 32 * 64 - 1);
  await page.fill('#owner-query', 'warpid 1');
  await page.press('#owner-query', 'Enter');
  assert.match(await page.textContent('#owners'), /no axis warpid/);
  await page.evaluate(() => window.tilescopeViz.select('e:1043'));
  const svg = await page.evaluate(() => window.tilescopeViz.exportSvg());
  assert.ok(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"'));
  const [download] = await Promise.all([page.waitForEvent('download'), page.click('#export-svg')]);
  const svgPath = path.join(ARTIFACTS, 'wgmma_acc_64x64.svg');
  await download.saveAs(svgPath);
  assert.ok(fs.statSync(svgPath).size > 10000);
  const shot = path.join(ARTIFACTS, 'layoutviz.png');
  await page.screenshot({ path: shot, fullPage: true });
  assert.ok(fs.statSync(shot).size > 10000);
  await page.close();
});

test('a static page from `tilescope viz -o` works offline', async () => {
  const file = path.join(ARTIFACTS, 'static-mma-c.html');
  execFileSync(TILESCOPE, ['viz', 'mma_m16n8k16_c()', '-o', file]);
  const page = await context.newPage();
  const remote = [];
  page.on('request', (r) => { if (!r.url().startsWith('file:')) remote.push(r.url()); });
  await page.goto('file://' + file);
  await settled(page);
  assert.match(await page.textContent('#mode-badge'), /static/);
  await page.click('#logical [data-flat="0"]');
  assert.match(await page.textContent('#owners'), /laneid 0, m 0/);
  // Editing cannot re-evaluate here: the page says how to get the live one.
  await page.fill('#layout-input', 'S[(16,8):(8,1)]');
  await page.locator('#snapshot-note').waitFor();
  assert.match(await page.textContent('#snapshot-note'), /tilescope viz --serve/);
  assert.deepEqual(remote, []);
  await page.screenshot({ path: path.join(ARTIFACTS, 'static.png') });
  await page.close();
});
