// The bugs of issue 22, one test each: wrong owner labels, stale URL state,
// the page's own bank model, unvalidated fields, preset argument errors
// shown as parse errors, custom accesses dropped.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { env, TILESCOPE, openPage, settled, setLayout, clickCell, hashOf } from './helpers.mjs';

const label = (page, view, cell) => page.evaluate(([v, c]) => window.tilescopeViz.cellLabel(v, c), [view, cell]);
// Zooms a view until its labels are drawn.
async function zoomUntilLabelled(page, view) {
  for (let k = 0; k < 12; ++k) {
    const n = await page.evaluate((v) => window.tilescopeViz.views[v].labelCount || 0, view);
    if (n > 0) return n;
    await page.click('#zoom-in-' + view[0]);
  }
  return 0;
}

test('labels name the thread (warp 1 lane 4 is T36), not the physical row', async () => {
  const page = await openPage(env.base + hashOf({ layout: 'S[(4,8):(1@warpid,1@laneid)]', shape: '4,8' }));
  // Element (1, 4): warp 1, lane 4 = thread 36.
  assert.equal(await label(page, 'logical', 12), 'T36');
  await clickCell(page, 'logical', 12);
  assert.match(await page.textContent('#owners'), /T36 {2}\(warpid 1, laneid 4\)/);
  // The alias example: warp 1's owner is thread 32, not "T1".
  await setLayout(page, 'S[(4,8):(1@warpid,0@laneid)]');
  assert.equal(await label(page, 'logical', 8), 'T32');
  await page.close();
});

test('wgmma: element (17, 250) of the 64x256 accumulator is labelled T37 d124, readable after zooming', async () => {
  const page = await openPage(env.base + hashOf({ layout: 'wgmma_acc(64, 256)', shape: '' }));
  // PTX: warp 1 of the warpgroup, groupID 1, threadID_in_group 1 -> lane 5; d 4*31 + 0.
  const text = execFileSync(TILESCOPE, ['layout', 'wgmma_acc(64, 256)', '--at', '17,250']).toString();
  assert.match(text, /laneid: 5, wid_in_wg: 1, m: 124/);
  assert.equal((await label(page, 'logical', 17 * 256 + 250)).replace('\n', ' '), 'T37 d124');
  assert.ok(await zoomUntilLabelled(page, 'logical') > 0, 'the logical view shows labels when zoomed');
  assert.ok(await zoomUntilLabelled(page, 'physical') > 0, 'the physical view shows labels when zoomed');
  // The physical view's columns are PTX's register names.
  assert.equal(await page.evaluate(() => window.tilescopeViz.views.physical.grid.colTick(124)), 'd124');
  await page.close();
});

