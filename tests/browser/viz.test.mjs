// The layout visualizer in a real browser: Debian's chromium driven by
// playwright-core (helpers.mjs starts `tilescope viz --serve --port 0`),
// loading presets, clicking, editing and reading the page the way a user
// would. A screenshot and an exported SVG are kept under $ARTIFACTS.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { env, ARTIFACTS, TILESCOPE, openPage, settled, loadPreset, setLayout, clickCell, lit, marks } from './helpers.mjs';

test('mma.sync A preset: clicking element (3, 5) lists and lights its one owner', async () => {
  const page = await openPage(env.base);
  await loadPreset(page, 'mma_m16n8k16_a()');
  assert.equal(await page.evaluate(() => window.tilescopeViz.views.logical.grid.rows * window.tilescopeViz.views.logical.grid.cols), 256);
  // PTX ISA: row 3 -> groupID 3; column 5 -> threadID_in_group 2, a1 => lane 14, element a1.
  await clickCell(page, 'logical', 53);
  const owners = await page.textContent('#owners');
  assert.match(owners, /element \(3, 5\)/);
  assert.match(owners, /T14 a1 {2}\(laneid 14, m 1\)/);
  assert.deepEqual(await lit(page, 'logical'), [53]);
  const slots = await lit(page, 'physical');
  assert.equal(slots.length, 1);
  // The lit physical cell is labelled with the same logical coordinate.
  assert.equal(await page.evaluate((c) => window.tilescopeViz.cellLabel('physical', c), slots[0]), '3,5');
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('clicking a physical slot lights its logical element; a thread lights all of its own', async () => {
  const page = await openPage(env.base);
  await loadPreset(page, 'mma_m16n8k16_c()');
  // C fragment: lane 5 (groupID 1, tig 1), register 2 holds row 9, column 2.
  const cell = await page.evaluate(() => 5 * window.tilescopeViz.model.pcol + 2);
  await clickCell(page, 'physical', cell);
  assert.deepEqual(await lit(page, 'logical'), [9 * 8 + 2]);
  assert.match(await page.textContent('#owners'), /slot T5 c2 \(laneid 5, m 2\) holds:\s*element \(9, 2\)/);
  // Select lane 5: its four accumulators (1,2) (1,3) (9,2) (9,3).
  await page.fill('#owner-query', 'laneid 5');
  await page.press('#owner-query', 'Enter');
  assert.deepEqual(await lit(page, 'logical'), [10, 11, 74, 75]);
  assert.match(await page.textContent('#owners'), /laneid 5 holds 4 elements/);
  // The selection lives in the URL: a reload shows the same thing.
  assert.match(page.url(), /sel=o%3Alaneid(%20|\+)5/);
  await page.reload();
  await settled(page);
  assert.deepEqual(await lit(page, 'logical'), [10, 11, 74, 75]);
  await page.close();
});

test('an illegal edit shows the violation inline with its witness lit', async () => {
  const page = await openPage(env.base + '#layout=S%5B(4%2C8)%3A(1%40warpid%2C1%40laneid)%5D&shape=4%2C8&threads=128&dtype=f32');
  await settled(page, 'S[(4,8):(1@warpid,1@laneid)]');
  assert.ok(await page.locator('#legal-ok').isVisible());
  // Every lane of a warp on lane 0: elements (0, 0) and (0, 1) collide.
  await setLayout(page, 'S[(4,8):(1@warpid,0@laneid)]');
  const alias = page.locator('#diagnostics .diag[data-kind="alias"]');
  await alias.waitFor();
  assert.match(await alias.textContent(), /\(0, 0\) and \(0, 1\)/);
  assert.equal(await page.locator('#legal-ok').count(), 0);
  assert.deepEqual(await marks(page, 'logical', 'witness'), [0, 1]);
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
  const page = await openPage(env.base);
  await loadPreset(page, 'swizzle(128B, bf16, S[(32,64):(64,1)])');
  const wavefronts = () => page.$eval('#bank-wavefronts', (el) => +el.dataset.wavefronts);
  // 128B swizzle: column 0 of rows r and r + 8 share a bank: 4 wavefronts.
  assert.equal(await wavefronts(), 4);
  assert.match(await page.textContent('#bank-detail'), /banks 0, 4, 8, 12, 16, 20, 24, 28/);
  assert.equal(await page.locator('#bank-chart .bar.conflict').count(), 8);
  // Row-major without swizzle: all 32 in bank 0.
  await setLayout(page, 'S[(32,64):(64,1)]');
  assert.equal(await wavefronts(), 32);
  // A row read is conflict-free either way (32 threads, 16 words).
  await page.selectOption('#access-mode', 'row');
  await settled(page);
  await page.waitForFunction(() => window.tilescopeViz.doc.request.acc === 'row');
  assert.equal(await wavefronts(), 1);
  // Padding each row by two elements spreads the column over all banks.
  await page.selectOption('#access-mode', 'column');
  await loadPreset(page, 'S[(32,64):(66,1)]');
  assert.equal(await wavefronts(), 1);
  await page.close();
});

test('export SVG and keep a screenshot as artifacts', async () => {
  const page = await openPage(env.base + '#layout=wgmma_acc(64%2C%2064)&shape=&sel=e%3A1043');
  await settled(page, 'wgmma_acc(64, 64)');
  // Element (16, 19): warp 1 of the warpgroup (rows 16..31), groupID 0, column block 2,
  // threadID_in_group 1 => lane 1, thread 33, element d9.
  assert.match(await page.textContent('#owners'), /element \(16, 19\)/);
  assert.match(await page.textContent('#owners'), /T33 d9 {2}\(wid_in_wg 1, laneid 1, m 9\)/);
  // Select a whole warp: warp 1 of the warpgroup holds rows 16..31, all 64 columns.
  await page.fill('#owner-query', 'wid_in_wg 1');
  await page.press('#owner-query', 'Enter');
  const warp = await lit(page, 'logical');
  assert.equal(warp.length, 16 * 64);
  assert.equal(warp[0], 16 * 64);
  assert.equal(warp[warp.length - 1], 32 * 64 - 1);
  await page.fill('#owner-query', 'warpid 1');
  await page.press('#owner-query', 'Enter');
  assert.match(await page.textContent('#owners'), /no axis warpid/);
  // A thread by its linear id.
  await page.fill('#owner-query', 'T33');
  await page.press('#owner-query', 'Enter');
  assert.match(await page.textContent('#owners'), /T33 holds 32 elements/);
  await page.evaluate(() => window.tilescopeViz.select('e:1043'));
  const svg = await page.evaluate(() => window.tilescopeViz.exportSvg());
  assert.ok(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"'));
  // Every cell of both views is in the file, the selected one outlined.
  assert.equal((svg.match(/<rect class="cell/g) || []).length, 64 * 64 + 128 * 32);
  assert.equal((svg.match(/<rect class="cell lit"/g) || []).length, 2);
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
  const page = await env.context.newPage();
  const remote = [];
  page.on('request', (r) => { if (!r.url().startsWith('file:')) remote.push(r.url()); });
  await page.goto('file://' + file);
  await settled(page);
  assert.match(await page.textContent('#mode-badge'), /static/);
  await clickCell(page, 'logical', 0);
  assert.match(await page.textContent('#owners'), /laneid 0, m 0/);
  // Editing cannot re-evaluate here: the page says how to get the live one.
  await page.fill('#layout-input', 'S[(16,8):(8,1)]');
  await page.locator('#snapshot-note').waitFor();
  assert.match(await page.textContent('#snapshot-note'), /tilescope viz --serve/);
  assert.deepEqual(remote, []);
  await page.screenshot({ path: path.join(ARTIFACTS, 'static.png') });
  await page.close();
});
