// The learning panels: the copy view (a warp's requests and phases, the
// elements a thread moves, legality), layout algebra before/after, and the
// exercises checked by the engine.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { env, ARTIFACTS, TILESCOPE, openPage, settled, hashOf } from './helpers.mjs';

const copied = (page) => page.waitForFunction(() => window.tilescopeViz.copy.doc && !document.body.dataset.copying);

test('copy view: wgmma accumulator -> shared tile, phase by phase, then TMA legality', async () => {
  const page = await openPage(env.base + hashOf({ layout: 'wgmma_acc(64, 32)', shape: '' }));
  await page.selectOption('#copy-example', 'wgmma-rowmajor');
  await copied(page);
  // 8-byte stores, 16 threads per phase: rows 4 apart land on the same banks.
  assert.equal(await page.$eval('#copy-wavefronts', (el) => +el.dataset.wavefronts), 64);
  assert.match(await page.textContent('#copy-summary'), /ideal 16\), 8 requests of 8-byte accesses · registers → shared/);
  assert.match(await page.textContent('#copy-legality'), /64 wavefronts where 16 would do: up to a 4-way bank conflict/);
  // The command line's copy view gives the same numbers (one document, one bank model).
  const cli = spawnSync(TILESCOPE, ['viz', 'wgmma_acc(64, 32)', '--copy-to', 'S[(64,32):(32,1)]', '--inst', 'tma'], { encoding: 'utf8' });
  assert.equal(cli.status, 1);
  assert.match(cli.stdout, /^registers -> shared, warp 0: 64 wavefronts \(ideal 16\), 8 requests of 8-byte accesses\n {2}request 0: \[T0-15: 4, 4-way\]/);
  assert.match(await page.textContent('#copy-phase-detail'), /request 0, phase 0: threads 0–15, 4 wavefronts · 4-way conflict on banks 0, 1, 2, 3, 4, 5, 6, 7/);
  // Step to the next phase and the next request.
  await page.click('#copy-next');
  assert.match(await page.textContent('#copy-phase-detail'), /request 0, phase 1: threads 16–31/);
  await page.click('#copy-next');
  assert.match(await page.textContent('#copy-phase-detail'), /request 1, phase 0/);
  assert.match(await page.textContent('#announce'), /request 1, phase 0/);
  // The registers are named as PTX names the accumulator (d0..d15), not r0.
  const regTicks = await page.evaluate(() => [0, 1, 15].map((j) => window.tilescopeViz.copyViews.regs.grid.colTick(j)));
  assert.deepEqual(regTicks, ['d0', 'd1', 'd15']);
  // The elements thread 5 moves: groupID 1, threadID_in_group 1.
  await page.fill('#copy-thread', '5');
  assert.match(await page.textContent('#copy-thread-detail'), /^thread 5 moves 16 elements: \(1,2\) \(1,3\) \(9,2\) \(9,3\) \(1,10\)/);
  // The copy lives in the URL: a reload shows the same copy, thread 5 chosen.
  assert.match(page.url(), /cfrom=wgmma_acc/);
  assert.match(page.url(), /ct=5/);
  await page.reload();
  await settled(page);
  await copied(page);
  assert.equal(await page.$eval('#copy-wavefronts', (el) => +el.dataset.wavefronts), 64);
  assert.match(await page.textContent('#copy-thread-detail'), /^thread 5 moves 16 elements: \(1,2\)/);
  // The 128B swizzle halves the wavefronts; TMA accepts the tile.
  await page.selectOption('#copy-example', 'wgmma-swizzled');
  await page.waitForFunction(() => window.tilescopeViz.copy.doc.request.to.startsWith('swizzle'));
  await copied(page);
  assert.equal(await page.$eval('#copy-wavefronts', (el) => +el.dataset.wavefronts), 32);
  assert.doesNotMatch(await page.textContent('#copy-legality'), /tma/);
  await page.locator('#copy-panel').screenshot({ path: path.join(ARTIFACTS, 'copy-wgmma.png') });
  // A tile TMA cannot store: the instruction's rules say why.
  await page.fill('#copy-from', 'wgmma_acc(64, 64)');
  await page.fill('#copy-to', 'smem_swizzle(128, 32, 64, 64)');
  await page.click('#copy-run');
  await page.waitForFunction(() => window.tilescopeViz.copy.doc.request.from === 'wgmma_acc(64, 64)');
  assert.match(await page.textContent('#copy-legality'), /tma: the inner box dimension is 256 bytes, wider than the 128B swizzle span/);
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('copy view from global: TMA load of a tile, then ldmatrix; a bad row pitch; a TMA store', async () => {
  const page = await openPage(env.base);
  await page.selectOption('#copy-example', 'global-ldmatrix');
  await copied(page);
  await page.waitForFunction(() => (window.tilescopeViz.copy.doc.request.global || '') !== '');
  assert.ok(await page.locator('#copy-global-row').isVisible());
  // 16 rows of 32 bytes, 4096 elements apart: 16 aligned sectors, a legal box.
  assert.match(await page.textContent('#copy-global-legality'), /^global → shared \(TMA load\): 16 sectors · ✓ TMA can move this box/);
  assert.match(await page.textContent('#copy-global-caption'), /loaded by TMA from S\[\(16,16\):\(4096,1\)\] · strides 4096, 1 elements · 16 sectors of 32 B for 512 bytes \(ideal 16\)/);
  // The ldmatrix stage is unchanged by the global one.
  assert.equal(await page.$eval('#copy-wavefronts', (el) => +el.dataset.wavefronts), 4);
  // Each element's path: global offset -> shared slot -> the thread's register.
  await page.fill('#copy-thread', '9');
  const path9 = await page.textContent('#copy-thread-detail');
  const m = path9.match(/element \((\d+),(\d+)\): global element (\d+) → shared element (\d+) → register (\d+) of thread (\d+)/);
  assert.ok(m, path9);
  assert.equal(+m[3], +m[1] * 4096 + +m[2]);
  await page.locator('#copy-panel').screenshot({ path: path.join(ARTIFACTS, 'copy-global-ldmatrix.png') });
  // Rows 8200 bytes apart: TMA refuses the stride, and rows straddle sectors.
  await page.selectOption('#copy-example', 'global-ldmatrix-pitch');
  await page.waitForFunction(() => window.tilescopeViz.copy.doc.request.global === 'S[(16,16):(4100,1)]');
  await copied(page);
  assert.match(await page.textContent('#copy-global-legality'), /28 sectors where 16 would do/);
  assert.match(await page.textContent('#copy-global-legality'), /tma.*global stride 0 of 8200 bytes is not a multiple of 16/);
  // The other direction: the wgmma accumulator through the swizzled tile to global.
  await page.selectOption('#copy-example', 'wgmma-tma-global');
  await page.waitForFunction(() => window.tilescopeViz.copy.doc.request.global === 'S[(64,32):(8192,1)]');
  await copied(page);
  assert.match(await page.textContent('#copy-global-legality'), /^global ← shared \(TMA store\): 256 sectors · ✓ TMA can move this box/);
  await page.fill('#copy-thread', '0');
  assert.match(await page.textContent('#copy-thread-detail'), /element \(0,0\): register 0 of thread 0 → shared element 0 → global element 0/);
  // Clearing the field drops the global stage.
  await page.fill('#copy-global', '');
  await page.click('#copy-run');
  await page.waitForFunction(() => window.tilescopeViz.copy.doc.request.global === '');
  assert.ok(await page.locator('#copy-global-row').isHidden());
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('copy view: ldmatrix.x4 into the A fragment, conflicts gone with a 32B swizzle; bad input reported', async () => {
  const page = await openPage(env.base);
  await page.selectOption('#copy-example', 'ldmatrix-plain');
  await copied(page);
  assert.equal(await page.$eval('#copy-wavefronts', (el) => +el.dataset.wavefronts), 8);
  assert.match(await page.textContent('#copy-summary'), /shared → registers \(a load\) · checked against ldmatrix\.x4/);
  // The A fragment's registers by PTX's names: a0..a7.
  assert.deepEqual(await page.evaluate(() => [0, 7].map((j) => window.tilescopeViz.copyViews.regs.grid.colTick(j))), ['a0', 'a7']);
  // Phase 1 = matrix 1 (rows 8..15): threads 8..15 supply its row addresses.
  await page.click('#copy-next');
  assert.match(await page.textContent('#copy-phase-detail'), /phase 1: threads 8–15, 2 wavefronts · 2-way conflict/);
  await page.selectOption('#copy-example', 'ldmatrix-swizzled');
  await page.waitForFunction(() => window.tilescopeViz.copy.doc.request.from.startsWith('swizzle'));
  await copied(page);
  assert.equal(await page.$eval('#copy-wavefronts', (el) => +el.dataset.wavefronts), 4);
  assert.match(await page.textContent('#copy-legality'), /legal for the instruction and conflict-free/);
  await page.locator('#copy-panel').screenshot({ path: path.join(ARTIFACTS, 'copy-ldmatrix.png') });
  await page.fill('#copy-from', 'S[(16,16):(16,1)');
  await page.click('#copy-run');
  await page.locator('#copy-diagnostics .diag[data-kind="from"]').waitFor();
  assert.match(await page.textContent('#copy-diagnostics'), /<from>:1:17: expected/);
  await page.close();
});

test('layout algebra: composition, complement and division shown before and after', async () => {
  const page = await openPage(env.base + hashOf({ layout: 'S[(4,8):(8,1)]', shape: '4,8', scope: 'shared' }));
  await page.selectOption('#algebra-op', 'compose');
  await page.fill('#algebra-operand', 'S[(8,4):(1,8)]');
  await page.click('#algebra-run');
  await page.locator('#algebra-after').waitFor();
  assert.equal(await page.textContent('#algebra-after'), 'S[(8,4):(1,8)]');
  assert.ok(await page.locator('#algebra-views').isVisible());
  assert.equal(await page.evaluate(() => window.tilescopeViz.views.logical.grid.rows), 4);
  await page.selectOption('#algebra-op', 'complement');
  await page.fill('#algebra-operand', '64');
  await page.click('#algebra-run');
  await page.waitForFunction(() => document.getElementById('algebra-after') && document.getElementById('algebra-after').textContent === 'S[2:32]');
  await page.selectOption('#algebra-op', 'divide');
  await page.fill('#algebra-operand', 'S[(2,4):(8,1)]');
  await page.click('#algebra-run');
  await page.waitForFunction(() => document.getElementById('algebra-after') && document.getElementById('algebra-after').textContent.startsWith('S[(2,2,2,4):(16,4,8,1)]'));
  await page.locator('#algebra-panel').screenshot({ path: path.join(ARTIFACTS, 'algebra.png') });
  // The result opens as the main view.
  await page.click('#algebra-open');
  await settled(page, 'S[(2,2,2,4):(16,4,8,1)]');
  assert.deepEqual(await page.evaluate(() => window.tilescopeViz.doc.shape), [4, 8]);
  await page.selectOption('#algebra-op', 'complement');
  await page.fill('#algebra-operand', '12');
  await page.click('#algebra-run');
  await page.locator('#algebra-result .diag[data-kind="algebra"]').waitFor();
  assert.match(await page.textContent('#algebra-result'), /does not tile \[0, 12\)/);
  await page.close();
});

test('exercises: answers checked by the engine, old and new ones', async () => {
  const page = await openPage(env.base);
  const answer = async (id, text) => {
    const index = await page.evaluate((x) => window.tilescopeViz.exercises.findIndex((e) => e.id === x), id);
    assert.ok(index >= 0, 'exercise ' + id);
    await page.selectOption('#exercise-select', String(index));
    await page.fill('#exercise-answer', text);
    await page.click('#exercise-check');
    await page.waitForFunction(() => document.getElementById('exercise-feedback').dataset.result && !document.body.dataset.checking);
    const result = await page.$eval('#exercise-feedback', (el) => el.dataset.result);
    await page.$eval('#exercise-feedback', (el) => { delete el.dataset.result; });
    return result;
  };
  assert.equal(await answer('1.1', 'T81'), 'right');
  assert.equal(await answer('1.1', 'warpid 2, laneid 17'), 'right');
  assert.equal(await answer('1.1', 'T17'), 'wrong');
  assert.equal(await answer('2.1', 'laneid 5, m 2'), 'right');
  assert.equal(await answer('2.2', '64'), 'right');
  assert.equal(await answer('4.1', 'S[(4,8):(1@warpid,1@laneid)]'), 'right');
  assert.equal(await answer('4.1', 'S[(4,8):(1@warpid,0@laneid)]'), 'wrong');
  assert.equal(await answer('5.4', '32'), 'right');
  assert.equal(await answer('5.4', '8'), 'wrong');
  assert.equal(await answer('5.5', 'S[(32,64):(72,1)]'), 'right');
  assert.equal(await answer('5.5', 'S[(32,64):(66,1)]'), 'wrong');
  assert.equal(await answer('6.1', '64'), 'right');
  assert.equal(await answer('6.2', '64-95'), 'right');
  assert.equal(await answer('6.2', '0-31'), 'wrong');
  assert.equal(await answer('6.2', '64-127'), 'wrong');
  assert.equal(await answer('7.1', 'bounds'), 'right');
  assert.equal(await answer('7.1', 'alias'), 'wrong');
  // Every exercise of docs/layouts.md is on the page.
  const ids = await page.evaluate(() => window.tilescopeViz.exercises.map((e) => e.id));
  const doc = fs.readFileSync(new URL('../../docs/layouts.md', import.meta.url), 'utf8');
  for (const m of doc.matchAll(/\*\*Exercise (\d+\.\d+)\*\*/g)) assert.ok(ids.includes(m[1]), 'exercise ' + m[1] + ' of docs/layouts.md is on the page');
  assert.equal(await answer('8.1', '64'), 'right');
  assert.equal(await answer('8.2', 'swizzle(32B, bf16, S[(16,16):(16,1)])'), 'right');
  assert.equal(await answer('8.2', 'S[(16,16):(16,1)]'), 'wrong');
  assert.equal(await answer('9.1', 'S[(32,4):(1@laneid,1@warpid)]'), 'right');
  assert.equal(await answer('9.1', 'S[(4,32):(1@warpid,1@laneid)]'), 'wrong');
  // "open its view" sets the exercise's whole view.
  const index = await page.evaluate(() => window.tilescopeViz.exercises.findIndex((e) => e.id === '5.3'));
  await page.selectOption('#exercise-select', String(index));
  await page.click('#exercise-open');
  await settled(page, 'S[(32,64):(66,1)]');
  assert.equal(await page.inputValue('#alloc-input'), '2112');
  assert.equal(await page.$eval('#bank-wavefronts', (el) => +el.dataset.wavefronts), 1);
  await page.close();
});

test('every link of docs/layouts.md opens its view in one tab: the keys it names, defaults for the rest', async () => {
  const docText = fs.readFileSync(new URL('../../docs/layouts.md', import.meta.url), 'utf8');
  // A markdown link's target ends at the first unbalanced ')'.
  const links = [];
  for (let at = docText.indexOf('](http://127.0.0.1:8765/#'); at >= 0; at = docText.indexOf('](http://127.0.0.1:8765/#', at + 1)) {
    let i = at + '](http://127.0.0.1:8765/#'.length, depth = 0;
    const start = i;
    for (; i < docText.length && !(docText[i] === ')' && depth === 0) && !/\s/.test(docText[i]); ++i) depth += docText[i] === '(' ? 1 : docText[i] === ')' ? -1 : 0;
    links.push(docText.slice(start, i));
  }
  assert.ok(links.length >= 18, links.length + ' links');
  const page = await openPage(env.base);
  const defaults = await page.evaluate(() => window.tilescopeViz.DEFAULTS);
  for (const hash of links) {
    const named = Object.fromEntries(new URLSearchParams(hash));
    await page.evaluate((h) => { location.hash = h; }, hash);
    await settled(page, named.layout);
    const state = await page.evaluate(() => Object.assign({}, window.tilescopeViz.state));
    assert.deepEqual(state, Object.assign({}, defaults, named), hash);
    const d = await page.evaluate(() => ({ ok: window.tilescopeViz.doc.ok, kinds: (window.tilescopeViz.doc.diagnostics || []).map((x) => x.kind) }));
    assert.ok(d.ok, hash + ': ' + d.kinds.join(', '));
    if (named.cfrom) {
      await page.waitForFunction((f) => window.tilescopeViz.copy.doc && window.tilescopeViz.copy.doc.request.from === f && !document.body.dataset.copying, named.cfrom);
      assert.equal(await page.evaluate(() => window.tilescopeViz.copy.doc.ok), true, hash);
    } else assert.equal(await page.evaluate(() => window.tilescopeViz.copy.doc), null, hash);
  }
  // Exercise 8.1's link shows the row-major store: 64 wavefronts.
  assert.ok(links.some((h) => h.includes('cfrom=wgmma_acc')));
  assert.deepEqual(page.errors, []);
  await page.close();
});
