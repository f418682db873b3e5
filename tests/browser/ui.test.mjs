// Keyboard, narrow screens, the legend and the palette: arrow keys move a
// focused cell and Enter selects it, announced in a live region; below
// 700 px the page is one column and taps select; every colour class has a
// swatch, and classes that look alike in greyscale differ in pattern.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { env, ARTIFACTS, openPage, settled, hashOf, lit } from './helpers.mjs';

test('keyboard: Tab into the logical view, arrows move, Enter selects, the live region announces it', async () => {
  const page = await openPage(env.base + hashOf({ layout: 'mma_m16n8k16_c()', shape: '', target: 'sm_80', threads: '32' }));
  await page.focus('#logical canvas.grid-canvas');
  assert.equal(await page.evaluate(() => window.tilescopeViz.views.logical.focus), 0);
  for (const key of ['ArrowRight', 'ArrowRight', 'ArrowDown', 'ArrowDown', 'ArrowDown']) await page.keyboard.press(key);
  assert.equal(await page.evaluate(() => window.tilescopeViz.views.logical.focus), 3 * 8 + 2);
  assert.match(await page.textContent('#announce'), /element \(3, 2\) → T13 c0/);
  await page.keyboard.press('Shift+ArrowDown');
  assert.equal(await page.evaluate(() => window.tilescopeViz.views.logical.focus), 11 * 8 + 2);
  await page.keyboard.press('Enter');
  assert.deepEqual(await lit(page, 'logical'), [11 * 8 + 2]);
  assert.match(await page.textContent('#announce'), /element \(11, 2\) — 1 owner:; T13 c2/);
  assert.equal(await page.getAttribute('#announce', 'aria-live'), 'polite');
  // The physical view too: its focus moves over slots.
  await page.focus('#physical canvas.grid-canvas');
  await page.keyboard.press('ArrowDown');
  await page.keyboard.press('Enter');
  assert.match(await page.textContent('#owners'), /slot T1 c0/);
  await page.close();
});

test('narrow screen (390 px): one column, views full width, a tap selects', async () => {
  const context = await env.browser.newContext({ viewport: { width: 390, height: 844 }, hasTouch: true, isMobile: true, deviceScaleFactor: 2 });
  const page = await openPage(env.base + hashOf({ layout: 'wgmma_acc(64, 64)', shape: '' }), context);
  const lb = await page.locator('#logical').boundingBox(), pb = await page.locator('#physical').boundingBox();
  const side = await page.locator('.sidebar').boundingBox();
  assert.ok(lb.width > 300, 'logical view ' + lb.width + ' px wide');
  assert.ok(pb.y > lb.y + lb.height - 1, 'physical view below the logical one');
  assert.ok(lb.y > side.y + side.height - 1, 'views below the sidebar');
  assert.ok(lb.x + lb.width <= 390 && pb.x + pb.width <= 390, 'views inside the screen');
  assert.ok(await page.evaluate(() => document.documentElement.scrollWidth) <= 391, 'no sideways scrolling');
  const cell = 5 * 64 + 9;
  // The user scrolls down to the view, then taps the cell.
  await page.evaluate(() => document.querySelector('#logical canvas.grid-canvas').scrollIntoView({ block: 'start' }));
  const [x, y] = await page.evaluate((c) => window.tilescopeViz.cellCenter('logical', c), cell);
  await page.touchscreen.tap(x, y);
  await page.waitForFunction(() => window.tilescopeViz.state.sel !== '');
  assert.deepEqual(await lit(page, 'logical'), [cell]);
  assert.match(await page.textContent('#owners'), /element \(5, 9\)/);
  await page.screenshot({ path: path.join(ARTIFACTS, 'narrow-390.png'), fullPage: true });
  // The copy view too: its registers above its shared tile, inside the
  // screen; a tap on a thread's register shows what that thread moves.
  await page.selectOption('#copy-example', 'wgmma-rowmajor');
  await page.waitForFunction(() => window.tilescopeViz.copy.doc && !document.body.dataset.copying);
  const rb = await page.locator('#copy-regs').boundingBox(), tb = await page.locator('#copy-tile').boundingBox();
  assert.ok(tb.y >= rb.y + rb.height - 1, 'shared tile below the registers');
  assert.ok(rb.x + rb.width <= 390 && tb.x + tb.width <= 390, 'copy views inside the screen');
  for (const id of ['#copy-from', '#copy-to', '#copy-global']) {
    const b = await page.locator(id).boundingBox();
    assert.ok(b.x >= 0 && b.x + b.width <= 390 && b.width > 200, id + ' is ' + Math.round(b.width) + ' px wide, inside the screen');
  }
  assert.ok(await page.evaluate(() => document.documentElement.scrollWidth) <= 391, 'no sideways scrolling with the copy view');
  await page.evaluate(() => document.getElementById('copy-regs').scrollIntoView({ block: 'center' }));
  const [rx, ry] = await page.evaluate(() => {
    const v = window.tilescopeViz.copyViews.regs, r = v.canvas.getBoundingClientRect();
    return [r.left + v.left - v.ox + 0.5 * v.cellW(), r.top + v.top - v.oy + 9.5 * v.cellH()];
  });
  await page.touchscreen.tap(rx, ry);
  await page.waitForFunction(() => document.getElementById('copy-thread').value === '9');
  assert.match(await page.textContent('#copy-thread-detail'), /^thread 9 moves 16 elements: \(2,2\) \(2,3\)/);
  await page.screenshot({ path: path.join(ARTIFACTS, 'narrow-390-copy.png'), fullPage: false });
  assert.deepEqual(page.errors, []);
  await context.close();
});

