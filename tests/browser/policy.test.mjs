// The slack policy of timing.mjs on made-up samples (no browser): the
// targets hold as they are on a quiet box, relax by the measured slowdown,
// and never by more than MAX_SLACK.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { judge, median, PROBE_QUIET_MS, MAX_SLACK } from './timing.mjs';

const seven = (v) => Array(7).fill(v);

test('quiet box: the target as it is', () => {
  assert.equal(judge(seven(990), seven(PROBE_QUIET_MS), 1000).ok, true);
  assert.equal(judge(seven(1010), seven(PROBE_QUIET_MS), 1000).ok, false);
  // A faster machine gets no slack either (slowdown clamped to 1).
  assert.equal(judge(seven(1010), seven(PROBE_QUIET_MS / 2), 1000).slowdown, 1);
});

test('a busy box: the limit grows with the measured slowdown, at most MAX_SLACK', () => {
  const busy = judge(seven(1400), seven(PROBE_QUIET_MS * 1.5), 1000);
  assert.equal(busy.slowdown, 1.5);
  assert.equal(busy.limitMs, 1500);
  assert.equal(busy.ok, true);
  assert.equal(judge(seven(1600), seven(PROBE_QUIET_MS * 1.5), 1000).ok, false);
  // However slow the probe, a regression past MAX_SLACK x the target fails.
  const saturated = judge(seven(1000 * MAX_SLACK + 10), seven(PROBE_QUIET_MS * 10), 1000);
  assert.equal(saturated.slowdown, MAX_SLACK);
  assert.equal(saturated.ok, false);
});

test('medians, not means: one spike does not fail a run, a majority does', () => {
  assert.equal(median([100, 100, 100, 5000, 100, 100, 100]), 100);
  assert.equal(judge([300, 280, 5000, 290, 310, 5000, 295], seven(PROBE_QUIET_MS), 1000).ok, true);
  assert.equal(judge([300, 1200, 5000, 1100, 310, 5000, 1300], seven(PROBE_QUIET_MS), 1000).ok, false);
});
