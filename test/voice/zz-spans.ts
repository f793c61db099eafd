import { classify } from './amd-corpus.js';
import { amdSplit } from './amd-splits.js';
const s = await amdSplit('tuning');
// With a huge span threshold, every opening is decided by the human pause (or a beep): the span
// the person talked is what the rule would have to exceed.
for (const span of [100000]) {
  for (const r of classify(s, { machineSpanMs: span })) console.log(r.name.padEnd(46), r.verdict, r.afterMs, r.reason);
}
for (const span of [3500, 4000, 4300, 4500, 5000]) {
  const rows = classify(s, { machineSpanMs: span });
  const m = rows.filter((r) => r.truth === 'machine' && r.reason === 'greeting-span').map((r) => r.afterMs).sort((a, b) => a - b);
  console.log(span, 'wrong', rows.filter((r) => r.truth !== r.verdict).map((r) => r.name.slice(0, 12)).join(','), 'span-machines', m.join(' '));
}