test('legend: a swatch per colour class; classes alike in greyscale differ in pattern', async () => {
  const page = await openPage(env.base + hashOf({ layout: 'swizzle(128B, bf16, S[(32,64):(64,1)])', shape: '32,64', dtype: 'bf16' }));
  const items = await page.$$eval('#legend .legend-item', (els) => els.map((e) => e.textContent));
  assert.equal(items.length, 8);
  assert.match(items[3], /16-byte chunk 3 of the row/);
  // Grey level and pattern of every swatch, read back from its pixels, under
  // the Rec. 601 luma and the Rec. 709 one (CSS grayscale()).
  const swatches = await page.$$eval('#legend canvas.swatch', (els) => els.map((c) => {
    const px = c.getContext('2d').getImageData(1, 1, 20, 14).data;
    const look = (wr, wg, wb) => {
      const greys = [];
      for (let i = 0; i < px.length; i += 4) greys.push(Math.round(wr * px[i] + wg * px[i + 1] + wb * px[i + 2]));
      const sorted = [...greys].sort((a, b) => a - b);
      return { base: sorted[sorted.length - 1], pattern: sorted[sorted.length - 1] - sorted[0] > 20 ? greys.map((g) => (g < sorted[sorted.length - 1] - 20 ? 1 : 0)).join('') : 'solid' };
    };
    return [look(0.299, 0.587, 0.114), look(0.2126, 0.7152, 0.0722)];
  }));
  for (const luma of [0, 1])
    for (let a = 0; a < swatches.length; ++a)
      for (let b = a + 1; b < swatches.length; ++b) {
        const [x, y] = [swatches[a][luma], swatches[b][luma]];
        const alike = Math.abs(x.base - y.base) < 25;
        assert.ok(!alike || x.pattern !== y.pattern, 'classes ' + a + ' and ' + b + ' differ in greyscale (' + ['Rec. 601', 'Rec. 709'][luma] + ')');
      }
  // The view itself in greyscale (its canvas drawn through a grayscale
  // filter, as a greyscale print sees it): one cell of each chunk class, its
  // background grey level and its pattern mask; classes of like grey differ
  // in pattern.
  const cells = await page.evaluate(() => {
    const v = window.tilescopeViz.views.logical, c = v.canvas, dpr = window.devicePixelRatio || 1;
    const grey = document.createElement('canvas');
    grey.width = c.width; grey.height = c.height;
    const g = grey.getContext('2d');
    g.filter = 'grayscale(1)';
    g.drawImage(c, 0, 0);
    const out = [];
    for (let k = 0; k < 8; ++k) {
      // Row 2, column 8k + 3: the middle of 16-byte chunk k (8 bf16).
      const cw = v.cellW(), ch = v.cellH(), x = v.left - v.ox + (8 * k + 3) * cw, y = v.top - v.oy + 2 * ch;
      const w = Math.floor(cw * dpr) - 2, h = Math.floor(ch * dpr) - 2;
      const px = g.getImageData(Math.ceil(x * dpr) + 1, Math.ceil(y * dpr) + 1, w, h).data;
      const levels = [];
      for (let i = 0; i < px.length; i += 4) levels.push(px[i]);
      const top = Math.max(...levels);
      out.push({ cls: window.tilescopeViz.views.logical.grid.classes[2 * 64 + 8 * k + 3], w, h, base: top,
        mask: top - Math.min(...levels) > 20 ? levels.map((l) => (l < top - 20 ? 1 : 0)) : null });
    }
    return out;
  });
  assert.deepEqual(cells.map((c) => c.cls), [0, 1, 2, 3, 4, 5, 6, 7]);
  assert.ok(cells[0].w >= 5, 'cells of ' + cells[0].w + ' device px show patterns');
  const differ = (a, b) => {
    if (!a.mask || !b.mask) return !!a.mask !== !!b.mask;
    let d = 0;
    for (let i = 0; i < Math.min(a.mask.length, b.mask.length); ++i) d += a.mask[i] !== b.mask[i];
    return d > 0.15 * Math.min(a.mask.length, b.mask.length);
  };
  for (let a = 0; a < cells.length; ++a)
    for (let b = a + 1; b < cells.length; ++b)
      if (Math.abs(cells[a].base - cells[b].base) < 25)
        assert.ok(differ(cells[a], cells[b]), 'chunk classes ' + a + ' and ' + b + ' look alike in the greyscale view');
  // The owner colouring of a warpgroup is by warp, and the legend says so.
  await page.evaluate((h) => { location.hash = h; }, hashOf({ layout: 'wgmma_acc(64, 64)', shape: '' }));
  await settled(page, 'wgmma_acc(64, 64)');
  assert.deepEqual(await page.$$eval('#legend .legend-item', (els) => els.map((e) => e.textContent)),
    ['warp 0: threads 0–31', 'warp 1: threads 32–63', 'warp 2: threads 64–95', 'warp 3: threads 96–127']);
  await page.emulateMedia({ colorScheme: 'light' });
  await page.addStyleTag({ content: 'html { filter: grayscale(1); }' });
  await page.screenshot({ path: path.join(ARTIFACTS, 'greyscale.png'), fullPage: true });
  await page.close();
});