test('ldmatrix names halves of d0..d3 and separates its four matrices; tcgen05 says TMEM lane and column', async () => {
  const page = await openPage(env.base + hashOf({ layout: 'ldmatrix_x4()', shape: '', dtype: 'bf16', threads: '32' }));
  // Matrix 1, row 2, column 3: lane 9, second half of d1.
  assert.equal((await label(page, 'logical', 1 * 64 + 2 * 8 + 3)).replace('\n', ' '), 'T9 d1.hi');
  const weights = await page.evaluate(() => [8, 16, 24, 4].map((i) => window.tilescopeViz.views.logical.grid.rowWeight(i)));
  assert.deepEqual(weights.map((w) => w >= 3), [true, true, true, false]);
  await page.goto(env.base + hashOf({ layout: 'tcgen05_32x32b(16)', shape: '', target: 'sm_100a' }));
  await settled(page, 'tcgen05_32x32b(16)');
  assert.match(await page.textContent('#logical-caption'), /rows: TMEM lane, columns: TMEM column/);
  assert.equal((await label(page, 'logical', 37 * 16 + 5)).replace('\n', ' '), 'T37 r5');
  // Tensor memory names its lane and column on both views: M=64's row 20 is
  // TMEM lane 36 (`tilescope layout tmem_m64(64) --at 20,12`).
  const cli = execFileSync(TILESCOPE, ['layout', 'tmem_m64(64)', '--target', 'sm_100a', '--at', '20,12']).toString();
  assert.match(cli, /TLane: 36, TCol: 12/);
  await page.goto(env.base + hashOf({ layout: 'tmem_m64(64)', shape: '', target: 'sm_100a' }));
  await settled(page, 'tmem_m64(64)');
  assert.equal((await label(page, 'logical', 20 * 64 + 12)).replace('\n', ' '), 'L36 c12');
  const slot = await page.evaluate(() => { const m = window.tilescopeViz.model; return m.place[(20 * 64 + 12) * m.R]; });
  const grid = await page.evaluate(() => { const g = window.tilescopeViz.views.physical.grid; return { cols: g.cols }; });
  assert.deepEqual(await page.evaluate(([r, c]) => { const g = window.tilescopeViz.views.physical.grid; return [g.rowTick(r), g.colTick(c)]; }, [Math.floor(slot / grid.cols), slot % grid.cols]), ['L36', 'c12']);
  assert.equal(await label(page, 'physical', slot), '20,12');
  await page.close();
});

test('a link sets the whole view: keys it does not name go back to their defaults', async () => {
  // Exercise 2.1 (mma C: sm_80, 32 threads), then 2.2 (wgmma) in the same tab.
  const page = await openPage(env.base + '#layout=mma_m16n8k16_c()&shape=&target=sm_80&threads=32');
  await page.evaluate(() => { location.hash = 'layout=wgmma_acc(64%2C%20128)&shape=&sel=o%3Awid_in_wg%200%2C%20laneid%200'; });
  await settled(page, 'wgmma_acc(64, 128)');
  assert.equal(await page.inputValue('#threads-input'), '128');
  assert.equal(await page.inputValue('#target-select'), 'sm_90a');
  assert.ok(await page.locator('#legal-ok').isVisible(), 'no BOUNDS finding from a stale thread count');
  // Exercise 5.3 (bf16, alloc 2112), then 6.1 (TMEM accumulator).
  await page.evaluate(() => { location.hash = 'layout=S%5B(32%2C64)%3A(66%2C1)%5D&shape=32%2C64&dtype=bf16&alloc=2112'; });
  await settled(page, 'S[(32,64):(66,1)]');
  await page.evaluate(() => { location.hash = 'layout=tmem_m128(64)&shape=&target=sm_100a'; });
  await settled(page, 'tmem_m128(64)');
  assert.equal(await page.evaluate(() => window.tilescopeViz.doc.dtype), 'f32');
  assert.equal(await page.inputValue('#alloc-input'), '0');
  assert.equal(await page.inputValue('#dtype-select'), '');
  await page.close();
});

