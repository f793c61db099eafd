/**
 * Built-in plugins handed to Code blocks as `plugins`. They are written in guest JavaScript and
 * evaluated inside QuickJS, so no host function crosses the sandbox boundary: nothing here can
 * reach the network, the filesystem or the platform's objects.
 */
export const pluginsPrelude = String.raw`
(function () {
  // The guest's clock is the run's clock (a simulation's scenario time, a call's injected clock):
  // Date.now() and new Date() never read the host's wall clock.
  const HostDate = Date;
  function RunDate(...args) {
    if (!new.target) return new HostDate(__now).toString();
    return args.length === 0 ? new HostDate(__now) : new HostDate(...args);
  }
  RunDate.prototype = HostDate.prototype;
  Object.defineProperty(HostDate.prototype, 'constructor', { value: RunDate });
  RunDate.now = () => __now;
  RunDate.UTC = HostDate.UTC;
  RunDate.parse = HostDate.parse;
  globalThis.Date = RunDate;
  const DAY = 86400000;
  const pad = (n) => String(n).padStart(2, '0');
  const iso = (ms) => { const d = new Date(ms); return d.getUTCFullYear() + '-' + pad(d.getUTCMonth() + 1) + '-' + pad(d.getUTCDate()); };
  const parse = (s) => { const m = /^(\d{4})-(\d{2})-(\d{2})/.exec(String(s)); if (!m) throw new TypeError('expected a YYYY-MM-DD date, got ' + s); return Date.UTC(+m[1], +m[2] - 1, +m[3]); };
  const date = Object.freeze({
    today: () => __today,
    now: () => __now,
    addDays: (d, n) => iso(parse(d) + Math.trunc(n) * DAY),
    diffDays: (a, b) => Math.round((parse(b) - parse(a)) / DAY),
    weekday: (d) => ['Sunday','Monday','Tuesday','Wednesday','Thursday','Friday','Saturday'][new Date(parse(d)).getUTCDay()],
    isWeekend: (d) => { const w = new Date(parse(d)).getUTCDay(); return w === 0 || w === 6; },
  });
  const text = Object.freeze({
    digits: (s) => String(s).replace(/\D+/g, ''),
    titleCase: (s) => String(s).toLowerCase().replace(/(^|\s)(\S)/g, (m, a, b) => a + b.toUpperCase()),
    maskLast: (s, keep) => { const v = String(s); const k = keep === undefined ? 4 : keep; return v.length <= k ? v : '*'.repeat(v.length - k) + v.slice(-k); },
  });
  const math = Object.freeze({
    round: (x, places) => { const f = Math.pow(10, places || 0); return Math.round(Number(x) * f) / f; },
    clamp: (x, lo, hi) => Math.min(hi, Math.max(lo, Number(x))),
    percent: (part, whole) => (Number(whole) === 0 ? 0 : (Number(part) / Number(whole)) * 100),
  });
  const money = Object.freeze({
    format: (amount, currency, locale) => {
      const n = Number(amount);
      const fixed = n.toFixed(2);
      return (currency ? currency + ' ' : '') + fixed.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
    },
  });
  const logs = [];
  const log = (...args) => { if (logs.length < 100) logs.push(args.map((a) => (typeof a === 'string' ? a : JSON.stringify(a))).join(' ').slice(0, 1000)); };
  globalThis.__logs = logs;
  globalThis.__plugins = Object.freeze({ date, text, math, money, log });
  globalThis.console = Object.freeze({ log, info: log, warn: log, error: log });
})();
`;
