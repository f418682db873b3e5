// tilescope layoutviz: a grid of cells on a canvas, with zoom, pan, a
// minimap, ticks, labels when cells are large enough, keyboard focus and an
// SVG copy. It knows nothing of layouts: viz.js says what each cell is.
//
// Speed: the cells are one bitmap, one pixel per cell, drawn scaled; only
// the visible cells get borders, patterns and labels, and only when they are
// large enough to show them. So a 2^18-cell grid costs one putImageData to
// recolour and one drawImage to pan.
(function () {
  'use strict';

  // Okabe & Ito's colour-blind-safe palette (black replaced by grey so labels
  // stay readable). Each class also has a pattern (PATTERN_OF), chosen so
  // that two classes share a pattern only when their grey levels differ by at
  // least 42 of 255 under both the Rec. 601 and the Rec. 709 luma (a
  // greyscale print, CSS grayscale()): greyscale stays readable. (class % 4
  // gave the green and the pink, 121 and 142 in Rec. 709, the same dots.)
  const PALETTE = ['#E69F00', '#56B4E9', '#009E73', '#F0E442', '#0072B2', '#D55E00', '#CC79A7', '#999999'];
  const PATTERNS = ['solid', 'diagonal', 'dots', 'bars'];
  const PATTERN_OF = [0, 1, 1, 2, 3, 0, 2, 3];
  const EMPTY = '#eef0f4';
  const rgb = (hex) => [1, 3, 5].map((k) => parseInt(hex.slice(k, k + 2), 16));
  const PACKED = PALETTE.map((hex) => { const [r, g, b] = rgb(hex); return (255 << 24) | (b << 16) | (g << 8) | r; });
  const DIMMED = PALETTE.map((hex) => {
    const [r, g, b] = rgb(hex).map((c) => Math.round(c * 0.22 + 255 * 0.78));
    return (255 << 24) | (b << 16) | (g << 8) | r;
  });
  const EMPTY_PACKED = (() => { const [r, g, b] = rgb(EMPTY); return (255 << 24) | (b << 16) | (g << 8) | r; })();
  const MARK_STYLE = { lit: ['#111111', 2], witness: ['#c62828', 2.4], access: ['#0b3d91', 1.6], conflict: ['#c62828', 2], focus: ['#2457c5', 2.5] };

  function drawPattern(ctx, kind, x, y, w, h) {
    ctx.save();
    ctx.beginPath(); ctx.rect(x, y, w, h); ctx.clip();
    ctx.strokeStyle = 'rgba(0,0,0,.45)'; ctx.fillStyle = 'rgba(0,0,0,.45)'; ctx.lineWidth = 1;
    if (kind === 'diagonal') {
      ctx.beginPath();
      for (let d = -h; d < w; d += 6) { ctx.moveTo(x + d, y + h); ctx.lineTo(x + d + h, y); }
      ctx.stroke();
    } else if (kind === 'dots') {
      for (let yy = y + 3; yy < y + h; yy += 6) for (let xx = x + 3; xx < x + w; xx += 6) ctx.fillRect(xx - 1, yy - 1, 2, 2);
    } else if (kind === 'bars') {
      ctx.beginPath();
      for (let yy = y + 3; yy < y + h; yy += 5) { ctx.moveTo(x, yy + 0.5); ctx.lineTo(x + w, yy + 0.5); }
      ctx.stroke();
    }
    ctx.restore();
  }

  class GridView {
    // `host`: an element to fill; `opts.onPick(cell)`, `opts.onFocus(cell)`.
    constructor(host, opts) {
      this.host = host; this.opts = opts || {};
      host.classList.add('grid-host');
      this.canvas = document.createElement('canvas');
      this.canvas.className = 'grid-canvas';
      this.canvas.tabIndex = 0;
      this.canvas.setAttribute('role', 'application');
      this.canvas.setAttribute('aria-roledescription', 'grid of cells');
      this.mini = document.createElement('canvas');
      this.mini.className = 'minimap';
      this.mini.hidden = true;
      host.append(this.canvas, this.mini);
      this.bitmap = document.createElement('canvas');
      this.grid = null; this.marks = new Map(); this.dimmed = false;
      this.scale = 1; this.ox = 0; this.oy = 0; this.focus = null;
      this.wire();
    }

    // grid: {rows, cols, aspect (cell height / width), classes (Int16Array, -1 empty),
    //   label(cell, wide) -> string, rowTick(i) -> string, colTick(j) -> string,
    //   rowWeight(i) / colWeight(j) -> boundary weight (0 none, higher = stronger),
    //   ariaLabel}
    setGrid(grid) {
      const first = !this.grid || this.grid.rows !== grid.rows || this.grid.cols !== grid.cols;
      this.grid = grid;
      this.left = grid.left || 40; this.top = grid.top || 18;
      this.canvas.setAttribute('aria-label', grid.ariaLabel || 'grid');
      if (first) { this.focus = null; this.fit(); }
      this.recolour();
    }
    // Base cell size (zoom 1): as wide as fits the host's width; as tall as
    // the aspect asks, but squeezed (never below 8 px) to fit the height.
    base() {
      const g = this.grid, w = Math.max(120, this.viewWidth() - this.left - 6);
      const maxH = Math.max(160, this.maxHeight() - this.top - 6);
      const cw = Math.max(Math.min(w / g.cols, 48), 0.05);
      const want = cw * g.aspect, byH = maxH / g.rows;
      return [cw, Math.max(Math.min(want, byH), Math.min(want, 8))];
    }
    viewWidth() { return this.host.clientWidth || 560; }
    maxHeight() { return Math.min(window.innerHeight * 0.72, 900); }
    fit() { this.scale = 1; this.ox = 0; this.oy = 0; }
    cellW() { return this.base()[0] * this.scale; }
    cellH() { return this.base()[1] * this.scale; }
    // The bitmap: one pixel per cell, its class colour (dimmed unless marked
    // while something is selected).
    recolour() {
      const g = this.grid;
      if (!g) return;
      this.bitmap.width = g.cols; this.bitmap.height = g.rows;
      const ctx = this.bitmap.getContext('2d');
      const image = ctx.createImageData(g.cols, g.rows);
      const px = new Uint32Array(image.data.buffer), cls = g.classes, n = g.rows * g.cols;
      const table = this.dimmed ? DIMMED : PACKED;
      for (let i = 0; i < n; ++i) { const c = cls[i]; px[i] = c < 0 ? EMPTY_PACKED : table[c]; }
      if (this.dimmed) for (const [cell, kind] of this.marks) if (kind !== 'focus' && cls[cell] >= 0) px[cell] = PACKED[cls[cell]];
      ctx.putImageData(image, 0, 0);
      this.draw();
    }
    setMarks(marks, dimmed) { this.marks = marks; this.dimmed = dimmed; this.recolour(); }

    draw() {
      const g = this.grid;
      if (!g) return;
      const dpr = window.devicePixelRatio || 1, cw = this.cellW(), ch = this.cellH();
      const width = this.viewWidth();
      const H = Math.max(60, Math.min(this.top + g.rows * ch + 6, this.maxHeight()));
      if (this.canvas.width !== Math.round(width * dpr) || this.canvas.height !== Math.round(H * dpr)) {
        this.canvas.width = Math.round(width * dpr); this.canvas.height = Math.round(H * dpr);
        this.canvas.style.width = width + 'px'; this.canvas.style.height = H + 'px';
      }
      this.clampPan(width, H);
      const ctx = this.canvas.getContext('2d');
      ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
      ctx.clearRect(0, 0, width, H);
      const x0 = this.left - this.ox, y0 = this.top - this.oy;
      ctx.save();
      ctx.beginPath(); ctx.rect(this.left, this.top, width - this.left, H - this.top); ctx.clip();
      ctx.imageSmoothingEnabled = false;
      ctx.drawImage(this.bitmap, x0, y0, g.cols * cw, g.rows * ch);
      // Visible cell range.
      const c0 = Math.max(0, Math.floor(this.ox / cw)), c1 = Math.min(g.cols, Math.ceil((this.ox + width - this.left) / cw));
      const r0 = Math.max(0, Math.floor(this.oy / ch)), r1 = Math.min(g.rows, Math.ceil((this.oy + H - this.top) / ch));
      if (cw >= 5 && ch >= 5) {
        ctx.strokeStyle = '#ffffff'; ctx.lineWidth = 0.6; ctx.beginPath();
        for (let j = c0; j <= c1; ++j) { ctx.moveTo(x0 + j * cw, y0 + r0 * ch); ctx.lineTo(x0 + j * cw, y0 + r1 * ch); }
        for (let i = r0; i <= r1; ++i) { ctx.moveTo(x0 + c0 * cw, y0 + i * ch); ctx.lineTo(x0 + c1 * cw, y0 + i * ch); }
        ctx.stroke();
      }
      if (cw >= 6 && ch >= 6 && (r1 - r0) * (c1 - c0) <= 40000)
        for (let i = r0; i < r1; ++i)
          for (let j = c0; j < c1; ++j) {
            const c = g.classes[i * g.cols + j];
            if (c >= 0 && PATTERN_OF[c]) drawPattern(ctx, PATTERNS[PATTERN_OF[c]], x0 + j * cw, y0 + i * ch, cw, ch);
          }
      this.drawBoundaries(ctx, x0, y0, cw, ch, r0, r1, c0, c1);
      // Labels when a cell can hold them.
      const font = Math.min(11, Math.floor(Math.min(ch * 0.42, cw / 3.2)));
      this.labelCount = 0;
      if (font >= 7 && g.label && (r1 - r0) * (c1 - c0) <= 6000) {
        ctx.font = font + 'px ui-monospace, "DejaVu Sans Mono", monospace';
        ctx.textAlign = 'center'; ctx.textBaseline = 'middle';
        for (let i = r0; i < r1; ++i)
          for (let j = c0; j < c1; ++j) {
            const cell = i * g.cols + j;
            if (g.classes[cell] < 0) continue;
            const text = g.label(cell, cw / font);
            if (!text) continue;
            const lines = String(text).split('\n');
            const lh = font + 1, cy = y0 + i * ch + ch / 2 - (lines.length - 1) * lh / 2;
            const dark = this.dimmed && !this.marks.has(cell) ? '#8a90a0' : '#111111';
            lines.forEach((line, k) => {
              ctx.fillStyle = 'rgba(255,255,255,.72)';
              const tw = ctx.measureText(line).width;
              if (tw > cw - 2) return;
              ctx.fillRect(x0 + j * cw + cw / 2 - tw / 2 - 1, cy + k * lh - font / 2 - 1, tw + 2, font + 2);
              ctx.fillStyle = dark;
              ctx.fillText(line, x0 + j * cw + cw / 2, cy + k * lh);
              this.labelCount++;
            });
          }
      }
      // Marks: outlines of lit, witness, access, conflict and focused cells.
      const outline = Math.min(cw, ch) >= 4;
      for (const [cell, kind] of this.marks) {
        const i = Math.floor(cell / g.cols), j = cell % g.cols;
        if (i < r0 || i >= r1 || j < c0 || j >= c1) continue;
        const [colour, lw] = MARK_STYLE[kind] || MARK_STYLE.lit;
        if (!outline && kind === 'lit') continue;
        ctx.strokeStyle = colour; ctx.lineWidth = outline ? lw : 1;
        ctx.strokeRect(x0 + j * cw + lw / 2, y0 + i * ch + lw / 2, Math.max(cw - lw, 1), Math.max(ch - lw, 1));
      }
      if (this.focus !== null && document.activeElement === this.canvas) {
        const i = Math.floor(this.focus / g.cols), j = this.focus % g.cols;
        ctx.strokeStyle = MARK_STYLE.focus[0]; ctx.lineWidth = 2.5; ctx.setLineDash([4, 2]);
        ctx.strokeRect(x0 + j * cw - 1, y0 + i * ch - 1, cw + 2, ch + 2);
        ctx.setLineDash([]);
      }
      ctx.restore();
      this.drawTicks(ctx, x0, y0, cw, ch, r0, r1, c0, c1, width, H);
      this.drawMinimap(width, H, cw, ch);
      this.shown = { width, height: H, cw, ch };
    }
    // Separators at meaningful boundaries (8 rows, matrices, warps), the
    // strongest first when there is little room.
    drawBoundaries(ctx, x0, y0, cw, ch, r0, r1, c0, c1) {
      const g = this.grid;
      ctx.strokeStyle = '#1d2330';
      for (let i = Math.max(r0, 1); i < r1; ++i) {
        const w = g.rowWeight ? g.rowWeight(i) : 0;
        if (!w || (ch < 3 && w < 2)) continue;
        ctx.lineWidth = w >= 2 ? 1.6 : 0.8; ctx.beginPath();
        ctx.moveTo(x0 + c0 * cw, y0 + i * ch); ctx.lineTo(x0 + c1 * cw, y0 + i * ch); ctx.stroke();
      }
      for (let j = Math.max(c0, 1); j < c1; ++j) {
        const w = g.colWeight ? g.colWeight(j) : 0;
        if (!w || (cw < 3 && w < 2)) continue;
        ctx.lineWidth = w >= 2 ? 1.6 : 0.8; ctx.beginPath();
        ctx.moveTo(x0 + j * cw, y0 + r0 * ch); ctx.lineTo(x0 + j * cw, y0 + r1 * ch); ctx.stroke();
      }
    }
    // Ticks at every row when there is room, else at the strongest
    // boundaries that fit (multiples of 2, 4, 8, 16, ... or weighted rows).
    tickStep(count, pixels, need, weight) {
      for (let step = 1; step <= count; step *= 2) if (step * pixels >= need) return step;
      return count;
    }
    drawTicks(ctx, x0, y0, cw, ch, r0, r1, c0, c1, width, H) {
      const g = this.grid;
      ctx.font = '8.5px ui-monospace, "DejaVu Sans Mono", monospace';
      ctx.fillStyle = '#6b7385'; ctx.textBaseline = 'middle';
      ctx.clearRect(0, 0, this.left - 1, H); ctx.clearRect(0, 0, width, this.top - 1);
      const rstep = this.tickStep(g.rows, ch, 8.5);
      ctx.textAlign = 'right';
      this.rowTicks = [];
      for (let i = r0; i < r1; ++i) {
        if (i % rstep) continue;
        const y = y0 + i * ch + ch / 2;
        if (y < this.top - 2 || y > H) continue;
        const text = g.rowTick ? g.rowTick(i) : String(i);
        ctx.fillText(text, this.left - 4, y, this.left - 6);
        this.rowTicks.push(i);
      }
      const widest = Math.max(1, ...[c0, c1 - 1].map((j) => (g.colTick ? g.colTick(j) : String(j)).length)) * 6 + 4;
      const cstep = this.tickStep(g.cols, cw, widest);
      ctx.textAlign = 'center';
      for (let j = c0; j < c1; ++j) {
        if (j % cstep) continue;
        const x = x0 + j * cw + cw / 2;
        if (x < this.left - 2 || x > width) continue;
        ctx.fillText(g.colTick ? g.colTick(j) : String(j), x, 9);
      }
      this.ticks = { rstep, cstep, rows: this.rowTicks.slice() };
    }
    drawMinimap(width, H, cw, ch) {
      const g = this.grid, fullW = g.cols * cw, fullH = g.rows * ch;
      const big = fullW > width - this.left + 1 || fullH > H - this.top + 1;
      this.mini.hidden = !big;
      if (!big) return;
      const k = Math.min(140 / g.cols, 110 / g.rows, 4);
      const mw = Math.max(24, Math.round(g.cols * k)), mh = Math.max(24, Math.round(g.rows * k));
      this.mini.width = mw; this.mini.height = mh;
      const m = this.mini.getContext('2d');
      m.imageSmoothingEnabled = true;
      m.drawImage(this.bitmap, 0, 0, mw, mh);
      m.strokeStyle = '#c62828'; m.lineWidth = 2;
      m.strokeRect(this.ox / fullW * mw, this.oy / fullH * mh, (width - this.left) / fullW * mw, (H - this.top) / fullH * mh);
      this.miniScale = { mw, mh, fullW, fullH };
    }
    clampPan(width, H) {
      const g = this.grid, fullW = g.cols * this.cellW(), fullH = g.rows * this.cellH();
      this.ox = Math.max(0, Math.min(this.ox, fullW - (width - this.left)));
      this.oy = Math.max(0, Math.min(this.oy, fullH - (H - this.top)));
      if (fullW <= width - this.left) this.ox = 0;
      if (fullH <= H - this.top) this.oy = 0;
    }
    zoomAt(factor, sx, sy) {
      const cw = this.cellW();
      const gx = (sx - this.left + this.ox) / cw, gy = (sy - this.top + this.oy) / this.cellH();
      this.scale = Math.max(1, Math.min(this.scale * factor, 400));
      this.ox = gx * this.cellW() - (sx - this.left); this.oy = gy * this.cellH() - (sy - this.top);
      this.draw();
    }
    // The cell under a point of the canvas, or null.
    cellAt(sx, sy) {
      const g = this.grid;
      if (!g || sx < this.left || sy < this.top) return null;
      const j = Math.floor((sx - this.left + this.ox) / this.cellW()), i = Math.floor((sy - this.top + this.oy) / this.cellH());
      if (i < 0 || j < 0 || i >= g.rows || j >= g.cols) return null;
      return i * g.cols + j;
    }
    rowAt(sx, sy) {
      if (!this.grid || sx >= this.left || sy < this.top) return null;
      const i = Math.floor((sy - this.top + this.oy) / this.cellH());
      return i >= 0 && i < this.grid.rows ? i : null;
    }
    // Scrolls so that `cell` is visible.
    reveal(cell) {
      const g = this.grid, i = Math.floor(cell / g.cols), j = cell % g.cols;
      const cw = this.cellW(), ch = this.cellH(), s = this.shown || { width: this.viewWidth(), height: 400 };
      const vw = s.width - this.left, vh = s.height - this.top;
      if (j * cw < this.ox) this.ox = j * cw; else if ((j + 1) * cw > this.ox + vw) this.ox = (j + 1) * cw - vw;
      if (i * ch < this.oy) this.oy = i * ch; else if ((i + 1) * ch > this.oy + vh) this.oy = (i + 1) * ch - vh;
    }
    setFocus(cell) {
      this.focus = cell;
      this.reveal(cell);
      this.draw();
      if (this.opts.onFocus) this.opts.onFocus(cell);
    }
    wire() {
      const c = this.canvas;
      const point = (e) => { const r = c.getBoundingClientRect(); return [e.clientX - r.left, e.clientY - r.top]; };
      let drag = null;
      c.addEventListener('pointerdown', (e) => {
        const [x, y] = point(e);
        drag = { x, y, ox: this.ox, oy: this.oy, moved: false, id: e.pointerId };
      });
      c.addEventListener('pointermove', (e) => {
        const [x, y] = point(e);
        if (drag) {
          if (Math.abs(x - drag.x) + Math.abs(y - drag.y) > 6) drag.moved = true;
          if (drag.moved) {
            if (!c.hasPointerCapture(drag.id)) try { c.setPointerCapture(drag.id); } catch (err) { /* gone */ }
            this.ox = drag.ox - (x - drag.x); this.oy = drag.oy - (y - drag.y); this.draw();
          }
          return;
        }
        const cell = this.cellAt(x, y);
        if (this.opts.onHover && cell !== null) this.opts.onHover(cell);
      });
      const end = (e) => {
        if (!drag) return;
        const d = drag; drag = null;
        if (d.moved) return;
        // A click or a tap: pick the cell, or the row whose tick was hit.
        const [x, y] = point(e);
        const cell = this.cellAt(x, y);
        if (cell !== null) { this.focus = cell; if (this.opts.onPick) this.opts.onPick(cell); return; }
        const row = this.rowAt(x, y);
        if (row !== null && this.opts.onRow) this.opts.onRow(row);
      };
      c.addEventListener('pointerup', end);
      c.addEventListener('pointercancel', () => { drag = null; });
      c.addEventListener('wheel', (e) => {
        if (!this.grid) return;
        e.preventDefault();
        const [x, y] = point(e);
        if (e.ctrlKey || e.metaKey || !e.shiftKey) this.zoomAt(e.deltaY < 0 ? 1.25 : 0.8, x, y);
      }, { passive: false });
      c.addEventListener('keydown', (e) => {
        const g = this.grid;
        if (!g) return;
        let f = this.focus === null ? 0 : this.focus;
        const i = Math.floor(f / g.cols), j = f % g.cols, step = e.shiftKey ? 8 : 1;
        const moves = { ArrowLeft: [0, -step], ArrowRight: [0, step], ArrowUp: [-step, 0], ArrowDown: [step, 0] };
        if (moves[e.key]) {
          e.preventDefault();
          const [di, dj] = moves[e.key];
          const ni = Math.max(0, Math.min(g.rows - 1, i + di)), nj = Math.max(0, Math.min(g.cols - 1, j + dj));
          this.setFocus(ni * g.cols + nj);
        } else if (e.key === 'Enter' || e.key === ' ') {
          e.preventDefault();
          if (this.focus === null) this.setFocus(0);
          if (this.opts.onPick) this.opts.onPick(this.focus);
        } else if (e.key === '+' || e.key === '=') { e.preventDefault(); this.zoomAt(1.5, this.left + 100, this.top + 100); }
        else if (e.key === '-') { e.preventDefault(); this.zoomAt(1 / 1.5, this.left + 100, this.top + 100); }
        else if (e.key === '0') { e.preventDefault(); this.fit(); this.draw(); }
      });
      c.addEventListener('focus', () => { if (this.focus === null && this.grid) this.setFocus(0); else this.draw(); });
      c.addEventListener('blur', () => this.draw());
      const miniMove = (e) => {
        if (!this.miniScale) return;
        const r = this.mini.getBoundingClientRect(), s = this.miniScale, sh = this.shown;
        this.ox = (e.clientX - r.left) / s.mw * s.fullW - (sh.width - this.left) / 2;
        this.oy = (e.clientY - r.top) / s.mh * s.fullH - (sh.height - this.top) / 2;
        this.draw();
      };
      this.mini.addEventListener('pointerdown', (e) => { miniMove(e); this.mini.setPointerCapture(e.pointerId); });
      this.mini.addEventListener('pointermove', (e) => { if (e.buttons) miniMove(e); });
      new ResizeObserver(() => { if (this.grid) this.draw(); }).observe(this.host);
    }

    // The whole grid as SVG (not only what is on screen): rectangles per
    // cell with their class colour and pattern, labels when the cells are
    // few, marks as outlines. Above 65536 cells the cells become one
    // embedded bitmap so the file stays small.
    toSvg(ox, oy) {
      const g = this.grid, cw = 14, ch = 14 * g.aspect, parts = [];
      const left = 40, top = 14, label = g.rows * g.cols <= 4096 && g.label;
      const X = (j) => (ox + left + j * cw).toFixed(1), Y = (i) => (oy + top + i * ch).toFixed(1);
      const rstep = this.tickStep(g.rows, ch, 11), cstep = this.tickStep(g.cols, cw, 24);
      for (let i = 0; i < g.rows; i += rstep) parts.push('<text class="hdr" x="' + (ox + left - 4) + '" y="' + (oy + top + i * ch + ch / 2 + 3).toFixed(1) + '" text-anchor="end">' + esc(g.rowTick ? g.rowTick(i) : i) + '</text>');
      for (let j = 0; j < g.cols; j += cstep) parts.push('<text class="hdr" x="' + (ox + left + j * cw + cw / 2).toFixed(1) + '" y="' + (oy + 10) + '" text-anchor="middle">' + esc(g.colTick ? g.colTick(j) : j) + '</text>');
      if (g.rows * g.cols > 65536) {
        parts.push('<image x="' + X(0) + '" y="' + Y(0) + '" width="' + g.cols * cw + '" height="' + (g.rows * ch).toFixed(1) + '" preserveAspectRatio="none" style="image-rendering:pixelated" href="' + this.bitmap.toDataURL('image/png') + '"/>');
      } else {
        for (let i = 0; i < g.rows; ++i)
          for (let j = 0; j < g.cols; ++j) {
            const cell = i * g.cols + j, c = g.classes[cell];
            const mark = this.marks.get(cell);
            const fill = c < 0 ? EMPTY : PALETTE[c];
            const dim = this.dimmed && !mark && c >= 0 ? ' opacity=".25"' : '';
            parts.push('<rect class="cell' + (mark ? ' ' + mark : '') + '" x="' + X(j) + '" y="' + Y(i) + '" width="' + cw + '" height="' + ch.toFixed(1) + '" fill="' + fill + '"' + dim + '/>');
            if (c >= 0 && PATTERN_OF[c]) parts.push('<rect x="' + X(j) + '" y="' + Y(i) + '" width="' + cw + '" height="' + ch.toFixed(1) + '" fill="url(#p-' + PATTERNS[PATTERN_OF[c]] + ')" pointer-events="none"/>');
            if (label && c >= 0) {
              const text = g.label(cell, 3);
              if (text) parts.push('<text class="lbl" x="' + (ox + left + j * cw + cw / 2).toFixed(1) + '" y="' + (oy + top + i * ch + ch / 2 + 2).toFixed(1) + '" text-anchor="middle">' + esc(String(text).split('\n')[0]) + '</text>');
            }
          }
      }
      return { svg: parts.join(''), width: left + g.cols * cw + 6, height: top + g.rows * ch + 6 };
    }
  }
  function esc(s) {
    return String(s).replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' }[c]));
  }
  const SVG_DEFS = '<defs>' +
    '<pattern id="p-diagonal" width="6" height="6" patternUnits="userSpaceOnUse"><path d="M0,6 L6,0" stroke="rgba(0,0,0,.45)"/></pattern>' +
    '<pattern id="p-dots" width="6" height="6" patternUnits="userSpaceOnUse"><rect x="2" y="2" width="2" height="2" fill="rgba(0,0,0,.45)"/></pattern>' +
    '<pattern id="p-bars" width="5" height="5" patternUnits="userSpaceOnUse"><path d="M0,2.5 L5,2.5" stroke="rgba(0,0,0,.45)"/></pattern></defs>';

  // A legend swatch: the class colour with its pattern, on a small canvas.
  function swatch(cls) {
    const c = document.createElement('canvas');
    c.width = 22; c.height = 16; c.className = 'swatch';
    const ctx = c.getContext('2d');
    ctx.fillStyle = PALETTE[cls]; ctx.fillRect(0, 0, 22, 16);
    if (PATTERN_OF[cls]) drawPattern(ctx, PATTERNS[PATTERN_OF[cls]], 0, 0, 22, 16);
    ctx.strokeStyle = '#6b7385'; ctx.strokeRect(0.5, 0.5, 21, 15);
    c.dataset.cls = cls;
    return c;
  }

  window.TilescopePaint = { GridView, PALETTE, PATTERNS, PATTERN_OF, swatch, esc, SVG_DEFS };
})();