test('a link sets every key: each one a link leaves out is back at its default', async () => {
  // A view that sets every key to something other than its default.
  const every = { layout: 'S[(32,64):(64,1)]', shape: '32,64', dtype: 'bf16', target: 'sm_100a', threads: '256', devices: '2',
    alloc: '4096', scope: 'shared', sel: 'e:5', color: 'row', acc: 'row', ai: '3', av: '2', ac: '', ph: '1',
    // the copy view's keys
    cfrom: 'wgmma_acc(64, 32)', cto: 'swizzle(128B, f32, S[(64,32):(32,1)])', cshape: '64,32', cdtype: 'f16', cinst: 'tma',
    cwarp: '1', cglobal: 'S[(64,32):(8192,1)]', ct: '5' };
  const page = await openPage(env.base + hashOf(every));
  const defaults = await page.evaluate(() => window.tilescopeViz.DEFAULTS);
  assert.deepEqual(Object.keys(every).sort(), Object.keys(defaults).sort(), 'the test names every key of the page');
  for (const k of Object.keys(every)) if (k !== 'ac') assert.notEqual(every[k], defaults[k], k);
  assert.deepEqual(await page.evaluate(() => Object.assign({}, window.tilescopeViz.state)), every);
  // The copy view follows its keys.
  await page.waitForFunction(() => window.tilescopeViz.copy.doc && !document.body.dataset.copying);
  assert.equal(await page.evaluate(() => window.tilescopeViz.copy.doc.request.warp), '1');
  assert.equal(await page.inputValue('#copy-global'), every.cglobal);
  // A link naming only the layout and shape: everything else is reset.
  await page.evaluate(() => { location.hash = 'layout=S%5B(4%2C8)%3A(8%2C1)%5D&shape=4%2C8'; });
  await settled(page, 'S[(4,8):(8,1)]');
  assert.deepEqual(await page.evaluate(() => Object.assign({}, window.tilescopeViz.state)),
    Object.assign({}, defaults, { layout: 'S[(4,8):(8,1)]', shape: '4,8' }));
  for (const [id, key] of [['#threads-input', 'threads'], ['#devices-input', 'devices'], ['#alloc-input', 'alloc'],
    ['#target-select', 'target'], ['#dtype-select', 'dtype'], ['#scope-select', 'scope'], ['#color-select', 'color']])
    assert.equal(await page.inputValue(id), defaults[key], id);
  assert.deepEqual(await page.evaluate(() => window.tilescopeViz.marks('logical', 'lit')), []);
  assert.equal(String(await page.evaluate(() => window.tilescopeViz.doc.request.threads)), '128');
  // ... and the copy view is gone, its fields back at their defaults.
  assert.ok(await page.locator('#copy-views').isHidden());
  assert.equal(await page.evaluate(() => window.tilescopeViz.copy.doc), null);
  assert.equal(await page.inputValue('#copy-global'), '');
  assert.equal(await page.inputValue('#copy-warp'), '0');
  await page.close();
});

test('one bank model: the page shows the CLI\'s phases (exercise 5.4: 32 wavefronts, 4 with the swizzle)', async () => {
  const page = await openPage(env.base + '#layout=S%5B(32%2C64)%3A(64%2C1)%5D&shape=32%2C64&dtype=bf16&av=8');
  const wavefronts = () => page.$eval('#bank-wavefronts', (el) => +el.dataset.wavefronts);
  assert.equal(await wavefronts(), 32);
  assert.match(await page.textContent('#bank-detail'), /4 phases of 8 threads \(16 bytes each\); ideal 4 · 8-way conflict/);
  // Step through the phases: each costs 8.
  await page.click('#phase-next');
  assert.match(await page.textContent('#bank-detail'), /phase 0 \(threads 0–7\): 8 wavefronts · 8-way conflict on banks 0, 1, 2, 3/);
  await page.evaluate(() => { location.hash = 'layout=smem_swizzle(128%2C%2016%2C%2032%2C%2064)&shape=&dtype=bf16&av=8'; });
  await settled(page, 'smem_swizzle(128, 16, 32, 64)');
  assert.equal(await wavefronts(), 4);
  // The CLI's lds.128 (the same 16-byte accesses, row-major order) agrees.
  const cli = execFileSync(TILESCOPE, ['layout', 'smem_swizzle(128, 16, 32, 64)', '--dtype', 'bf16', '--banks', 'lds.128']).toString();
  assert.match(cli, /4 wavefronts per request \(ideal 4\)/);
  // The page holds no bank arithmetic of its own.
  const source = await page.content();
  assert.ok(!/distinct 4-byte words any one bank/.test(source) && !/perBank\[w % 32\]/.test(source));
  await page.close();
});

// The message `tilescope viz` prints for a value of --NAME (its first line,
// `<NAME>:1:1: error: MESSAGE`).
function cliMessage(name, text, layout, shape) {
  try {
    const args = name === 'shape' ? ['--shape=' + text] : ['--shape', shape, '--' + name + '=' + text];
    execFileSync(TILESCOPE, ['viz', layout, ...args, '--json'], { stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (e) {
    assert.equal(e.status, 2, 'the CLI refuses --' + name + '=' + text + ' with exit 2');
    const m = String(e.stderr).match(new RegExp('^<' + name + '>:1:\\d+: error: (.*)$', 'm'));
    assert.ok(m, 'CLI diagnostic for --' + name + '=' + text + ': ' + e.stderr);
    return m[1];
  }
  assert.fail('the CLI accepted --' + name + '=' + text);
}

test('every field is validated with the CLI\'s messages (threads, devices, alloc, shape)', async () => {
  const layout = 'S[(4,8):(1@warpid,1@laneid)]';
  const page = await openPage(env.base + hashOf({ layout, shape: '4,8' }));
  const cases = [['threads', '-5'], ['threads', ''], ['threads', 'abc'], ['threads', '2000'], ['devices', '0'], ['devices', 'x1'],
    ['alloc', '-3'], ['alloc', '1e3'], ['shape', '4,9'], ['shape', '4,,8']];
  for (const [name, text] of cases) {
    const want = cliMessage(name, text, layout, '4,8');
    await page.fill('#' + name + '-input', text);
    await page.waitForFunction(([k, t]) => String(window.tilescopeViz.doc.request[k]) === t, [name, text]);
    await settled(page);
    assert.equal(await page.textContent('#' + name + '-input-error'), want, name + ' = ' + JSON.stringify(text));
    assert.equal(await page.getAttribute('#' + name + '-input', 'aria-invalid'), 'true');
    const good = { threads: '128', devices: '1', alloc: '0', shape: '4,8' }[name];
    await page.fill('#' + name + '-input', good);
    await page.waitForFunction(([k, t]) => String(window.tilescopeViz.doc.request[k]) === t && window.tilescopeViz.doc.ok, [name, good]);
    await settled(page);
    assert.equal(await page.getAttribute('#' + name + '-input', 'aria-invalid'), 'false');
  }
  // The three threads values, word for word.
  assert.equal(cliMessage('threads', '-5', layout, '4,8'), 'threads per CTA must be in [1, 1024], not -5');
  assert.equal(cliMessage('threads', '', layout, '4,8'), "expected an integer, not ''");
  assert.equal(cliMessage('threads', 'abc', layout, '4,8'), "expected an integer, not 'abc'");
  await page.close();
});

test('a preset argument error is an argument error with the caret under the argument', async () => {
  const page = await openPage(env.base + '#layout=wgmma_acc(64%2C%207)&shape=');
  const d = page.locator('#diagnostics .diag[data-kind="arguments"]');
  await d.waitFor();
  assert.match(await d.textContent(), /<layout>:1:15: wgmma_acc: wgmma N must be a multiple of 8/);
  assert.equal(await d.locator('pre').textContent(), 'wgmma_acc(64, 7)\n              ^');
  assert.equal(await page.locator('#diagnostics .diag[data-kind="parse"]').count(), 0);
  await page.close();
});

test('an invalid custom access is reported, not dropped', async () => {
  const page = await openPage(env.base + '#layout=S%5B(32%2C64)%3A(64%2C1)%5D&shape=32%2C64&dtype=bf16&acc=custom&ac=0%2C0%3B%2040%2C0');
  assert.equal(await page.textContent('#access-error'), 'thread 1: (40,0) is outside the tile');
  assert.equal(await page.$eval('#bank-wavefronts', (el) => el.dataset.wavefronts), '');
  await page.fill('#access-custom', '0,0; 1,0');
  await page.waitForFunction(() => window.tilescopeViz.doc.bankAccess);
  assert.equal(await page.$eval('#bank-wavefronts', (el) => +el.dataset.wavefronts), 2);
  assert.ok(await page.locator('#access-error').isHidden());
  await page.close();
});
